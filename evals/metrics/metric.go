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
	switch m {
	case MAccuracy:
		return d.Accuracy(w)
	case MBrier:
		return d.BrierScore(w)
	case MLogLoss:
		return d.LogLoss(w)
	case MECE:
		return d.ECEWidth(w, nil)
	case MECEMass:
		return d.ECEMass(w)
	case MAURC:
		return d.AURC(w)
	case MMacroF1:
		return d.MacroF1(w)
	case MAUROC:
		return d.AUROC(w)
	case MAUPRC:
		return d.AUPRC(w)
	}
	if d.Type != provider.Score {
		return math.NaN()
	}
	w = d.weights(w)
	switch m {
	case MWithinOne:
		return d.within(w, d.Dec, 1)
	case MExactNearest:
		return d.within(w, d.Nearest, 0)
	case MWithinOneNearest:
		return d.within(w, d.Nearest, 1)
	case MMAE:
		return d.scoreErr(w, false)
	case MRMSE:
		return d.scoreErr(w, true)
	case MQWK:
		return d.QWK(w)
	case MSpearman:
		return d.Spearman(w)
	case MRPS:
		return wmean(d.RPS, w)
	}
	return math.NaN()
}

// ECEMass is the ECE over equal-mass bins: edges at the weighted sample's
// quantiles j/B (linear interpolation), right-closed, so tied confidences
// always share a bin; empty bins are dropped.
func (d *Data) ECEMass(w []float64) float64 {
	w = d.weights(w)
	bs, bc, bo := d.massBins(w)
	var e, t float64
	for b := range bs {
		t += bs[b]
		e += math.Abs(bo[b] - bc[b])
	}
	if t == 0 {
		return math.NaN()
	}
	return e / t
}

// massEdges fills d.sc.edges with the B+1 quantile edges of Conf under w.
func (d *Data) massEdges(w []float64) []float64 {
	e := d.sc.edges
	nb := len(e) - 1
	W := wsum(w)
	if W == 0 {
		return nil
	}
	// Walk confAsc once; rank r (0-based in the expanded sample) lies in
	// item confAsc[p] when cum-before <= r < cum-after.
	p, cum := 0, 0.0 // cum = weight of confAsc[:p]
	at := func(r float64) float64 {
		for p < len(d.confAsc) && cum+w[d.confAsc[p]] <= r {
			cum += w[d.confAsc[p]]
			p++
		}
		if p >= len(d.confAsc) {
			return d.Conf[d.confAsc[len(d.confAsc)-1]]
		}
		return d.Conf[d.confAsc[p]]
	}
	for j := 0; j <= nb; j++ {
		h := (W - 1) * float64(j) / float64(nb)
		lo := math.Floor(h)
		x0 := at(lo)
		frac := h - lo
		if frac > 0 {
			// at() only moves forward; peek the next rank without moving.
			sp, sc := p, cum
			x1 := at(lo + 1)
			p, cum = sp, sc
			e[j] = x0 + frac*(x1-x0)
		} else {
			e[j] = x0
		}
	}
	return e
}

// massBins returns per-bin weight, Σ conf and Σ obs over equal-mass bins.
func (d *Data) massBins(w []float64) (bs, bc, bo []float64) {
	bs, bc, bo = d.sc.bs, d.sc.bc, d.sc.bo
	clear(bs)
	clear(bc)
	clear(bo)
	e := d.massEdges(w)
	if e == nil {
		return
	}
	nb := len(e) - 1
	b := 0
	for _, i := range d.confAsc {
		v := d.Conf[i]
		for b < nb-1 && e[b+1] < v {
			b++
		}
		bs[b] += w[i]
		bc[b] += w[i] * v
		bo[b] += w[i] * d.Obs[i]
	}
	return
}

// MacroF1 is the unweighted mean of per-class F1 over the classes that
// occur as a label or a decision (scikit-learn's average='macro').
func (d *Data) MacroF1(w []float64) float64 {
	w = d.weights(w)
	tp, pred, sup := d.sc.tp, d.sc.pred, d.sc.sup
	clear(tp)
	clear(pred)
	clear(sup)
	for i, y := range d.Label {
		wi := w[i]
		sup[y] += wi
		pred[d.Dec[i]] += wi
		if d.Dec[i] == y {
			tp[y] += wi
		}
	}
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

// AUROC is the Mann–Whitney U over p (ties count ½) divided by n₁n₀; noul
// only. NaN when one class is absent.
func (d *Data) AUROC(w []float64) float64 {
	if d.Type != provider.Noul {
		return math.NaN()
	}
	w = d.weights(w)
	var cum, r1, w1, w0 float64
	ord := d.confAsc
	for g := 0; g < len(ord); {
		h := g
		var gw, gp float64
		for h < len(ord) && d.Conf[ord[h]] == d.Conf[ord[g]] {
			i := ord[h]
			gw += w[i]
			gp += w[i] * d.Obs[i]
			h++
		}
		rank := cum + (gw+1)/2
		r1 += gp * rank
		w1 += gp
		w0 += gw - gp
		cum += gw
		g = h
	}
	if w1 == 0 || w0 == 0 {
		return math.NaN()
	}
	return (r1 - w1*(w1+1)/2) / (w1 * w0)
}

// AUPRC is average precision, Σ (Rₙ − Rₙ₋₁)·Pₙ over the distinct
// thresholds from high to low (scikit-learn's average_precision_score);
// noul only. NaN without positives.
func (d *Data) AUPRC(w []float64) float64 {
	if d.Type != provider.Noul {
		return math.NaN()
	}
	w = d.weights(w)
	var pos float64
	for i, y := range d.Obs {
		pos += w[i] * y
	}
	if pos == 0 {
		return math.NaN()
	}
	ord := d.confAsc
	var tp, fp, ap, prevR float64
	for g := len(ord) - 1; g >= 0; {
		h := g
		for h >= 0 && d.Conf[ord[h]] == d.Conf[ord[g]] {
			i := ord[h]
			tp += w[i] * d.Obs[i]
			fp += w[i] * (1 - d.Obs[i])
			h--
		}
		if tp+fp > 0 {
			r := tp / pos
			ap += (r - prevR) * tp / (tp + fp)
			prevR = r
		}
		g = h
	}
	return ap
}

// AURC is the area under the risk–coverage curve: the mean, over k = 1..n,
// of the error rate among the k most confident answers. Within a tie of
// confidences errors are spread evenly, so the order of tied items does not
// matter.
func (d *Data) AURC(w []float64) float64 {
	w = d.weights(w)
	ord := d.selDesc
	var sum, kb, eb float64
	for g := 0; g < len(ord); {
		h := g
		var gw, ge float64
		for h < len(ord) && d.Sel[ord[h]] == d.Sel[ord[g]] {
			i := ord[h]
			gw += w[i]
			ge += w[i] * (1 - d.Correct[i])
			h++
		}
		n := int(gw + 0.5)
		for j := 1; j <= n; j++ {
			sum += (eb + float64(j)*ge/gw) / (kb + float64(j))
		}
		kb += gw
		eb += ge
		g = h
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

func (d *Data) within(w []float64, dec []int32, tol int32) float64 {
	var s, t float64
	for i, y := range d.Label {
		t += w[i]
		diff := dec[i] - y
		if diff >= -tol && diff <= tol {
			s += w[i]
		}
	}
	if t == 0 {
		return math.NaN()
	}
	return s / t
}

func (d *Data) scoreErr(w []float64, squared bool) float64 {
	var s, t float64
	for i, y := range d.Label {
		e := d.Score[i] - float64(y)
		t += w[i]
		if squared {
			s += w[i] * e * e
		} else {
			s += w[i] * math.Abs(e)
		}
	}
	if t == 0 {
		return math.NaN()
	}
	if squared {
		return math.Sqrt(s / t)
	}
	return s / t
}

// QWK is Cohen's kappa with quadratic weights between label and argmax
// level, every level a category (distance in level positions).
func (d *Data) QWK(w []float64) float64 {
	w = d.weights(w)
	k := d.K
	m := d.sc.mat
	clear(m)
	row, col := d.sc.tp, d.sc.pred
	clear(row)
	clear(col)
	var t float64
	for i, y := range d.Label {
		m[int(y)*k+int(d.Dec[i])] += w[i]
		row[y] += w[i]
		col[d.Dec[i]] += w[i]
		t += w[i]
	}
	if t == 0 {
		return math.NaN()
	}
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

// Spearman is the Pearson correlation of the average ranks of the
// expected score and the label.
func (d *Data) Spearman(w []float64) float64 {
	w = d.weights(w)
	avgRanks(d.scoreAsc, d.Score, nil, w, d.sc.rankA)
	avgRanks(d.labelAsc, nil, d.Label, w, d.sc.rankB)
	return wcorr(d.sc.rankA, d.sc.rankB, w)
}

// avgRanks writes the weighted average rank (1-based) of each item into
// out, walking ord (ascending) and grouping equal values of f or v.
func avgRanks(ord []int32, f []float64, v []int32, w, out []float64) {
	eq := func(a, b int32) bool {
		if f != nil {
			return f[a] == f[b]
		}
		return v[a] == v[b]
	}
	var cum float64
	for g := 0; g < len(ord); {
		h := g
		var gw float64
		for h < len(ord) && eq(ord[h], ord[g]) {
			gw += w[ord[h]]
			h++
		}
		r := cum + (gw+1)/2
		for j := g; j < h; j++ {
			out[ord[j]] = r
		}
		cum += gw
		g = h
	}
}

func wcorr(x, y, w []float64) float64 {
	var t, mx, my float64
	for i := range x {
		t += w[i]
		mx += w[i] * x[i]
		my += w[i] * y[i]
	}
	if t == 0 {
		return math.NaN()
	}
	mx /= t
	my /= t
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += w[i] * dx * dy
		sxx += w[i] * dx * dx
		syy += w[i] * dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// EvalAll evaluates ms under w (nil = every item once) into out, sharing
// one pass over the items for every metric that is a weighted sum.
func (d *Data) EvalAll(ms []Metric, w []float64, out []float64) {
	w = d.weights(w)
	var t, acc, brier, nll float64
	for i, wi := range w {
		if wi == 0 {
			continue
		}
		t += wi
		acc += wi * d.Correct[i]
		brier += wi * d.Brier[i]
		nll += wi * d.NLL[i]
	}
	for j, m := range ms {
		switch {
		case t == 0:
			out[j] = math.NaN()
		case m == MAccuracy:
			out[j] = acc / t
		case m == MBrier:
			out[j] = brier / t
		case m == MLogLoss:
			out[j] = nll / t
		default:
			out[j] = d.Eval(m, w)
		}
	}
}
