package tui

import (
	"context"
	"fmt"
	"sort"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// runAnalysis is a stored run read back and measured: done in a command,
// never in Update or View.
type runAnalysis struct {
	run     *store.Run
	set     *questionset.Set // the run's snapshot
	data    compare.RunData
	reports []*metrics.QuestionReport // in question order
	byItem  map[string]map[string]*itemResult
	labels  map[string]map[string]int // item → question → label index
}

// analyzeRun loads run id's snapshot and answers and computes every
// question's metrics.
func analyzeRun(ctx context.Context, db *store.DB, id string) (*runAnalysis, error) {
	run, err := db.ResolveRun(ctx, id)
	if err != nil {
		return nil, err
	}
	snap, err := db.QuestionSetSnapshot(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	set, err := runner.ParseSnapshot("run "+run.ID, snap.Body)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	answers, err := db.RunAnswers(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	// Answers come back in the order they were written, which under
	// concurrency is completion order; sort by dataset position so the
	// bootstrap resamples (and so the intervals) are reproducible.
	sort.SliceStable(answers, func(i, j int) bool {
		a, b := &answers[i], &answers[j]
		if a.Seq != b.Seq {
			return a.Seq < b.Seq
		}
		return a.Repeat < b.Repeat
	})
	ra := &runAnalysis{run: run, set: set, byItem: map[string]map[string]*itemResult{}, labels: map[string]map[string]int{}}
	ra.data = compare.FromItemAnswers(run.ID, set.Questions, answers)
	ra.data.Name, ra.data.Model = run.Name, run.Model
	ra.data.Thresholds = map[string]float64{}
	for _, qe := range set.Questions {
		ra.data.Thresholds[qe.ID] = set.Threshold(qe.ID)
	}
	for i := range answers {
		a := &answers[i]
		if a.Repeat != 0 {
			continue
		}
		q, ok := set.Questions.Get(a.QuestionID)
		if !ok {
			continue
		}
		m := ra.byItem[a.ItemID]
		if m == nil {
			m = map[string]*itemResult{}
			ra.byItem[a.ItemID] = m
		}
		r := &itemResult{ans: a.Answer, asked: q}
		if a.Answer == nil {
			r.err = a.ErrKind
			if a.ErrMsg != "" {
				r.err += ": " + a.ErrMsg
			}
		}
		m[a.QuestionID] = r
		if a.Label != nil {
			l := ra.labels[a.ItemID]
			if l == nil {
				l = map[string]int{}
				ra.labels[a.ItemID] = l
			}
			l[a.QuestionID] = *a.Label
		}
	}
	for _, qe := range set.Questions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q := qe.Question
		opt := metrics.Options{Threshold: set.Threshold(qe.ID), Model: run.Model}
		if mc, ok := set.MinConfidence(qe.ID); ok {
			opt.MinConfidence = &mc // routing to uncertain, shown on the evaluate screen
		}
		ra.reports = append(ra.reports, metrics.Compute(&q, ra.data.Obs[qe.ID], opt))
	}
	return ra, nil
}

// question returns the run's question id.
func (ra *runAnalysis) question(id string) *provider.Question {
	q, _ := ra.set.Questions.Get(id)
	return q
}
