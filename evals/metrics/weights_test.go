package metrics

import (
	"encoding/json"
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

// TestOrderInvariance: without resampling, every metric is the same
// whatever order the observations come in (ties are grouped, never ordered).
func TestOrderInvariance(t *testing.T) {
	em := loadRecording(t, "entity-merge", "recorded.jsonl")
	cs := loadRecording(t, "citation-support", "recorded.jsonl")
	opt := Options{Bootstrap: -1, NoiseFloorDraws: -1, MinLabels: 1 << 30}
	for _, c := range []struct {
		rec *recording
		qid string
	}{{em, "same_entity"}, {em, "action"}, {cs, "supports"}, {cs, "coverage"}} {
		q := c.rec.question(t, c.qid)
		obs := c.rec.obs(c.qid)
		want, _ := json.Marshal(Compute(q, obs, opt))
		rev := make([]Obs, len(obs))
		for i := range obs {
			rev[(i*7919)%len(obs)] = obs[i] // a fixed permutation (7919 is prime to 400 and 420)
		}
		got, _ := json.Marshal(Compute(q, rev, opt))
		var a, b any
		if json.Unmarshal(want, &a) != nil || json.Unmarshal(got, &b) != nil {
			t.Fatal("report does not round-trip")
		}
		if path := sameJSON(a, b, c.qid); path != "" {
			t.Errorf("metrics depend on item order at %s", path)
		}
		var r QuestionReport
		if err := json.Unmarshal(want, &r); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]float64{"accuracy": r.Accuracy.Value, "ece": r.ECE.Value, "ece_mass": r.ECEMass.Value, "aurc": r.Selective.AURC.Value} {
			if !(v >= 0 && v <= 1) {
				t.Errorf("%s %s = %v out of [0,1]", c.qid, name, v)
			}
		}
		if !(r.Brier.Value >= 0 && r.Brier.Value <= 2) {
			t.Errorf("%s brier %v", c.qid, r.Brier.Value)
		}
	}
}

// sameJSON compares decoded JSON trees, numbers up to summation-order
// rounding (1e-12 relative); it returns the first differing path.
func sameJSON(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return path
		}
		for k, v := range x {
			if p := sameJSON(v, y[k], path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path
		}
		for i := range x {
			if p := sameJSON(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case float64:
		y, ok := b.(float64)
		if !ok || !closeTo(x, y, 1e-12) {
			return path
		}
	default:
		if a != b {
			return path
		}
	}
	return ""
}
