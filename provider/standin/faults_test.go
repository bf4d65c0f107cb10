package standin

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
)

const faultBody = `{"model":"jev-latest","state":"my card was lost","questions":{` +
	`"a":{"type":"noul","instructions":"lost?"},` +
	`"b":{"type":"choice","criteria":{"lost":null,"fee":null}},` +
	`"c":{"type":"score","criteria":["low","high"]}}}`

func do(h http.Handler, ctx context.Context, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/v1/systemone", strings.NewReader(body)).WithContext(ctx)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func mustNew(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// within reports whether count is within 4.5 standard deviations of n·rate.
func within(count, n int, rate float64) bool {
	sd := math.Sqrt(float64(n) * rate * (1 - rate))
	return math.Abs(float64(count)-float64(n)*rate) <= 4.5*sd+1
}

// TestFaultRates drives 4000 requests concurrently with every fault at once
// and checks each outcome's share, what the client sees for each, and that
// Stats reconciles with the responses.
func TestFaultRates(t *testing.T) {
	f := Faults{FailRate: 0.10, TimeoutRate: 0.05, MalformedRate: 0.08, MissingRate: 0.12, TimeoutAfter: time.Millisecond}
	s := mustNew(t, Config{Synthetic: true, Faults: f, Seed: 42})
	var req provider.Request
	if err := json.Unmarshal([]byte(faultBody), &req); err != nil {
		t.Fatal(err)
	}
	const n = 4000
	var mu sync.Mutex
	seen := map[string]int{}
	statuses := map[int]int{}
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				rec := do(s, context.Background(), faultBody)
				outcome := classify(t, &req, rec)
				mu.Lock()
				seen[outcome]++
				statuses[rec.Code]++
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	st := s.Stats()
	checks := []struct {
		name  string
		got   int
		stat  int64
		rate  float64
		label string
	}{
		{"fail", seen["unavailable"], st.Unavailable, f.FailRate, "5xx/529"},
		{"timeout", seen["timeout"], st.Timeout, f.TimeoutRate, "408"},
		{"malformed", seen["malformed"], st.Malformed, f.MalformedRate, "cut-off JSON"},
		{"missing", seen["missing"], st.Missing, f.MissingRate, "an answer missing"},
		{"ok", seen["ok"], st.OK, 1 - f.FailRate - f.TimeoutRate - f.MalformedRate - f.MissingRate, "complete"},
	}
	for _, c := range checks {
		if !within(c.got, n, c.rate) {
			t.Errorf("%s: %d of %d (%s), want about %.0f", c.name, c.got, n, c.label, float64(n)*c.rate)
		}
		if int64(c.got) != c.stat {
			t.Errorf("%s: client saw %d, Stats says %d", c.name, c.got, c.stat)
		}
	}
	if st.Requests != n || st.Outcomes() != n {
		t.Errorf("stats %+v do not reconcile with %d requests", st, n)
	}
	for _, code := range []int{500, 502, 503, 529} {
		if statuses[code] == 0 {
			t.Errorf("no %d among the injected failures: %v", code, statuses)
		}
	}
	if statuses[529] < statuses[500] {
		t.Errorf("529 should be the most common failure: %v", statuses)
	}
	t.Logf("outcomes %v, statuses %v", seen, statuses)
}

// classify says what a client would make of a response.
func classify(t *testing.T, req *provider.Request, rec *httptest.ResponseRecorder) string {
	switch {
	case rec.Code == 408:
		return "timeout"
	case rec.Code >= 500:
		var v struct {
			Detail struct {
				ErrorType string `json:"error_type"`
			} `json:"detail"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &v) != nil || v.Detail.ErrorType == "" {
			t.Errorf("%d body %s", rec.Code, rec.Body)
		}
		return "unavailable"
	case rec.Code != 200:
		t.Errorf("unexpected status %d: %s", rec.Code, rec.Body)
		return "other"
	}
	var resp provider.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		return "malformed"
	}
	if _, err := provider.Check(req, &resp); err != nil {
		if len(resp.Answers) == len(req.Questions)-1 && strings.Contains(err.Error(), "no answer") {
			return "missing"
		}
		t.Errorf("unexpected check error: %v", err)
		return "other"
	}
	return "ok"
}

func TestFaultSeedIsReproducible(t *testing.T) {
	run := func() []int {
		s := mustNew(t, Config{Synthetic: true, Seed: 9, Faults: Faults{FailRate: 0.3, MissingRate: 0.3}})
		var codes []int
		for i := 0; i < 50; i++ {
			rec := do(s, context.Background(), faultBody)
			codes = append(codes, rec.Code, rec.Body.Len())
		}
		return codes
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("the same seed gave a different fault sequence at %d", i/2)
		}
	}
}

func TestRateLimit(t *testing.T) {
	s := mustNew(t, Config{Synthetic: true, Faults: Faults{RateLimitRPS: 10}})
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.faults.now = func() time.Time { return clock }
	count := func(k int) (ok, limited int, last *httptest.ResponseRecorder) {
		for i := 0; i < k; i++ {
			rec := do(s, context.Background(), faultBody)
			switch rec.Code {
			case 200:
				ok++
			case 429:
				limited++
				last = rec
			default:
				t.Fatalf("status %d", rec.Code)
			}
		}
		return
	}
	// A burst of 15 at one instant: the bucket (10) admits 10.
	ok, limited, last := count(15)
	if ok != 10 || limited != 5 {
		t.Fatalf("burst: %d ok, %d limited; want 10 and 5", ok, limited)
	}
	if ra := last.Header().Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1 (seconds, rounded up)", ra)
	}
	if ms, _ := strconv.Atoi(last.Header().Get("retry-after-ms")); ms < 100 || ms > 101 {
		t.Errorf("retry-after-ms %d, want 100 (one token at 10/s)", ms)
	}
	if !strings.Contains(last.Body.String(), `"error_type":"rate_limit_error"`) {
		t.Errorf("429 body %s", last.Body)
	}
	// Half a second refills five tokens.
	clock = clock.Add(500 * time.Millisecond)
	if ok, limited, _ = count(8); ok != 5 || limited != 3 {
		t.Errorf("after 0.5 s: %d ok, %d limited; want 5 and 3", ok, limited)
	}
	// A long pause refills only up to the burst.
	clock = clock.Add(time.Hour)
	if ok, limited, _ = count(12); ok != 10 || limited != 2 {
		t.Errorf("after an hour: %d ok, %d limited; want 10 and 2", ok, limited)
	}
	if st := s.Stats(); st.RateLimited != 10 || st.OK != 25 {
		t.Errorf("stats %+v", st)
	}
}

func TestTimeoutRespectsContext(t *testing.T) {
	s := mustNew(t, Config{Synthetic: true, Faults: Faults{TimeoutRate: 1}})
	// The start is taken before the deadline is set, so on a loaded machine
	// the elapsed time can only be longer than the timeout, never shorter.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { do(s, ctx, faultBody); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the hanging request did not end when the client gave up")
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Errorf("returned after %v, before the client gave up", el)
	}
	// Close releases a hang with a 408.
	go func() { time.Sleep(20 * time.Millisecond); s.Close() }()
	if rec := do(s, context.Background(), faultBody); rec.Code != 408 || !strings.Contains(rec.Body.String(), `"error_type":"timeout"`) {
		t.Errorf("after Close: %d %s", rec.Code, rec.Body)
	}
	if st := s.Stats(); st.Timeout != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestTimeoutAfter(t *testing.T) {
	s := mustNew(t, Config{Synthetic: true, Faults: Faults{TimeoutRate: 1, TimeoutAfter: 20 * time.Millisecond}})
	start := time.Now()
	rec := do(s, context.Background(), faultBody)
	if rec.Code != 408 || time.Since(start) < 20*time.Millisecond {
		t.Errorf("status %d after %v; want 408 after 20ms", rec.Code, time.Since(start))
	}
}

func TestLatency(t *testing.T) {
	fs := newFaultState(Faults{Latency: 10 * time.Millisecond, LatencyJitter: 4 * time.Millisecond}, 3)
	const n = 20000
	sum, min, max := 0.0, time.Hour, time.Duration(0)
	for i := 0; i < n; i++ {
		d := fs.delay()
		sum += float64(d)
		min, max = minDur(min, d), maxDur(max, d)
	}
	mean := time.Duration(sum / n)
	// Mean of 10ms + Exp(4ms) capped at 40ms: 14ms (the cap removes 4ms·e^-10).
	if mean < 13800*time.Microsecond || mean > 14200*time.Microsecond {
		t.Errorf("mean delay %v, want about 14ms", mean)
	}
	if min < 10*time.Millisecond || max > 50*time.Millisecond {
		t.Errorf("delay range [%v, %v], want within [10ms, 50ms]", min, max)
	}

	// Through the handler: the delay applies, and a client that gives up
	// during it is counted as canceled.
	s := mustNew(t, Config{Synthetic: true, Faults: Faults{Latency: 30 * time.Millisecond}})
	start := time.Now()
	if rec := do(s, context.Background(), faultBody); rec.Code != 200 || time.Since(start) < 30*time.Millisecond {
		t.Errorf("status %d after %v; want 200 after 30ms", rec.Code, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	do(s, ctx, faultBody)
	if st := s.Stats(); st.OK != 1 || st.Canceled != 1 {
		t.Errorf("stats %+v", st)
	}
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func TestFaultConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		f    Faults
		want string
	}{
		{"rate above 1", Faults{FailRate: 1.5}, "fail rate 1.5 is outside [0, 1]"},
		{"negative", Faults{MissingRate: -0.1}, "missing rate"},
		{"sum above 1", Faults{FailRate: 0.6, TimeoutRate: 0.6}, "add up to 1.200"},
		{"negative latency", Faults{Latency: -1}, "must not be negative"},
		{"NaN rps", Faults{RateLimitRPS: math.NaN()}, "rate limit"},
	}
	for _, tt := range tests {
		_, err := New(Config{Faults: tt.f})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}
