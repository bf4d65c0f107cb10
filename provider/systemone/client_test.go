package systemone

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// fakeKey is a made-up key; tests assert it never leaks.
const fakeKey = "sk-test-CANARY-7f3a9c1e5b"

// secretState is the state of testRequest; tests assert it never leaks.
const secretState = "Customer 4471 says: my PIN is 9182 and I was charged twice"

func testRequest(t testing.TB) *provider.Request {
	t.Helper()
	var r provider.Request
	body := `{"model":"jev-latest","state":"` + secretState + `","questions":{
		"urgent":{"type":"noul","instructions":"Is it urgent?"},
		"team":{"type":"choice","instructions":"Which team?","criteria":{"billing":"money","orders":null}},
		"anger":{"type":"score","instructions":"How upset?","criteria":["calm","annoyed","furious"]}}}`
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

const okBody = `{"model":"jev-1.13.0","answers":{
 "team":{"type":"choice","choice":"billing","confidence":0.8,"probabilities":{"orders":0.1,"billing":0.9}},
 "urgent":{"type":"noul","noul":0.73},
 "anger":{"type":"score","score":1.05,"confidence":0.92,"legend":{"0":"calm","1":"annoyed","2":"furious"},"probabilities":{"0":0.0,"1":0.95,"2":0.05}},
 "extra":{"type":"noul","noul":0.5}},
 "usage":{"input_tokens":318,"output_tokens":34}}`

// waits records the waits a client would have slept.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// newTestClient starts h on loopback and returns a client for it whose
// sleeps are recorded instead of slept.
func newTestClient(t *testing.T, h http.Handler, mod func(*Config)) (*Client, *waits) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := Config{BaseURL: srv.URL, APIKey: fakeKey, Version: "test", MaxRetries: 2, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &waits{}
	c.sleep = w.sleep
	t.Cleanup(func() { c.Close() })
	return c, w
}

func TestAskSuccess(t *testing.T) {
	var gotHeader http.Header
	var gotBody []byte
	var gotPath, gotMethod string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader, gotPath, gotMethod = r.Header.Clone(), r.URL.Path, r.Method
		gotBody, _ = io.ReadAll(r.Body)
		w.Header().Set("x-typesafe-request-id", "req_123")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okBody)
	})
	c, _ := newTestClient(t, h, nil)
	req := testRequest(t)
	before := time.Now().UTC()
	res, err := c.Ask(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if gotMethod != "POST" || gotPath != "/v1/systemone" {
		t.Errorf("sent %s %s", gotMethod, gotPath)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer " + fakeKey,
		"Accept":        "application/json",
		"Content-Type":  "application/json",
		"User-Agent":    "jevlab/test",
	} {
		if got := gotHeader.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if gotHeader.Get("X-TypeSafe-Retry-Count") != "" {
		t.Error("first attempt carries a retry count")
	}
	wantBody := `{"model":"jev-latest","state":"` + secretState + `","questions":{"urgent":{"type":"noul","instructions":"Is it urgent?"},"team":{"type":"choice","instructions":"Which team?","criteria":{"billing":"money","orders":null}},"anger":{"type":"score","instructions":"How upset?","criteria":["calm","annoyed","furious"]}}}`
	if string(gotBody) != wantBody {
		t.Errorf("body\n got %s\nwant %s", gotBody, wantBody)
	}
	if res.Model != "jev-1.13.0" || res.RequestID != "req_123" || res.Attempts != 1 {
		t.Errorf("model %q request id %q attempts %d", res.Model, res.RequestID, res.Attempts)
	}
	if res.Usage != (provider.Usage{InputTokens: 318, OutputTokens: 34}) {
		t.Errorf("usage %+v", res.Usage)
	}
	// 318 tokens × $0.042 per million = $0.000013356.
	if d := res.CostUSD - 0.000013356; d > 1e-15 || d < -1e-15 {
		t.Errorf("cost %v", res.CostUSD)
	}
	if res.Latency <= 0 {
		t.Errorf("latency %v", res.Latency)
	}
	if len(res.Answers) != 3 {
		t.Fatalf("%d answers, want 3 (extra dropped)", len(res.Answers))
	}
	ids := []string{res.Answers[0].ID, res.Answers[1].ID, res.Answers[2].ID}
	if strings.Join(ids, ",") != "urgent,team,anger" {
		t.Errorf("answer order %v", ids)
	}
	team, _ := res.Answer("team")
	if team.Choice != "billing" || team.Probs[0] != 0.9 || team.Probs[1] != 0.1 {
		t.Errorf("team %+v", team)
	}
	for _, a := range res.Answers {
		p := a.Provenance
		if p.Source != provider.SourceLive || p.Model != "jev-1.13.0" || p.RecordedAt.Before(before.Add(-time.Second)) {
			t.Errorf("%s provenance %+v", a.ID, p)
		}
	}
	if len(res.Exchanges) != 1 {
		t.Fatalf("%d exchanges", len(res.Exchanges))
	}
	ex := res.Exchanges[0]
	if string(ex.Request) != wantBody {
		t.Errorf("exchange request %s", ex.Request)
	}
	if strings.ContainsAny(string(ex.Response), "\n\r") || !json.Valid(ex.Response) {
		t.Errorf("exchange response is not one line of JSON: %q", ex.Response)
	}
	if _, err := time.Parse(time.RFC3339Nano, ex.RecordedAt); err != nil || ex.LatencyMS <= 0 {
		t.Errorf("exchange recorded_at %q latency %v", ex.RecordedAt, ex.LatencyMS)
	}
}

func TestAskDefaultsModelAndSendsNoKeyWhenEmpty(t *testing.T) {
	var auth, model string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		var body struct{ Model string }
		json.NewDecoder(r.Body).Decode(&body)
		model = body.Model
		io.WriteString(w, okBody)
	})
	c, _ := newTestClient(t, h, func(c *Config) { c.APIKey = "" })
	req := testRequest(t)
	req.Model = ""
	if _, err := c.Ask(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if auth != "" || model != "jev-latest" {
		t.Errorf("auth %q model %q", auth, model)
	}
	if req.Model != "" {
		t.Error("Ask modified the caller's request")
	}
}

func TestInvalidRequestIsNotSent(t *testing.T) {
	var hits atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }), nil)
	req := testRequest(t)
	req.Questions[1].Question.Options = req.Questions[1].Question.Options[:1]
	_, err := c.Ask(context.Background(), req)
	if provider.KindOf(err) != provider.KindInvalid || !strings.Contains(err.Error(), `question "team"`) {
		t.Fatalf("err %v (kind %q)", err, provider.KindOf(err))
	}
	if hits.Load() != 0 {
		t.Error("an invalid request reached the server")
	}
}

// TestCachedQuestionEditedInPlaceIsValidated: after two successful asks
// have filled the encoder's question cache and body memo, a question cut
// to one option in place is rejected locally on the next Ask, never sent.
func TestCachedQuestionEditedInPlaceIsValidated(t *testing.T) {
	var hits atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okBody)
	})
	c, _ := newTestClient(t, h, nil)
	req := testRequest(t)
	for i := 0; i < 2; i++ {
		if _, err := c.Ask(context.Background(), req); err != nil {
			t.Fatalf("ask %d: %v", i+1, err)
		}
	}
	q := &req.Questions[1].Question
	q.Options = q.Options[:1]
	_, err := c.Ask(context.Background(), req)
	if provider.KindOf(err) != provider.KindInvalid || !strings.Contains(err.Error(), `question "team": criteria: has 1 option(s)`) {
		t.Fatalf("err %v (kind %q), want a local rejection of question \"team\"", err, provider.KindOf(err))
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("server saw %d requests, want 2: the edited request was sent", n)
	}
}

func TestStatusMapping(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		kind    provider.ErrorKind
		retried bool
		msg     string // substring of the error text
		details int
	}{
		{"400", 400, nil, `{"error":{"message":"bad body"}}`, provider.KindRejected, false, "bad body", 0},
		{"401", 401, nil, `{"detail":{"message":"Cannot authenticate with the server.","error_type":"authentication_error"}}`, provider.KindAuth, false, "Cannot authenticate with the server. (authentication_error)", 0},
		{"403", 403, nil, `{"detail":"Must supply an API key!"}`, provider.KindAuth, false, "Must supply an API key!", 0},
		{"404", 404, nil, `{"detail":"Not Found"}`, provider.KindRejected, false, "Not Found", 0},
		{"408", 408, nil, ``, provider.KindTimeout, true, "Request Timeout", 0},
		{"422", 422, nil, `{"detail":[{"loc":["body","questions","anger","score","criteria"],"msg":"List should have at least 2 items","type":"too_short","input":["` + secretState + `"]},{"loc":["body","questions",0],"msg":"bad","type":"x"}]}`, provider.KindRejected, false, "body.questions.anger.score.criteria: List should have at least 2 items; body.questions.0: bad", 2},
		// A 429 is retried until the time budget runs out, not for MaxRetries.
		{"429", 429, map[string]string{"Retry-After": "5"}, `{"message":"slow down"}`, provider.KindRateLimited, true, "slow down; retry budget of 30s exhausted (retry after 5s) after 7 attempts", 0},
		{"500", 500, nil, `{"error":"boom"}`, provider.KindUnavailable, true, "boom", 0},
		{"502", 502, nil, "<html><body>Bad Gateway</body></html>", provider.KindUnavailable, true, "Bad Gateway", 0},
		{"503", 503, nil, "upstream connect error\nmore", provider.KindUnavailable, true, "upstream connect error", 0},
		{"529", 529, nil, `{"detail":{"message":"Overloaded","error_type":"overloaded_error"}}`, provider.KindUnavailable, true, "Overloaded", 0},
		{"405", 405, nil, ``, provider.KindRejected, false, "Method Not Allowed", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("x-typesafe-request-id", "req_9")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			c, _ := newTestClient(t, h, nil)
			clock := time.Now()
			c.now = func() time.Time { return clock }
			c.sleep = func(ctx context.Context, d time.Duration) error { clock = clock.Add(d); return ctx.Err() }
			_, err := c.Ask(context.Background(), testRequest(t))
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *provider.Error", err)
			}
			if pe.Kind != tc.kind || pe.Status != tc.status || pe.RequestID != "req_9" {
				t.Errorf("kind %q status %d request %q", pe.Kind, pe.Status, pe.RequestID)
			}
			wantHits := int32(1)
			switch {
			case tc.status == 429:
				wantHits = 7 // six waits of 5s fill the 30s budget
			case tc.retried:
				wantHits = 3 // MaxRetries 2
			}
			if hits.Load() != wantHits || pe.Attempts != int(wantHits) {
				t.Errorf("%d hits, %d attempts, want %d", hits.Load(), pe.Attempts, wantHits)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
			if len(pe.Details) != tc.details {
				t.Errorf("details %+v", pe.Details)
			}
			if strings.Contains(err.Error(), secretState) || strings.Contains(err.Error(), fakeKey) {
				t.Errorf("error leaks: %v", err)
			}
		})
	}
}

func TestMalformedSuccessBody(t *testing.T) {
	cases := []struct{ name, body, msg string }{
		{"not json", `Internal error`, "not a System One answer body"},
		{"truncated", okBody[:40], "not a System One answer body"},
		{"no answers", `{"model":"m","usage":{"input_tokens":1}}`, `question "urgent": no answer`},
		{"missing one", strings.Replace(okBody, `"urgent"`, `"urgent2"`, 1), `question "urgent": no answer`},
		{"wrong choice", strings.Replace(okBody, `"choice":"billing"`, `"choice":"legal"`, 1), `"legal" is not an option`},
		{"bad sum", strings.Replace(okBody, `"billing":0.9`, `"billing":0.5`, 1), "sum to 0.6000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				io.WriteString(w, tc.body)
			}), nil)
			res, err := c.Ask(context.Background(), testRequest(t))
			if res != nil || provider.KindOf(err) != provider.KindMalformed {
				t.Fatalf("res %v err %v", res, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
			if hits.Load() != 1 {
				t.Errorf("a malformed answer was retried (%d hits)", hits.Load())
			}
		})
	}
}

func TestAttemptTimeoutIsRetriedThenReported(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	c, _ := newTestClient(t, h, func(c *Config) { c.Timeout = 50 * time.Millisecond; c.MaxRetries = 1 })
	t.Cleanup(func() { close(release) }) // before the server's Close
	_, err := c.Ask(context.Background(), testRequest(t))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindTimeout || pe.Attempts != 2 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "no response within 50ms") {
		t.Errorf("message %q", err)
	}
}

func TestContextEnds(t *testing.T) {
	block := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	c, _ := newTestClient(t, h, nil)
	t.Cleanup(func() { close(block) }) // before the server's Close

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	_, err := c.Ask(ctx, testRequest(t))
	if provider.KindOf(err) != provider.KindCanceled {
		t.Errorf("cancel: %v (kind %q)", err, provider.KindOf(err))
	}

	ctx, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	_, err = c.Ask(ctx, testRequest(t))
	if provider.KindOf(err) != provider.KindTimeout {
		t.Errorf("deadline: %v (kind %q)", err, provider.KindOf(err))
	}
}

// flaky answers with the scripted responses in turn, then okBody.
type flaky struct {
	mu      sync.Mutex
	script  []func(w http.ResponseWriter)
	retries []string // X-TypeSafe-Retry-Count per hit
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	f.mu.Lock()
	f.retries = append(f.retries, r.Header.Get("X-TypeSafe-Retry-Count"))
	var step func(w http.ResponseWriter)
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	if step != nil {
		step(w)
		return
	}
	io.WriteString(w, okBody)
}

func status(code int, hdr ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.WriteHeader(code)
	}
}

func TestRetryWaits(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		steps []func(http.ResponseWriter)
		waits []time.Duration
	}{
		{"retry-after seconds", []func(http.ResponseWriter){status(429, "Retry-After", "2")}, []time.Duration{2 * time.Second}},
		{"retry-after fractional", []func(http.ResponseWriter){status(503, "Retry-After", "0.25")}, []time.Duration{250 * time.Millisecond}},
		{"retry-after http date", []func(http.ResponseWriter){status(529, "Retry-After", now.Add(3*time.Second).Format(http.TimeFormat))}, []time.Duration{3 * time.Second}},
		{"retry-after-ms preferred", []func(http.ResponseWriter){status(429, "Retry-After", "9", "retry-after-ms", "1500")}, []time.Duration{1500 * time.Millisecond}},
		{"retry-after capped", []func(http.ResponseWriter){status(429, "Retry-After", "3600")}, []time.Duration{20 * time.Second}},
		{"backoff doubles to the cap", []func(http.ResponseWriter){status(500), status(502), status(503), status(500)},
			[]time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{script: tc.steps}
			c, w := newTestClient(t, f, func(c *Config) {
				c.MaxRetries = 5
				c.BackoffMax = 2 * time.Second
				c.MaxRetryAfter = 20 * time.Second
			})
			c.now = func() time.Time { return now }
			c.retryJitter = 0
			res, err := c.Ask(context.Background(), testRequest(t))
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempts != len(tc.steps)+1 {
				t.Errorf("attempts %d", res.Attempts)
			}
			got := w.get()
			if len(got) != len(tc.waits) {
				t.Fatalf("waits %v, want %v", got, tc.waits)
			}
			for i := range got {
				if got[i] != tc.waits[i] {
					t.Errorf("wait %d = %v, want %v", i, got[i], tc.waits[i])
				}
			}
			want := []string{""}
			for i := 1; i <= len(tc.steps); i++ {
				want = append(want, string(rune('0'+i)))
			}
			if strings.Join(f.retries, ",") != strings.Join(want, ",") {
				t.Errorf("retry-count headers %q, want %q", f.retries, want)
			}
		})
	}
}

func TestBackoffJitterStaysWithinQuarter(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		d := c.backoff(2) // 1s before jitter
		if d < 750*time.Millisecond || d > time.Second {
			t.Fatalf("backoff(2) = %v, want in [750ms, 1s]", d)
		}
	}
}

func TestRetryBudgetExhausted(t *testing.T) {
	// A fake clock advanced by the recorded sleeps: waits 1s and 2s fit a
	// 3s budget; the third wait (4s) would not, so the call stops after 3
	// attempts.
	f := &flaky{script: []func(http.ResponseWriter){status(503), status(503), status(503), status(503), status(503)}}
	c, w := newTestClient(t, f, func(c *Config) {
		c.MaxRetries = 10
		c.RetryBudget = 3 * time.Second
		c.BackoffBase = time.Second
		c.BackoffMax = 10 * time.Second
	})
	c.retryJitter = 0
	var mu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	c.sleep = func(ctx context.Context, d time.Duration) error {
		w.sleep(ctx, d)
		mu.Lock()
		clock = clock.Add(d)
		mu.Unlock()
		return nil
	}
	_, err := c.Ask(context.Background(), testRequest(t))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindUnavailable || pe.Attempts != 3 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "retry budget of 3s exhausted") || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("message %q", err)
	}
	if got := w.get(); len(got) != 2 || got[0] != time.Second || got[1] != 2*time.Second {
		t.Errorf("waits %v", got)
	}

	// A Retry-After beyond the budget is not waited for.
	f2 := &flaky{script: []func(http.ResponseWriter){status(429, "Retry-After", "45")}}
	c2, w2 := newTestClient(t, f2, func(c *Config) { c.RetryBudget = 30 * time.Second })
	_, err = c2.Ask(context.Background(), testRequest(t))
	if !errors.As(err, &pe) || pe.Kind != provider.KindRateLimited || pe.Attempts != 1 || pe.RetryAfter != 45*time.Second {
		t.Fatalf("err %v", err)
	}
	if len(w2.get()) != 0 {
		t.Errorf("waited %v", w2.get())
	}
}

func TestMaxRetries(t *testing.T) {
	for _, tc := range []struct {
		max, hits int
	}{{-1, 1}, {1, 2}, {3, 4}} {
		var hits atomic.Int32
		c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(500)
		}), func(c *Config) { c.MaxRetries = tc.max })
		_, err := c.Ask(context.Background(), testRequest(t))
		if provider.KindOf(err) != provider.KindUnavailable || int(hits.Load()) != tc.hits {
			t.Errorf("MaxRetries %d: %d hits, err %v", tc.max, hits.Load(), err)
		}
	}
}

func TestTransportErrorRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	c, err := New(Config{BaseURL: url, APIKey: fakeKey, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	w := &waits{}
	c.sleep = w.sleep
	_, err = c.Ask(context.Background(), testRequest(t))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindUnavailable || pe.Attempts != 3 || len(w.get()) != 2 {
		t.Fatalf("err %v waits %v", err, w.get())
	}
	if !strings.Contains(err.Error(), "cannot reach "+url) || strings.Contains(err.Error(), fakeKey) {
		t.Errorf("message %q", err)
	}
}

func TestConcurrencyCap(t *testing.T) {
	var inflight, peak atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(40 * time.Millisecond)
		inflight.Add(-1)
		io.WriteString(w, okBody)
	})
	c, _ := newTestClient(t, h, func(c *Config) { c.Concurrency = 3 })
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Ask(context.Background(), testRequest(t))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("peak concurrency %d, want 3", p)
	}
}

func TestRequestsPerSecond(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		io.WriteString(w, okBody)
	})
	c, _ := newTestClient(t, h, func(c *Config) { c.RPS = 20; c.Concurrency = 6 })
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Ask(context.Background(), testRequest(t)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// 6 requests at 20/s with a burst of 1: the last starts ≥ 5×50ms after
	// the first.
	if span := times[len(times)-1].Sub(times[0]); span < 225*time.Millisecond {
		t.Errorf("6 requests spanned %v, want ≥ 250ms at 20 rps", span)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		io.WriteString(w, okBody)
	}))
	defer other.Close()
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/systemone", http.StatusTemporaryRedirect)
	}), nil)
	_, err := c.Ask(context.Background(), testRequest(t))
	if provider.KindOf(err) != provider.KindRejected || !strings.Contains(err.Error(), "redirect refused") {
		t.Fatalf("err %v", err)
	}
	if elsewhere.Load() != 0 {
		t.Error("the client followed a redirect")
	}
}

func TestKeyAndStateNeverInErrors(t *testing.T) {
	// A hostile server echoes the Authorization header and the body back in
	// every shape of error the client reads.
	echo := func(r *http.Request) (string, string) {
		b, _ := io.ReadAll(r.Body)
		return r.Header.Get("Authorization"), string(b)
	}
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	handlers := map[string]http.HandlerFunc{
		"401 error string": func(w http.ResponseWriter, r *http.Request) {
			auth, _ := echo(r)
			w.WriteHeader(401)
			io.WriteString(w, `{"error":`+js("bad key "+auth)+`}`)
		},
		"422 detail list": func(w http.ResponseWriter, r *http.Request) {
			_, body := echo(r)
			w.WriteHeader(422)
			io.WriteString(w, `{"detail":[{"loc":["body","state"],"msg":`+js("bad state "+secretState)+`,"input":`+js(body)+`}]}`)
		},
		"500 plain text": func(w http.ResponseWriter, r *http.Request) {
			auth, body := echo(r)
			w.WriteHeader(500)
			io.WriteString(w, auth+" "+body)
		},
		"400 message": func(w http.ResponseWriter, r *http.Request) {
			auth, _ := echo(r)
			w.WriteHeader(400)
			io.WriteString(w, `{"message":`+js(strings.TrimPrefix(auth, "Bearer ")+" / "+secretState)+`}`)
		},
		"200 bad choice": func(w http.ResponseWriter, r *http.Request) {
			echo(r)
			io.WriteString(w, strings.Replace(okBody, `"choice":"billing"`, `"choice":`+js(secretState), 1))
		},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			c, _ := newTestClient(t, h, func(c *Config) { c.MaxRetries = -1 })
			_, err := c.Ask(context.Background(), testRequest(t))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, fakeKey) || strings.Contains(msg, secretState) || strings.Contains(msg, "PIN is 9182") {
				t.Errorf("error leaks the key or the state: %s", msg)
			}
			if !strings.Contains(msg, "[redacted]") {
				t.Errorf("expected a redaction marker: %s", msg)
			}
		})
	}
}

func TestModels(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   provider.ErrorKind
		n      int
	}{
		{"ok", 200, `{"models":[{"name":"jev-latest","description":"newest stable","release_date":"2026-09-15"},{"name":"jev-preview","description":"","release_date":"2026-10-14"}]}`, "", 2},
		{"empty list", 200, `{"models":[]}`, "", 0},
		{"no models field", 200, `{"data":[]}`, provider.KindMalformed, 0},
		{"not json", 200, `[`, provider.KindMalformed, 0},
		{"auth", 401, `{"detail":"Cannot authenticate"}`, provider.KindAuth, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var method, path, auth string
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				method, path, auth = r.Method, r.URL.Path, r.Header.Get("Authorization")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}), nil)
			ms, err := c.Models(context.Background())
			if method != "GET" || path != "/v1/models" || auth != "Bearer "+fakeKey {
				t.Errorf("sent %s %s auth %q", method, path, auth)
			}
			if tc.kind != "" {
				if provider.KindOf(err) != tc.kind {
					t.Fatalf("err %v, want kind %s", err, tc.kind)
				}
				return
			}
			if err != nil || len(ms) != tc.n {
				t.Fatalf("models %v err %v", ms, err)
			}
			if tc.n > 0 && (ms[0].Name != "jev-latest" || ms[0].ReleaseDate != "2026-09-15") {
				t.Errorf("models %+v", ms)
			}
		})
	}
}

func TestRateLimitWaitBeyondDeadlineIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	c, w := newTestClient(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(rw, okBody)
	}), func(c *Config) { c.RPS = 0.5; c.MaxRetries = 3 })
	if _, err := c.Ask(context.Background(), testRequest(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Ask(ctx, testRequest(t)) // the next slot is ~2s away
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindTimeout || pe.Attempts != 1 || len(w.get()) != 0 {
		t.Fatalf("err %v waits %v", err, w.get())
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests reached the server", hits.Load())
	}
}
