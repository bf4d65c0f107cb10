package metrics

import (
	"math"
)

// Interval methods, as Estimate.Method names them (and JSON writes them
// under "interval").
const (
	// IntervalBootstrap is the percentile 95% interval over the bootstrap
	// resamples (linear interpolation).
	IntervalBootstrap = "bootstrap"
	// IntervalWilson is the Wilson score 95% interval of a proportion k/n,
	// used instead of the bootstrap where it collapses: fewer than
	// MinTailCount successes or failures (a proportion at or near 0 or 1,
	// or few items).
	IntervalWilson = "wilson"
	// IntervalNewcombe is the score 95% interval of an AUROC (Newcombe
	// 2006, method 5: the Hanley–McNeil variance with both class sizes
	// replaced by their mean), used instead of the bootstrap when either
	// class has fewer than MinTailCount items or the AUROC is 0 or 1.
	IntervalNewcombe = "newcombe"
	// IntervalCollapsed marks a figure whose bootstrap resamples all gave
	// the same value and which has no closed-form interval: no interval is
	// reported (Lo and Hi are NaN), rather than a degenerate [v, v].
	IntervalCollapsed = "collapsed"
	// IntervalUnreliable marks a figure built on a proportion with under
	// MinTailCount successes or failures (the overconfidence gap of a
	// 10/10 accuracy): its bootstrap inherits the collapse, so no interval
	// is reported.
	IntervalUnreliable = "unreliable"
)

// MinTailCount is the fewest successes and failures a proportion needs for
// its bootstrap interval to be reported; below it (the textbook condition
// for the normal approximation the percentile bootstrap of a proportion
// behaves like) the Wilson interval is used.
const MinTailCount = 5

// z975 is the standard normal 97.5% quantile (two-sided 95%).
const z975 = 1.959963984540054

// Wilson returns the Wilson score 95% interval of k successes in n trials:
// (p̂ + z²/2n ± z√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n). It stays inside
// [0, 1] and is never a point: 10/10 gives [0.722, 1].
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z975 * z975
	den := 1 + z2/nf
	mid := p + z2/(2*nf)
	half := z975 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = (mid-half)/den, (mid+half)/den
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return math.Max(0, lo), math.Min(1, hi)
}

// newcombeVar is the variance of an AUROC θ with m positives and n
// negatives under Newcombe's method 5:
// θ(1−θ)/(mn)·[(2N−1) − (3N−3)/((2−θ)(1+θ))], N = (m+n)/2.
func newcombeVar(theta float64, m, n int) float64 {
	N := float64(m+n) / 2
	v := theta * (1 - theta) / float64(m*n) * ((2*N - 1) - (3*N-3)/((2-theta)*(1+theta)))
	return math.Max(0, v)
}

// NewcombeAUROC returns the score 95% interval of an AUROC auc measured on
// m positives and n negatives: the θ where |auc − θ| = z·√V(θ), with
// Newcombe's (2006) method-5 variance. It stays honest at 0 and 1: an
// AUROC of 1 from 2 positives and 8 negatives gives [0.532, 1].
func NewcombeAUROC(auc float64, m, n int) (lo, hi float64) {
	if m <= 0 || n <= 0 || math.IsNaN(auc) {
		return math.NaN(), math.NaN()
	}
	// lower: the root of auc − θ − z√V(θ) on [0, auc] (positive at 0,
	// non-positive at auc); upper: θ − z√V(θ) − auc on [auc, 1].
	g := func(t float64) float64 { return auc - t - z975*math.Sqrt(newcombeVar(t, m, n)) }
	h := func(t float64) float64 { return t - z975*math.Sqrt(newcombeVar(t, m, n)) - auc }
	lo, hi = 0, 1
	if auc > 0 {
		lo = bisect(g, 0, auc, true)
	}
	if auc < 1 {
		hi = bisect(h, auc, 1, false)
	}
	return lo, hi
}

// bisect finds a root of f on [a, b]: f is positive near a when posAtA
// (negative or zero otherwise) and changes sign once before b. An endpoint
// where f is exactly 0 (V = 0 at θ = 0 or 1) is not taken for the root.
func bisect(f func(float64) float64, a, b float64, posAtA bool) float64 {
	for range 100 {
		m := (a + b) / 2
		if (f(m) > 0) == posAtA {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// collapsed reports whether a bootstrap interval is a point.
func collapsed(e Estimate) bool {
	return e.HasInterval() && math.Abs(e.Hi-e.Lo) <= 1e-12
}

// proportionInterval sets e's interval for a proportion k/n: the bootstrap
// percentile interval when both k and n−k reach MinTailCount and it has
// width, otherwise Wilson. want is false when intervals were switched off.
func proportionInterval(e Estimate, k, n int, want bool) Estimate {
	if !want || !e.Defined() || n <= 0 {
		return e
	}
	if min(k, n-k) >= MinTailCount && e.HasInterval() && !collapsed(e) {
		e.Method = IntervalBootstrap
		return e
	}
	e.Lo, e.Hi = Wilson(k, n)
	e.Method = IntervalWilson
	return e
}

// aurocInterval is proportionInterval for an AUROC over m positives and n
// negatives, with Newcombe's interval.
func aurocInterval(e Estimate, m, n int, want bool) Estimate {
	if !want || !e.Defined() {
		return e
	}
	if min(m, n) >= MinTailCount && e.Value > 0 && e.Value < 1 && e.HasInterval() && !collapsed(e) {
		e.Method = IntervalBootstrap
		return e
	}
	e.Lo, e.Hi = NewcombeAUROC(e.Value, m, n)
	e.Method = IntervalNewcombe
	return e
}

// bootInterval labels a bootstrap interval, or drops it when it collapsed.
func bootInterval(e Estimate) Estimate {
	switch {
	case collapsed(e):
		e.Lo, e.Hi = math.NaN(), math.NaN()
		e.Method = IntervalCollapsed
	case e.HasInterval():
		e.Method = IntervalBootstrap
	}
	return e
}

// count returns the whole number of items a proportion v of n stands for.
func count(v float64, n int) int { return int(math.Round(v * float64(n))) }
