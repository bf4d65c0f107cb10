package systemone

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
)

// saturation is one run of items asked through a client configured far
// above the stand-in's rate limit.
type saturation struct {
	items, failed int
	elapsed       time.Duration
	limit         float64
	rateLimited   int64 // 429s the stand-in sent
	firstErr      error
	finalRate     float64
}

// achieved is successful items per second over the limit.
func (s saturation) achieved() float64 {
	return float64(s.items-s.failed) / s.elapsed.Seconds() / s.limit
}

// saturate asks n distinct one-question requests with concurrency
// workers through a client allowed rps requests/s against the stand-in
// rate-limited to limit requests/s (burst: the default, the rate), the
// way a run of jevlab ask/eval --rps rps --concurrency concurrency against
// jevlab serve --rate-limit limit does.
func saturate(tb testing.TB, n, concurrency int, rps, limit float64) saturation {
	tb.Helper()
	srv, err := standin.New(standin.Config{Synthetic: true, Faults: standin.Faults{RateLimitRPS: limit}})
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	c, err := New(Config{BaseURL: ts.URL, APIKey: fakeKey, Concurrency: concurrency, RPS: rps, Timeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	reqs := make([]*provider.Request, n)
	for i := range reqs {
		var r provider.Request
		body := fmt.Sprintf(`{"model":"jev-latest","state":"item %d: is the server room on fire?","questions":{"q":{"type":"noul","instructions":"Is it urgent?"}}}`, i)
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			tb.Fatal(err)
		}
		reqs[i] = &r
	}
	var next, failed atomic.Int64
	var errOnce sync.Once
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, err := c.Ask(context.Background(), reqs[i]); err != nil {
					failed.Add(1)
					errOnce.Do(func() { firstErr = err })
				}
			}
		}()
	}
	wg.Wait()
	return saturation{items: n, failed: int(failed.Load()), elapsed: time.Since(start), limit: limit,
		rateLimited: srv.Stats().RateLimited, firstErr: firstErr, finalRate: c.ad.rate()}
}

// TestRateLimitSaturationFailsNothing reproduces the saturation attack at
// a smaller size: a client allowed 500 requests/s with 32 in flight
// against a stand-in admitting 50/s. Before, tiny retry-after-ms values
// used up four retries within milliseconds and about half the items failed
// as "rate_limited … gave up after 4 retries"; now 429s are retried within
// the time budget while the client lowers its own rate, and none fails.
func TestRateLimitSaturationFailsNothing(t *testing.T) {
	s := saturate(t, 200, 32, 500, 50)
	t.Logf("%d items in %v: %d failed, %d 429s, achieved/limit %.2f, client rate now %.1f/s",
		s.items, s.elapsed.Round(time.Millisecond), s.failed, s.rateLimited, s.achieved(), s.finalRate)
	if s.failed != 0 {
		t.Fatalf("%d of %d items failed; first: %v", s.failed, s.items, s.firstErr)
	}
	if s.rateLimited == 0 {
		t.Fatal("the stand-in never rate-limited: the test did not saturate it")
	}
	// The figure itself is the benchmark's; here only a floor a loaded
	// machine cannot miss (the bucket's burst alone gives 50 of 200).
	if s.achieved() < 0.6 {
		t.Errorf("achieved %.2f of the limit", s.achieved())
	}
	if s.finalRate >= 500 {
		t.Errorf("the client never lowered its rate (still %.0f/s)", s.finalRate)
	}
}

// BenchmarkRateLimitSaturation is the case in full: 600 items,
// --rps 500 --concurrency 32 against jevlab serve --rate-limit 50. It
// reports failed items (must be 0) and achieved/limit (must be >= 0.9).
func BenchmarkRateLimitSaturation(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := saturate(b, 600, 32, 500, 50)
		if s.failed != 0 {
			b.Fatalf("%d of %d items failed; first: %v", s.failed, s.items, s.firstErr)
		}
		b.ReportMetric(s.achieved(), "achieved/limit")
		b.ReportMetric(float64(s.failed), "failed")
		b.ReportMetric(float64(s.rateLimited)/float64(s.items), "429s/item")
		b.ReportMetric(s.elapsed.Seconds(), "s/run")
	}
}

// TestAdaptiveRate pins the AIMD rule: while 429s are at least a quarter
// of the last second's answers, a 429 cuts the rate to 0.8 of the measured
// success rate at most once per second; successes raise it linearly, never
// above the configured ceiling.
func TestAdaptiveRate(t *testing.T) {
	a := newAdaptive(500)
	t0 := time.Unix(1000, 0)
	for i := 0; i < 50; i++ { // 50 successes over the first second
		a.success(t0.Add(time.Duration(i) * 20 * time.Millisecond))
	}
	if r := a.rate(); r != 500 {
		t.Fatalf("rate %v before any 429, want the ceiling", r)
	}
	// One 429 among 50 answers is retried, not a rate signal.
	a.slowDown(t0.Add(990 * time.Millisecond))
	if r := a.rate(); r != 500 {
		t.Fatalf("one 429 in 51 answers cut the rate to %v", r)
	}
	for i := 0; i < 20; i++ { // then 21 of ~70 answers are 429s: too fast
		a.slowDown(t0.Add(time.Second))
	}
	if r := a.rate(); r < 35 || r > 41 {
		t.Fatalf("after a 429 with 45-50 successes in the last second: rate %v, want 36-40", r)
	}
	a.slowDown(t0.Add(1500 * time.Millisecond)) // within the cut interval: ignored
	if r := a.rate(); r < 35 {
		t.Fatalf("a second 429 within a second cut again: %v", r)
	}
	before := a.rate()
	for i := 0; i < 40; i++ { // one second of successes at 40/s
		a.success(t0.Add(2*time.Second + time.Duration(i)*25*time.Millisecond))
	}
	if grew := a.rate() - before; grew < 4 || grew > 6 {
		t.Fatalf("one second of successes raised the rate by %v, want about 5 (0.1 of the rate cut from)", grew)
	}
	b := newAdaptive(0) // no ceiling: unlimited until told otherwise
	if r := b.rate(); r < 1e300 {
		t.Fatalf("rate %v without a ceiling", r)
	}
	for i := 0; i < 4; i++ { // four 429s in a second: too few to say "too fast"
		b.slowDown(t0.Add(time.Duration(i) * time.Millisecond))
	}
	if r := b.rate(); r < 1e300 {
		t.Fatalf("four 429s cut the rate to %v", r)
	}
	b.slowDown(t0.Add(5 * time.Millisecond))
	if r := b.rate(); r != 8 {
		t.Fatalf("the fifth 429 with nothing measured: rate %v, want 8", r)
	}
}

// A server answering a steady 10% of requests 429 whatever the rate (not
// a rate limit) must not spiral the client's rate down: each 429 is
// retried, the rate stays where it is.
func TestAdaptiveRateIgnoresSteadyRandom429s(t *testing.T) {
	a := newAdaptive(200)
	t0 := time.Unix(1000, 0)
	// 60 seconds at 200 answers/s, every tenth a 429.
	for i := 0; i < 60*200; i++ {
		now := t0.Add(time.Duration(i) * 5 * time.Millisecond)
		if i%10 == 9 {
			a.slowDown(now)
		} else {
			a.success(now)
		}
	}
	if r := a.rate(); r < 150 {
		t.Fatalf("rate %v after a minute of 10%% random 429s, want it near the ceiling 200", r)
	}
}

// Time spent queued for the client's own rate limit is not time spent
// retrying: with 1 request/s, the fourth of four calls waits about three
// seconds before its first attempt, and a 429 then must still be retried
// within a 1 s retry budget instead of failing the call.
func TestQueueTimeDoesNotUseTheRetryBudget(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		first := !seen[string(b)]
		seen[string(b)] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if first {
			w.Header().Set("retry-after-ms", "10")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"detail":"Rate limit exceeded"}`)
			return
		}
		io.WriteString(w, okBody)
	})
	c, _ := newTestClient(t, h, func(cfg *Config) {
		cfg.RPS, cfg.Concurrency, cfg.RetryBudget = 4, 4, time.Second
	})
	c.sleep = func(ctx context.Context, d time.Duration) error { // really wait
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req := testRequest(t)
			req.State = json.RawMessage(fmt.Sprintf(`"state %d"`, i)) // distinct bodies
			_, errs[i] = c.Ask(context.Background(), req)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}
