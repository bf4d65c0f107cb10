package workbench

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// tableProvider answers each item (its state is the item id as a JSON
// string) from a fixed table.
type tableProvider map[string][]provider.Answer

func (p tableProvider) Ask(_ context.Context, req *provider.Request) (*provider.Result, error) {
	var id string
	_ = json.Unmarshal(req.State, &id)
	res := &provider.Result{Model: "jev-test"}
	for _, e := range req.Questions {
		for _, a := range p[id] {
			if a.ID == e.ID {
				res.Answers = append(res.Answers, a)
			}
		}
	}
	return res, nil
}

const smallSet = `name: small
state: "x"
questions:
  queue:
    type: choice
    instructions: Which queue?
    criteria: {billing: null, technical: null, other: null}
  urgent:
    type: noul
    instructions: Urgent?
    threshold: 0.7
`

// Four items with hand-computed figures:
//
//	item  queue probs (b,t,o)  choice     conf  label  | urgent p  label
//	a     .8 .1 .1             billing    .7    billing| .9  true   (→ true, right)
//	b     .2 .5 .3             technical  .5    other  | .65 true   (→ false at 0.7, wrong)
//	c     .4 .4 .2             technical  .4    techn. | .2  false  (→ false, right)
//	d     .6 .3 .1             billing    .6    —      | .8  false  (→ true, wrong)
//
// queue: labelled a,b,c: accuracy 2/3; mean top prob (.8+.5+.4)/3 = .5667;
// mean confidence (.7+.5+.4)/3 = .5333. urgent: confusion [false][dec]:
// c→false, d→true: [[1,1],[1,1]] (b: true→false, a: true→true); mean top
// prob (.9 + .65→.35 + .8 + .8)/4 = .7125.
func TestRunViewSummaries(t *testing.T) {
	set := mustSet(t, smallSet)
	db, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ch := func(probs []float64, choice string, conf float64) provider.Answer {
		return provider.Answer{ID: "queue", Type: provider.Choice, Probs: probs, Choice: choice, Confidence: conf, HasConfidence: true}
	}
	nl := func(p float64) provider.Answer { return provider.Answer{ID: "urgent", Type: provider.Noul, P: p} }
	p := tableProvider{
		"a": {ch([]float64{.8, .1, .1}, "billing", .7), nl(.9)},
		"b": {ch([]float64{.2, .5, .3}, "technical", .5), nl(.65)},
		"c": {ch([]float64{.4, .4, .2}, "technical", .4), nl(.2)},
		"d": {ch([]float64{.6, .3, .1}, "billing", .6), nl(.8)},
	}
	lab := func(q string, i int, text string) map[string]dataset.Label {
		return map[string]dataset.Label{q: {Index: i, Text: text}}
	}
	items := []Item{
		{ID: "a", State: json.RawMessage(`"a"`), Labels: merge(lab("queue", 0, "billing"), lab("urgent", 1, "true"))},
		{ID: "b", State: json.RawMessage(`"b"`), Labels: merge(lab("queue", 2, "other"), lab("urgent", 1, "true"))},
		{ID: "c", State: json.RawMessage(`"c"`), Labels: merge(lab("queue", 1, "technical"), lab("urgent", 0, "false"))},
		{ID: "d", State: json.RawMessage(`"d"`), Labels: lab("urgent", 0, "false")},
	}
	s := NewSession(set, DatasetSource{Path: "d.jsonl"}, &RunTemplate{DB: db, Provider: p, ProviderKind: "offline", Concurrency: 1})
	spec, stale := s.PrepareRun(items, "n1", "", "jev-other")
	if len(stale) != 0 || spec.Set == set || spec.Set.Model != "jev-other" || spec.DatasetPath != "d.jsonl" {
		t.Fatalf("spec %+v stale %v", spec, stale)
	}
	id, err := s.Template.StartRun(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadRun(context.Background(), db, id, ViewConfig{})
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	qc := v.Confidence("queue")
	if qc.N != 3 || qc.NConfidence != 3 {
		t.Fatalf("queue summary %+v", qc)
	}
	near("queue mean top prob", qc.MeanTopProb, (.8+.5+.4)/3)
	near("queue mean confidence", qc.MeanConfidence, (.7+.5+.4)/3)
	near("queue accuracy", v.QuestionReport("queue").Accuracy.Value, 2.0/3)
	uc := v.Confidence("urgent")
	if uc.N != 4 || uc.NConfidence != 0 || !math.IsNaN(uc.MeanConfidence) {
		t.Fatalf("urgent summary %+v (a noul has no confidence field)", uc)
	}
	near("urgent mean top prob", uc.MeanTopProb, (.9+.35+.8+.8)/4)
	if got := v.Confusion("urgent"); len(got) != 2 || got[0][0] != 1 || got[0][1] != 1 || got[1][0] != 1 || got[1][1] != 1 {
		t.Fatalf("noul confusion %v", got)
	}
	if got := v.Confusion("queue"); got[2][1] != 1 || got[0][0] != 1 || got[1][1] != 1 {
		t.Fatalf("choice confusion %v", got)
	}
	// The low-confidence band: b's queue (0.5) and c's (0.4) are in it,
	// a's (0.7) is not; a noul by its top prob (b: 0.35).
	for _, c := range []struct {
		item, q string
		low     bool
	}{{"a", "queue", false}, {"b", "queue", true}, {"c", "queue", true}, {"a", "urgent", false}, {"b", "urgent", true}} {
		av, _ := v.Answer(c.item, c.q)
		if av.LowConfidence() != c.low {
			t.Errorf("%s/%s low = %v", c.item, c.q, !c.low)
		}
	}
	h, err := Headline(context.Background(), db, v.Run)
	if err != nil {
		t.Fatal(err)
	}
	if h.String() != "queue 0.667 · urgent 0.500" {
		t.Fatalf("headline %q", h.String())
	}
}

func merge(a, b map[string]dataset.Label) map[string]dataset.Label {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func TestConfidenceLabel(t *testing.T) {
	for in, want := range map[string]string{"max prob": "top prob", "max(p,1-p)": "top prob", "provider confidence": "confidence", "other": "other"} {
		if got := ConfidenceLabel(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
