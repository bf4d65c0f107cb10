package workbench

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

func choiceQ(labels ...string) *provider.Question {
	q := &provider.Question{Type: provider.Choice}
	for _, l := range labels {
		q.Options = append(q.Options, provider.Option{Label: l, Description: provider.String("about " + l)})
	}
	return q
}

func TestDiffAnswersChoiceByLabel(t *testing.T) {
	bq := choiceQ("billing", "technical", "other")
	base := &provider.Answer{Type: provider.Choice, Choice: "billing", Probs: []float64{0.6, 0.3, 0.1}}
	// The variant reorders the options: matched by label, TV is
	// ½(|0.6−0.2| + |0.3−0.7| + |0.1−0.1|) = 0.4 and the decision changed.
	vq := choiceQ("technical", "billing", "other")
	v := &provider.Answer{Type: provider.Choice, Choice: "technical", Probs: []float64{0.7, 0.2, 0.1}}
	d := DiffAnswers(bq, base, 0, vq, v, 0)
	if !d.DecisionChanged || d.Base != "billing" || d.Variant != "technical" || math.Abs(d.TV-0.4) > 1e-12 {
		t.Fatalf("diff %+v", d)
	}
	if got, want := d.Summary(), "decision changed billing → technical · TV 0.400"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	// Same distribution reordered: no change at all.
	same := &provider.Answer{Type: provider.Choice, Choice: "billing", Probs: []float64{0.3, 0.6, 0.1}}
	d = DiffAnswers(bq, base, 0, vq, same, 0)
	if d.DecisionChanged || d.TV > 1e-12 || d.Summary() != "decision unchanged (billing) · TV 0.000" {
		t.Fatalf("reordered identical answer: %+v %q", d, d.Summary())
	}
	// An option the variant renamed: the decisions compare, TV cannot.
	rq := choiceQ("billing", "tech", "other")
	d = DiffAnswers(bq, base, 0, rq, &provider.Answer{Type: provider.Choice, Choice: "billing", Probs: []float64{0.6, 0.3, 0.1}}, 0)
	if d.DecisionChanged || !math.IsNaN(d.TV) || d.Summary() != `decision unchanged (billing) · TV — (option "technical" is not in the variant)` {
		t.Fatalf("renamed option: %+v %q", d, d.Summary())
	}
}

func TestDiffAnswersNoulThresholds(t *testing.T) {
	q := &provider.Question{Type: provider.Noul}
	base := &provider.Answer{Type: provider.Noul, P: 0.55}
	v := &provider.Answer{Type: provider.Noul, P: 0.62}
	// Both true at 0.5: unchanged, TV |0.55−0.62| = 0.07.
	d := DiffAnswers(q, base, 0.5, q, v, 0.5)
	if d.DecisionChanged || math.Abs(d.TV-0.07) > 1e-12 {
		t.Fatalf("diff %+v", d)
	}
	// The variant's own threshold 0.7 makes its decision false.
	d = DiffAnswers(q, base, 0.5, q, v, 0.7)
	if !d.DecisionChanged || d.Base != "true" || d.Variant != "false" {
		t.Fatalf("threshold diff %+v", d)
	}
}

func TestDiffAnswersScoreAndMissing(t *testing.T) {
	lv := func(n int) *provider.Question {
		q := &provider.Question{Type: provider.Score}
		for i := 0; i < n; i++ {
			q.Levels = append(q.Levels, json.RawMessage(strconv.Quote("level "+strconv.Itoa(i))))
		}
		return q
	}
	base := &provider.Answer{Type: provider.Score, Score: 0.4, Probs: []float64{0.7, 0.2, 0.1}}
	v := &provider.Answer{Type: provider.Score, Score: 1.1, Probs: []float64{0.2, 0.5, 0.3}}
	// ½(0.5 + 0.3 + 0.2) = 0.5; decision level 0 → level 1.
	d := DiffAnswers(lv(3), base, 0, lv(3), v, 0)
	if !d.DecisionChanged || math.Abs(d.TV-0.5) > 1e-12 {
		t.Fatalf("score diff %+v", d)
	}
	d = DiffAnswers(lv(3), base, 0, lv(4), &provider.Answer{Type: provider.Score, Probs: []float64{1, 0, 0, 0}}, 0)
	if !math.IsNaN(d.TV) || d.Reason != "4 levels against 3" {
		t.Fatalf("levels differ: %+v", d)
	}
	d = DiffAnswers(lv(3), base, 0, lv(3), nil, 0)
	if !math.IsNaN(d.TV) || d.Summary() != "not both answered" {
		t.Fatalf("missing answer: %+v %q", d, d.Summary())
	}
}
