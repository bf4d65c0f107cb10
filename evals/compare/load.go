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
// the questions and noul thresholds), with a Load that streams one
// question's stored answers (without the raw bytes) when the comparison
// reaches it. ctx and db must stay valid until the comparison is done.
func LoadRun(ctx context.Context, db *store.DB, run *store.Run) (RunData, error) {
	snap, err := db.QuestionSet(ctx, run.SetHash)
	if err != nil {
		return RunData{}, fmt.Errorf("run %s: question set: %w", run.ID, err)
	}
	set, err := runner.ParseSnapshot(run.SetName, snap.Body)
	if err != nil {
		return RunData{}, fmt.Errorf("run %s: %w", run.ID, err)
	}
	// Read question by question as the comparison asks (without the raw
	// answer bytes, which no metric reads), so a large run is never held
	// whole.
	rd := RunData{ID: run.ID, Questions: set.Questions}
	rd.Load = func(qid string) ([]metrics.Obs, error) {
		var obs []metrics.Obs
		err := db.ForEachQuestionAnswerNoRaw(ctx, run.ID, qid, func(a *store.ItemAnswer) error {
			obs = append(obs, obsOf(a))
			return nil
		})
		return obs, err
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
