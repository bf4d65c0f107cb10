package metrics

import (
	"fmt"
	"math"
	"strconv"

	"github.com/jevlab/jevlab/provider"
)

// Routing is what a caller-side minimum confidence (a question set's
// min_confidence, an imported Noetic routeSwitch's minConfidence) does to a
// question's answers: an answer whose confidence is strictly under
// MinConfidence is routed to "uncertain" (a human, a fallback); the rest
// are kept and acted on. The confidence is the selective curve's (see
// Selective.ConfidenceName). Items whose call failed have no confidence and
// are left out (they are counted in the report's errors).
type Routing struct {
	MinConfidence float64 `json:"min_confidence"`
	Confidence    string  `json:"confidence"`
	// Answered counts the items with a usable answer (first repeat).
	Answered int `json:"answered"`
	// Routed counts answered items under MinConfidence; RoutedShare is
	// Routed/Answered with a bootstrap interval over the answered items.
	Routed      int      `json:"routed"`
	RoutedShare Estimate `json:"routed_share"`
	// Kept = Answered − Routed. KeptAccuracy is KeptCorrect/KeptLabelled
	// over the kept items that have a label (the same decision rule as
	// Accuracy), with a bootstrap interval from the same resamples.
	Kept         int      `json:"kept"`
	KeptLabelled int      `json:"kept_labelled"`
	KeptCorrect  int      `json:"kept_correct"`
	KeptAccuracy Estimate `json:"kept_accuracy"`
}

// String is the one-line summary every report prints, e.g.
// "min_confidence 0.60: 12.0% routed to uncertain (60/500) · accuracy of
// the rest 0.912 [0.880, 0.940] (403/440)".
func (r *Routing) String() string {
	head := "min_confidence " + formatCut(r.MinConfidence) + ": "
	if r.Answered == 0 {
		return head + "no answers to route"
	}
	acc := "—"
	if r.KeptAccuracy.Defined() {
		acc = fmt.Sprintf("%.3f", r.KeptAccuracy.Value)
		if r.KeptAccuracy.HasInterval() {
			acc += fmt.Sprintf(" [%.3f, %.3f]", r.KeptAccuracy.Lo, r.KeptAccuracy.Hi)
		}
	}
	return fmt.Sprintf("%s%.1f%% routed to uncertain (%d/%d) · accuracy of the rest %s (%d/%d)",
		head, 100*r.RoutedShare.Value, r.Routed, r.Answered, acc, r.KeptCorrect, r.KeptLabelled)
}

// formatCut writes a cut with two decimals, or as many as it needs.
func formatCut(v float64) string {
	if s := strconv.FormatFloat(v, 'f', 2, 64); math.Abs(v-math.Round(v*100)/100) < 1e-12 {
		return s
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// selConfidence is the selective-prediction confidence of a usable answer,
// as Prepare computes it: max(p, 1−p) for a noul, the provider's confidence
// for a score that has one, otherwise the top probability.
func selConfidence(q *provider.Question, a *provider.Answer) float64 {
	switch q.Type {
	case provider.Noul:
		return math.Max(a.P, 1-a.P)
	case provider.Score:
		if a.HasConfidence {
			return a.Confidence
		}
	}
	return a.Probs[argmax(a.Probs)]
}

// routing computes Routing over first (one observation per item) for the
// minimum confidence cut, with opt's threshold, bootstrap and seed.
func routing(q *provider.Question, first []Obs, cut float64, opt Options) *Routing {
	r := &Routing{MinConfidence: cut, Confidence: confidenceName(q.Type)}
	k := q.Size()
	var routed, labelled, correct []float64
	for i := range first {
		o := &first[i]
		if !usable(q, o.Answer) {
			continue
		}
		r.Answered++
		var ro, la, co float64
		if selConfidence(q, o.Answer) < cut {
			ro = 1
			r.Routed++
		} else if o.HasLabel && o.Label >= 0 && o.Label < k {
			la = 1
			r.KeptLabelled++
			if decide(q, o.Answer, opt.Threshold) == o.Label {
				co = 1
				r.KeptCorrect++
			}
		}
		routed, labelled, correct = append(routed, ro), append(labelled, la), append(correct, co)
	}
	r.Kept = r.Answered - r.Routed
	share := func(w []float64) float64 { return ratio(routed, nil, w) }
	acc := func(w []float64) float64 { return ratio(correct, labelled, w) }
	r.RoutedShare, r.KeptAccuracy = Point(share(nil)), Point(acc(nil))
	n := r.Answered
	if opt.Bootstrap <= 0 || n == 0 {
		return r
	}
	b := opt.Bootstrap
	ds, da := make([]float64, b), make([]float64, b)
	Resamples(n, b, opt.Seed^streamRouting, Workers(b), func(_, j int, w []float64) {
		ds[j], da[j] = share(w), acc(w)
	})
	r.RoutedShare.Lo, r.RoutedShare.Hi = Interval(ds)
	if r.KeptAccuracy.Defined() {
		r.KeptAccuracy.Lo, r.KeptAccuracy.Hi = Interval(da)
	}
	return r
}

// streamRouting keeps the routing resamples apart from the metrics'.
const streamRouting = 0x72_6f_75_74 // "rout"

// ratio is Σ w·num / Σ w·den (den nil: Σ w), NaN when the denominator is
// 0; w nil weighs every item 1.
func ratio(num, den, w []float64) float64 {
	var s, t float64
	for i, x := range num {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		d := 1.0
		if den != nil {
			d = den[i]
		}
		s += wi * x
		t += wi * d
	}
	if t == 0 {
		return math.NaN()
	}
	return s / t
}
