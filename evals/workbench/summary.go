package workbench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// LowConfidenceBelow bounds the low-confidence band: an answer whose
// confidence (the provider's field; a noul's top prob, max(p, 1−p), since a
// noul has none) is under it is "low confidence" on every screen.
const LowConfidenceBelow = 0.6

// LowConfidence reports whether the answer falls in the low-confidence band.
func (v *AnswerView) LowConfidence() bool {
	if v.DecisionIndex < 0 {
		return false
	}
	if v.HasConfidence {
		return v.Confidence < LowConfidenceBelow
	}
	if v.Type == provider.Noul {
		return v.TopProb < LowConfidenceBelow
	}
	return false
}

// ConfidenceSummary sets a question's accuracy beside how sure the model
// was, over the same answers (labelled, first repeat): a model whose mean
// top prob is well above its accuracy is overconfident.
type ConfidenceSummary struct {
	// N is the number of labelled answers averaged.
	N int
	// MeanConfidence is the mean of the provider's confidence field over
	// the NConfidence answers that carry one (NaN when none does: a noul).
	MeanConfidence float64
	NConfidence    int
	// MeanTopProb is the mean of the largest probability of each answer
	// (a noul's max(p, 1−p)); NaN when N is 0.
	MeanTopProb float64
}

// Confidence summarises question id's confidence over the labelled answers
// accuracy is measured on.
func (v *RunView) Confidence(id string) ConfidenceSummary {
	s := ConfidenceSummary{MeanConfidence: math.NaN(), MeanTopProb: math.NaN()}
	var conf, top float64
	for _, item := range v.ItemIDs {
		r := v.Items[item][id]
		if r == nil || r.Answer == nil || r.Label < 0 {
			continue
		}
		av, _ := v.Answer(item, id)
		if av.DecisionIndex < 0 {
			continue
		}
		s.N++
		top += av.TopProb
		if av.HasConfidence {
			s.NConfidence++
			conf += av.Confidence
		}
	}
	if s.N > 0 {
		s.MeanTopProb = top / float64(s.N)
	}
	if s.NConfidence > 0 {
		s.MeanConfidence = conf / float64(s.NConfidence)
	}
	return s
}

// Confusion is question id's confusion matrix, [true label][decision],
// over its labelled answers: the report's for a choice or a score, and for
// a noul (rows and columns false, true) counted with the run's threshold.
// nil when nothing is labelled.
func (v *RunView) Confusion(id string) [][]int {
	rep := v.QuestionReport(id)
	if rep == nil {
		return nil
	}
	switch {
	case rep.Choice != nil:
		return rep.Choice.Confusion
	case rep.Score != nil:
		return rep.Score.Confusion
	case rep.Type != provider.Noul:
		return nil
	}
	mat := [][]int{{0, 0}, {0, 0}}
	n := 0
	for _, item := range v.ItemIDs {
		r := v.Items[item][id]
		if r == nil || r.Answer == nil || r.Label < 0 || r.Label > 1 {
			continue
		}
		av, _ := v.Answer(item, id)
		if av.DecisionIndex < 0 {
			continue
		}
		mat[r.Label][av.DecisionIndex]++
		n++
	}
	if n == 0 {
		return nil
	}
	return mat
}

// RunHeadline is a run's accuracy at a glance, for the runs list: each
// question's accuracy point value (no intervals: cheap).
type RunHeadline struct {
	RunID     string
	UpdatedAt time.Time // the run's last update, so a list can tell a stale headline
	Questions []QuestionHeadline
}

// QuestionHeadline is one question's accuracy point value over Labelled
// answers (NaN when nothing is labelled).
type QuestionHeadline struct {
	ID       string
	Accuracy float64
	Labelled int
}

// String is "team 0.800 · urgent 0.700" ("—" for a question with no
// labelled answer).
func (h *RunHeadline) String() string {
	parts := make([]string, 0, len(h.Questions))
	for _, q := range h.Questions {
		acc := "—"
		if !math.IsNaN(q.Accuracy) {
			acc = fmt.Sprintf("%.3f", q.Accuracy)
		}
		parts = append(parts, q.ID+" "+acc)
	}
	return strings.Join(parts, " · ")
}

// Headline measures run's accuracy per question without bootstrap
// intervals: the same point values LoadRun reports, at a fraction of the
// cost.
func Headline(ctx context.Context, db *store.DB, run *Run) (*RunHeadline, error) {
	opt := DefaultMetricOptions()
	opt.Bootstrap = -1
	v, err := LoadStoredRun(ctx, db, run, ViewConfig{Metrics: &opt})
	if err != nil {
		return nil, err
	}
	h := &RunHeadline{RunID: run.ID, UpdatedAt: run.UpdatedAt}
	for _, q := range v.Report.Questions {
		h.Questions = append(h.Questions, QuestionHeadline{ID: q.ID, Accuracy: q.Accuracy.Value, Labelled: q.Labelled})
	}
	return h, nil
}

// ConfidenceLabel names the confidence a report's selective curve,
// reliability bins or routing used (metrics' Selective.ConfidenceName) the
// way every screen names it: "confidence" for the provider's field, "top
// prob" for the largest probability (a noul's max(p, 1−p)).
func ConfidenceLabel(metricsName string) string {
	switch metricsName {
	case "provider confidence", "confidence":
		return "confidence"
	case "max prob", "max(p,1-p)":
		return "top prob"
	}
	return metricsName
}

// IntervalMark is the one-character mark of an estimate's interval method,
// as the HTML report prints it: "ᵂ" Wilson, "ᴺ" Newcombe, "" the
// percentile bootstrap (the default, named in a screen's title).
func IntervalMark(e Estimate) string {
	switch e.Method {
	case metrics.IntervalWilson:
		return "ᵂ"
	case metrics.IntervalNewcombe:
		return "ᴺ"
	}
	return ""
}
