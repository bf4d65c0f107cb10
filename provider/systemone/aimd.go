package systemone

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// adaptive is the client's own request rate, lowered when the server says
// it is sending too fast (429, 529) and raised again while requests
// succeed: additive increase, multiplicative decrease, like TCP.
//
//   - On a slow-down signal the rate drops to decreaseFactor times the
//     smaller of the current rate and the success rate measured over the
//     last second, at most once per cutInterval (the signals of requests
//     already in flight say nothing new) — but only while such signals are
//     at least minSlowShare of the last second's answers. A server that
//     answers a steady few percent 429 at any rate (bursts, a shared
//     account) is not saying "too fast": each such request is retried
//     after its Retry-After, and cutting on every one would spiral the
//     rate down to minRate (a 5,000-item soak with 10% random 429s ran for
//     hours).
//   - On each success the rate grows by increasePerSec/rate, so it climbs
//     linearly by increasePerSec per second, up to the configured ceiling.
//
// Against a token bucket the sawtooth stays near the server's limit: the
// tokens saved while below it are spent while above it.
type adaptive struct {
	lim     *rate.Limiter
	ceiling float64 // configured requests/s; +Inf for none

	mu       sync.Mutex
	cur      float64
	lastCut  time.Time
	step     float64 // increase per second since the last cut
	cuts     int
	win      [10]int // successes per 100 ms slot
	sig      [10]int // slow-down signals per 100 ms slot
	winStart time.Time
	first    time.Time // first success, for a short history
}

const (
	decreaseFactor = 0.8
	cutInterval    = time.Second
	minRate        = 0.5
	slot           = 100 * time.Millisecond
	// minSlowShare is the share of the last second's answers that must be
	// slow-down signals before the rate is cut.
	minSlowShare = 0.25
	// minSlowSignals is the fewest slow-down signals in the last second
	// that can cut the rate: at a few answers a second, two random 429s
	// are a quarter of them and say nothing about the rate.
	minSlowSignals = 5
)

func newAdaptive(rps float64) *adaptive {
	a := &adaptive{ceiling: math.Inf(1), cur: math.Inf(1)}
	if rps > 0 {
		a.ceiling, a.cur = rps, rps
	}
	a.lim = rate.NewLimiter(toLimit(a.cur), 1)
	return a
}

func toLimit(r float64) rate.Limit {
	if math.IsInf(r, 1) {
		return rate.Inf
	}
	return rate.Limit(r)
}

// advance moves the success window to now.
func (a *adaptive) advance(now time.Time) {
	if a.winStart.IsZero() {
		a.winStart = now.Truncate(slot)
		return
	}
	n := int(now.Sub(a.winStart) / slot)
	if n <= 0 {
		return
	}
	if n >= len(a.win) {
		a.win, a.sig = [10]int{}, [10]int{}
	} else {
		copy(a.win[:], a.win[n:])
		clear(a.win[len(a.win)-n:])
		copy(a.sig[:], a.sig[n:])
		clear(a.sig[len(a.sig)-n:])
	}
	a.winStart = a.winStart.Add(time.Duration(n) * slot)
}

// successRate is the successes per second over the last second (over the
// time since the first success when that is shorter).
func (a *adaptive) successRate(now time.Time) float64 {
	total := 0
	for _, c := range a.win {
		total += c
	}
	span := time.Second
	if a.first.IsZero() {
		return 0
	}
	if d := now.Sub(a.first); d < span {
		span = max(d, slot)
	}
	return float64(total) / span.Seconds()
}

// success records a request the server accepted.
func (a *adaptive) success(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.advance(now)
	a.win[len(a.win)-1]++
	if a.first.IsZero() {
		a.first = now
	}
	if a.cuts == 0 || a.cur >= a.ceiling {
		return
	}
	a.cur = math.Min(a.ceiling, a.cur+a.step/a.cur)
	a.lim.SetLimitAt(now, toLimit(a.cur))
}

// slowDown records a 429 or 529.
func (a *adaptive) slowDown(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.advance(now)
	a.sig[len(a.sig)-1]++
	if !a.lastCut.IsZero() && now.Sub(a.lastCut) < cutInterval {
		return
	}
	sigs, oks := 0, 0
	for i := range a.sig {
		sigs += a.sig[i]
		oks += a.win[i]
	}
	if sigs < minSlowSignals || float64(sigs) < minSlowShare*float64(sigs+oks) {
		return // a few 429s among many answers: retried, not a rate signal
	}
	base := a.cur
	if obs := a.successRate(now); obs > 0 && obs < base {
		base = obs
	}
	if math.IsInf(base, 1) {
		// No success yet and no ceiling: nothing to measure against.
		base = float64(len(a.win)) // 10/s, climbing from there
	}
	a.cur = math.Max(minRate, base*decreaseFactor)
	a.step = math.Max(1, 0.1*base)
	a.lastCut = now
	a.cuts++
	a.lim.SetLimitAt(now, toLimit(a.cur))
}

// rate returns the current rate (for tests and messages).
func (a *adaptive) rate() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur
}
