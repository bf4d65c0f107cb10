package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

func boxRun(id string, boxes []provider.Edges, labels []provider.Edges) RunData {
	qs := provider.Questions{{ID: "mug", Question: provider.Question{Type: provider.Box, Instructions: []byte(`"the mug in photo"`)}}}
	rd := RunData{ID: id, Questions: qs, Obs: map[string][]metrics.Obs{}}
	for i := range boxes {
		e := boxes[i]
		o := metrics.Obs{ItemID: string(rune('a' + i)), Answer: &provider.Answer{ID: "mug", Type: provider.Box, Box: &e}}
		if i < len(labels) {
			l := labels[i]
			o.HasLabel, o.LabelBox = true, &l
		}
		rd.Obs["mug"] = append(rd.Obs["mug"], o)
	}
	return rd
}

// Box questions are compared paired by item: Δ mean IoU and Δ IoU≥0.5
// accuracy, checked by hand, with the McNemar count of hits, and a clear
// regression when every box moves off its label.
func TestCompareBox(t *testing.T) {
	label := provider.Edges{Top: 0, Bottom: 0.5, Left: 0, Right: 0.5}
	same := label
	half := provider.Edges{Top: 0, Bottom: 0.5, Left: 0, Right: 0.25}     // IoU 0.5
	quarter := provider.Edges{Top: 0, Bottom: 0.25, Left: 0, Right: 0.25} // IoU 0.25
	a := boxRun("A", []provider.Edges{same, same, half}, []provider.Edges{label, label, label})
	b := boxRun("B", []provider.Edges{same, quarter, quarter}, []provider.Edges{label, label, label})
	c := Compare(a, b, Options{Seed: 1})
	q := c.Questions[0]
	if q.Reason != "" || q.Paired != 3 || q.PairedLabelled != 3 || len(q.Deltas) != 2 {
		t.Fatalf("%+v", q)
	}
	// A: IoUs 1, 1, 0.5 (mean 5/6, 3 hits); B: 1, 0.25, 0.25 (mean 0.5, 1 hit).
	m, h := q.Deltas[0], q.Deltas[1]
	if m.Metric != MetricMeanIoU || math.Abs(m.A.Value-5.0/6) > 1e-12 || math.Abs(m.B.Value-0.5) > 1e-12 || math.Abs(m.Delta.Value-(0.5-5.0/6)) > 1e-12 {
		t.Errorf("mean IoU delta %+v", m)
	}
	if h.Metric != MetricIoU50Acc || h.A.Value != 1 || math.Abs(h.B.Value-1.0/3) > 1e-12 || !m.Delta.HasInterval() || m.Delta.Hi > 0 {
		t.Errorf("IoU≥0.5 delta %+v / mean %+v", h, m)
	}
	if q.McNemar.ARightBWrong != 2 || q.McNemar.BothRight != 1 || q.Drift.ChangedValues != 2 {
		t.Errorf("McNemar %+v drift %+v", q.McNemar, q.Drift)
	}
	if !strings.Contains(q.Why, "mean IoU") || q.Verdict == NotComparable {
		t.Errorf("verdict %s: %s", q.Verdict, q.Why)
	}
	// Many items all moved off: a regression, never dropped.
	var la, ba, bb []provider.Edges
	for range 30 {
		la, ba, bb = append(la, label), append(ba, same), append(bb, quarter)
	}
	c = Compare(boxRun("A", ba, la), boxRun("B", bb, la), Options{Seed: 1})
	if c.Verdict != Regressed || c.Questions[0].Verdict != Regressed {
		t.Errorf("30 boxes from IoU 1 to 0.25: %s / %s (%s)", c.Verdict, c.Questions[0].Verdict, c.Questions[0].Why)
	}
	// Unlabelled: drift only. A box against a noul: not comparable, said.
	c = Compare(boxRun("A", ba, nil), boxRun("B", bb, nil), Options{Seed: 1})
	if q := c.Questions[0]; q.Verdict != NoChange || !strings.Contains(q.Why, "no box labels") {
		t.Errorf("unlabelled: %s %s", q.Verdict, q.Why)
	}
	nb := boxRun("B", bb, nil)
	nb.Questions[0].Question = provider.Question{Type: provider.Noul, Instructions: []byte(`"x"`)}
	c = Compare(boxRun("A", ba, la), nb, Options{Seed: 1})
	if q := c.Questions[0]; q.Verdict != NotComparable || !strings.Contains(q.Reason, "not comparable: box in run A, noul in run B") || len(c.NotComparable) != 1 {
		t.Errorf("box vs noul: %+v", q)
	}
}
