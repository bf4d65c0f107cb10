package metrics

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jevlab/jevlab/provider"
)

// reliabilityWidth returns the non-empty equal-width bins, the MCE over
// bins holding at least minCount items (NaN when none does) and the number
// of non-empty bins.
func (d *Data) reliabilityWidth(minCount int) ([]Bin, Estimate, int) {
	nb := d.bins
	n := make([]int, nb)
	sc := make([]float64, nb)
	so := make([]float64, nb)
	for i, b := range d.binW {
		n[b]++
		sc[b] += d.Conf[i]
		so[b] += d.Obs[i]
	}
	var out []Bin
	for b := range nb {
		if n[b] == 0 {
			continue
		}
		out = append(out, Bin{
			Lo: float64(b) / float64(nb), Hi: float64(b+1) / float64(nb), N: n[b],
			Confidence: sc[b] / float64(n[b]), Observed: so[b] / float64(n[b]),
		})
	}
	return out, mce(out, minCount), len(out)
}

// reliabilityMass is reliabilityWidth over the equal-mass bins.
func (d *Data) reliabilityMass(minCount int) ([]Bin, Estimate, int) {
	if d.N == 0 {
		return nil, Point(math.NaN()), 0
	}
	bs, bc, bo := d.massBins(d.ones)
	e := d.sc.edges
	var out []Bin
	for b := range bs {
		if bs[b] == 0 {
			continue
		}
		out = append(out, Bin{
			Lo: e[b], Hi: e[b+1], N: int(bs[b]),
			Confidence: bc[b] / bs[b], Observed: bo[b] / bs[b],
		})
	}
	return out, mce(out, minCount), len(out)
}

func mce(bins []Bin, minCount int) Estimate {
	m := math.NaN()
	for _, b := range bins {
		if b.N < minCount {
			continue
		}
		g := math.Abs(b.Observed - b.Confidence)
		if math.IsNaN(m) || g > m {
			m = g
		}
	}
	return Point(m)
}

// confusion counts [label][decision].
func (d *Data) confusion(dec []int32) [][]int {
	c := make([][]int, d.K)
	for k := range c {
		c[k] = make([]int, d.K)
	}
	for i, y := range d.Label {
		c[y][dec[i]]++
	}
	return c
}

// perClass derives precision, recall and F1 from a confusion matrix
// (0 where undefined).
func perClass(c [][]int, labels []string) []ClassStats {
	out := make([]ClassStats, len(c))
	for k := range c {
		s := ClassStats{Label: labels[k]}
		tp := c[k][k]
		for j := range c {
			s.Support += c[k][j]
			s.Predicted += c[j][k]
		}
		if s.Predicted > 0 {
			s.Precision = float64(tp) / float64(s.Predicted)
		}
		if s.Support > 0 {
			s.Recall = float64(tp) / float64(s.Support)
		}
		if s.Support+s.Predicted > 0 {
			s.F1 = 2 * float64(tp) / float64(s.Support+s.Predicted)
		}
		out[k] = s
	}
	return out
}

// murphy decomposes the binary Brier score over the equal-width bins:
// REL = Σ nₖ(p̄ₖ−ōₖ)²/N, RES = Σ nₖ(ōₖ−ō)²/N, UNC = ō(1−ō).
func (d *Data) murphy() (rel, res, unc float64) {
	if d.N == 0 {
		return 0, 0, 0
	}
	nb := d.bins
	n := make([]float64, nb)
	sp := make([]float64, nb)
	so := make([]float64, nb)
	var o float64
	for i, b := range d.binW {
		n[b]++
		sp[b] += d.Conf[i]
		so[b] += d.Obs[i]
		o += d.Obs[i]
	}
	N := float64(d.N)
	o /= N
	for b := range nb {
		if n[b] == 0 {
			continue
		}
		pb, ob := sp[b]/n[b], so[b]/n[b]
		rel += n[b] * (pb - ob) * (pb - ob)
		res += n[b] * (ob - o) * (ob - o)
	}
	return rel / N, res / N, o * (1 - o)
}

// atPrecision finds the lowest threshold t (over the distinct p values)
// whose decisions p >= t reach the target precision.
func (d *Data) atPrecision(target float64) PrecisionPoint {
	pp := PrecisionPoint{Target: target}
	var pos float64
	for _, y := range d.Obs {
		pos += y
	}
	if pos == 0 {
		return pp
	}
	ord := d.confAsc
	var tp, fp float64
	for g := len(ord) - 1; g >= 0; {
		h := g
		for h >= 0 && d.Conf[ord[h]] == d.Conf[ord[g]] {
			tp += d.Obs[ord[h]]
			fp += 1 - d.Obs[ord[h]]
			h--
		}
		if prec := tp / (tp + fp); prec >= target {
			pp.Found = true
			pp.Threshold = d.Conf[ord[g]]
			pp.Precision = prec
			pp.Recall = tp / pos
		}
		g = h
	}
	return pp
}

// maxCurvePoints bounds the risk–coverage curve kept in a report.
const maxCurvePoints = 200

// selective builds the accuracy–coverage curve at every distinct
// confidence (thinned to maxCurvePoints), E-AURC and the held-out
// cut-point.
func (d *Data) selective(q *provider.Question, opt Options) Selective {
	s := Selective{ConfidenceName: confidenceName(q.Type, opt.Threshold)}
	if d.N == 0 {
		s.Refused = "no labelled answers"
		return s
	}
	ord := d.selDesc
	var pts []CurvePoint
	var k, ok int
	for g := 0; g < len(ord); {
		h := g
		for h < len(ord) && d.Sel[ord[h]] == d.Sel[ord[g]] {
			ok += int(d.Correct[ord[h]])
			h++
		}
		k += h - g
		pts = append(pts, CurvePoint{
			Threshold: d.Sel[ord[g]], N: k,
			Coverage: float64(k) / float64(d.N), Accuracy: float64(ok) / float64(k),
		})
		g = h
	}
	s.Curve = thin(pts, maxCurvePoints)
	s.EAURC = d.AURC(nil) - oracleAURC(d.N, d.N-ok)
	s.Cutpoint, s.Refused = d.cutpoint(q, opt)
	return s
}

// thin keeps at most max points, evenly spaced in coverage, always the last.
func thin(pts []CurvePoint, max int) []CurvePoint {
	if len(pts) <= max {
		return pts
	}
	out := make([]CurvePoint, 0, max)
	next := 0.0
	step := 1.0 / float64(max-1)
	for i, p := range pts {
		if p.Coverage >= next || i == len(pts)-1 {
			out = append(out, p)
			next = p.Coverage + step
		}
	}
	return out
}

// cutpoint chooses, on a seeded random half of the labelled items, the
// lowest confidence cut-point whose selective accuracy reaches the target
// (the largest such coverage), and measures it on the other half.
func (d *Data) cutpoint(q *provider.Question, opt Options) (*Cutpoint, string) {
	if d.N < opt.MinLabels {
		return nil, fmt.Sprintf("%d labelled answers; a cut-point needs at least %d (half to fit, half to check)", d.N, opt.MinLabels)
	}
	rng := NewRand(opt.Seed, streamSplit)
	perm := rng.Perm(d.N)
	fit := make([]bool, d.N)
	nf := d.N - d.N/2
	for _, i := range perm[:nf] {
		fit[i] = true
	}
	ord := d.selDesc
	var k, ok int
	best, bestK, bestOK := math.NaN(), 0, 0
	for g := 0; g < len(ord); {
		h := g
		for h < len(ord) && d.Sel[ord[h]] == d.Sel[ord[g]] {
			if i := ord[h]; fit[i] {
				k++
				ok += int(d.Correct[i])
			}
			h++
		}
		if k > 0 && float64(ok) >= opt.TargetAccuracy*float64(k)-1e-12 {
			best, bestK, bestOK = d.Sel[ord[g]], k, ok
		}
		g = h
	}
	if math.IsNaN(best) {
		return nil, fmt.Sprintf("no confidence cut-point reaches accuracy %.3g on the %d fitting items", opt.TargetAccuracy, nf)
	}
	c := &Cutpoint{
		Model: opt.Model, Confidence: confidenceName(q.Type, opt.Threshold), Cutpoint: best, Target: opt.TargetAccuracy,
		FitN: nf, FitAccuracy: float64(bestOK) / float64(bestK), FitCoverage: float64(bestK) / float64(nf),
		HoldoutN: d.N - nf, Seed: opt.Seed,
	}
	var hk, hok int
	for i := range d.N {
		if !fit[i] && d.Sel[i] >= best {
			hk++
			hok += int(d.Correct[i])
		}
	}
	if c.HoldoutN > 0 {
		c.HoldoutCoverage = float64(hk) / float64(c.HoldoutN)
	}
	if hk > 0 {
		c.HoldoutAccuracy = float64(hok) / float64(hk)
		c.HoldoutAccuracyLo = ClopperPearsonLower(hok, hk, 0.05)
	}
	c.HoldoutAccuracyLoConfidence = 0.975
	// Reached on the held-out lower bound, not the point: a held-out
	// accuracy of 0.96 on 50 items does not show 0.95 on new ones.
	c.Reached = hk > 0 && c.HoldoutAccuracyLo >= c.Target-1e-12
	return c, ""
}

// TV returns the total-variation distance between two answers to the same
// question: ½Σ|pₖ−p'ₖ| (|p−p'| for a noul). NaN when shapes differ.
func TV(a, b *provider.Answer) float64 {
	if a.Type == provider.Noul {
		return math.Abs(a.P - b.P)
	}
	if len(a.Probs) != len(b.Probs) {
		return math.NaN()
	}
	var s float64
	for i := range a.Probs {
		s += math.Abs(a.Probs[i] - b.Probs[i])
	}
	return s / 2
}

// Decide returns the primary decision of answer a to q (see Data.Dec).
func Decide(q *provider.Question, a *provider.Answer, threshold float64) int {
	return decide(q, a, threshold)
}

// Usable reports whether o has an answer of the shape q needs and a label
// in range (the observations Prepare keeps).
func Usable(q *provider.Question, o *Obs) bool {
	return o.HasLabel && usable(q, o.Answer) && o.Label >= 0 && o.Label < q.Size()
}

// noise measures repeat-to-repeat noise (items with two or more answered
// repeats) and the ECE noise floor of d.
func noise(q *provider.Question, obs []Obs, d *Data, opt Options) Noise {
	var nz Noise
	if !hasRepeats(obs) {
		nz.Repeats = 1
		if len(obs) == 0 {
			nz.Repeats = 0
		}
		return noiseFloor(nz, d, opt)
	}
	by := map[string][]*provider.Answer{}
	var order []string
	for i := range obs {
		o := &obs[i]
		if _, ok := by[o.ItemID]; !ok {
			order = append(order, o.ItemID)
			by[o.ItemID] = nil
		}
		if usable(q, o.Answer) {
			by[o.ItemID] = append(by[o.ItemID], o.Answer)
		}
	}
	acc := noiseAcc{q: q, threshold: opt.Threshold}
	for _, id := range order {
		acc.item(by[id])
	}
	return noiseFloor(acc.result(), d, opt)
}

// RepeatNoise measures the repeat-to-repeat noise of q's observations:
// items with two or more answered repeats, how many changed decision, and
// the mean total-variation distance between repeats (no ECE floor).
func RepeatNoise(q *provider.Question, obs []Obs, threshold float64) Noise {
	opt := Options{Threshold: threshold, NoiseFloorDraws: -1}.WithDefaults()
	return noise(q, obs, nil, opt)
}

func noiseFloor(nz Noise, d *Data, opt Options) Noise {
	if opt.NoiseFloorDraws > 0 && d != nil && d.N > 0 {
		nz.FloorDraws = opt.NoiseFloorDraws
		nz.ECEFloorMean, nz.ECEFloorP95 = d.ECEFloor(opt.NoiseFloorDraws, opt.Seed)
	}
	return nz
}

// ECEFloor draws outcomes that are perfectly calibrated by construction
// (a noul's outcome ~ Bernoulli(p); otherwise correct ~ Bernoulli(top
// probability)) at d's n and confidences, and returns the mean and the
// nearest-rank 95th percentile of their equal-width ECE. Items that share a
// confidence share a bin, so a draw takes, per tie group of n items at
// confidence c, one Binomial(n, c) count by inversion of its CDF (a table
// built once): two-decimal answers make a draw cost ~100 look-ups, not n.
// Draw k is the same for a seed whatever the number of workers (chunks of
// 50 draws, each its own stream).
func (d *Data) ECEFloor(draws int, seed uint64) (mean, p95 float64) {
	if draws <= 0 || d.N == 0 {
		return math.NaN(), math.NaN()
	}
	nb := d.bins
	bc := make([]float64, nb)
	for i, b := range d.binW {
		bc[b] += d.Conf[i]
	}
	groups := floorGroups(d)
	vals := make([]float64, draws)
	chunks := (draws + chunk - 1) / chunk
	workers := max(1, min(Workers(draws), chunks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			succ := make([]float64, nb)
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				st := NewRand(seed+uint64(c)*0x9e3779b97f4a7c15, streamNoiseFloor).Uint64()
				uniform := func() float64 {
					st += 0xa0761d6478bd642f
					hi, lo := bits.Mul64(st, st^0xe7037ed1a0b428db)
					return float64((hi^lo)>>11) * 0x1p-53
				}
				for k := c * chunk; k < min(draws, (c+1)*chunk); k++ {
					clear(succ)
					for gi := range groups {
						g := &groups[gi]
						succ[g.bin] += float64(g.draw(uniform))
					}
					var e float64
					for b := range succ {
						e += math.Abs(succ[b] - bc[b])
					}
					vals[k] = e / float64(d.N)
				}
			}
		}()
	}
	wg.Wait()
	for _, v := range vals {
		mean += v
	}
	slices.Sort(vals)
	return mean / float64(draws), NearestRank(vals, 0.95)
}

// floorGroup is one confidence tie group of the noise floor: n items at
// confidence p in one bin. cdf[k] = P(X <= k), X ~ Binomial(n, p), for
// groups above smallGroup; smaller ones draw n Bernoullis.
type floorGroup struct {
	bin int
	n   int
	p   float64
	cdf []float64
}

// smallGroup is the largest tie group drawn item by item.
const smallGroup = 8

func floorGroups(d *Data) []floorGroup {
	cnt := make([]int, len(d.cgVal))
	for _, g := range d.cg {
		cnt[g]++
	}
	out := make([]floorGroup, 0, len(cnt))
	for g, n := range cnt {
		if n == 0 {
			continue
		}
		p := d.cgVal[g]
		fg := floorGroup{bin: widthBin(p, d.bins), n: n, p: p}
		if n > smallGroup && p > 0 && p < 1 {
			fg.cdf = binomialCDF(n, p)
		}
		out = append(out, fg)
	}
	return out
}

// draw returns one Binomial(n, p) count.
func (g *floorGroup) draw(u func() float64) int {
	switch {
	case g.p <= 0:
		return 0
	case g.p >= 1:
		return g.n
	case g.cdf == nil:
		k := 0
		for range g.n {
			if u() < g.p {
				k++
			}
		}
		return k
	}
	x := u()
	k, _ := slices.BinarySearchFunc(g.cdf, x, func(c, t float64) int {
		if c <= t {
			return -1
		}
		return 1
	})
	return min(k, g.n)
}

// binomialCDF is P(X <= k) for k = 0..n, X ~ Binomial(n, p), 0 < p < 1,
// from the log pmf (no underflow to a wrong shape at large n).
func binomialCDF(n int, p float64) []float64 {
	lp, lq := math.Log(p), math.Log1p(-p)
	lgN, _ := math.Lgamma(float64(n + 1))
	cdf := make([]float64, n+1)
	var s float64
	for k := 0; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lr, _ := math.Lgamma(float64(n - k + 1))
		s += math.Exp(lgN - lk - lr + float64(k)*lp + float64(n-k)*lq)
		cdf[k] = s
	}
	// normalise the rounding of the sum so the last entry is exactly 1
	for k := range cdf {
		cdf[k] /= s
	}
	return cdf
}

// ClopperPearsonLower is the exact two-sided (1−alpha) lower confidence
// bound of a binomial proportion with k successes in n trials: the p at
// which P(X >= k) = alpha/2 (0 when k = 0).
func ClopperPearsonLower(k, n int, alpha float64) float64 {
	if k <= 0 || n <= 0 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for range 100 {
		mid := (lo + hi) / 2
		if binomUpperTail(k, n, mid) < alpha/2 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// binomUpperTail is P(X >= k) for X ~ Binomial(n, p), summed in log space.
func binomUpperTail(k, n int, p float64) float64 {
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	lgN, _ := math.Lgamma(float64(n + 1))
	var s float64
	for i := k; i <= n; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(lgN - li - lr + float64(i)*lp + float64(n-i)*lq)
	}
	return s
}
