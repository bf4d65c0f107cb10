package standin

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

type faultKind uint8

const (
	faultNone faultKind = iota
	faultFail
	faultTimeout
	faultMalformed
	faultMissing
)

// fault is the outcome of one request's draw.
type fault struct {
	kind   faultKind
	status int     // for faultFail
	pick   float64 // in [0,1): which answer faultMissing drops
}

// failStatuses are the statuses FailRate chooses from; 529 (overloaded) is
// TypeSafe's documented one and is drawn as often as the other three
// together.
var failStatuses = [...]int{529, 529, 529, 500, 502, 503}

func (f Faults) validate() error {
	rates := []struct {
		name string
		v    float64
	}{
		{"fail rate", f.FailRate}, {"timeout rate", f.TimeoutRate},
		{"malformed rate", f.MalformedRate}, {"missing rate", f.MissingRate},
	}
	sum := 0.0
	for _, r := range rates {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return fmt.Errorf("stand-in: %s %v is outside [0, 1]", r.name, r.v)
		}
		sum += r.v
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("stand-in: fail, timeout, malformed and missing rates add up to %.3f; they are shares of the same requests and must not exceed 1", sum)
	}
	if f.Latency < 0 || f.LatencyJitter < 0 || f.TimeoutAfter < 0 {
		return fmt.Errorf("stand-in: latency, jitter and timeout-after must not be negative")
	}
	if math.IsNaN(f.RateLimitRPS) || math.IsInf(f.RateLimitRPS, 0) || f.RateLimitRPS < 0 {
		return fmt.Errorf("stand-in: rate limit %v requests/s must be a finite number >= 0 (0 = no limit)", f.RateLimitRPS)
	}
	if f.RateLimitBurst < 0 {
		return fmt.Errorf("stand-in: rate-limit burst %d must not be negative", f.RateLimitBurst)
	}
	return nil
}

// faultState holds the seeded RNG and the token bucket behind a mutex.
type faultState struct {
	cfg     Faults
	enabled bool // any fault or latency configured

	mu  sync.Mutex
	rng *rand.Rand

	// token bucket
	tokens float64
	burst  float64
	last   time.Time
	now    func() time.Time
}

func newFaultState(f Faults, seed int64) *faultState {
	fs := &faultState{
		cfg: f,
		enabled: f.Latency > 0 || f.LatencyJitter > 0 || f.RateLimitRPS > 0 || f.FailRate > 0 ||
			f.TimeoutRate > 0 || f.MalformedRate > 0 || f.MissingRate > 0,
		rng: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		now: time.Now,
	}
	if f.RateLimitRPS > 0 {
		fs.burst = float64(f.RateLimitBurst)
		if fs.burst == 0 {
			fs.burst = math.Max(1, math.Ceil(f.RateLimitRPS))
		}
		fs.tokens = fs.burst
	}
	return fs
}

// admit takes a token from the bucket. When none is left it returns false
// and how long until one is.
func (fs *faultState) admit() (time.Duration, bool) {
	if fs.cfg.RateLimitRPS <= 0 {
		return 0, true
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	now := fs.now()
	if !fs.last.IsZero() {
		fs.tokens = math.Min(fs.burst, fs.tokens+now.Sub(fs.last).Seconds()*fs.cfg.RateLimitRPS)
	}
	fs.last = now
	if fs.tokens >= 1 {
		fs.tokens--
		return 0, true
	}
	wait := time.Duration((1 - fs.tokens) / fs.cfg.RateLimitRPS * float64(time.Second))
	return wait, false
}

// draw picks this request's fault with one uniform draw partitioned by the
// rates, so the rates are exact shares of requests.
func (fs *faultState) draw() fault {
	fs.mu.Lock()
	u := fs.rng.Float64()
	pick := fs.rng.Float64()
	status := failStatuses[fs.rng.IntN(len(failStatuses))]
	fs.mu.Unlock()
	c := fs.cfg
	switch {
	case u < c.FailRate:
		return fault{kind: faultFail, status: status}
	case u < c.FailRate+c.TimeoutRate:
		return fault{kind: faultTimeout}
	case u < c.FailRate+c.TimeoutRate+c.MalformedRate:
		return fault{kind: faultMalformed}
	case u < c.FailRate+c.TimeoutRate+c.MalformedRate+c.MissingRate:
		return fault{kind: faultMissing, pick: pick}
	}
	return fault{}
}

// delay returns this request's injected latency: Latency plus an
// exponential draw with mean LatencyJitter, capped at 10× the mean.
func (fs *faultState) delay() time.Duration {
	d := fs.cfg.Latency
	if j := fs.cfg.LatencyJitter; j > 0 {
		fs.mu.Lock()
		e := fs.rng.ExpFloat64()
		fs.mu.Unlock()
		d += time.Duration(math.Min(e, 10) * float64(j))
	}
	return d
}
