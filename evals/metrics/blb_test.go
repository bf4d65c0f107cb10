package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// informativeObs is n labelled first-repeat observations whose labels
// follow the answers (a noul's label ~ Bernoulli(p); otherwise the label
// is the decided option or level two times in three), so every metric has
// a real value and a real interval.
func informativeObs(q *provider.Question, n int, seed uint64) []Obs {
	rng := rand.New(rand.NewPCG(seed, 99))
	var out []Obs
	for _, o := range mixedObs(q, n, seed) {
		if o.Repeat != 0 || o.Answer == nil {
			continue
		}
		o.HasLabel = true
		switch q.Type {
		case provider.Noul:
			o.Label = 0
			if rng.Float64() < o.Answer.P {
				o.Label = 1
			}
		default:
			if rng.IntN(3) != 0 {
				o.Label = argmax(o.Answer.Probs)
			}
		}
		out = append(out, o)
	}
	return out
}

// A Data over a subset of items is the Data prepared from those items'
// observations: every metric bit for bit, with and without weights (and
// heavy weights, as the bag of little bootstraps gives).
func TestSubsetIsPreparedSubsample(t *testing.T) {
	for name, q := range recQuestions() {
		t.Run(name, func(t *testing.T) {
			obs := informativeObs(q, 3000, 4)
			d := Prepare(q, obs, Options{})
			st := uint64(9)
			idx := sampleWithout(make([]int32, d.N), 700, &st)
			var sub []Obs
			for _, i := range idx {
				sub = append(sub, obs[i])
			}
			want, got := Prepare(q, sub, Options{}), d.Subset(idx)
			// The subset keeps d's harmonic table (its weights sum to
			// about d.N); the prepared subsample's stops at its own size.
			want.harm = d.harm
			ms := d.Metrics()
			a, b := make([]float64, len(ms)), make([]float64, len(ms))
			w := make([]float64, len(idx))
			for r := range 3 {
				var wt []float64
				if r > 0 {
					for i := range w {
						w[i] = float64(below(&st, 5) * (1 + 10*r))
					}
					wt = w
				}
				want.EvalAll(ms, wt, a)
				got.EvalAll(ms, wt, b)
				for j, m := range ms {
					if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
						t.Errorf("weights %d %s: subset %v, prepared %v", r, m, b[j], a[j])
					}
				}
			}
		})
	}
}

// The Poisson table draws Poisson(λ): mean and variance λ, and each
// value's frequency within 5 standard errors of its probability.
func TestPoissonAlias(t *testing.T) {
	for _, lambda := range []float64{0.7, 31.6, 63.1} {
		pmf := poissonPMF(lambda)
		var mass float64
		for _, p := range pmf {
			mass += p
		}
		if math.Abs(mass-1) > 1e-12 {
			t.Errorf("λ=%v: table mass %v", lambda, mass)
		}
		a := newAlias(pmf)
		st := uint64(1)
		const n = 400_000
		cnt := make([]float64, len(pmf))
		var s, ss float64
		for range n {
			k := a.draw(&st)
			cnt[k]++
			s += float64(k)
			ss += float64(k) * float64(k)
		}
		mean := s / n
		vr := ss/n - mean*mean
		if math.Abs(mean-lambda) > 5*math.Sqrt(lambda/n) {
			t.Errorf("λ=%v: mean %v", lambda, mean)
		}
		if math.Abs(vr-lambda) > 0.02*lambda+0.01 {
			t.Errorf("λ=%v: variance %v", lambda, vr)
		}
		for k, p := range pmf {
			if se := math.Sqrt(p * (1 - p) / n); math.Abs(cnt[k]/n-p) > 5*se+1e-9 {
				t.Errorf("λ=%v: P(%d) drawn %v, want %v", lambda, k, cnt[k]/n, p)
			}
		}
	}
}

// Subsets are distinct ascending indices, each index equally likely.
func TestSampleWithout(t *testing.T) {
	perm := make([]int32, 50)
	hits := make([]int, 50)
	st := uint64(3)
	for range 4000 {
		idx := sampleWithout(perm, 10, &st)
		if len(idx) != 10 || !slices.IsSorted(idx) || len(slices.Compact(slices.Clone(idx))) != 10 {
			t.Fatalf("not 10 distinct ascending: %v", idx)
		}
		for _, i := range idx {
			hits[i]++
		}
	}
	for i, h := range hits { // expected 800, sd ≈ 25
		if h < 680 || h > 920 {
			t.Errorf("index %d drawn %d times of 4000, want ≈ 800", i, h)
		}
	}
}

// Above the exact limit the plan is a bag of little bootstraps of the
// documented shape; at or below it, or with the limit off, the ordinary
// bootstrap.
func TestPlanFor(t *testing.T) {
	if p := PlanFor(DefaultExactBootstrapMax, 1000, 0, 0); p.Little() {
		t.Errorf("at the limit: %+v", p)
	}
	if p := PlanFor(100_000, 1000, 0, -1); p.Little() {
		t.Errorf("limit off: %+v", p)
	}
	p := PlanFor(100_000, 1000, 0, 0)
	if !p.Little() || p.SubsetSize != 3163 || p.Subsets != 10 || p.resamplesOf(0) != 100 {
		t.Errorf("100k: %+v", p)
	}
	p = PlanFor(100_000, 250, 0, 0)
	var total int
	for j := range p.Subsets {
		total += p.resamplesOf(j)
	}
	if p.Subsets != 3 || total != 250 {
		t.Errorf("B=250: %d subsets, %d resamples", p.Subsets, total)
	}
	if r := PlanFor(50_000, 1000, 0, 1000).Resampling(); r == nil || r.Items != 50_000 || r.SubsetSize != 1947 || r.Resamples != 100 {
		t.Errorf("resampling %+v", r)
	}
}

// The bag of little bootstraps estimates the ordinary bootstrap's
// intervals: on 30,000 items of each question type every endpoint lies
// within a fifth of the ordinary interval's width of the ordinary one (the
// two differ by Monte Carlo error only, a few percent of the width), and
// the result does not depend on the number of goroutines.
func TestBLBMatchesBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("30k-item bootstraps")
	}
	for name, q := range recQuestions() {
		t.Run(name, func(t *testing.T) {
			d := Prepare(q, informativeObs(q, 31_000, 8), Options{})
			ms := d.Metrics()
			exact := Bootstrap(d, ms, PlanFor(d.N, 1000, 2, -1))
			plan := PlanFor(d.N, 1000, 2, 0)
			if !plan.Little() {
				t.Fatalf("%d items: not a bag of little bootstraps", d.N)
			}
			blb := Bootstrap(d, ms, plan)
			prev := runtime.GOMAXPROCS(1)
			one := Bootstrap(d, ms, plan)
			runtime.GOMAXPROCS(prev)
			for j, m := range ms {
				e, b := exact[j], blb[j]
				if b != one[j] && !(math.IsNaN(b.Lo) && math.IsNaN(one[j].Lo)) {
					t.Errorf("%s: %+v with one goroutine, %+v with %d", m, one[j], b, prev)
				}
				if b.Value != e.Value {
					t.Errorf("%s: point %v, want %v", m, b.Value, e.Value)
				}
				w := e.Hi - e.Lo
				if !(w > 0) {
					if !math.IsNaN(e.Lo) && !(b.Hi-b.Lo <= 1e-12) {
						t.Errorf("%s: ordinary interval [%v, %v], bag [%v, %v]", m, e.Lo, e.Hi, b.Lo, b.Hi)
					}
					continue
				}
				t.Logf("%-18s %.5f  ordinary [%.5f, %.5f]  bag [%.5f, %.5f]  (%.0f%%, %.0f%% of width)", m, e.Value, e.Lo, e.Hi, b.Lo, b.Hi, 100*(b.Lo-e.Lo)/w, 100*(b.Hi-e.Hi)/w)
				if (m == MECE || m == MECEMass) && e.Lo < 2*w {
					// Near-perfect calibration (the noul's labels are drawn
					// from its p): ECE is not smooth at 0 and the ordinary
					// percentile interval lies above its own point; the bag
					// reaches lower, never below 0, and agrees at the top.
					if b.Lo < 0 || b.Lo > e.Lo || math.Abs(b.Hi-e.Hi) > 0.35*w {
						t.Errorf("%s near 0: bag [%v, %v], ordinary [%v, %v]", m, b.Lo, b.Hi, e.Lo, e.Hi)
					}
					continue
				}
				if math.Abs(b.Lo-e.Lo) > 0.2*w || math.Abs(b.Hi-e.Hi) > 0.2*w {
					t.Errorf("%s: bag [%v, %v], ordinary [%v, %v]", m, b.Lo, b.Hi, e.Lo, e.Hi)
				}
			}
		})
	}
}
