package metrics

import (
	"math"

	"github.com/jevlab/jevlab/provider"
)

// Metric names one headline metric, evaluated by (*Data).Eval under
// bootstrap weights.
type Metric int

// Headline metrics. Which apply depends on the question type (see
// (*Data).Metrics).
const (
	MAccuracy Metric = iota
	MBrier
	MLogLoss
	MECE
	MECEMass
	MAURC
	MMacroF1
	MAUROC
	MAUPRC
	MWithinOne
	MExactNearest
	MWithinOneNearest
	MMAE
	MRMSE
	MQWK
	MSpearman
	MRPS
	// MMeanConfidence is the mean decision confidence (Data.DecConf) and
	// MOverconfidence it minus accuracy. They are reported beside accuracy
	// but are not headline metrics of MetricsFor (a change in them is
	// neither better nor worse by itself).
	MMeanConfidence
	MOverconfidence
	numMetrics
)

var metricInfo = [numMetrics]struct {
	name  string
	lower bool
}{
	MAccuracy:         {"accuracy", false},
	MBrier:            {"brier", true},
	MLogLoss:          {"log_loss", true},
	MECE:              {"ece", true},
	MECEMass:          {"ece_mass", true},
	MAURC:             {"aurc", true},
	MMacroF1:          {"macro_f1", false},
	MAUROC:            {"auroc", false},
	MAUPRC:            {"auprc", false},
	MWithinOne:        {"within_one", false},
	MExactNearest:     {"exact_nearest", false},
	MWithinOneNearest: {"within_one_nearest", false},
	MMAE:              {"mae", true},
	MRMSE:             {"rmse", true},
	MQWK:              {"qwk", false},
	MSpearman:         {"spearman", false},
	MRPS:              {"rps", true},
	MMeanConfidence:   {"mean_confidence", false},
	MOverconfidence:   {"overconfidence", true},
}

// String returns the metric's JSON name.
func (m Metric) String() string {
	if m < 0 || m >= numMetrics {
		return "metric?"
	}
	return metricInfo[m].name
}

// LowerIsBetter reports whether a smaller value is an improvement.
func (m Metric) LowerIsBetter() bool { return m >= 0 && m < numMetrics && metricInfo[m].lower }

// MetricsFor lists the headline metrics of a question type.
func MetricsFor(t provider.QuestionType) []Metric {
	all := []Metric{MAccuracy, MBrier, MLogLoss, MECE, MECEMass, MAURC}
	switch t {
	case provider.Choice:
		return append(all, MMacroF1)
	case provider.Noul:
		return append(all, MAUROC, MAUPRC)
	case provider.Score:
		return append(all, MWithinOne, MExactNearest, MWithinOneNearest, MMAE, MRMSE, MQWK, MSpearman, MRPS)
	}
	return all
}

// Metrics lists the headline metrics that apply to d.
func (d *Data) Metrics() []Metric { return MetricsFor(d.Type) }

// Eval evaluates metric m under weights w (nil = every item once; a
// bootstrap passes resample counts). NaN when undefined for the sample.
func (d *Data) Eval(m Metric, w []float64) float64 {
	var out [1]float64
	d.EvalAll([]Metric{m}, w, out[:])
	return out[0]
}

// EvalAll evaluates ms under w (nil = every item once) into out. One
// sequential pass over the items fills per-bin and per-tie-group sums;
// every metric is then read from those sums, so a bootstrap resample costs
// O(n + groups).
func (d *Data) EvalAll(ms []Metric, w []float64, out []float64) {
	d.accumulate(d.weights(w))
	s := &d.sc.sum
	for j, m := range ms {
		if s.t == 0 {
			out[j] = math.NaN()
			continue
		}
		out[j] = d.fromSums(m, w)
	}
}

func (d *Data) fromSums(m Metric, w []float64) float64 {
	s := &d.sc.sum
	switch m {
	case MAccuracy:
		return s.correct / s.t
	case MBrier:
		return s.brier / s.t
	case MLogLoss:
		return s.nll / s.t
	case MMeanConfidence:
		return s.dconf / s.t
	case MOverconfidence:
		return (s.dconf - s.correct) / s.t
	case MECE:
		var e float64
		for b := range d.sc.bc {
			e += math.Abs(d.sc.bo[b] - d.sc.bc[b])
		}
		return e / s.t
	case MECEMass:
		bs, bc, bo := d.massFromGroups()
		var e float64
		for b := range bs {
			e += math.Abs(bo[b] - bc[b])
		}
		return e / s.t
	case MAURC:
		return d.aurcFromGroups()
	case MMacroF1:
		return d.macroF1FromSums()
	case MAUROC:
		return d.aurocFromGroups()
	case MAUPRC:
		return d.auprcFromGroups()
	}
	if d.Type != provider.Score {
		return math.NaN()
	}
	switch m {
	case MWithinOne:
		return s.within / s.t
	case MExactNearest:
		return s.exN / s.t
	case MWithinOneNearest:
		return s.withinN / s.t
	case MMAE:
		return s.abs / s.t
	case MRMSE:
		return math.Sqrt(s.sq / s.t)
	case MQWK:
		return d.qwkFromSums()
	case MSpearman:
		return d.spearman(d.weights(w))
	case MRPS:
		return s.rps / s.t
	}
	return math.NaN()
}

// accumulate makes the one pass over the items under weights w. Sums
// that depend only on an item's confidence group (calibration bins, the
// selective groups of a choice or noul) are derived from the group sums
// afterwards rather than accumulated per item.
func (d *Data) accumulate(w []float64) {
	sc := &d.sc
	sc.sum = sums{}
	s := &sc.sum
	clear(sc.tp)
	clear(sc.pred)
	clear(sc.sup)
	bySel := d.cg2sg == nil
	if bySel {
		clear(sc.sgW)
		clear(sc.sgE)
	}
	// Per item: the proper-score sums, and one count in the cell
	// (conf group, obs, correct); for a choice with few options also one in
	// the cell (label, decision). Everything else derives from the cells.
	var brier, nll, dc float64
	cell := sc.cell
	clear(cell)
	gcell := d.gcell[:len(w)]
	brs, nls, dcs := d.Brier[:len(w)], d.NLL[:len(w)], d.DecConf[:len(w)]
	useYD := d.Type == provider.Choice && d.ydcell != nil
	var yd []float64
	var ydc []int32
	if useYD {
		yd, ydc = sc.mat, d.ydcell[:len(w)]
		clear(yd)
	}
	switch {
	case sc.cellX != nil:
		// Few conf groups: many items in a row land in one cell, and each
		// add waits for the one before; four interleaved copies break
		// that chain (sums of counts: exact in any order).
		for i, wi := range w {
			brier += wi * brs[i]
			nll += wi * nls[i]
			dc += wi * dcs[i]
		}
		addCells4(cell, sc.cellX, gcell, w)
		if useYD {
			for i, wi := range w {
				yd[ydc[i]] += wi
			}
		}
	case useYD:
		for i, wi := range w {
			brier += wi * brs[i]
			nll += wi * nls[i]
			dc += wi * dcs[i]
			cell[gcell[i]] += wi
			yd[ydc[i]] += wi
		}
	default:
		for i, wi := range w {
			brier += wi * brs[i]
			nll += wi * nls[i]
			dc += wi * dcs[i]
			cell[gcell[i]] += wi
		}
	}
	if useYD {
		k := d.K
		for y := 0; y < k; y++ {
			for x := 0; x < k; x++ {
				v := yd[y*k+x]
				sc.sup[y] += v
				sc.pred[x] += v
			}
			sc.tp[y] = yd[y*k+y]
		}
	} else if d.Type == provider.Choice {
		tp, pred, sup := sc.tp, sc.pred, sc.sup
		lab, dec, cor := d.Label[:len(w)], d.Dec[:len(w)], d.Correct[:len(w)]
		for i, wi := range w {
			y := lab[i]
			sup[y] += wi
			pred[dec[i]] += wi
			tp[y] += wi * cor[i]
		}
	}
	var t float64
	cgW, cgO, cgC := sc.cgW, sc.cgO, sc.cgC
	for g := range cgW {
		c := cell[4*g : 4*g+4 : 4*g+4]
		cgW[g] = c[0] + c[1] + c[2] + c[3]
		cgO[g] = c[2] + c[3]
		cgC[g] = c[1] + c[3]
		t += cgW[g]
	}
	s.t, s.brier, s.nll, s.dconf = t, brier, nll, dc
	switch d.Type {
	case provider.Score:
		d.accumulateScore(w)
	}
	clear(sc.bs)
	clear(sc.bc)
	clear(sc.bo)
	if !bySel {
		clear(sc.sgW)
		clear(sc.sgE)
	}
	nb := len(sc.bs)
	for g, gw := range cgW {
		s.correct += cgC[g]
		v := d.cgVal[g]
		b := widthBin(v, nb)
		sc.bs[b] += gw
		sc.bc[b] += gw * v
		sc.bo[b] += cgO[g]
		if !bySel {
			h := d.cg2sg[g]
			sc.sgW[h] += gw
			sc.sgE[h] += gw - cgC[g]
		}
	}
}

// addCells4 adds w[i] to cell[idx[i]] for every i through four
// interleaved copies (cell and the three in x, 3·len(cell) long), summed
// into cell at the end. The weights are counts, so the result is exactly
// the plain loop's.
func addCells4(cell, x []float64, idx []int32, w []float64) {
	m := len(cell)
	c1, c2, c3 := x[:m:m], x[m:2*m:2*m], x[2*m:3*m:3*m]
	clear(x)
	n := len(w)
	idx = idx[:n]
	i := 0
	for ; i+3 < n; i += 4 {
		cell[idx[i]] += w[i]
		c1[idx[i+1]] += w[i+1]
		c2[idx[i+2]] += w[i+2]
		c3[idx[i+3]] += w[i+3]
	}
	for ; i < n; i++ {
		cell[idx[i]] += w[i]
	}
	for j := range cell {
		cell[j] += c1[j] + c2[j] + c3[j]
	}
}

// accumulateScore adds a score question's sums under w: the label ×
// decision × nearest-level cells (from which the support, predictions,
// confusion matrix and within-one counts follow), the score-group and
// selective-group weights, and the error sums. The weights are counts, so
// every sum of weights alone is exact in any order; a zero weight adds
// +0 to sums of non-negative terms, so no item is skipped (the branch
// cost more than the adds).
func (d *Data) accumulateScore(w []float64) {
	sc := &d.sc
	s := &sc.sum
	clear(sc.mat)
	clear(sc.scgW)
	k := d.K
	n := len(w)
	lab, scg, sg := d.Label[:n], d.scg[:n], d.sg[:n]
	score, rps, cor := d.Score[:n], d.RPS[:n], d.Correct[:n]
	scgW, sgW, sgE := sc.scgW, sc.sgW, sc.sgE
	var abs, sq, rp float64
	if d.ydncell != nil {
		cells := sc.ydn
		clear(cells)
		ydn := d.ydncell[:n]
		for i, wi := range w {
			cells[ydn[i]] += wi
			scgW[scg[i]] += wi
			e := score[i] - float64(lab[i])
			abs += wi * math.Abs(e)
			sq += wi * e * e
			rp += wi * rps[i]
			g := sg[i]
			sgW[g] += wi
			sgE[g] += wi * (1 - cor[i])
		}
		for y := 0; y < k; y++ {
			for dec := 0; dec < k; dec++ {
				row := cells[(y*k+dec)*k : (y*k+dec+1)*k]
				var v float64
				for nr, c := range row {
					if c == 0 {
						continue
					}
					v += c
					if nr == y {
						s.exN += c
					}
					if nr-y >= -1 && nr-y <= 1 {
						s.withinN += c
					}
				}
				sc.sup[y] += v
				sc.pred[dec] += v
				sc.mat[y*k+dec] = v
				if dec-y >= -1 && dec-y <= 1 {
					s.within += v
				}
			}
		}
	} else {
		dc, nrs := d.Dec[:n], d.Nearest[:n]
		for i, wi := range w {
			y, dec, nr := lab[i], dc[i], nrs[i]
			sc.sup[y] += wi
			sc.pred[dec] += wi
			sc.mat[int(y)*k+int(dec)] += wi
			scgW[scg[i]] += wi
			e := score[i] - float64(y)
			abs += wi * math.Abs(e)
			sq += wi * e * e
			rp += wi * rps[i]
			if dec-y >= -1 && dec-y <= 1 {
				s.within += wi
			}
			if nr == y {
				s.exN += wi
			}
			if nr-y >= -1 && nr-y <= 1 {
				s.withinN += wi
			}
			g := sg[i]
			sgW[g] += wi
			sgE[g] += wi * (1 - cor[i])
		}
	}
	s.abs, s.sq, s.rps = abs, sq, rp
}

// Accuracy is the weighted share of correct decisions.
func (d *Data) Accuracy(w []float64) float64 { return d.Eval(MAccuracy, w) }

// BrierScore is the weighted mean Brier (binary for a noul; summed over
// outcomes otherwise).
func (d *Data) BrierScore(w []float64) float64 { return d.Eval(MBrier, w) }

// LogLoss is the weighted mean negative log probability of the true
// outcome, clipped at ε.
func (d *Data) LogLoss(w []float64) float64 { return d.Eval(MLogLoss, w) }

// ECEMass is the ECE over equal-mass bins: edges at the weighted sample's
// quantiles j/B (linear interpolation), right-closed, so tied confidences
// always share a bin; empty bins are dropped.
func (d *Data) ECEMass(w []float64) float64 { return d.Eval(MECEMass, w) }

// MacroF1 is the unweighted mean of per-class F1 over the classes that
// occur as a label or a decision (scikit-learn's average='macro').
func (d *Data) MacroF1(w []float64) float64 { return d.Eval(MMacroF1, w) }

// AUROC is the Mann–Whitney U over p (ties count ½) divided by n₁n₀; noul
// only. NaN when one class is absent.
func (d *Data) AUROC(w []float64) float64 { return d.Eval(MAUROC, w) }

// AUPRC is average precision, Σ (Rₙ − Rₙ₋₁)·Pₙ over the distinct
// thresholds from high to low (scikit-learn's average_precision_score);
// noul only. NaN without positives.
func (d *Data) AUPRC(w []float64) float64 { return d.Eval(MAUPRC, w) }

// AURC is the area under the risk–coverage curve: the mean, over k = 1..n,
// of the error rate among the k most confident answers. Within a tie of
// confidences errors are spread evenly, so the order of tied items does not
// matter.
func (d *Data) AURC(w []float64) float64 { return d.Eval(MAURC, w) }

// QWK is Cohen's kappa with quadratic weights between label and argmax
// level, every level a category (distance in level positions).
func (d *Data) QWK(w []float64) float64 { return d.Eval(MQWK, w) }

// Spearman is the Pearson correlation of the average ranks of the
// expected score and the label.
func (d *Data) Spearman(w []float64) float64 { return d.Eval(MSpearman, w) }

// massFromGroups bins the conf tie groups into equal-mass bins whose edges
// are the weighted sample's quantiles j/B (linear interpolation, as
// numpy.percentile); a group lies in bin b when edge[b] < value <=
// edge[b+1] (the first bin also holds the minimum).
func (d *Data) massFromGroups() (bs, bc, bo []float64) {
	sc := &d.sc
	bs, bc, bo = sc.mbs, sc.mbc, sc.mbo
	clear(bs)
	clear(bc)
	clear(bo)
	W := sc.sum.t
	e := sc.edges
	nb := len(e) - 1
	// value at 0-based rank r of the expanded sorted sample
	g, cum := 0, 0.0
	at := func(r float64) float64 {
		for g < len(sc.cgW)-1 && cum+sc.cgW[g] <= r {
			cum += sc.cgW[g]
			g++
		}
		return d.cgVal[g]
	}
	for j := 0; j <= nb; j++ {
		h := (W - 1) * float64(j) / float64(nb)
		lo := math.Floor(h)
		x0 := at(lo)
		if frac := h - lo; frac > 0 {
			sg, scum := g, cum
			x1 := at(lo + 1)
			g, cum = sg, scum
			e[j] = x0 + frac*(x1-x0)
		} else {
			e[j] = x0
		}
	}
	b := 0
	for gi, v := range d.cgVal {
		gw := sc.cgW[gi]
		if gw == 0 {
			continue
		}
		for b < nb-1 && e[b+1] < v {
			b++
		}
		bs[b] += gw
		bc[b] += gw * v
		bo[b] += sc.cgO[gi]
	}
	return bs, bc, bo
}

// massBins are the unweighted equal-mass bins (for the reliability table).
func (d *Data) massBins(w []float64) (bs, bc, bo []float64) {
	d.accumulate(w)
	return d.massFromGroups()
}

func (d *Data) macroF1FromSums() float64 {
	tp, pred, sup := d.sc.tp, d.sc.pred, d.sc.sup
	var s float64
	n := 0
	for k := range tp {
		if pred[k]+sup[k] == 0 {
			continue
		}
		n++
		s += 2 * tp[k] / (pred[k] + sup[k])
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

func (d *Data) aurocFromGroups() float64 {
	if d.Type != provider.Noul {
		return math.NaN()
	}
	sc := &d.sc
	var cum, r1, w1, w0 float64
	for g, gw := range sc.cgW {
		if gw == 0 {
			continue
		}
		gp := sc.cgO[g]
		r1 += gp * (cum + (gw+1)/2)
		w1 += gp
		w0 += gw - gp
		cum += gw
	}
	if w1 == 0 || w0 == 0 {
		return math.NaN()
	}
	return (r1 - w1*(w1+1)/2) / (w1 * w0)
}

func (d *Data) auprcFromGroups() float64 {
	if d.Type != provider.Noul {
		return math.NaN()
	}
	sc := &d.sc
	var pos float64
	for _, o := range sc.cgO {
		pos += o
	}
	if pos == 0 {
		return math.NaN()
	}
	var tp, fp, ap, prevR float64
	for g := len(sc.cgW) - 1; g >= 0; g-- {
		if sc.cgW[g] == 0 {
			continue
		}
		tp += sc.cgO[g]
		fp += sc.cgW[g] - sc.cgO[g]
		r := tp / pos
		ap += (r - prevR) * tp / (tp + fp)
		prevR = r
	}
	return ap
}

// harmonic returns H(x) for a whole count x (table), or its asymptotic
// expansion otherwise.
func (d *Data) harmonic(x float64) float64 {
	if k := int(x + 0.5); math.Abs(x-float64(k)) < 1e-9 && k < len(d.harm) {
		return d.harm[k]
	}
	if x <= 0 {
		return 0
	}
	return math.Log(x) + 0.5772156649015329 + 1/(2*x) - 1/(12*x*x)
}

// aurcFromGroups sums, per sel tie group of weight g holding e errors
// after K items with E errors, Σ_{j=1..g} (E + j·e/g)/(K + j)
// = (E − K·e/g)(H(K+g) − H(K)) + e.
func (d *Data) aurcFromGroups() float64 {
	sc := &d.sc
	var sum, kb, eb float64
	for g, gw := range sc.sgW {
		if gw == 0 {
			continue
		}
		ge := sc.sgE[g]
		r := ge / gw
		sum += (eb-kb*r)*(d.harmonic(kb+gw)-d.harmonic(kb)) + ge
		kb += gw
		eb += ge
	}
	if kb == 0 {
		return math.NaN()
	}
	return sum / kb
}

// oracleAURC is the AURC of a ranking that puts every correct answer first.
func oracleAURC(n, errs int) float64 {
	if n == 0 {
		return math.NaN()
	}
	var s float64
	ok := n - errs
	for k := ok + 1; k <= n; k++ {
		s += float64(k-ok) / float64(k)
	}
	return s / float64(n)
}

func (d *Data) qwkFromSums() float64 {
	k := d.K
	m, row, col, t := d.sc.mat, d.sc.sup, d.sc.pred, d.sc.sum.t
	var num, den float64
	for a := 0; a < k; a++ {
		for b := 0; b < k; b++ {
			wt := float64((a - b) * (a - b))
			num += wt * m[a*k+b]
			den += wt * row[a] * col[b] / t
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return 1 - num/den
}

// spearman correlates the weighted average ranks of score and label: group
// ranks come from the accumulated group weights, then one more pass.
func (d *Data) spearman(w []float64) float64 {
	rs := d.sc.rankA[:d.scgN]
	var cum float64
	for g, gw := range d.sc.scgW {
		rs[g] = cum + (gw+1)/2
		cum += gw
	}
	rl := d.sc.rankB[:d.K]
	cum = 0
	for y, gw := range d.sc.sup {
		rl[y] = cum + (gw+1)/2
		cum += gw
	}
	var t, sx, sy, sxx, syy, sxy float64
	// A zero weight adds +0 to every sum (ranks are positive): no branch.
	scg, lab := d.scg[:len(w)], d.Label[:len(w)]
	for i, wi := range w {
		x, y := rs[scg[i]], rl[lab[i]]
		t += wi
		sx += wi * x
		sy += wi * y
		sxx += wi * x * x
		syy += wi * y * y
		sxy += wi * x * y
	}
	vx, vy := sxx-sx*sx/t, syy-sy*sy/t
	if vx <= 1e-12*sxx || vy <= 1e-12*syy {
		return math.NaN()
	}
	return (sxy - sx*sy/t) / math.Sqrt(vx*vy)
}

// MacroF1Union returns the macro-F1 of a and b over one class set: every
// class that either of them uses as a label or a decision. Two runs
// compared item by item must average over the same classes, or one answer
// moving into a class no label uses adds a zero to one side only. It reads
// the sums of the last EvalAll (or Eval) of each, which must have been
// made under the same weights; NaN when neither uses any class.
func MacroF1Union(a, b *Data) (fa, fb float64) {
	if a.K != b.K {
		return math.NaN(), math.NaN()
	}
	n := 0
	for k := range a.sc.tp {
		ua, ub := a.sc.pred[k]+a.sc.sup[k], b.sc.pred[k]+b.sc.sup[k]
		if ua+ub == 0 {
			continue
		}
		n++
		if ua > 0 {
			fa += 2 * a.sc.tp[k] / ua
		}
		if ub > 0 {
			fb += 2 * b.sc.tp[k] / ub
		}
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return fa / float64(n), fb / float64(n)
}
