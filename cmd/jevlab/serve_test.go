package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs `jevlab serve args...` in-process and returns its base
// URL and a stop function that interrupts it and returns everything it
// printed.
func startServe(t *testing.T, args ...string) (string, func() string) {
	t.Helper()
	out, errw := &syncBuffer{}, &syncBuffer{}
	a := newApp(nil, out, errw)
	root := newRootCmd(a)
	root.SetArgs(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	root.SetOut(out)
	root.SetErr(errw)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		a.close()
	}()
	re := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)\n`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			stopped := false
			stop := func() string {
				if !stopped {
					stopped = true
					cancel()
					select {
					case err := <-done:
						if err != nil {
							t.Errorf("serve returned %v; stderr %s", err, errw)
						}
					case <-time.After(10 * time.Second):
						t.Fatal("serve did not stop after interrupt")
					}
				}
				return out.String()
			}
			t.Cleanup(func() { stop() })
			return m[1], stop
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve exited early: %v\nstdout %s\nstderr %s", err, out, errw)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve printed no URL: %s %s", out, errw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	clearEnv(t)
	for _, addr := range []string{"0.0.0.0:8089", ":8089", "[::]:8089", "192.168.1.10:8089", "example.com:80", "8089"} {
		code, _, stderr := askRun(t, "serve", "--synthetic", "--addr", addr)
		if code != exitUsage {
			t.Errorf("--addr %s: exit %d, want %d", addr, code, exitUsage)
		}
		if !strings.Contains(stderr, "--addr") {
			t.Errorf("--addr %s: message %q does not name the flag", addr, stderr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0", "127.0.0.2:0"} {
		if err := checkLoopback(addr); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestServeUsageErrors(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"serve"}, "nothing to answer with"},
		{[]string{"serve", "--synthetic", "--require-key"}, "$TYPESAFE_API_KEY is empty"},
		{[]string{"serve", "--synthetic", "--fail-rate", "0.7", "--timeout-rate", "0.7"}, "must not exceed 1"},
		{[]string{"serve", "--fixtures", filepath.Join(t.TempDir(), "absent.jsonl")}, "absent.jsonl"},
	}
	for _, tt := range tests {
		code, _, stderr := askRun(t, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, exitUsage, tt.msg)
		}
	}
}

// TestServeReplaysWithKey serves the Banking77 recordings behind a key:
// the live client gets exactly the recorded answer, a request without the
// key is refused, the key is never printed, and the exit line reconciles.
func TestServeReplaysWithKey(t *testing.T) {
	clearEnv(t)
	const key = "fake-serve-key-7f3a9c"
	t.Setenv("TYPESAFE_API_KEY", key)
	path := filepath.Join(testutil.Testdata(t, "banking77"), "recorded.jsonl")
	base, stop := startServe(t, "--fixtures", path, "--require-key")

	exs, _, err := fixtures.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var req provider.Request
	if err := json.Unmarshal(exs[10].Request, &req); err != nil {
		t.Fatal(err)
	}
	c, err := systemone.New(systemone.Config{BaseURL: base, APIKey: key, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Ask(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	var rec provider.Response
	if err := json.Unmarshal(exs[10].Response, &rec); err != nil {
		t.Fatal(err)
	}
	want, err := provider.Check(&req, &rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "jev-1.13.0" || !reflect.DeepEqual(res.Answers[0].Probs, want[0].Probs) || res.Answers[0].Choice != want[0].Choice {
		t.Errorf("replayed %s %s %v, want jev-1.13.0 %s %v", res.Model, res.Answers[0].Choice, res.Answers[0].Probs, want[0].Choice, want[0].Probs)
	}

	resp, err := http.Post(base+"/v1/systemone", "application/json", bytes.NewReader(exs[10].Request))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "Must supply an API key") {
		t.Errorf("without a key: %d %s", resp.StatusCode, body)
	}

	out := stop()
	for _, want := range []string{"TYPESAFE_BASE_URL=" + base, "1 file(s), 500 exchanges, 500 recorded answers for jev-latest",
		"synthetic: off", "key required", "stopped after 2 requests: 1 ok", "1 auth"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, key) {
		t.Errorf("the key was printed:\n%s", out)
	}
}

// TestServeSyntheticWithFaults: a synthetic server with a 100% failure rate
// answers 5xx/529 to the client, which reports the server as unavailable.
func TestServeSyntheticWithFaults(t *testing.T) {
	clearEnv(t)
	base, stop := startServe(t, "--synthetic", "--fail-rate", "1", "--latency", "1ms")
	c, err := systemone.New(systemone.Config{BaseURL: base, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{Model: "jev-latest", State: provider.String("hello"),
		Questions: provider.Questions{{ID: "q", Question: provider.Question{Type: provider.Noul}}}}
	_, err = c.Ask(context.Background(), req)
	if provider.KindOf(err) != provider.KindUnavailable {
		t.Errorf("error %v (kind %q), want unavailable", err, provider.KindOf(err))
	}
	models, err := c.Models(context.Background())
	if err != nil || len(models) != 1 || models[0].Name != standin.SyntheticModel {
		t.Errorf("models %+v, %v", models, err)
	}
	out := stop()
	for _, want := range []string{"synthetic: on (model standin-synthetic-1)", "faults: latency 1ms, fail 100%", "1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
