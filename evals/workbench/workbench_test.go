package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

func mustSet(t *testing.T, src string) *questionset.Set {
	t.Helper()
	s, err := questionset.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const triage = `name: t
state: "hello"
questions:
  queue:
    type: choice
    instructions: Which queue?
    criteria:
      billing: null
      technical: null
      other: null
  urgent:
    type: noul
    instructions: Urgent?
    threshold: 0.7
  level:
    type: score
    instructions: How upset?
    criteria: [calm, annoyed, furious, livid]
`

// A score's decision is its most probable level (the argmax), not the
// rounded expected score: they differ here (E = 1.6 rounds to 2, the
// argmax is 1), which is how ask and the TUI once disagreed.
func TestScoreDecisionIsTheArgmax(t *testing.T) {
	set := mustSet(t, triage)
	q, _ := set.Questions.Get("level")
	a := &provider.Answer{ID: "level", Type: provider.Score, Score: 1.6, Probs: []float64{0.1, 0.45, 0.3, 0.15}, Confidence: 0.45, HasConfidence: true}
	v := View(q, a, ViewOptions{True: 2})
	if v.DecisionIndex != 1 || v.Decision != "1 annoyed" {
		t.Fatalf("decision = %d %q, want 1 annoyed", v.DecisionIndex, v.Decision)
	}
	if !v.LabelKnown || v.Right || v.TrueLabel != "2 furious" {
		t.Fatalf("label: %+v", v)
	}
	if got := v.Rows[1].Marker(true); got != "✗▶" {
		t.Fatalf("decision row marker %q", got)
	}
	if got := v.Rows[2].Marker(true); got != "✓ " {
		t.Fatalf("true row marker %q", got)
	}
	if h := v.Headline(); !strings.Contains(h, "→ 1 annoyed") || !strings.Contains(h, "confidence 0.45") || !strings.Contains(h, "✗ label: 2 furious") {
		t.Fatalf("headline %q", h)
	}
}

// A noul's decision honours the caller's threshold (0.7 here), its
// marker says right or wrong, and its label is written out.
func TestNoulDecisionUsesTheThreshold(t *testing.T) {
	set := mustSet(t, triage)
	q, _ := set.Questions.Get("urgent")
	a := &provider.Answer{ID: "urgent", Type: provider.Noul, P: 0.65}
	v := View(q, a, ViewOptions{Threshold: set.Threshold("urgent"), True: 0})
	if v.Decision != "false" || v.DecisionIndex != 0 || !v.Right || math.Abs(v.TopProb-0.35) > 1e-12 {
		t.Fatalf("%+v", v)
	}
	if v.Rows[0].Marker(true) != "✓▶" {
		t.Fatalf("marker %q", v.Rows[0].Marker(true))
	}
	if h := v.Headline(); !strings.Contains(h, "✓ label: false") || strings.Contains(h, "confidence") {
		t.Fatalf("headline %q (a noul has no confidence)", h)
	}
	v = View(q, a, ViewOptions{Threshold: 0.6, True: 0})
	if v.Decision != "true" || v.Right || v.Rows[0].Marker(true) != "✗▶" {
		t.Fatalf("threshold 0.6: %+v", v)
	}
}

// A choice decides by the provider's choice field (a rounded tie), and an
// answer given to the question before an option was inserted keeps each
// probability on its option.
func TestChoiceFollowsChoiceFieldAndLabels(t *testing.T) {
	set := mustSet(t, triage)
	asked, _ := set.Questions.Get("queue")
	askedCopy := asked.Clone()
	a := &provider.Answer{ID: "queue", Type: provider.Choice, Choice: "technical", Probs: []float64{0.45, 0.45, 0.1}, Confidence: 0.45, HasConfidence: true}
	if err := set.AddOption("queue", "shipping", nil, 0); err != nil {
		t.Fatal(err)
	}
	q, _ := set.Questions.Get("queue")
	v := View(q, a, ViewOptions{Asked: &askedCopy, True: q.OptionIndex("other")})
	if v.Decision != "technical" || v.DecisionIndex != 2 {
		t.Fatalf("decision %q %d", v.Decision, v.DecisionIndex)
	}
	byLabel := map[string]Row{}
	for _, r := range v.Rows {
		byLabel[r.Label] = r
	}
	if byLabel["other"].P != 0.1 || !byLabel["other"].True || !math.IsNaN(byLabel["shipping"].P) {
		t.Fatalf("rows %+v", v.Rows)
	}
	if v.Rows[len(v.Rows)-1].Label != "shipping" {
		t.Fatalf("an option the answer never saw sorts last: %+v", v.Rows)
	}
}

// A long choice folds the options under FoldBelow into one summary, as
// ask always did; the decision and the true label are never folded.
func TestLongChoiceFolds(t *testing.T) {
	q := provider.Question{Type: provider.Choice}
	probs := make([]float64, 20)
	for i := range probs {
		q.Options = append(q.Options, provider.Option{Label: strings.Repeat("o", i+1)})
		probs[i] = 0.001
	}
	probs[0], probs[1], probs[2] = 0.9, 0.05, 0.033
	a := &provider.Answer{Type: provider.Choice, Choice: q.Options[0].Label, Probs: probs}
	v := View(&q, a, ViewOptions{True: 19})
	if v.Folded == nil || len(v.Folded.Rows) != 16 || len(v.Rows) != 4 || v.Folded.Max != 0.001 {
		t.Fatalf("rows %d folded %+v", len(v.Rows), v.Folded)
	}
	if v.Rows[3].Index != 19 || !v.Rows[3].True {
		t.Fatalf("true label folded: %+v", v.Rows[3])
	}
	if v = View(&q, a, ViewOptions{True: -1, NoFold: true}); v.Folded != nil || len(v.Rows) != 20 {
		t.Fatal("NoFold folded")
	}
}

// fakeProvider answers the questions it knows and misses the rest, like
// the offline cache after an edit.
type fakeProvider struct {
	known map[string]bool
	calls int
}

func (f *fakeProvider) Ask(_ context.Context, req *provider.Request) (*provider.Result, error) {
	f.calls++
	res := &provider.Result{Model: "jev-1.13.0"}
	for _, e := range req.Questions {
		if !f.known[e.ID] {
			return nil, &provider.Error{Kind: provider.KindMiss, Message: "no recorded answer for " + e.ID}
		}
		res.Answers = append(res.Answers, provider.Answer{ID: e.ID, Type: e.Question.Type, P: 0.9})
	}
	return res, nil
}

func TestAskFallsBackPerQuestionOnAMiss(t *testing.T) {
	set := mustSet(t, triage)
	req, err := Request(set, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if req.Model != provider.DefaultModel {
		t.Fatalf("model %q", req.Model)
	}
	p := &fakeProvider{known: map[string]bool{"urgent": true}}
	got, err := Ask(context.Background(), p, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Result.Answers) != 1 || got.Result.Answers[0].ID != "urgent" || len(got.Failed) != 2 || p.calls != 4 {
		t.Fatalf("answers %v failed %v calls %d", got.Result.Answers, got.Failed, p.calls)
	}
	if provider.KindOf(got.Failed["queue"]) != provider.KindMiss {
		t.Fatalf("queue: %v", got.Failed["queue"])
	}
	// Nothing answered: the original error comes back.
	p = &fakeProvider{}
	if _, err := Ask(context.Background(), p, req); provider.KindOf(err) != provider.KindMiss {
		t.Fatalf("err %v", err)
	}
	// Another failure is not retried per question.
	e := &provider.Error{Kind: provider.KindAuth, Message: "bad key"}
	if _, err := Ask(context.Background(), errProvider{e}, req); !errors.Is(err, e) {
		t.Fatalf("err %v", err)
	}
	// The request is a deep copy: editing the set does not change it.
	body, _ := json.Marshal(req)
	_ = set.SetInstructions("queue", provider.String("changed"))
	if again, _ := json.Marshal(req); string(again) != string(body) {
		t.Fatal("request shares memory with the set")
	}
}

type errProvider struct{ err error }

func (e errProvider) Ask(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, e.err
}

func TestRenameOptionChains(t *testing.T) {
	set := mustSet(t, triage)
	s := NewSession(set, DatasetSource{}, nil)
	for _, r := range [][2]string{{"other", "general"}, {"general", "misc"}, {"billing", "payments"}, {"payments", "billing"}} {
		if err := s.RenameOption("queue", r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Renames()
	if len(got["queue"]) != 1 || got["queue"]["other"] != "misc" {
		t.Fatalf("renames %v", got)
	}
	if err := s.RenameOption("queue", "nope", "x"); err == nil {
		t.Fatal("renamed a missing option")
	}
}

func TestTemplateRecordsTheResolvedDataset(t *testing.T) {
	tmpl := &RunTemplate{ProviderKind: "offline", Version: "v9", Concurrency: 3, RPS: 7, Fresh: true}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("data", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("data", "d.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := tmpl.Config(RunSpec{Set: mustSet(t, triage), DatasetPath: "data/d.jsonl"})
	if !filepath.IsAbs(cfg.DatasetPath) || !strings.HasSuffix(cfg.DatasetPath, filepath.Join("data", "d.jsonl")) {
		t.Fatalf("dataset path %q", cfg.DatasetPath)
	}
	// The shipped example's embedded dataset is no file here: kept as named.
	if cfg := tmpl.Config(RunSpec{Set: mustSet(t, triage), DatasetPath: "fixtures/banking77/dataset.jsonl"}); cfg.DatasetPath != "fixtures/banking77/dataset.jsonl" {
		t.Fatalf("embedded dataset path %q", cfg.DatasetPath)
	}
	if cfg.Version != "v9" || cfg.Concurrency != 3 || cfg.ProviderKind != "offline" || cfg.Settings.RPS != 7.0 || !cfg.Settings.Fresh {
		t.Fatalf("%+v", cfg)
	}
	progress := make(chan Progress, 1)
	if _, err := tmpl.StartRun(context.Background(), RunSpec{}, progress); err == nil {
		t.Fatal("started without a database")
	}
	if _, open := <-progress; open {
		t.Fatal("progress not closed")
	}
}

// The rename story at the layer: rename other → general, labels count as
// general within the session; SaveRenames rewrites exactly those labels
// in the dataset file, after which a fresh read needs no rename.
func TestSaveRenamesRewritesTheDataset(t *testing.T) {
	dir := t.TempDir()
	root := testutil.RepoRoot(t)
	for _, f := range []string{"questions.yaml", "dataset.jsonl"} {
		b, err := os.ReadFile(filepath.Join(root, "fixtures", "demo-triage", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set, err := questionset.Load(filepath.Join(dir, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := DatasetFor(set, "", dataset.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(set, ds, nil)
	ctx := context.Background()
	items, err := LoadItems(ctx, set, s.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	others := 0
	for _, it := range items {
		if it.Labels["queue"].Text == "other" {
			others++
		}
	}
	if others == 0 {
		t.Fatal("demo-triage has no other labels")
	}
	if err := s.RenameOption("queue", "other", "general"); err != nil {
		t.Fatal(err)
	}
	got, stale := s.Labelled(items)
	if len(stale) != 0 {
		t.Fatalf("stale %v", stale)
	}
	q, _ := set.Questions.Get("queue")
	gi := q.OptionIndex("general")
	n := 0
	for _, it := range got {
		if l, ok := it.Labels["queue"]; ok && l.Index == gi && l.Text == "general" {
			n++
		}
	}
	if n != others || s.PendingRenames(items) != others {
		t.Fatalf("%d general labels, %d pending, want %d", n, s.PendingRenames(items), others)
	}
	// Without the session's rename a fresh read would find them stale.
	if _, stale := NewSession(set, s.Dataset, nil).Labelled(items); len(stale) != others {
		t.Fatalf("stale without rename: %d", len(stale))
	}
	changed, err := s.SaveRenames()
	if err != nil || changed != others {
		t.Fatalf("SaveRenames = %d, %v; want %d", changed, err, others)
	}
	if len(s.Renames()) != 0 {
		t.Fatal("renames kept after save")
	}
	fresh, err := LoadItems(ctx, set, s.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	if _, stale := s.Labelled(fresh); len(stale) != 0 {
		t.Fatalf("stale after rewrite: %v", stale)
	}
	if err := s.SetLabel("dt-001", "queue", []byte(`"nope"`)); err == nil {
		t.Fatal("SetLabel accepted a label naming no option")
	}
	if err := s.SetLabel("dt-001", "queue", []byte(`"general"`)); err != nil {
		t.Fatal(err)
	}
}

// Reordering score levels keeps what an index label means: demo-triage's
// urgency labels are level indexes (2 = needs a response today); after
// the levels are reversed, saving rewrites each to its level's new index,
// and the file read with the saved set resolves to the same levels.
func TestSaveRewritesIndexLabelsOfReorderedLevels(t *testing.T) {
	dir := t.TempDir()
	root := testutil.RepoRoot(t)
	for _, f := range []string{"questions.yaml", "dataset.jsonl"} {
		b, err := os.ReadFile(filepath.Join(root, "fixtures", "demo-triage", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set, err := questionset.Load(filepath.Join(dir, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := DatasetFor(set, "", dataset.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(set, ds, nil)
	ctx := context.Background()
	items, err := LoadItems(ctx, set, ds)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, it := range items {
		if l, ok := it.Labels["urgency"]; ok {
			if !l.ByIndex {
				t.Fatalf("urgency label of %s not read as an index", it.ID)
			}
			before[it.ID] = l.Text
		}
	}
	if s.PendingRenames(items) != 0 {
		t.Fatal("pending rewrites before any edit")
	}
	// Reverse the four levels: 0↔3, 1↔2.
	if err := set.MoveLevel("urgency", 3, 0); err != nil {
		t.Fatal(err)
	}
	if err := set.MoveLevel("urgency", 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := set.MoveLevel("urgency", 3, 2); err != nil {
		t.Fatal(err)
	}
	got, stale := s.Labelled(items)
	if len(stale) != 0 {
		t.Fatalf("stale %v", stale)
	}
	q, _ := set.Questions.Get("urgency")
	for _, it := range got {
		if l, ok := it.Labels["urgency"]; ok && dataset.LevelText(q.Levels[l.Index]) != before[it.ID] {
			t.Fatalf("%s: label moved to level %d", it.ID, l.Index)
		}
	}
	n := s.PendingRenames(items)
	if n == 0 || s.PendingIndexShifts() != n {
		t.Fatalf("pending %d, index shifts %d", n, s.PendingIndexShifts())
	}
	fork := s.Fork()
	changed, err := fork.SaveRenames()
	if err != nil || changed != n {
		t.Fatalf("SaveRenames = %d, %v; want %d", changed, err, n)
	}
	// Read the rewritten file with the reordered set: the same levels.
	fresh, err := LoadItems(ctx, set, ds)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range fresh {
		if l, ok := it.Labels["urgency"]; ok && l.Text != before[it.ID] {
			t.Fatalf("%s reads as %q after the rewrite, was %q", it.ID, l.Text, before[it.ID])
		}
	}
	if re := Reindexed(set, items); len(IndexShifts(set, re)) != 0 {
		t.Fatal("Reindexed left shifts")
	}
}
