package workbench

import (
	"fmt"
	"math"
	"strconv"

	"github.com/jevlab/jevlab/provider"
)

// AnswerDiff is how a variant's answer to one state differs from its
// question's answer to the same state: whether the decision changed, and
// the total-variation distance between the two distributions.
type AnswerDiff struct {
	// Base and Variant are the two decisions as text ("billing", "true",
	// "2 annoyed").
	Base, Variant string
	// DecisionChanged says the decisions differ: a choice's by label (a
	// reordered option is the same decision), a score's by level, a
	// noul's by true/false at each one's threshold.
	DecisionChanged bool
	// TV is ½Σ|pₖ−p'ₖ| over the outcomes matched by label (a choice) or
	// by level (a score), |P−P'| for a noul; NaN when the outcomes do not
	// align (Reason says why).
	TV     float64
	Reason string
}

// DiffAnswers compares answer v to the variant question vq (noul
// threshold vt) with answer base to its question bq (threshold bt), both
// given to the same state.
func DiffAnswers(bq *provider.Question, base *provider.Answer, bt float64, vq *provider.Question, v *provider.Answer, vt float64) AnswerDiff {
	d := AnswerDiff{TV: math.NaN()}
	if base == nil || v == nil || base.Type != bq.Type || v.Type != vq.Type {
		d.Reason = "not both answered"
		return d
	}
	if bq.Type != vq.Type {
		d.Reason = fmt.Sprintf("type %s against %s", vq.Type, bq.Type)
		return d
	}
	bv := View(bq, base, ViewOptions{Threshold: bt, True: -1})
	vv := View(vq, v, ViewOptions{Threshold: vt, True: -1})
	d.Base, d.Variant = bv.Decision, vv.Decision
	switch bq.Type {
	case provider.Noul:
		d.DecisionChanged = bv.DecisionIndex != vv.DecisionIndex
		d.TV = math.Abs(base.P - v.P)
	case provider.Score:
		d.DecisionChanged = bv.DecisionIndex != vv.DecisionIndex
		if len(bq.Levels) != len(vq.Levels) || len(base.Probs) != len(bq.Levels) || len(v.Probs) != len(vq.Levels) {
			d.Reason = fmt.Sprintf("%d levels against %d", len(vq.Levels), len(bq.Levels))
			return d
		}
		d.TV = tv(base.Probs, v.Probs)
	case provider.Choice:
		d.DecisionChanged = bv.Decision != vv.Decision
		if len(bq.Options) != len(vq.Options) || len(base.Probs) != len(bq.Options) || len(v.Probs) != len(vq.Options) {
			d.Reason = fmt.Sprintf("%d options against %d", len(vq.Options), len(bq.Options))
			return d
		}
		mapped := make([]float64, len(bq.Options))
		for i, o := range bq.Options {
			j := vq.OptionIndex(o.Label)
			if j < 0 {
				d.Reason = "option " + strconv.Quote(o.Label) + " is not in the variant"
				return d
			}
			mapped[i] = v.Probs[j]
		}
		d.TV = tv(base.Probs, mapped)
	default:
		d.DecisionChanged = bv.Decision != vv.Decision
		d.Reason = "no distribution for " + string(bq.Type)
	}
	return d
}

func tv(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s / 2
}

// Summary is the difference in one line: "decision unchanged (billing) ·
// TV 0.031" or "decision changed billing → technical · TV 0.412".
func (d AnswerDiff) Summary() string {
	var s string
	switch {
	case d.Base == "" && d.Variant == "" && d.Reason != "":
		return d.Reason
	case d.DecisionChanged:
		s = fmt.Sprintf("decision changed %s → %s", d.Base, d.Variant)
	default:
		s = fmt.Sprintf("decision unchanged (%s)", d.Variant)
	}
	if math.IsNaN(d.TV) {
		return s + " · TV — (" + d.Reason + ")"
	}
	return s + " · TV " + strconv.FormatFloat(d.TV, 'f', 3, 64)
}
