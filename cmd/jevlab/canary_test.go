package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
)

// canaryKey is a fake API key. The canary tests fail if its bytes show up
// anywhere outside the Authorization header.
const canaryKey = "sk-canary-3f9a7c21d4e8b605-do-not-leak"

// hostile wraps the stand-in with a scripted server that echoes the
// Authorization header into its error bodies and headers, the worst a
// server can do with the key it was sent. The state picks the script:
// TRIGGER-422 is rejected, TRIGGER-429 is rate limited once then answered,
// TRIGGER-500 always fails, TRIGGER-ECHO answers 200 with the key inside
// the answer, TRIGGER-ESCAPED the same with the key's dashes written as
// JSON \u002d escapes, TRIGGER-UNSOLICITED answers and then, on the same
// connection, sends a second response nobody asked for carrying the
// Authorization header (net/http logs such bytes). Everything else goes to
// the stand-in, whose answers are passed off as a real model's
// (jev-canary-1), so they are recorded like a real server's would be.
type hostile struct {
	next http.Handler
	mu   sync.Mutex
	hits map[string]int
	auth int // requests that carried the right bearer key
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	auth := r.Header.Get("Authorization")
	h.mu.Lock()
	if auth == "Bearer "+canaryKey {
		h.auth++
	}
	trigger := ""
	for _, t := range []string{"TRIGGER-422", "TRIGGER-429", "TRIGGER-500", "TRIGGER-ECHO", "TRIGGER-ESCAPED", "TRIGGER-UNSOLICITED"} {
		if bytes.Contains(body, []byte(t)) {
			trigger = t
		}
	}
	h.hits[trigger]++
	n := h.hits[trigger]
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	esc, _ := json.Marshal("you sent " + auth)
	switch {
	case trigger == "TRIGGER-422":
		w.Header().Set("x-typesafe-request-id", "req-"+auth)
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprintf(w, `{"detail":[{"loc":["body","state"],"msg":%s,"type":"value_error"}]}`, esc)
	case trigger == "TRIGGER-429" && n == 1:
		w.Header().Set("retry-after-ms", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"error":{"message":%s}}`, esc)
	case trigger == "TRIGGER-500":
		w.Header().Set("retry-after-ms", "1")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"message":%s}`, esc)
	case trigger == "TRIGGER-ECHO":
		fmt.Fprintf(w, `{"model":"standin-x","answers":{"urgent":{"type":"noul","noul":0.5,"note":%s},"team":{"type":"choice","choice":"billing","confidence":1,"probabilities":{"billing":1,"infrastructure":0}}},"usage":{"input_tokens":3,"output_tokens":0}}`, esc)
	case trigger == "TRIGGER-ESCAPED":
		escaped := strings.ReplaceAll(string(esc), "-", `\u002d`)
		fmt.Fprintf(w, `{"model":"jev-canary-1","answers":{"urgent":{"type":"noul","noul":0.5,"note":%s},"team":{"type":"choice","choice":"infrastructure","confidence":1,"probabilities":{"billing":0,"infrastructure":1}}},"usage":{"input_tokens":3,"output_tokens":0}}`, escaped)
	case trigger == "TRIGGER-UNSOLICITED":
		rec := httptest.NewRecorder()
		h.next.ServeHTTP(rec, r)
		body := asRealModel(rec.Body.Bytes())
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		// The answer, then in the same write a 204 nobody asked for.
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		fmt.Fprintf(buf, "HTTP/1.1 204 No Content\r\nAuthorization: %s\r\nX-Echo: %s\r\n\r\n", auth, auth)
		buf.Flush()
		go func() { time.Sleep(3 * time.Second); conn.Close() }()
	case r.URL.Path == "/v1/systemone":
		rec := httptest.NewRecorder()
		h.next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		body := asRealModel(rec.Body.Bytes())
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	default:
		h.next.ServeHTTP(w, r)
	}
}

// asRealModel passes the stand-in's synthetic answers off as a real
// model's, the way a real server's would be recorded.
func asRealModel(body []byte) []byte {
	return bytes.ReplaceAll(body, []byte(`"model":"`+standin.SyntheticModel+`"`), []byte(`"model":"jev-canary-1"`))
}

// evilModels answers GET /v1/models with a listing that carries the
// Authorization header it was sent, literally or JSON-escaped.
func evilModels(escaped bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		desc, _ := json.Marshal("key " + r.Header.Get("Authorization"))
		d := string(desc)
		if escaped {
			d = strings.ReplaceAll(d, "-", `\u002d`)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"models":[{"name":"jev-latest","description":%s,"release_date":"2026-09-15"}]}`, d)
	})
}

const canarySet = `name: canary
model: jev-latest
state: "The server room is on fire and the backups failed"
questions:
  urgent:
    type: noul
    instructions: Does this need attention today?
  team:
    type: choice
    instructions: Which team should handle this?
    criteria:
      infrastructure: servers, backups, outages
      billing: invoices and refunds
`

// TestKeyCanary runs ask live (success, 422, 429 then success, 500, a
// server echoing the key into an answer), models, recording to a fixture
// file and a temporary database, then replays offline, and asserts the
// key's bytes appear in no file, no output and no error.
func TestKeyCanary(t *testing.T) {
	clearEnv(t)
	t.Setenv("TYPESAFE_API_KEY", canaryKey)
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
	srv := httptest.NewServer(h)
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
	live := []string{"--db", db, "--fixtures", rec, "--base-url", srv.URL}
	step("live success", 0, "mode stand-in", append([]string{"ask"}, append(live, set)...)...)
	step("cached", 0, `"source": "cache"`, append([]string{"ask", "--json"}, append(live, set)...)...)
	step("422", 2, "rejected (HTTP 422)", append([]string{"ask", "--state", `"TRIGGER-422"`}, append(live, set)...)...)
	step("429 then success", 0, "jev-canary-1", append([]string{"ask", "--state", `"TRIGGER-429 now"`}, append(live, set)...)...)
	step("500", 1, "unavailable (HTTP 500)", append([]string{"ask", "--state", `"TRIGGER-500"`}, append(live, set)...)...)
	step("echo", 1, "contains the API key", append([]string{"ask", "--state", `"TRIGGER-ECHO"`, "--json"}, append(live, set)...)...)
	step("echo escaped", 1, "contains the API key", append([]string{"ask", "--state", `"TRIGGER-ESCAPED"`, "--json"}, append(live, set)...)...)
	// net/http logs the unasked 204 (with the key in it) from a goroutine
	// of its own, possibly after the command has returned: wait for it.
	unsOut, unsErr := runAwaiting(t, "Unsolicited response", append([]string{"ask", "--state", `"TRIGGER-UNSOLICITED"`}, append(live, set)...)...)
	printed = append(printed, unsOut, unsErr)
	if !strings.Contains(unsErr, "starting with [the server's bytes are not shown]") {
		t.Fatalf("net/http's log line was not withheld:\n%s", unsErr)
	}
	evil := httptest.NewServer(evilModels(false))
	defer evil.Close()
	evilEsc := httptest.NewServer(evilModels(true))
	defer evilEsc.Close()
	step("models echoing the key", 1, "the /v1/models response contains the API key", "models", "--base-url", evil.URL)
	step("models echoing the key escaped", 1, "the /v1/models response contains the API key", "models", "--json", "--base-url", evilEsc.URL)
	step("models", 0, "standin-", "models", "--base-url", srv.URL)
	t.Setenv("TYPESAFE_BASE_URL", srv.URL)
	step("models via env", 0, "standin-", "models", "--json")
	step("fresh via env", 0, "mode stand-in", "ask", "--fresh", "--db", db, "--fixtures", rec, set)
	t.Setenv("TYPESAFE_BASE_URL", "")

	if h.hits["TRIGGER-429"] != 2 || h.hits["TRIGGER-500"] < 2 || h.hits["TRIGGER-422"] != 1 {
		t.Fatalf("server saw %v: want 429 retried once, 500 retried, 422 not retried", h.hits)
	}
	if h.auth == 0 {
		t.Fatal("the key was never sent to the chosen server")
	}

	// The fixture file holds the four successful live exchanges, mode 0600.
	exs, warns, err := fixtures.ReadFile(rec)
	if err != nil || len(warns) != 0 || len(exs) != 4 {
		t.Fatalf("recorded %d exchanges (%v, %v), want 4", len(exs), warns, err)
	}
	if st, err := os.Stat(rec); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("fixture file mode %v %v", st.Mode(), err)
	}

	// Replay offline, without the key, from the fixture file and from the DB.
	t.Setenv("TYPESAFE_API_KEY", "")
	before := h.total()
	step("replay fixtures", 0, "[cache jev-canary-1", "ask", "--offline", "--db", filepath.Join(work, "other.db"), "--fixtures", rec, set)
	if h.total() != before {
		t.Fatal("offline replay called the server")
	}
	step("replay db offline", 0, "[cache jev-canary-1", "ask", "--offline", "--db", db, "--state", `"TRIGGER-429 now"`, set)
	t.Setenv("TYPESAFE_API_KEY", canaryKey)
	step("replay db in stand-in mode", 0, "[cache jev-canary-1", "ask", "--db", db, "--base-url", srv.URL, "--state", `"TRIGGER-429 now"`, set)
	if h.total() != before {
		t.Fatal("replay from the database called the server")
	}
	t.Setenv("TYPESAFE_API_KEY", canaryKey)

	// Serve the recorded file with the key required and ask it afresh.
	serveOut, serveErr := serveWhile(t, []string{"serve", "--addr", "127.0.0.1:0", "--require-key", "--fixtures", rec}, func(base string) {
		step("ask jevlab serve", 0, "[live jev-canary-1", "ask", "--fresh", "--db", db, "--base-url", base, set)
		step("models of jevlab serve", 0, "answered by jev-canary-1", "models", "--base-url", base)
	})
	printed = append(printed, serveOut, serveErr)
	if !strings.Contains(serveOut, "stopped after") || !strings.Contains(serveOut, "key required") {
		t.Fatalf("serve output:\n%s\n%s", serveOut, serveErr)
	}

	assertNoKey(t, canaryKey, printed, work)
}

// serveWhile runs `jevlab serve` as a child process (the built binary,
// with this process's environment), calls fn with its base URL, then stops
// it with SIGINT (as Ctrl-C would) and returns what it printed. A child,
// not in-process: a SIGINT sent to the test process itself reaches every
// signal handler registered there — teatest registers one per program and
// logs from it after its test ended, which panics the test binary (seen
// under -count=3).
func serveWhile(t *testing.T, args []string, fn func(base string)) (string, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(jevlabBinary(t), args...)
	cmd.Stdout, cmd.Stderr = out, errf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	read := func() (string, string) {
		o, _ := os.ReadFile(out.Name())
		e, _ := os.ReadFile(errf.Name())
		return string(o), string(e)
	}
	addr := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)\n`)
	var base string
	deadline := time.Now().Add(20 * time.Second)
	for base == "" {
		select {
		case code := <-done:
			o, e := read()
			t.Fatalf("serve exited %d before serving:\n%s\n%s", code, o, e)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not start within 20s")
		}
		o, _ := read()
		if m := addr.FindStringSubmatch(o); m != nil && strings.Contains(o, "Ctrl-C") {
			base = m[1]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fn(base)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			o, e := read()
			t.Fatalf("serve exited %d:\n%s\n%s", code, o, e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}
	out.Close()
	errf.Close()
	return read()
}

// runAwaiting runs jevlab in-process like askRun but keeps its stderr open
// until want appears there (at most 10s): output that another goroutine
// logs after the command returned still lands in it.
func runAwaiting(t *testing.T, want string, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	run(args, nil, out, errf)
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, _ := os.ReadFile(errf.Name())
		if strings.Contains(string(e), want) {
			break
		}
		if time.Now().After(deadline) {
			o, _ := os.ReadFile(out.Name())
			t.Fatalf("%q never reached jevlab's stderr (is the standard logger routed through it?)\nstdout %s\nstderr %s", want, o, e)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out.Close()
	errf.Close()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	return string(o), string(e)
}

func (h *hostile) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, v := range h.hits {
		n += v
	}
	return n
}

// assertNoKey fails if key appears in any printed text or in any file
// under dirs (the database, its WAL and every file written), literally or
// with its dashes JSON-escaped (provider.ContainsSecret), as strings(1)
// would find it.
func assertNoKey(t *testing.T, key string, printed []string, dirs ...string) {
	t.Helper()
	for i, p := range printed {
		if provider.ContainsSecret([]byte(p), key) {
			t.Errorf("printed text %d contains the key:\n%s", i, p)
		}
	}
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if provider.ContainsSecret(data, key) || bytes.Contains(data, []byte(strings.ReplaceAll(key, "-", `\u002d`))) {
				t.Errorf("%s contains the key", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 3 {
		t.Fatalf("checked only %d files; the test wrote nothing?", files)
	}
}

// TestFilesCannotRedirectTheKey: a question set naming another server
// (base_url:, or a URL anywhere in it) and a fixture file naming one cannot
// change where the key goes: only --base-url / $TYPESAFE_BASE_URL can.
func TestFilesCannotRedirectTheKey(t *testing.T) {
	clearEnv(t)
	t.Setenv("TYPESAFE_API_KEY", canaryKey)
	type counter struct {
		mu   sync.Mutex
		n    int
		keys int
	}
	serve := func(c *counter) *httptest.Server {
		si, err := standin.New(standin.Config{Synthetic: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(si.Close)
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.mu.Lock()
			c.n++
			if strings.Contains(r.Header.Get("Authorization"), canaryKey) {
				c.keys++
			}
			c.mu.Unlock()
			si.ServeHTTP(w, r)
		}))
	}
	var chosen, attacker counter
	good := serve(&chosen)
	defer good.Close()
	evil := serve(&attacker)
	defer evil.Close()

	work := t.TempDir()
	// A fixture file whose lines name the attacker's server in every way a
	// careless reader might honour.
	fx := filepath.Join(work, "evil.jsonl")
	line := fmt.Sprintf(`{"base_url":%q,"url":%q,"request":{"model":"jev-latest","state":"x","questions":{"q":{"type":"noul"}}},"response":{"model":"m","answers":{"q":{"type":"noul","noul":0.5}},"usage":{"input_tokens":1,"output_tokens":0}}}`+"\n", evil.URL, evil.URL+"/v1/systemone")
	if err := os.WriteFile(fx, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	sets := map[string]string{
		"base_url field": fmt.Sprintf("name: evil\nbase_url: %s\nstate: hello\nfixtures: [evil.jsonl]\nquestions:\n  q:\n    type: noul\n    instructions: Is it urgent?\n", evil.URL),
		"url in model":   fmt.Sprintf("name: evil\nmodel: %s\nstate: hello\nfixtures: [evil.jsonl]\nquestions:\n  q:\n    type: noul\n    instructions: Is it urgent?\n", evil.URL),
		"plain":          "name: evil\nstate: hello\nfixtures: [evil.jsonl]\nquestions:\n  q:\n    type: noul\n    instructions: Is it urgent?\n",
	}
	for name, body := range sets {
		t.Run(name, func(t *testing.T) {
			set := filepath.Join(work, strings.ReplaceAll(name, " ", "_")+".yaml")
			if err := os.WriteFile(set, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, how := range []string{"flag", "env"} {
				chosen.mu.Lock()
				before := chosen.n
				chosen.mu.Unlock()
				args := []string{"ask", "--fresh", "--db", filepath.Join(work, "db"), set}
				if how == "flag" {
					args = append(args, "--base-url", good.URL)
				} else {
					t.Setenv("TYPESAFE_BASE_URL", good.URL)
				}
				code, out, errOut := askRun(t, args...)
				t.Setenv("TYPESAFE_BASE_URL", "")
				chosen.mu.Lock()
				sent := chosen.n - before
				chosen.mu.Unlock()
				// The set is either rejected (exit 2) or asked of the chosen
				// server, never of the attacker's.
				if code != 0 && code != 2 {
					t.Fatalf("%s: exit %d: %s", how, code, errOut)
				}
				if code == 0 && sent == 0 {
					t.Fatalf("%s: answered without asking the chosen server:\n%s", how, out)
				}
				if strings.Contains(out+errOut, canaryKey) {
					t.Fatalf("%s: output contains the key", how)
				}
			}
		})
	}
	if attacker.n != 0 {
		t.Fatalf("the attacker's server got %d requests (%d with the key)", attacker.n, attacker.keys)
	}
	if chosen.keys == 0 {
		t.Fatal("the chosen server never got the key")
	}
}
