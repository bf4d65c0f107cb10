package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
)

// TestKeyCanaryEveryHost runs the key canary against the stand-in in
// OpenRouter's and Cloudflare's shapes (--api): a live ask, a server
// echoing the key into a 422 and a 500 and into an answer, recording to a
// fixture file and a database, then an offline replay; the key's bytes
// appear in no output and no file. Each host's key is read from its own
// variable (OPENROUTER_API_KEY, CLOUDFLARE_API_TOKEN) unless --key-env
// says otherwise, and a TypeSafe key in the environment is never sent to
// another host.
func TestKeyCanaryEveryHost(t *testing.T) {
	const typesafeKey = "tsk-canary-typesafe-91b2-do-not-send"
	for _, host := range []struct {
		api, env, model, basePath, path string
	}{
		{"openrouter", "OPENROUTER_API_KEY", "~typesafe/jev-latest", "", "/api/alpha/decisions"},
		{"cloudflare", "CLOUDFLARE_API_TOKEN", "typesafe/jev-1.14.0", "/client/v4/accounts/acct-7/ai", "/client/v4/accounts/acct-7/ai/run"},
	} {
		t.Run(host.api, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(host.env, canaryKey)
			t.Setenv("TYPESAFE_API_KEY", typesafeKey)
			work := t.TempDir()
			set := filepath.Join(work, "canary.yaml")
			if err := os.WriteFile(set, []byte(canarySet), 0o600); err != nil {
				t.Fatal(err)
			}
			rec := filepath.Join(work, "recorded.jsonl")
			db := filepath.Join(work, "jevlab.db")
			si, err := standin.New(standin.Config{Synthetic: true, APIKey: canaryKey})
			if err != nil {
				t.Fatal(err)
			}
			defer si.Close()
			h := &hostile{next: si, hits: map[string]int{}}
			var mu sync.Mutex
			paths := map[string]int{}
			typesafeSent := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths[r.URL.Path]++
				if strings.Contains(r.Header.Get("Authorization"), typesafeKey) {
					typesafeSent++
				}
				mu.Unlock()
				if r.URL.Path != host.path {
					h.ServeHTTP(w, r)
					return
				}
				// The stand-in's answers passed off as a real model's, so
				// they are recorded like a real host's would be.
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				body := asRealModel(rec.Body.Bytes())
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				w.WriteHeader(rec.Code)
				w.Write(body)
			}))
			defer srv.Close()

			var printed []string
			step := func(name string, wantCode int, wantOut string, args ...string) {
				t.Helper()
				code, out, errOut := askRun(t, args...)
				printed = append(printed, out, errOut)
				if code != wantCode {
					t.Fatalf("%s: exit %d, want %d\nstdout %s\nstderr %s", name, code, wantCode, out, errOut)
				}
				if wantOut != "" && !strings.Contains(out+errOut, wantOut) {
					t.Fatalf("%s: output lacks %q\nstdout %s\nstderr %s", name, wantOut, out, errOut)
				}
			}
			live := []string{"--api", host.api, "--model", host.model, "--db", db, "--fixtures", rec, "--base-url", srv.URL + host.basePath}
			with := func(extra ...string) []string { return append(append(extra, live...), set) }
			step("live success", 0, "mode stand-in", with("ask")...)
			step("cached", 0, `"source": "cache"`, with("ask", "--json")...)
			step("422 echoing the key", 2, "rejected (HTTP 422)", with("ask", "--state", `"TRIGGER-422"`)...)
			step("500 echoing the key", 1, "unavailable (HTTP 500)", with("ask", "--state", `"TRIGGER-500"`)...)
			echo := "contains the API key"
			if host.api == "cloudflare" {
				echo = "envelope" // a reply outside Cloudflare's envelope is refused before it is read
			}
			step("answer echoing the key", 1, echo, with("ask", "--state", `"TRIGGER-ECHO"`, "--json")...)
			step("bare TypeSafe model name", 2, "pass --model", "ask", "--api", host.api, "--model", "jev-latest", "--db", db, "--base-url", srv.URL+host.basePath, "--fresh", set)

			mu.Lock()
			if paths[host.path] == 0 || typesafeSent != 0 {
				t.Fatalf("server saw paths %v; the TypeSafe key was sent %d times", paths, typesafeSent)
			}
			mu.Unlock()
			if h.auth == 0 {
				t.Fatal("the host's key was never sent to the chosen server")
			}
			exs, warns, err := fixtures.ReadFile(rec)
			if err != nil || len(warns) != 0 || len(exs) != 1 {
				t.Fatalf("recorded %d exchanges (%v, %v), want 1", len(exs), warns, err)
			}
			// Replay offline, with no key at all.
			t.Setenv(host.env, "")
			t.Setenv("TYPESAFE_API_KEY", "")
			before := h.total()
			step("replay offline", 0, "[cache", "ask", "--offline", "--model", host.model, "--db", filepath.Join(work, "other.db"), "--fixtures", rec, set)
			if h.total() != before {
				t.Fatal("offline replay called the server")
			}
			assertNoKey(t, canaryKey, printed, work)
			assertNoKey(t, typesafeKey, printed, work)
		})
	}
}
