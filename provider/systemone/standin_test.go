package systemone

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
)

// standinClient runs the in-process stand-in with cfg on loopback and
// returns a client for it (waits recorded, not slept).
func standinClient(t *testing.T, cfg standin.Config, mod func(*Config)) (*Client, *standin.Server, *waits) {
	t.Helper()
	srv, err := standin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close) // runs first: ends injected hangs
	cc := Config{BaseURL: ts.URL, APIKey: fakeKey, MaxRetries: 2, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cc)
	}
	c, err := New(cc)
	if err != nil {
		t.Fatal(err)
	}
	w := &waits{}
	c.sleep = w.sleep
	t.Cleanup(func() { c.Close() })
	return c, srv, w
}

func TestAgainstStandIn(t *testing.T) {
	cases := []struct {
		name     string
		cfg      standin.Config
		mod      func(*Config)
		kind     provider.ErrorKind // "" = success
		status   int
		attempts int
		msg      string
	}{
		{"synthetic answers", standin.Config{Synthetic: true, APIKey: fakeKey}, nil, "", 0, 1, ""},
		{"no key: 403", standin.Config{Synthetic: true, APIKey: fakeKey}, func(c *Config) { c.APIKey = "" }, provider.KindAuth, 403, 1, "Must supply an API key"},
		{"wrong key: 401", standin.Config{Synthetic: true, APIKey: fakeKey}, func(c *Config) { c.APIKey = "sk-other-key-0000" }, provider.KindAuth, 401, 1, "Cannot authenticate"},
		{"not recorded: 422, no retry", standin.Config{APIKey: fakeKey}, nil, provider.KindRejected, 422, 1, ""},
		{"5xx every time: retried then unavailable", standin.Config{Synthetic: true, Faults: standin.Faults{FailRate: 1}}, nil, provider.KindUnavailable, 0, 3, ""},
		{"malformed body", standin.Config{Synthetic: true, Faults: standin.Faults{MalformedRate: 1}}, nil, provider.KindMalformed, 200, 1, "not a System One answer body"},
		{"missing answer", standin.Config{Synthetic: true, Faults: standin.Faults{MissingRate: 1}}, nil, provider.KindMalformed, 200, 1, "no answer"},
		{"hang: attempt timeout", standin.Config{Synthetic: true, Faults: standin.Faults{TimeoutRate: 1}},
			func(c *Config) { c.Timeout = 50 * time.Millisecond; c.MaxRetries = 1 }, provider.KindTimeout, 0, 2, "no response within 50ms"},
		{"hang then 408", standin.Config{Synthetic: true, Faults: standin.Faults{TimeoutRate: 1, TimeoutAfter: 10 * time.Millisecond}},
			func(c *Config) { c.MaxRetries = -1 }, provider.KindTimeout, 408, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := standinClient(t, tc.cfg, tc.mod)
			res, err := c.Ask(context.Background(), testRequest(t))
			if tc.kind == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(res.Model, "standin-") || len(res.Answers) != 3 || res.Attempts != 1 {
					t.Fatalf("result %+v", res)
				}
				return
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err %v", err)
			}
			if pe.Kind != tc.kind || (tc.status != 0 && pe.Status != tc.status) || pe.Attempts != tc.attempts {
				t.Errorf("kind %q status %d attempts %d: %v", pe.Kind, pe.Status, pe.Attempts, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), fakeKey) || strings.Contains(err.Error(), secretState) {
				t.Errorf("error leaks: %v", err)
			}
		})
	}
}

// TestStandInRateLimitHonoured: the stand-in's 429 carries Retry-After
// (whole seconds, here 1) and retry-after-ms (about 200); the client waits
// the finer retry-after-ms and then succeeds.
func TestStandInRateLimitHonoured(t *testing.T) {
	c, srv, w := standinClient(t, standin.Config{Synthetic: true, Faults: standin.Faults{RateLimitRPS: 5, RateLimitBurst: 1}}, func(c *Config) {
		c.MaxRetries = 3
	})
	// Real sleeps are needed for the bucket to refill: sleep what we are
	// told, recording it.
	c.sleep = func(ctx context.Context, d time.Duration) error {
		w.sleep(ctx, d)
		return sleepCtx(ctx, d)
	}
	if _, err := c.Ask(context.Background(), testRequest(t)); err != nil {
		t.Fatal(err)
	}
	res, err := c.Ask(context.Background(), testRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	got := w.get()
	if res.Attempts != 2 || len(got) != 1 || got[0] <= 0 || got[0] >= time.Second {
		t.Fatalf("attempts %d waits %v", res.Attempts, got)
	}
	if st := srv.Stats(); st.RateLimited != 1 {
		t.Errorf("stand-in counted %d rate-limited requests", st.RateLimited)
	}
}

func TestStandInModels(t *testing.T) {
	c, _, _ := standinClient(t, standin.Config{Synthetic: true, APIKey: fakeKey}, nil)
	ms, err := c.Models(context.Background())
	if err != nil || len(ms) == 0 {
		t.Fatalf("models %v err %v", ms, err)
	}
	found := false
	for _, m := range ms {
		found = found || strings.HasPrefix(m.Name, "standin-")
	}
	if !found {
		t.Errorf("no stand-in model in %+v", ms)
	}
}
