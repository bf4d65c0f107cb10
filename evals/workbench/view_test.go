package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/internal/testutil"
	pfix "github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/store"
)

// twoRuns stores two offline runs of demo-triage: one answered from
// recorded.jsonl, one from recorded-run2.jsonl (a real repeat).
func twoRuns(t *testing.T) (*store.DB, *Session) {
	t.Helper()
	root := testutil.RepoRoot(t)
	set, err := questionset.Load(filepath.Join(root, "fixtures", "demo-triage", "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ds, err := DatasetFor(set, "", dataset.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(set, ds, nil)
	items, err := LoadItems(context.Background(), set, s.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{"recorded.jsonl", "recorded-run2.jsonl"} {
		c, err := pfix.NewCache(pfix.CacheConfig{Files: []string{filepath.Join(root, "fixtures", "demo-triage", f)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.Template = &RunTemplate{DB: db, Provider: c, ProviderKind: "offline", Concurrency: 1 + i*3}
		if _, err := s.StartRun(context.Background(), items, f, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	return db, s
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A run view's report is report.Load's, figure for figure, and comparing
// two views equals CompareRuns (the canonical seed, the same
// observations): the workbench and the commands cannot disagree.
func TestViewsEqualTheCommandsComputations(t *testing.T) {
	db, _ := twoRuns(t)
	ctx := context.Background()
	for _, ref := range []string{"latest~1", "latest"} {
		v, err := LoadRun(ctx, db, ref, ViewConfig{})
		if err != nil {
			t.Fatal(err)
		}
		want := reportAsCommandsDid(t, db, v.Run)
		if got, w := jsonOf(t, v.Report), jsonOf(t, want); got != w {
			t.Fatalf("%s: view report differs from report.Load:\n%s\n---\n%s", ref, got, w)
		}
		if len(v.ItemIDs) != 10 || len(v.Items["dt-001"]) != 3 {
			t.Fatalf("items %d", len(v.ItemIDs))
		}
		only, err := LoadRun(ctx, db, ref, ViewConfig{ReportOnly: true})
		if err != nil || only.Items != nil || jsonOf(t, only.Report) != jsonOf(t, want) {
			t.Fatalf("report-only view: %v", err)
		}
	}
	a, _ := LoadRun(ctx, db, "latest~1", ViewConfig{})
	b, _ := LoadRun(ctx, db, "latest", ViewConfig{})
	byViews, err := CompareViews(a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	byRefs, err := CompareRuns(ctx, db, "latest~1", "latest", nil)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, byViews.Comparison) != jsonOf(t, byRefs.Comparison) {
		t.Fatal("CompareViews and CompareRuns differ")
	}
	if byRefs.A.ID != a.Run.ID || byRefs.Comparison.Seed != CanonicalSeed {
		t.Fatalf("A %s, seed %d", byRefs.A.ID, byRefs.Comparison.Seed)
	}
	// And both equal what compare computes from compare.LoadRun.
	da, _ := compare.LoadRun(ctx, db, a.Run)
	dbb, _ := compare.LoadRun(ctx, db, b.Run)
	if jsonOf(t, compare.Compare(da, dbb, DefaultCompareOptions())) != jsonOf(t, byRefs.Comparison) {
		t.Fatal("CompareRuns differs from compare.Compare over compare.LoadRun")
	}
	// 0 of 30 decisions flipped between the two real recordings.
	flips, changed := 0, 0
	for _, q := range byRefs.Comparison.Questions {
		flips += q.Drift.ChangedDecisions
		changed += q.Drift.ChangedValues
	}
	if flips != 0 || changed != 6 {
		t.Fatalf("%d decisions and %d answers changed, want 0 and 6 (testdata README)", flips, changed)
	}
	if _, err := CompareViews(a, a, nil); err == nil {
		t.Fatal("compared a run with itself")
	}
	if _, err := LoadRun(ctx, db, "nope", ViewConfig{}); err == nil {
		t.Fatal("loaded a missing run")
	}
}

// reportAsCommandsDid computes a run's report the way show and eval did
// before the layer existed (report.Load): observations streamed from the
// store, report.Build with the canonical options, the snapshot's gates.
func reportAsCommandsDid(t *testing.T, db *store.DB, run *Run) *RunReport {
	t.Helper()
	ctx := context.Background()
	snap, err := db.QuestionSet(ctx, run.SetHash)
	if err != nil {
		t.Fatal(err)
	}
	set, err := questionset.Parse(run.SetName, snap.Body)
	if err != nil {
		t.Fatal(err)
	}
	obs := map[string][]metrics.Obs{}
	if err := db.ForEachAnswer(ctx, run.ID, func(a *store.ItemAnswer) error {
		obs[a.QuestionID] = append(obs[a.QuestionID], report.ObsOf(a))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	opt := DefaultMetricOptions()
	opt.Model = strings.Join(run.Models, "+")
	rep := report.Build(run, set, obs, opt, questionset.Gate{})
	rep.Gates = report.EvaluateGates(set, questionset.Gate{}, rep.Questions)
	rep.Passed = true
	for _, g := range rep.Gates {
		rep.Passed = rep.Passed && g.Passed
	}
	return rep
}

// A stored run's questions are read in as few passes as their metric
// columns allow: all at once for 100,000 items of 8 questions, one at a
// time for a million.
func TestPassesGroupQuestionsUnderTheBound(t *testing.T) {
	qs := []int{0, 1, 3, 4, 5, 6, 7, 9} // a box at 2 and 8 is measured apart
	for _, c := range []struct {
		items int
		want  string
	}{
		{0, "[[0 1 3 4 5 6 7 9]]"},
		{100_000, "[[0 1 3 4 5 6 7 9]]"},
		{300_000, "[[0 1 3 4] [5 6 7 9]]"},
		{1_000_000, "[[0] [1] [3] [4] [5] [6] [7] [9]]"},
	} {
		got := passes(qs, c.items, DefaultPassBytes)
		if fmt.Sprint(got) != c.want {
			t.Errorf("%d items: passes %v, want %s", c.items, got, c.want)
		}
		for _, p := range got {
			if len(p) > 1 && len(p)*c.items*columnBytes > DefaultPassBytes {
				t.Errorf("%d items: a pass of %d questions holds more than %d bytes", c.items, len(p), DefaultPassBytes)
			}
		}
	}
	if got := passes(nil, 10, DefaultPassBytes); len(got) != 0 {
		t.Errorf("no questions: %v", got)
	}
	// The least budget: a question a pass, however small the run.
	if got := fmt.Sprint(passes(qs[:3], 10, 1)); got != "[[0] [1] [3]]" {
		t.Errorf("budget 1: %s", got)
	}
}
