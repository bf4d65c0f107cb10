package htmlreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// A box question's section shows n, mean IoU and IoU≥0.5 accuracy with
// their intervals (data-* carry the exact values) and, compared, the box
// deltas; no accuracy or Brier cell.
func TestBoxSection(t *testing.T) {
	qs := provider.Questions{{ID: "mug", Question: provider.Question{Type: provider.Box, Instructions: []byte(`"the mug in photo"`)}}}
	set := &questionset.Set{Name: "mugs", Questions: qs}
	label := provider.Edges{Top: 0, Bottom: 0.5, Left: 0, Right: 0.5}
	mk := func(id string, boxes ...provider.Edges) (*report.RunReport, compare.RunData) {
		obs := map[string][]metrics.Obs{}
		for i := range boxes {
			l := label
			obs["mug"] = append(obs["mug"], metrics.Obs{ItemID: string(rune('a' + i)), HasLabel: true, LabelBox: &l,
				Answer: &provider.Answer{ID: "mug", Type: provider.Box, Box: &boxes[i]}})
		}
		run := &store.Run{ID: id, SetName: "mugs", Model: "jev-1.14.0", Status: "done", Done: len(boxes), Total: len(boxes)}
		return report.Build(run, set, obs, metrics.Options{Seed: 1}, questionset.Gate{}), compare.RunData{ID: id, Questions: qs, Obs: obs}
	}
	half := provider.Edges{Top: 0, Bottom: 0.5, Left: 0, Right: 0.25}
	ra, da := mk("r-a", label, label, half)
	rb, db := mk("r-b", label, half, half)
	var b bytes.Buffer
	if err := Write(&b, &Input{Runs: []*report.RunReport{ra, rb}, Comparison: compare.Compare(da, db, compare.Options{Seed: 1})}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	mean := ra.Questions[0].Box.MeanIoU
	for _, want := range []string{
		`data-run="r-a" data-q="mug" data-m="box.mean_iou" data-v="` + full(mean.Value) + `"`,
		`data-m="box.iou50_accuracy"`, "mean IoU", "IoU≥0.5 accuracy", `data-m="delta.mean_iou"`, `data-m="delta.iou50_accuracy"`,
		"IoU≥0.5 hits, exact McNemar",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	for _, not := range []string{`data-q="mug" data-m="accuracy"`, `data-q="mug" data-m="brier"`} {
		if strings.Contains(h, not) {
			t.Errorf("HTML has %q for a box", not)
		}
	}
}
