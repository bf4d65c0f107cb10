package compare

import (
	"context"
	"fmt"
	"slices"
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
	// The comparison merges both runs' items by id as they stream. One
	// Item and its observations are reused for every item (pull copies
	// what it keeps), over the store's reused answers.
	// The set's questions by id (the first of a repeated id), so an item's
	// answers, which come in question id order, are placed by walking both
	// lists together instead of looking each id up.
	byID := make([]int, 0, len(set.Questions))
	for i, e := range set.Questions {
		if !slices.ContainsFunc(byID, func(j int) bool { return set.Questions[j].ID == e.ID }) {
			byID = append(byID, i)
		}
	}
	slices.SortStableFunc(byID, func(x, y int) int { return strings.Compare(set.Questions[x].ID, set.Questions[y].ID) })
	rd.Stream = func(yield func(*Item) error) error {
		it := Item{Obs: make([][]metrics.Obs, len(set.Questions))}
		var obs []metrics.Obs
		var spans [][2]int
		err := db.ForEachItemNoRaw(ctx, run.ID, func(as []store.ItemAnswer) error {
			clear(it.Obs)
			it.ID, it.Order = as[0].ItemID, as[0].Seq
			obs, spans = obs[:0], spans[:0]
			// as is in question id order: each question's answers are
			// together.
			k := 0 // the next of byID
			for i := 0; i < len(as); {
				qid := as[i].QuestionID
				j := i + 1
				for j < len(as) && as[j].QuestionID == qid {
					j++
				}
				for k < len(byID) && set.Questions[byID[k]].ID < qid {
					k++
				}
				if k < len(byID) && set.Questions[byID[k]].ID == qid {
					start := len(obs)
					for m := i; m < j; m++ {
						obs = append(obs, obsOf(&as[m]))
					}
					spans = append(spans, [2]int{byID[k], start})
				}
				i = j
			}
			for k, sp := range spans {
				end := len(obs)
				if k+1 < len(spans) {
					end = spans[k+1][1]
				}
				it.Obs[sp[0]] = obs[sp[1]:end:end]
			}
			return yield(&it)
		})
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
