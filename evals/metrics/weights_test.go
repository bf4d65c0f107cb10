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
