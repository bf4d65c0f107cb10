package compare

import (
	"fmt"
	"github.com/jevlab/jevlab/evals/metrics"
	"reflect"
	"testing"
)

// TestCompareVariantsEqualsTwoRuns: a variant asked beside its question in
// one run is compared exactly as two runs are (same deltas, intervals,
// McNemar, flips, drift), and Holm runs across the variants of a question.
func TestCompareVariantsEqualsTwoRuns(t *testing.T) {
	base := loadRun(t, "demo-triage", "recorded.jsonl")
	shuffled := loadRun(t, "demo-triage", "recorded-shuffled.jsonl")
	run2 := loadRun(t, "demo-triage", "recorded-run2.jsonl")
	// One run holding the base answers and, under derived ids, the
	// shuffled recording (another option order: a real rewording of the
	// criteria) and the repeat, as two variants of every question.
	one := RunData{ID: "r", Questions: base.Questions, Obs: map[string][]metrics.Obs{}}
	var vs []Variant
	for _, e := range base.Questions {
		one.Obs[e.ID] = base.Obs[e.ID]
		for _, src := range []struct {
			name string
			rd   RunData
		}{{"shuf", shuffled}, {"rep", run2}} {
			id := e.ID + "~" + src.name
			one.Obs[id] = src.rd.Obs[e.ID]
			q, _ := src.rd.Questions.Get(e.ID)
			vs = append(vs, Variant{Question: e.ID, Name: src.name, ID: id, Asked: *q})
		}
	}
	opt := Options{Seed: 1}
	got := CompareVariants(one, vs, opt)
	if len(got) != 6 {
		t.Fatalf("%d comparisons", len(got))
	}
	for _, vc := range got {
		other := shuffled
		if vc.Variant == "rep" {
			other = run2
		}
		two := Compare(base, other, opt)
		var want QuestionComparison
		for _, q := range two.Questions {
			if q.ID == vc.Question {
				want = q
			}
		}
		g := vc.Comparison
		if fmt.Sprint(g.Deltas) != fmt.Sprint(want.Deltas) || g.McNemar.P != want.McNemar.P || !reflect.DeepEqual(g.Flips, want.Flips) ||
			g.Drift != want.Drift || g.BrierP != want.BrierP || g.Paired != want.Paired || g.PairedLabelled != want.PairedLabelled {
			t.Errorf("%s: variant comparison differs from two runs:\n got %+v\nwant %+v", vc.ID, g.Deltas, want.Deltas)
		}
		if vc.Question == "queue" && vc.Variant == "shuf" && g.Mapped != nil {
			t.Errorf("no rename map expected")
		}
	}
	// Holm across the two variants of each question, not across questions.
	for i := 0; i < len(got); i += 2 {
		a, b := got[i].Comparison, got[i+1].Comparison
		if a.PairedLabelled == 0 {
			continue
		}
		h := Holm([]float64{a.BrierP, b.BrierP})
		if a.BrierPHolm != h[0] || b.BrierPHolm != h[1] {
			t.Errorf("%s: Brier Holm %v %v, want %v", got[i].Question, a.BrierPHolm, b.BrierPHolm, h)
		}
		if a.Verdict == "" || b.Verdict == "" {
			t.Errorf("%s: verdict missing", got[i].Question)
		}
	}
}
