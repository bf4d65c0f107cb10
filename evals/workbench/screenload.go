package workbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/store"
)

// The loads a screen makes of a large stored run in parts: the report first
// (from the stored summary, ViewConfig.ReportOnly), then — only when a
// screen draws them — the per-item answers (WithAnswers), one item's
// answers (ItemAnswers) with the run's questions (RunSet), and the runs
// list's accuracy headline without reading answers when a summary is
// stored (StoredHeadline).

// RunSet reads run's question-set snapshot: the questions as the run asked
// them, for drawing an item's answers (ItemAnswers) without loading the
// run.
func RunSet(ctx context.Context, db *store.DB, run *Run) (*questionset.Set, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	snap, err := db.QuestionSet(ctx, run.SetHash)
	if err != nil {
		return nil, fmt.Errorf("run %s: question set: %w", run.ID, err)
	}
	set, err := runner.ParseSnapshot(run.SetName, snap.Body)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	return set, nil
}

// WithAnswers returns a copy of v with the run's first-repeat answers read
// into Items and ItemIDs (raw bytes left out): what a screen needs beside a
// report read as ReportOnly to draw per-item facts (the provider's mean
// confidence, a noul's confusion, the cost view, the dataset's overlay).
// The report is v's, shared. progress, when set, is called from the
// calling goroutine as answers are read (as ViewConfig.Progress); cancel
// ctx to stop (the error is then ctx.Err()).
func WithAnswers(ctx context.Context, db *store.DB, v *RunView, progress func(LoadProgress)) (*RunView, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	out := *v
	out.Items = make(map[string]map[string]*ItemResult, v.Run.Done)
	out.ItemIDs = make([]string, 0, v.Run.Done)
	total := v.Run.Done * len(v.Set.Questions)
	read := 0
	err := db.ForEachAnswerNoRaw(ctx, v.Run.ID, func(a *store.ItemAnswer) error {
		read++
		if read%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if progress != nil {
				progress(LoadProgress{Read: read, Total: max(total, read)})
			}
		}
		out.addItem(a)
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", v.Run.ID, err)
	}
	if progress != nil {
		progress(LoadProgress{Read: read, Total: max(total, read)})
	}
	return &out, nil
}

// StoredHeadline is Headline without reading the run's answers when the
// run's canonical report is stored (the summary a ReportOnly load by build
// stores); otherwise it measures the accuracy point values in one pass
// over the answers (no intervals, no per-item results held).
func StoredHeadline(ctx context.Context, db *store.DB, run *Run, build string) (*RunHeadline, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	var rep *RunReport
	if build != "" && run.Status != store.StatusRunning {
		set, err := RunSet(ctx, db, run)
		if err != nil {
			return nil, err
		}
		opt := DefaultMetricOptions() // what loadRun keys a screen's canonical load by
		if len(run.Models) > 0 {
			opt.Model = strings.Join(run.Models, "+")
		}
		v := &RunView{Run: run, Set: set}
		ok, err := v.fromSummary(ctx, db, summaryKey(run, opt, build, costSplit(opt, ViewConfig{})), ViewConfig{})
		if err != nil {
			return nil, err
		}
		if ok {
			rep = v.Report
		}
	}
	if rep == nil {
		opt := DefaultMetricOptions()
		opt.Bootstrap = -1
		v, err := LoadStoredRun(ctx, db, run, ViewConfig{Metrics: &opt, ReportOnly: true})
		if err != nil {
			return nil, err
		}
		rep = v.Report
	}
	h := &RunHeadline{RunID: run.ID, UpdatedAt: run.UpdatedAt}
	for _, q := range rep.Questions {
		h.Questions = append(h.Questions, QuestionHeadline{ID: q.ID, Accuracy: q.Accuracy.Value, Labelled: q.Labelled})
	}
	return h, nil
}
