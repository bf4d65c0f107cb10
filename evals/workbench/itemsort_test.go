package workbench

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

// TestOrderItemsAndAccuracy: four items with hand-made queue answers
// (options billing, technical, other, unknown) and one variant.
//
//	a: label billing, answer technical 0.90 (wrong, top 0.90), margin 0.80; v2 same → TV 0
//	b: label billing, answer technical 0.55 / billing 0.45 (wrong, top 0.55), margin 0.10; v2 billing 1 → TV 0.55
//	c: label billing, answer billing 0.60 / other 0.40 (right), margin 0.20; v2 none
//	d: no label, no answer
//
// Most confident wrong: a (0.90), b (0.55), then c, d in file order.
// Margin, smallest first: b (0.10), c (0.20), a (0.80), d.
// Disagreement: b (0.55), a (0), then c, d.
// Accuracy of queue: 1 right of 3 labelled and answered.
func TestOrderItemsAndAccuracy(t *testing.T) {
	set, err := questionset.Load(filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage", "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.AddVariant("queue", questionset.Variant{Name: "v2", Instructions: provider.String("Route it.")}); err != nil {
		t.Fatal(err)
	}
	q, _ := set.Questions.Get("queue")
	choice := func(probs ...float64) *provider.Answer {
		a := &provider.Answer{ID: "queue", Type: provider.Choice, Probs: probs, Confidence: slices.Max(probs)}
		a.Choice = q.Options[slices.Index(probs, slices.Max(probs))].Label
		return a
	}
	vid := questionset.VariantID("queue", "v2")
	answers := map[string]map[string]*provider.Answer{
		"a": {"queue": choice(0.05, 0.9, 0.05, 0), vid: choice(0.05, 0.9, 0.05, 0)},
		"b": {"queue": choice(0.45, 0.55, 0, 0), vid: choice(1, 0, 0, 0)},
		"c": {"queue": choice(0.6, 0, 0.4, 0)},
	}
	look := func(item, id string) (ItemAnswer, bool) {
		a, ok := answers[item][id]
		return ItemAnswer{Answer: a}, ok
	}
	lab := func(s string) map[string]dataset.Label {
		return map[string]dataset.Label{"queue": {Index: q.OptionIndex(s), Text: s}}
	}
	items := []Item{{ID: "a", Labels: lab("billing")}, {ID: "b", Labels: lab("billing")}, {ID: "c", Labels: lab("billing")}, {ID: "d"}}
	ids := func(o ItemOrder) []string {
		var out []string
		for _, i := range OrderItems(set, items, look, o) {
			out = append(out, items[i].ID)
		}
		return out
	}
	for o, want := range map[ItemOrder][]string{
		OrderFile:           {"a", "b", "c", "d"},
		OrderConfidentWrong: {"a", "b", "c", "d"},
		OrderMargin:         {"b", "c", "a", "d"},
		OrderDisagreement:   {"b", "a", "c", "d"},
	} {
		if got := ids(o); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", o, got, want)
		}
	}
	if v := ItemSortValue(set, &items[1], look, OrderConfidentWrong); math.Abs(v-0.55) > 1e-12 {
		t.Errorf("b's confident-wrong value %v, want 0.55", v)
	}
	if v := ItemSortValue(set, &items[1], look, OrderMargin); math.Abs(v+0.10) > 1e-12 {
		t.Errorf("b's margin value %v, want -0.10", v)
	}
	if v := ItemSortValue(set, &items[2], look, OrderConfidentWrong); !math.IsNaN(v) {
		t.Errorf("c is right, value %v, want NaN", v)
	}
	// Swap b's wrong answer for a more confident one: b now leads.
	answers["b"]["queue"] = choice(0.02, 0.97, 0.01, 0)
	if got := ids(OrderConfidentWrong); !slices.Equal(got, []string{"b", "a", "c", "d"}) {
		t.Errorf("after the swap: %v", got)
	}
	answers["b"]["queue"] = choice(0.45, 0.55, 0, 0)
	for _, h := range ItemAccuracy(set, items, look) {
		switch h.ID {
		case "queue":
			if h.Labelled != 3 || math.Abs(h.Accuracy-1.0/3) > 1e-12 {
				t.Errorf("queue accuracy %v over %d, want 1/3 over 3", h.Accuracy, h.Labelled)
			}
		default:
			if h.Labelled != 0 || !math.IsNaN(h.Accuracy) {
				t.Errorf("%s: %v over %d, want NaN over 0", h.ID, h.Accuracy, h.Labelled)
			}
		}
	}
}

func TestLabelChoices(t *testing.T) {
	set, err := questionset.Load(filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage", "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := func(cs []LabelChoice) (out []string) {
		for _, c := range cs {
			out = append(out, c.Text+"="+string(c.Value))
		}
		return out
	}
	q, _ := set.Questions.Get("queue")
	if got := text(LabelChoices(q, false)); !slices.Equal(got, []string{`billing="billing"`, `technical="technical"`, `other="other"`, `unknown="unknown"`}) {
		t.Errorf("queue: %v", got)
	}
	q, _ = set.Questions.Get("refund_request")
	if got := text(LabelChoices(q, false)); !slices.Equal(got, []string{"false=false", "true=true"}) {
		t.Errorf("refund_request: %v", got)
	}
	q, _ = set.Questions.Get("urgency")
	if got := LabelChoices(q, true); len(got) != 4 || string(got[2].Value) != "2" {
		t.Errorf("urgency by index: %v", text(got))
	}
	if got := LabelChoices(q, false); string(got[0].Value) != `"No stated impact or time pressure; can wait indefinitely."` {
		t.Errorf("urgency by text: %v", text(got))
	}
}
