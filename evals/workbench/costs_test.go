package workbench

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/costs"
	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
	pfix "github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/store"
)

// costRun stores an offline run of entity-merge with costs declared on
// both its questions and returns its view.
func costRun(t *testing.T) (*RunView, string) {
	t.Helper()
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "entity-merge")
	dir := t.TempDir()
	for _, f := range []string{"questions.yaml", "dataset.jsonl", "recorded.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "questions.yaml" {
			s := string(b)
			for _, r := range [][2]string{
				{"    instructions: Do `a` and `b` refer to the same real-world entity?\n", "    costs: {false_positive: 5, false_negative: 1, abstain: 0.5}\n"},
				{"    instructions: What should the entity resolution pipeline do with this pair?\n", "    costs: {matrix: {keep_separate: {merge: 20}}, other: 1, abstain: 0.6}\n"},
			} {
				if !strings.Contains(s, r[0]) {
					t.Fatal("entity-merge changed")
				}
				s = strings.Replace(s, r[0], r[0]+r[1], 1)
			}
			b = []byte(s)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o600)
	}
	set, err := questionset.Load(filepath.Join(dir, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ds, _ := DatasetFor(set, "", dataset.Options{}, nil)
	s := NewSession(set, ds, nil)
	items, err := LoadItems(context.Background(), set, s.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pfix.NewCache(pfix.CacheConfig{Files: []string{filepath.Join(dir, "recorded.jsonl")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Template = &RunTemplate{DB: db, Provider: c, ProviderKind: "offline", Concurrency: 2}
	if _, err := s.StartRun(context.Background(), items, "costs", "", nil); err != nil {
		t.Fatal(err)
	}
	v, err := LoadRun(context.Background(), db, "latest", ViewConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return v, dir
}

// The cost view is evals/costs applied to the run's labelled answers, read
// here from the files themselves: at threshold 0.5 without a band, with
// the band the cut-point opens, and a choice's cut-point; a question
// without costs has no view.
func TestCostViewEqualsCostsOnTheFiles(t *testing.T) {
	v, dir := costRun(t)
	noulLabels, actionLabels := map[string]bool{}, map[string]string{}
	ds, _ := os.ReadFile(filepath.Join(dir, "dataset.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(ds)), "\n") {
		var row struct {
			ID     string `json:"id"`
			Labels struct {
				Same   *bool   `json:"same_entity"`
				Action *string `json:"action"`
			} `json:"labels"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.Labels.Same != nil {
			noulLabels[row.ID] = *row.Labels.Same
		}
		if row.Labels.Action != nil {
			actionLabels[row.ID] = *row.Labels.Action
		}
	}
	var pts []costs.Point
	var cps []costs.ChoicePoint
	cv0, ok := v.CostView("action", CostAt{Cut: 0.9})
	if !ok {
		t.Fatal("no cost view for action")
	}
	idx := map[string]int{}
	for i, o := range cv0.Options {
		idx[o] = i
	}
	rec, _ := os.ReadFile(filepath.Join(dir, "recorded.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(rec)), "\n") {
		var ex struct {
			ID       string `json:"id"`
			Response struct {
				Answers struct {
					Same   *struct{ Noul *float64 } `json:"same_entity"`
					Action *struct {
						Choice string             `json:"choice"`
						Probs  map[string]float64 `json:"probabilities"`
					} `json:"action"`
				} `json:"answers"`
			} `json:"response"`
		}
		json.Unmarshal([]byte(line), &ex)
		if a := ex.Response.Answers.Same; a != nil && a.Noul != nil {
			if l, ok := noulLabels[ex.ID]; ok {
				pts = append(pts, costs.Point{P: *a.Noul, Label: l})
			}
		}
		if a := ex.Response.Answers.Action; a != nil && len(a.Probs) > 0 {
			if l, ok := actionLabels[ex.ID]; ok {
				top := 0.0
				for _, p := range a.Probs {
					top = math.Max(top, p)
				}
				cps = append(cps, costs.ChoicePoint{Conf: top, Decision: idx[a.Choice], Label: idx[l]})
			}
		}
	}
	half := 0.5
	c := costs.Costs{FalsePositive: 5, FalseNegative: 1, Abstain: &half}
	for _, tc := range []struct {
		at     CostAt
		lo, hi float64
	}{{CostAt{Threshold: 0.5, Cut: 0.5}, 0.5, 0.5}, {CostAt{Threshold: 0.5, Cut: 0.8}, 0.2, 0.8}, {CostAt{Threshold: 0.9, Cut: 0.6}, 0.4, 0.9}} {
		cv, ok := v.CostView("same_entity", tc.at)
		want := costs.Evaluate(pts, tc.lo, tc.hi, c)
		if !ok || cv.Noul == nil || math.Abs(cv.Noul.Lo-tc.lo) > 1e-12 || math.Abs(cv.Noul.Hi-tc.hi) > 1e-12 {
			t.Fatalf("at %+v: %+v", tc.at, cv)
		}
		got := *cv.Noul
		got.Lo, got.Hi = want.Lo, want.Hi
		if got != want || len(cv.Fitted) == 0 || !cv.Abstains {
			t.Errorf("at %+v:\n view %+v\n want %+v", tc.at, got, want)
		}
	}
	m := cv0.Choice
	if m == nil || m.N != len(cps) {
		t.Fatalf("action view %+v, %d points", m, len(cps))
	}
	if want := costs.EvaluateChoice(cps, 0.9, costs.ChoiceCosts{Options: cv0.Options, Matrix: v.Set.Settings["action"].Costs.MatrixFor(v.Question("action")), Abstain: v.Set.Settings["action"].Costs.Abstain}); jsonOf(t, *m) != jsonOf(t, want) || want.Abstain == 0 {
		t.Errorf("action view %+v\nwant %+v", *m, want)
	}
	v.Set.Settings["same_entity"] = questionset.Settings{}
	if _, ok := v.CostView("same_entity", CostAt{Threshold: 0.5}); ok {
		t.Error("a view for a question without costs")
	}
}
