package workbench

import (
	"fmt"
	"math"

	"github.com/jevlab/jevlab/evals/costs"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/provider"
)

// CostAt is where the evaluate screen's cost view stands: a noul's
// decision threshold and the confidence cut-point.
type CostAt struct {
	// Threshold is a noul's decision threshold: yes at p ≥ Threshold.
	Threshold float64
	// Cut is the confidence cut-point. A choice abstains when its top
	// probability is below it; a noul abstains on the band [min(Threshold,
	// 1−Cut), max(Threshold, Cut)) (nothing when Cut ≤ 0.5). Only a
	// question whose costs price abstaining abstains.
	Cut float64
}

// CostView is what a question's declared costs make of a run's labelled
// answers at one CostAt: the confusion counts, coverage, errors and
// expected cost per 1,000 items, beside the thresholds fitted on dev
// (and their check on test) in the run's report.
type CostView struct {
	Question string
	// Costs words the declared costs.
	Costs string
	// Abstains says whether the costs price abstaining (else Cut is
	// ignored and every item is decided).
	Abstains bool
	// Noul is the outcome of a noul at the band Lo, Hi; Choice the
	// outcome of a choice at the cut-point. Exactly one is set.
	Noul   *costs.Outcome
	Choice *costs.ChoiceOutcome
	// Options are a choice's option labels (Choice.Confusion's order).
	Options []string
	// Fitted words the report's cost-optimal fit on dev and its check on
	// test ("" when the report has none).
	Fitted []string
}

// CostView computes question qid's cost view at at over the run's first
// answers with a label (every split); ok is false when the question
// declares no costs.
func (v *RunView) CostView(qid string, at CostAt) (*CostView, bool) {
	if v.Set == nil {
		return nil, false
	}
	st, ok := v.Set.Settings[qid]
	q, qok := v.Set.Questions.Get(qid)
	if !ok || st.Costs == nil || !qok {
		return nil, false
	}
	cv := &CostView{Question: qid, Abstains: st.Costs.Abstain != nil}
	switch {
	case q.Type == provider.Noul && !st.Costs.Choice:
		c := costs.Costs{FalsePositive: st.Costs.FalsePositive, FalseNegative: st.Costs.FalseNegative, Abstain: st.Costs.Abstain}
		var pts []costs.Point
		for _, id := range v.ItemIDs {
			r := v.Items[id][qid]
			if r == nil || r.Answer == nil || r.Label < 0 || math.IsNaN(r.Answer.P) {
				continue
			}
			pts = append(pts, costs.Point{P: r.Answer.P, Label: r.Label == 1})
		}
		lo, hi := at.Threshold, at.Threshold
		if cv.Abstains && at.Cut > 0.5 {
			lo, hi = math.Min(at.Threshold, 1-at.Cut), math.Max(at.Threshold, at.Cut)
		}
		o := costs.Evaluate(pts, lo, hi, c)
		cv.Noul = &o
		ab := "abstaining never"
		if c.Abstain != nil {
			ab = fmt.Sprintf("abstaining %g", *c.Abstain)
		}
		cv.Costs = fmt.Sprintf("a false positive costs %g, a false negative %g, %s", c.FalsePositive, c.FalseNegative, ab)
		for _, f := range v.Report.Costs {
			if f.Question == qid {
				cv.Fitted = report.CostLines([]report.CostFit{f})
			}
		}
	case q.Type == provider.Choice && st.Costs.Choice:
		e := provider.QuestionEntry{ID: qid, Question: *q}
		c, _ := report.ChoiceCostsOf(v.Set, e)
		var pts []costs.ChoicePoint
		for _, id := range v.ItemIDs {
			r := v.Items[id][qid]
			if r == nil || r.Answer == nil || r.Label < 0 || r.Label >= len(q.Options) || len(r.Answer.Probs) != len(q.Options) {
				continue
			}
			top := 0.0
			for _, p := range r.Answer.Probs {
				top = math.Max(top, p)
			}
			pts = append(pts, costs.ChoicePoint{Conf: top, Decision: metrics.Decide(q, r.Answer, 0.5), Label: r.Label})
		}
		cut := math.Inf(-1)
		if cv.Abstains {
			cut = at.Cut
		}
		o := costs.EvaluateChoice(pts, cut, c)
		cv.Choice, cv.Options = &o, c.Options
		ab := "abstaining never"
		if c.Abstain != nil {
			ab = fmt.Sprintf("abstaining %g", *c.Abstain)
		}
		cv.Costs = report.MatrixText(c) + ", " + ab
		for _, f := range v.Report.ChoiceCosts {
			if f.Question == qid {
				cv.Fitted = report.ChoiceCostLines([]report.ChoiceCostFit{f})
			}
		}
	default:
		return nil, false
	}
	return cv, true
}
