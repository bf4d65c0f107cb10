package compare

import (
	"context"
	"fmt"
	"strings"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/store"
)

// LoadRun reads a stored run as RunData: its question-set snapshot (for
// the questions and noul thresholds) and every stored answer, streamed
// without the raw answer bytes.
func LoadRun(ctx context.Context, db *store.DB, run *store.Run) (RunData, error) {
	snap, err := db.QuestionSet(ctx, run.SetHash)
	if err != nil {
		return RunData{}, fmt.Errorf("run %s: question set: %w", run.ID, err)
	}
	set, err := runner.ParseSnapshot(run.SetName, snap.Body)
	if err != nil {
		return RunData{}, fmt.Errorf("run %s: %w", run.ID, err)
	}
	// Streamed, without the raw answer bytes (no metric reads them), so
	// only the observations are held.
	rd := RunData{ID: run.ID, Questions: set.Questions, Obs: map[string][]metrics.Obs{}}
	err = db.ForEachAnswerNoRaw(ctx, run.ID, func(a *store.ItemAnswer) error {
		rd.Obs[a.QuestionID] = append(rd.Obs[a.QuestionID], obsOf(a))
		return nil
	})
	if err != nil {
		return RunData{}, err
	}
	rd.Name = run.Name
	rd.Model = run.Model
	if len(run.Models) > 0 {
		rd.Model = strings.Join(run.Models, "+")
	}
	rd.Thresholds = map[string]float64{}
	for _, e := range set.Questions {
		rd.Thresholds[e.ID] = set.Threshold(e.ID)
	}
	return rd, nil
}
