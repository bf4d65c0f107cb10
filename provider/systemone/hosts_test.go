package systemone

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
)

func TestDetectAPIAndAskURL(t *testing.T) {
	for _, c := range []struct {
		base string
		api  API
		url  string
	}{
		{"https://api.typesafe.ai", APITypeSafe, "https://api.typesafe.ai/v1/systemone"},
		{"https://gw.example.com/typesafe", APITypeSafe, "https://gw.example.com/typesafe/v1/systemone"},
		{"https://openrouter.ai", APIOpenRouter, "https://openrouter.ai/api/alpha/decisions"},
		{"https://openrouter.ai/api/alpha/decisions", APIOpenRouter, "https://openrouter.ai/api/alpha/decisions"},
		{"https://openrouter.ai/api", APITypeSafe, "https://openrouter.ai/api/v1/systemone"}, // its TypeSafe-compatible route
		{"https://api.cloudflare.com/client/v4/accounts/abc/ai", APICloudflare, "https://api.cloudflare.com/client/v4/accounts/abc/ai/run"},
		{"https://api.cloudflare.com/client/v4/accounts/abc/ai/run", APICloudflare, "https://api.cloudflare.com/client/v4/accounts/abc/ai/run"},
		{"https://ai-gateway.vercel.sh/typesafe", APITypeSafe, "https://ai-gateway.vercel.sh/typesafe/v1/systemone"},
	} {
		api := DetectAPI(c.base)
		if api != c.api || askURL(c.base, api) != c.url {
			t.Errorf("%s: %s %s, want %s %s", c.base, api, askURL(c.base, api), c.api, c.url)
		}
	}
	if _, err := ParseAPI("azure"); err == nil || !strings.Contains(err.Error(), "typesafe, openrouter or cloudflare") {
		t.Errorf("ParseAPI(azure) = %v", err)
	}
}

// seen records what the server was sent.
type seen struct {
	mu    sync.Mutex
	paths []string
	auth  []string
	body  [][]byte
}

func (s *seen) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.body = append(s.body, b)
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// hostClient serves the stand-in under prefix (its paths with prefix
// stripped, as a gateway would) and returns a client speaking api to
// base URL server+basePath.
func hostClient(t *testing.T, api API, prefix, basePath string, h func(http.Handler) http.Handler) (*Client, *seen) {
	t.Helper()
	si, err := standin.New(standin.Config{Synthetic: true, APIKey: fakeKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(si.Close)
	var next http.Handler = si
	if h != nil {
		next = h(next)
	}
	if prefix != "" {
		next = http.StripPrefix(prefix, next)
	}
	s := &seen{}
	ts := httptest.NewServer(s.wrap(next))
	t.Cleanup(ts.Close)
	c, err := New(Config{BaseURL: ts.URL + basePath, APIKey: fakeKey, API: api, MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, s
}

// TestEveryHostAgainstStandIn asks the same request of the stand-in in
// each host's shape: TypeSafe's behind a gateway path prefix, OpenRouter's
// native Decisions API, Cloudflare's envelope. The answers are the same;
// each call went to its host's path with the key; the exchange is
// recorded in System One's shape (so a recording replays on any host);
// OpenRouter's usage.cost is the cost recorded.
func TestEveryHostAgainstStandIn(t *testing.T) {
	ref, _ := hostClient(t, APITypeSafe, "", "", nil)
	want, err := ref.Ask(context.Background(), testRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	costRe := regexp.MustCompile(`"cost":[0-9.e-]+`)
	for _, c := range []struct {
		name, prefix, base, path string
		api                      API
		model                    string
		h                        func(http.Handler) http.Handler
		cost                     float64
	}{
		{"typesafe behind a path prefix", "/gw/typesafe", "/gw/typesafe", "/gw/typesafe/v1/systemone", APITypeSafe, "jev-latest", nil, -1},
		{"openrouter native", "", "", "/api/alpha/decisions", APIOpenRouter, "~typesafe/jev-latest",
			// OpenRouter's own charge, unlike tokens × price: it must win.
			func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					rec := httptest.NewRecorder()
					next.ServeHTTP(rec, r)
					b := costRe.ReplaceAll(rec.Body.Bytes(), []byte(`"cost":0.00123`))
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(rec.Code)
					w.Write(b)
				})
			}, 0.00123},
		{"cloudflare envelope", "", "/client/v4/accounts/acct-1/ai", "/client/v4/accounts/acct-1/ai/run", APICloudflare, "typesafe/jev-1.14.0", nil, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, s := hostClient(t, c.api, c.prefix, c.base, c.h)
			req := testRequest(t)
			req.Model = c.model
			res, err := cl.Ask(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.paths) != 1 || s.paths[0] != c.path || s.auth[0] != "Bearer "+fakeKey {
				t.Fatalf("sent to %v with %v, want %s with the key", s.paths, s.auth, c.path)
			}
			if len(res.Answers) != len(want.Answers) {
				t.Fatalf("answers %d, want %d", len(res.Answers), len(want.Answers))
			}
			for i := range want.Answers {
				g, w := res.Answers[i], want.Answers[i]
				if g.ID != w.ID || g.P != w.P || g.Choice != w.Choice || g.Score != w.Score {
					t.Errorf("%s: %+v, want %+v", g.ID, g, w)
				}
			}
			if c.cost < 0 {
				c.cost = provider.Cost(res.Usage, provider.CostPerMillionInputTokens) // tokens × list price
			}
			if res.CostUSD != c.cost || res.CostUSD <= 0 {
				t.Errorf("cost %g, want %g", res.CostUSD, c.cost)
			}
			ex := res.Exchanges[0]
			var reqBody, respBody map[string]json.RawMessage
			if json.Unmarshal(ex.Request, &reqBody) != nil || json.Unmarshal(ex.Response, &respBody) != nil {
				t.Fatalf("exchange not JSON:\n%s\n%s", ex.Request, ex.Response)
			}
			if reqBody["questions"] == nil || reqBody["input"] != nil || respBody["answers"] == nil || respBody["result"] != nil {
				t.Errorf("exchange not in System One's shape:\n%s\n%s", ex.Request, ex.Response)
			}
			if c.api == APICloudflare {
				var wire struct {
					Model string                     `json:"model"`
					Input map[string]json.RawMessage `json:"input"`
				}
				if err := json.Unmarshal(s.body[0], &wire); err != nil || wire.Model != c.model || wire.Input["state"] == nil || wire.Input["model"] != nil {
					t.Errorf("Cloudflare body %s (%v)", s.body[0], err)
				}
			}
		})
	}
}

// TestHostErrors: each host's error shape gives the host's own message;
// the hosts that name Jev their own way refuse a bare TypeSafe model name
// before sending anything; listing models is TypeSafe's call only.
func TestHostErrors(t *testing.T) {
	ctx := context.Background()
	for _, api := range []API{APIOpenRouter, APICloudflare} {
		cl, s := hostClient(t, api, "", map[API]string{APICloudflare: "/client/v4/accounts/a/ai"}[api], nil)
		req := testRequest(t)
		req.Model = "jev-latest"
		_, err := cl.Ask(ctx, req)
		if provider.KindOf(err) != provider.KindInvalid || !strings.Contains(err.Error(), "pass --model") || len(s.paths) != 0 {
			t.Errorf("%s bare model: %v (sent %d)", api, err, len(s.paths))
		}
		if _, err := cl.Models(ctx); err == nil || !strings.Contains(err.Error(), "GET /v1/models") {
			t.Errorf("%s models: %v", api, err)
		}
		// The stand-in rejects a wrong key in each host's shape.
		bad, err := New(Config{BaseURL: cl.BaseURL(), APIKey: "sk-wrong-0000", API: api, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		req.Model = "typesafe/jev-1.13"
		_, err = bad.Ask(ctx, req)
		if provider.KindOf(err) != provider.KindAuth || !strings.Contains(err.Error(), "Cannot authenticate") {
			t.Errorf("%s wrong key: %v", api, err)
		}
		bad.Close()
	}
	// Cloudflare's 200 with success: false is the host refusing.
	cl, _ := hostClient(t, APICloudflare, "", "/client/v4/accounts/a/ai", func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"result":null,"success":false,"errors":[{"code":5007,"message":"No such model typesafe/jev-9"}],"messages":[]}`)
		})
	})
	req := testRequest(t)
	req.Model = "typesafe/jev-9"
	if _, err := cl.Ask(ctx, req); provider.KindOf(err) != provider.KindRejected || !strings.Contains(err.Error(), "No such model typesafe/jev-9") {
		t.Errorf("success false: %v", err)
	}
	// A reply without the envelope is malformed.
	cl, _ = hostClient(t, APICloudflare, "", "/client/v4/accounts/a/ai", func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"model":"m","answers":{}}`)
		})
	})
	if _, err := cl.Ask(ctx, req); provider.KindOf(err) != provider.KindMalformed || !strings.Contains(err.Error(), "envelope") {
		t.Errorf("no envelope: %v", err)
	}
}
