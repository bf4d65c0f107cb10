package metrics

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Large samples are resampled by the bag of little bootstraps (Kleiner,
// Talwalkar, Sarkar and Jordan, "A scalable bootstrap for massive data",
// JRSS-B 2014) instead of the ordinary bootstrap, whose cost grows as
// B·n: at 100k items a comparison would spend seconds on resamples that
// move its intervals by less than their Monte Carlo error.
//
// The bag draws s subsets of b = ⌈n^0.7⌉ distinct items (without
// replacement, each subset independently). Each subset is resampled r
// times to the full size n: item i of the subset gets the weight
// wᵢ ~ Poisson(n/b), independently (the Poisson form of the multinomial
// resample of n items from b, so a resample costs O(b), not O(n); the
// total weight is n on average). A resample's figure θ* is recentred on
// the full sample, θ* − θ_subset + θ̂, where θ_subset is the figure of
// the subset with every item weighted alike; so each subset gives the
// bootstrap distribution of θ̂ − θ around θ̂ at sample size n, as the
// ordinary bootstrap does. Interval endpoints and tail shares are computed
// per subset and averaged over the subsets (the paper's estimator).
// B = s·r, with r ≈ 100 as the paper recommends: s = ⌈B/100⌉ (at least 2).

// DefaultExactBootstrapMax is the largest sample (items) resampled by the
// ordinary bootstrap; larger ones use the bag of little bootstraps.
const DefaultExactBootstrapMax = 20_000

// blbGamma is the exponent of the subset size b = ⌈n^γ⌉.
const blbGamma = 0.7

// blbResamples is the number of resamples per subset the plan aims at.
const blbResamples = 100

// streamBLB keeps the subsets and Poisson weights apart from the other
// draws of one seed.
const streamBLB = 0x62_6c_62_73 // "blbs"

// Plan says how a sample of N items is resampled B times for its
// intervals: the ordinary bootstrap (Subsets 0), or the bag of little
// bootstraps with Subsets subsets of SubsetSize items.
type Plan struct {
	N, B       int
	Seed       uint64
	Subsets    int
	SubsetSize int
}

// PlanFor returns the plan for n items and b resamples: the ordinary
// bootstrap up to exactMax items (0 means DefaultExactBootstrapMax,
// negative means always), the bag of little bootstraps above it.
func PlanFor(n, b int, seed uint64, exactMax int) Plan {
	p := Plan{N: n, B: b, Seed: seed}
	if exactMax == 0 {
		exactMax = DefaultExactBootstrapMax
	}
	if exactMax < 0 || n <= exactMax || b <= 0 {
		return p
	}
	size := int(math.Ceil(math.Pow(float64(n), blbGamma)))
	if size >= n {
		return p
	}
	p.SubsetSize = size
	p.Subsets = max(2, (b+blbResamples-1)/blbResamples)
	return p
}

// Little reports whether the plan is a bag of little bootstraps.
func (p Plan) Little() bool { return p.Subsets > 0 }

// Resampling describes a bag of little bootstraps in a report.
type Resampling struct {
	Method string `json:"method"` // "blb"
	// Items is the sample size n; Subsets and SubsetSize are s and b;
	// Resamples is r, the resamples per subset (B = s·r, the last subsets
	// one fewer when s does not divide B).
	Items      int    `json:"items"`
	Subsets    int    `json:"subsets"`
	SubsetSize int    `json:"subset_size"`
	Resamples  int    `json:"resamples_per_subset"`
	Rule       string `json:"rule"`
}

// BLBRule states the bag of little bootstraps in reports.
const BLBRule = "bag of little bootstraps (Kleiner et al. 2014) above the exact-bootstrap limit: s subsets of b = ceil(n^0.7) items drawn without replacement; each resampled to n items by Poisson(n/b) weights; each resample recentred on the full sample (theta* - theta_subset + theta_hat); interval endpoints and tail shares averaged over the subsets"

// Resampling returns the plan's description, nil for the ordinary
// bootstrap.
func (p Plan) Resampling() *Resampling {
	if !p.Little() {
		return nil
	}
	return &Resampling{Method: "blb", Items: p.N, Subsets: p.Subsets, SubsetSize: p.SubsetSize,
		Resamples: (p.B + p.Subsets - 1) / p.Subsets, Rule: BLBRule}
}

// resamplesOf is the number of resamples of subset j.
func (p Plan) resamplesOf(j int) int {
	r := p.B / p.Subsets
	if j < p.B%p.Subsets {
		r++
	}
	return r
}

// Resampled holds the resampled figures of m statistics: one group of
// draws for the ordinary bootstrap, one per subset (recentred) for the bag
// of little bootstraps. groups[g][j][k] is statistic j in resample k of
// group g.
type Resampled struct {
	groups [][][]float64
}

// Interval returns the percentile 95% interval of statistic j (see
// Interval): of its draws for the ordinary bootstrap; for the bag of
// little bootstraps, the endpoints averaged over the subsets whose
// interval is defined, NaN when fewer than half are.
func (r *Resampled) Interval(j int) (lo, hi float64) {
	if len(r.groups) == 1 {
		return Interval(r.groups[0][j])
	}
	var n int
	for _, g := range r.groups {
		l, h := Interval(slices.Clone(g[j]))
		if math.IsNaN(l) || math.IsNaN(h) {
			continue
		}
		lo += l
		hi += h
		n++
	}
	if n == 0 || 2*n < len(r.groups) {
		return math.NaN(), math.NaN()
	}
	return lo / float64(n), hi / float64(n)
}

// TwoSidedP is the two-sided bootstrap p-value of a zero value of
// statistic j: 2·min(P*(x ≤ 0), P*(x ≥ 0)) over its defined draws (the
// shares averaged over the subsets for the bag of little bootstraps),
// capped at 1. When no defined draw lies on one side of 0 the estimate
// would be 0, which the resamples cannot show: it returns 1/D for D
// defined draws with below = true (p < 1/D). 1 when no draw is defined.
func (r *Resampled) TwoSidedP(j int) (p float64, below bool) {
	var le, ge, defined float64
	var groups int
	for _, g := range r.groups {
		var l, e, n float64
		for _, x := range g[j] {
			if math.IsNaN(x) {
				continue
			}
			n++
			if x <= 0 {
				l++
			}
			if x >= 0 {
				e++
			}
		}
		if n == 0 {
			continue
		}
		defined += n
		groups++
		if len(r.groups) == 1 {
			le, ge = l, e
			break
		}
		le += l / n
		ge += e / n
	}
	if defined == 0 {
		return 1, false
	}
	if math.Min(le, ge) == 0 {
		return 1 / defined, true
	}
	if len(r.groups) == 1 {
		return math.Min(1, 2*math.Min(le, ge)/defined), false
	}
	return math.Min(1, 2*math.Min(le, ge)/float64(groups)), false
}

// Stat evaluates m statistics on ds (the full samples, or one subset of
// each, item i of every Data the same item) under weights w (nil: every
// item once) into out. It may keep state in ds (their scratch space) but
// must not keep w.
type Stat func(ds []*Data, w []float64, out []float64)

// Resample draws the plan's resamples of base (one Data, or several over
// the same items in the same order, resampled together: a paired
// comparison) and evaluates stat on each. point is stat on the full
// samples (nil weights), which the bag of little bootstraps recentres on.
// Resample k of the ordinary bootstrap is Resamples' k for the seed,
// whatever the number of goroutines; subset j of the bag has its own
// stream derived from (seed, j).
func Resample(base []*Data, p Plan, point []float64, stat Stat) *Resampled {
	m := len(point)
	if !p.Little() {
		draws := make([][]float64, m)
		for j := range draws {
			draws[j] = make([]float64, p.B)
		}
		workers := Workers(p.B)
		forks := make([][]*Data, workers)
		bufs := make([][]float64, workers)
		for i := range forks {
			forks[i], bufs[i] = base, make([]float64, m)
			if i > 0 {
				forks[i] = make([]*Data, len(base))
				for s, d := range base {
					forks[i][s] = d.Fork()
				}
			}
		}
		Resamples(p.N, p.B, p.Seed, workers, func(wk, k int, w []float64) {
			stat(forks[wk], w, bufs[wk])
			for j := range m {
				draws[j][k] = bufs[wk][j]
			}
		})
		return &Resampled{groups: [][][]float64{draws}}
	}
	groups := make([][][]float64, p.Subsets)
	pois := newAlias(poissonPMF(float64(p.N) / float64(p.SubsetSize)))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), p.Subsets)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			perm := make([]int32, p.N)
			theta, out := make([]float64, m), make([]float64, m)
			w := make([]float64, p.SubsetSize)
			subs := make([]*Data, len(base))
			for {
				g := int(next.Add(1) - 1)
				if g >= p.Subsets {
					return
				}
				st := NewRand(p.Seed+uint64(g)*0x9e3779b97f4a7c15, streamBLB).Uint64()
				idx := sampleWithout(perm, p.SubsetSize, &st)
				for s, d := range base {
					subs[s] = d.Subset(idx)
				}
				stat(subs, nil, theta)
				r := p.resamplesOf(g)
				draws := make([][]float64, m)
				for j := range draws {
					draws[j] = make([]float64, r)
				}
				for k := range r {
					for i := range w {
						w[i] = float64(pois.draw(&st))
					}
					stat(subs, w, out)
					for j := range m {
						draws[j][k] = out[j] - theta[j] + point[j]
					}
				}
				groups[g] = draws
			}
		}()
	}
	wg.Wait()
	return &Resampled{groups: groups}
}

// wyrand advances st and returns 64 random bits (the generator of
// Resampler).
func wyrand(st *uint64) uint64 {
	*st += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(*st, *st^0xe7037ed1a0b428db)
	return hi ^ lo
}

// below returns a uniform integer in [0, n) (Lemire's multiply-shift).
func below(st *uint64, n int) int {
	j, _ := bits.Mul64(wyrand(st), uint64(n))
	return int(j)
}

// sampleWithout returns k distinct indices of [0, len(perm)) drawn
// uniformly without replacement, ascending, by a partial Fisher–Yates
// shuffle of perm (reset first, so the draw depends on st only).
func sampleWithout(perm []int32, k int, st *uint64) []int32 {
	for i := range perm {
		perm[i] = int32(i)
	}
	n := len(perm)
	for i := range k {
		j := i + below(st, n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	out := slices.Clone(perm[:k])
	slices.Sort(out)
	return out
}

// poissonPMF is P(X = k) of X ~ Poisson(lambda) for k = 0.. up to the
// first k above lambda whose probability is under 2⁻⁶⁴ (the tail beyond
// it is smaller than that: no double draws it), computed in log space (no
// underflow of e^−λ for large λ).
func poissonPMF(lambda float64) []float64 {
	var pmf []float64
	ll := math.Log(lambda)
	for k := 0; ; k++ {
		lg, _ := math.Lgamma(float64(k + 1))
		p := math.Exp(float64(k)*ll - lambda - lg)
		if float64(k) > lambda && p < 0x1p-64 {
			return pmf // the tail beyond is smaller still
		}
		pmf = append(pmf, p)
	}
}

// alias draws from a finite discrete distribution in O(1) (Walker's alias
// method, Vose's construction): pick a column uniformly, keep it with its
// probability, else take its alias.
type alias struct {
	prob  []float64
	other []int32
}

// newAlias builds the table of the distribution proportional to p.
func newAlias(p []float64) *alias {
	n := len(p)
	var sum float64
	for _, x := range p {
		sum += x
	}
	a := &alias{prob: make([]float64, n), other: make([]int32, n)}
	scaled := make([]float64, n)
	var small, large []int32
	for i, x := range p {
		scaled[i] = x * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[s], a.other[s] = scaled[s], l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		a.prob[i], a.other[i] = 1, i
	}
	for _, i := range small { // rounding leftovers
		a.prob[i], a.other[i] = 1, i
	}
	return a
}

// draw returns one value (an index of the table's distribution).
func (a *alias) draw(st *uint64) int {
	i := below(st, len(a.prob))
	if float64(wyrand(st)>>11)*0x1p-53 < a.prob[i] {
		return i
	}
	return int(a.other[i])
}

// Subset returns a Data over the items idx of d (in that order), indexed
// afresh: its metrics are those of that subsample.
func (d *Data) Subset(idx []int32) *Data {
	s := &Data{Type: d.Type, K: d.K, N: len(idx), bins: d.bins}
	s.IDs = pick(d.IDs, idx)
	s.Label, s.Dec, s.Nearest, s.binW = pick(d.Label, idx), pick(d.Dec, idx), pick(d.Nearest, idx), pick(d.binW, idx)
	s.Correct, s.Conf, s.DecConf = pick(d.Correct, idx), pick(d.Conf, idx), pick(d.DecConf, idx)
	// Sel and Obs are picked only where they are not another column
	// (index shares them again).
	if d.ownObs() {
		s.Obs = pick(d.Obs, idx)
	}
	if d.ownSel() {
		s.Sel = pick(d.Sel, idx)
	}
	s.Brier, s.NLL, s.PTrue = pick(d.Brier, idx), pick(d.NLL, idx), pick(d.PTrue, idx)
	s.Score, s.RPS = pick(d.Score, idx), pick(d.RPS, idx)
	s.index()
	// Resampled to the full size, the subset's weights sum to about d.N:
	// the harmonic numbers come from d's table.
	s.harm = d.harm
	return s
}

// TwoSidedP is the two-sided bootstrap p-value of a zero value over one
// set of draws (see (*Resampled).TwoSidedP).
func TwoSidedP(draws []float64) (p float64, below bool) {
	return (&Resampled{groups: [][][]float64{{draws}}}).TwoSidedP(0)
}

// pick returns v's elements at idx (nil for a nil column).
func pick[T any](v []T, idx []int32) []T {
	if v == nil {
		return nil
	}
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}
