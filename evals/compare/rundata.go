// Package compare compares two runs over the same dataset items, paired by
// item id: per-question metric deltas with paired bootstrap intervals, exact
// McNemar on correctness with Holm's correction across questions, flipped
// items, label-free drift, the noise measured from repeats, and a verdict.
package compare

import (
	"fmt"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// RunData is one run as the comparison needs it: its questions (in set
// order) and, per question id, its observations (every repeat).
type RunData struct {
	ID        string
	Name      string
	Model     string // requested or resolved model, for display
	Questions provider.Questions
	// Obs holds each question's observations; Label is the index in that
	// run's question (options/levels), as store and dataset write it.
	Obs map[string][]metrics.Obs
	// Thresholds are per-question noul thresholds (default 0.5).
	Thresholds map[string]float64
	// Load, when set, reads one question's observations on demand (a
	// stored run, LoadRun): Compare then holds one question of each run at
	// a time. Obs, when it has the question, wins.
	Load func(questionID string) ([]metrics.Obs, error)
	// Stream, when set, streams the run's items in id order for a
	// comparison (a stored run, LoadRun); otherwise the items are gathered
	// from Obs and Load.
	Stream Items
	// ItemsHint is about how many items the run has (0: unknown), to size
	// what a comparison keeps per item once.
	ItemsHint int
}

// QuestionObs returns question id's observations: Obs[id], else read by
// Load (nil and no error when neither has them).
func (r *RunData) QuestionObs(id string) ([]metrics.Obs, error) {
	if o, ok := r.Obs[id]; ok {
		return o, nil
	}
	if r.Load == nil {
		return nil, nil
	}
	o, err := r.Load(id)
	if err != nil {
		return nil, fmt.Errorf("run %s question %s: %w", r.ID, id, err)
	}
	return o, nil
}

// FromItemAnswers builds RunData from a run's stored answers
// (store.RunAnswers), in their order.
func FromItemAnswers(id string, qs provider.Questions, answers []store.ItemAnswer) RunData {
	rd := RunData{ID: id, Questions: qs, Obs: map[string][]metrics.Obs{}}
	for i := range answers {
		a := &answers[i]
		rd.Obs[a.QuestionID] = append(rd.Obs[a.QuestionID], obsOf(a))
	}
	return rd
}

// obsOf is a stored answer as an observation.
func obsOf(a *store.ItemAnswer) metrics.Obs {
	o := metrics.Obs{ItemID: a.ItemID, Answer: a.Answer, ErrKind: a.ErrKind, LatencyMS: a.LatencyMS, Repeat: a.Repeat}
	if a.Answer == nil && o.ErrKind == "" {
		o.ErrKind = "unknown"
	}
	if a.Label != nil {
		o.Label, o.HasLabel = *a.Label, true
		if a.Answer != nil && a.Answer.Type == provider.Box {
			o.LabelBox = dataset.StoredBoxLabel(a.LabelText)
		}
	}
	return o
}

func (r *RunData) threshold(qid string) float64 {
	if t, ok := r.Thresholds[qid]; ok && t > 0 {
		return t
	}
	return metrics.DefaultThreshold
}
