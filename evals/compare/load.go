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
// the questions and noul thresholds), with a Stream of its stored answers
// item by item in id order (without the raw bytes) that a comparison
// merges with the other run's, and a Load of one question's answers (the
// variants). ctx and db must stay valid until the comparison is done.
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
	// The comparison merges both runs' items by id as they stream.
	rd.Stream = func(yield func(*Item) error) error {
		var cur *Item
		err := db.ForEachAnswerByItemNoRaw(ctx, run.ID, func(a *store.ItemAnswer) error {
			if cur != nil && cur.ID != a.ItemID {
				if err := yield(cur); err != nil {
					return err
				}
				cur = nil
			}
			if cur == nil {
				cur = &Item{ID: a.ItemID, Order: a.Seq, Obs: map[string][]metrics.Obs{}}
			}
			cur.Obs[a.QuestionID] = append(cur.Obs[a.QuestionID], obsOf(a))
			return nil
		})
		if err == nil && cur != nil {
			err = yield(cur)
		}
		if err != nil {
			return fmt.Errorf("run %s: %w", run.ID, err)
		}
		return nil
	}
	rd.Load = func(qid string) ([]metrics.Obs, error) {
		var obs []metrics.Obs
		err := db.ForEachQuestionAnswerNoRaw(ctx, run.ID, qid, func(a *store.ItemAnswer) error {
			obs = append(obs, obsOf(a))
			return nil
		})
		return obs, err
	}
	rd.ItemsHint = run.Done / max(run.Repeat, 1)
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
