package metrics

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Stream constants keep the random draws of different purposes apart for
// one seed.
const (
	streamBootstrap  = 0x62_6f_6f_74 // "boot"
	streamSplit      = 0x73_70_6c_74 // "splt"
	streamNoiseFloor = 0x6e_6f_69_73 // "nois"
)

// NewRand returns the PCG generator for seed and purpose stream.
func NewRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// Resampler draws bootstrap resamples of n items as integer weights (how
// often each item was drawn), reusing one slice. It uses wyrand (seeded
// from PCG) with Lemire's multiply-shift reduction: fast, reproducible for
// a seed, with a bias below n/2⁶⁴.
type Resampler struct {
	state uint64
	w     []float64
}

// NewResampler returns a resampler over n items for seed.
func NewResampler(seed uint64, n int) *Resampler {
	return &Resampler{state: NewRand(seed, streamBootstrap).Uint64(), w: make([]float64, n)}
}

// Next draws n items with replacement and returns their counts. The slice
// is reused by the next call.
func (r *Resampler) Next() []float64 {
	w := r.w
	clear(w)
	n := uint64(len(w))
	st := r.state
	for range n {
		st += 0xa0761d6478bd642f
		hi, lo := bits.Mul64(st, st^0xe7037ed1a0b428db)
		j, _ := bits.Mul64(hi^lo, n)
		w[j]++
	}
	r.state = st
	return w
}

// Percentile returns the q-quantile (0..1) of sorted by linear
// interpolation between closest ranks (numpy's default).
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Interval returns the percentile 95% interval of draws, ignoring NaN
// draws; NaN when fewer than half the draws are defined. draws is sorted in
// place.
func Interval(draws []float64) (lo, hi float64) {
	v := draws[:0:0]
	for _, x := range draws {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 || len(v)*2 < len(draws) {
		return math.NaN(), math.NaN()
	}
	slices.Sort(v)
	return Percentile(v, 0.025), Percentile(v, 0.975)
}

// Bootstrap evaluates ms on d for every item once and on the plan's
// resamples (see Plan), returning one Estimate per metric. A plan with
// B <= 0 gives points only.
func Bootstrap(d *Data, ms []Metric, p Plan) []Estimate {
	out := make([]Estimate, len(ms))
	vals := make([]float64, len(ms))
	d.EvalAll(ms, nil, vals)
	for j := range ms {
		out[j] = Point(vals[j])
	}
	if p.B <= 0 || d.N == 0 {
		return out
	}
	res := Resample([]*Data{d}, p, vals, func(ds []*Data, w, v []float64) { ds[0].EvalAll(ms, w, v) })
	for j, m := range ms {
		out[j].Lo, out[j].Hi = res.Interval(j)
		if p.Little() && (m == MECE || m == MECEMass) && out[j].Lo < 0 {
			// A recentred resample of a near-calibrated sample can fall
			// below 0, which no ECE can: the interval stops at 0.
			out[j].Lo = 0
		}
	}
	return out
}

// chunk is the number of resamples drawn from one seeded stream.
const chunk = 50

// Workers returns how many goroutines Resamples should use for b
// resamples: GOMAXPROCS, at most one per chunk.
func Workers(b int) int {
	return max(1, min(runtime.GOMAXPROCS(0), (b+chunk-1)/chunk))
}

// Resamples draws b bootstrap resamples of n items and calls fn(worker, k,
// weights) once for each k in [0, b), from up to workers goroutines (fn of
// one worker is never called concurrently with itself). Resample k is the
// same for a seed whatever the number of workers: chunk c of 50 resamples
// has its own stream derived from (seed, c). The weights slice is reused
// after fn returns.
func Resamples(n, b int, seed uint64, workers int, fn func(worker, k int, w []float64)) {
	chunks := (b + chunk - 1) / chunk
	var next atomic.Int64
	var wg sync.WaitGroup
	for wk := range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				rs := NewResampler(seed+uint64(c)*0x9e3779b97f4a7c15, n)
				for k := c * chunk; k < min(b, (c+1)*chunk); k++ {
					fn(wk, k, rs.Next())
				}
			}
		}()
	}
	wg.Wait()
}
