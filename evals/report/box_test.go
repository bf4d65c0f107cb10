package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// boxReport builds a run of a box question from stored answers (labels as
// label_text, what the store keeps), IoUs 1, 1/7, 0 and 0.5 by hand (as in
// metrics.TestBoxes): mean 23/56, 2 hits of 4.
func boxReport(t *testing.T, gates map[string]questionset.Gate, flags questionset.Gate) *RunReport {
	t.Helper()
	e := func(tp, b, l, r float64) provider.Edges { return provider.Edges{Top: tp, Bottom: b, Left: l, Right: r} }
	pairs := [][2]provider.Edges{
		{e(0.1, 0.6, 0.2, 0.9), e(0.1, 0.6, 0.2, 0.9)},
		{e(0, 0.5, 0, 0.5), e(0.25, 0.75, 0.25, 0.75)},
		{e(0, 0.2, 0, 0.2), e(0.5, 0.9, 0.5, 0.9)},
		{e(0, 1, 0, 0.5), e(0, 1, 0, 1)},
	}
	qs := provider.Questions{{ID: "mug", Question: provider.Question{Type: provider.Box, Instructions: []byte(`"the mug in photo"`)}}}
	set := &questionset.Set{Name: "mugs", Questions: qs, Gates: gates}
	obs := map[string][]metrics.Obs{}
	for i, p := range pairs {
		pred := p[0]
		zero := 0
		a := &store.ItemAnswer{ItemID: string(rune('a' + i)), QuestionID: "mug", Label: &zero, LabelText: dataset.BoxLabelText(p[1]),
			Answer: &provider.Answer{ID: "mug", Type: provider.Box, Box: &pred, Confidence: 0.9, HasConfidence: true}}
		obs["mug"] = append(obs["mug"], ObsOf(a))
	}
	// An unlabelled item and a failed one count in n, not in the pairs.
	pred := e(0, 1, 0, 1)
	obs["mug"] = append(obs["mug"], ObsOf(&store.ItemAnswer{ItemID: "e", QuestionID: "mug", Answer: &provider.Answer{ID: "mug", Type: provider.Box, Box: &pred}}),
		ObsOf(&store.ItemAnswer{ItemID: "f", QuestionID: "mug", ErrKind: "timeout"}))
	run := &store.Run{ID: "r-box", SetName: "mugs", Model: "jev-1.14.0", Status: "done", Done: 6, Total: 6}
	return Build(run, set, obs, metrics.Options{Seed: 1}, flags)
}

func TestBoxReportAndGates(t *testing.T) {
	rep := boxReport(t, map[string]questionset.Gate{
		"*":   {MaxBrier: f(0.2)},                    // set-wide: does not apply to a box, skipped
		"mug": {MinAccuracy: f(0.6), MaxECE: f(0.1)}, // own: accuracy reads IoU≥0.5 accuracy; ECE cannot apply
	}, questionset.Gate{MaxErrorRate: f(0.5)})
	q := rep.Questions[0]
	if q.Box == nil || q.Box.N != 4 || q.Box.Hits != 2 || math.Abs(q.Box.MeanIoU.Value-23.0/56) > 1e-12 || q.Labelled != 4 || q.N != 6 || q.Answered != 5 {
		t.Fatalf("box report %+v / %+v", q, q.Box)
	}
	if q.Box.Hit50.Method != metrics.IntervalWilson || math.Abs(q.Box.Hit50.Lo-0.150039) > 1e-6 {
		t.Errorf("IoU≥0.5 accuracy interval %+v", q.Box.Hit50)
	}
	if q.Accuracy.Defined() || q.Brier.Defined() {
		t.Errorf("class metrics on a box: accuracy %v brier %v", q.Accuracy, q.Brier)
	}
	got := map[string]GateResult{}
	for _, g := range rep.Gates {
		got[g.Gate] = g
	}
	if len(rep.Gates) != 3 {
		t.Errorf("gates %+v", rep.Gates)
	}
	if g := got["min_accuracy"]; g.Metric != "iou50_accuracy" || g.Passed || g.Value.Value != 0.5 || !strings.Contains(g.Msg, "iou50_accuracy 0.5, needs >= 0.6") {
		t.Errorf("min_accuracy on a box: %+v", g)
	}
	if g := got["max_ece"]; g.Passed || !strings.Contains(g.Msg, "max_ece does not apply to the box question mug: gate a box on min_accuracy (IoU≥0.5 accuracy) or max_error_rate") {
		t.Errorf("max_ece on a box: %+v", g)
	}
	if g := got["max_error_rate"]; !g.Passed {
		t.Errorf("max_error_rate: %+v", g)
	}
	if _, ok := got["max_brier"]; ok {
		t.Error("the set-wide max_brier was applied to a box")
	}
	// Text and Markdown: n, mean IoU and IoU≥0.5 accuracy with their
	// intervals; no accuracy or Brier row.
	var txt, md bytes.Buffer
	WriteText(&txt, rep)
	WriteMarkdown(&md, rep)
	for _, s := range []string{txt.String(), md.String()} {
		if !strings.Contains(s, "0.4107 [0.07143, 0.7857]") || !strings.Contains(s, "mean IoU") || !strings.Contains(s, "IoU≥0.5 accuracy") || !strings.Contains(s, "0.5 [0.15, 0.85] Wilson (2/4)") {
			t.Errorf("box figures missing:\n%s", s)
		}
		if strings.Contains(s, "  accuracy ") || strings.Contains(s, "Brier  ") || strings.Contains(s, "| accuracy |") || strings.Contains(s, "range 0–2 (mug)") {
			t.Errorf("class metrics printed for a box:\n%s", s)
		}
	}
	if !strings.Contains(md.String(), "| `mug` | 4 | 0.4107 [") {
		t.Errorf("markdown box table:\n%s", md.String())
	}
}
