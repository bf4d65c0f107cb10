package metrics

import (
	"fmt"
	"testing"
)

// TestWeightsEqualExpandedSample checks the bootstrap shortcut: metrics
// under resample counts must equal the same metrics computed plainly on the
// resample written out item by item (duplicates and all).
func TestWeightsEqualExpandedSample(t *testing.T) {
	em := loadRecording(t, "entity-merge", "recorded.jsonl")
	cs := loadRecording(t, "citation-support", "recorded.jsonl")
	for _, c := range []struct {
		rec *recording
		qid string
	}{{em, "same_entity"}, {em, "action"}, {cs, "supports"}, {cs, "coverage"}} {
		t.Run(c.qid, func(t *testing.T) {
			q := c.rec.question(t, c.qid)
			obs := c.rec.obs(c.qid)
			d := Prepare(q, obs, Options{})
			ms := d.Metrics()
			got := make([]float64, len(ms))
			want := make([]float64, len(ms))
			rs := NewResampler(11, d.N)
			for r := range 5 {
				w := rs.Next()
				d.EvalAll(ms, w, got)
				var exp []Obs
				for i, wi := range w {
					for k := range int(wi) {
						o := obs[i]
						o.ItemID = fmt.Sprintf("%s#%d", o.ItemID, k)
						exp = append(exp, o)
					}
				}
				Prepare(q, exp, Options{}).EvalAll(ms, nil, want)
				for j, m := range ms {
					if !closeTo(got[j], want[j], 1e-9) {
						t.Errorf("resample %d %s: weighted %.12g, expanded %.12g", r, m, got[j], want[j])
					}
				}
			}
		})
	}
}

// TestWeightsManyOptions covers the per-class path of choices with more
// than 32 options (no label × decision cells), against the expanded sample
// and against a hand count of accuracy.
func TestWeightsManyOptions(t *testing.T) {
	for _, k := range []int{5, 40} {
		q, obs := syntheticChoice(300, k, 3)
		d := Prepare(q, obs, Options{})
		if (d.ydcell != nil) != (k*k <= maxYD) {
			t.Fatalf("k=%d: label×decision cells %v", k, d.ydcell != nil)
		}
		ms := d.Metrics()
		got, want := make([]float64, len(ms)), make([]float64, len(ms))
		w := NewResampler(4, d.N).Next()
		d.EvalAll(ms, w, got)
		var exp []Obs
		right := 0.0
		for i, wi := range w {
			for j := range int(wi) {
				o := obs[i]
				o.ItemID = fmt.Sprintf("%s#%d", o.ItemID, j)
				exp = append(exp, o)
				if Decide(q, o.Answer, 0.5) == o.Label {
					right++
				}
			}
		}
		Prepare(q, exp, Options{}).EvalAll(ms, nil, want)
		for j, m := range ms {
			if !closeTo(got[j], want[j], 1e-9) {
				t.Errorf("k=%d %s: weighted %.12g, expanded %.12g", k, m, got[j], want[j])
			}
		}
		check(t, fmt.Sprintf("k=%d accuracy", k), got[0], right/float64(len(exp)))
	}
}
