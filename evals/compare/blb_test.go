package compare

import (
	"math"
	"testing"
)

// Above the exact limit the paired deltas come from the bag of little
// bootstraps, and they estimate the ordinary paired bootstrap: on 30,000
// paired items with a small drift every delta's interval endpoints lie
// within a quarter of the ordinary interval's width of the ordinary ones (log loss, heavy-tailed, differs most),
// the p-values agree to Monte Carlo error, and the question states the
// resampling it used.
func TestBLBPairedMatchesBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("30k-item paired bootstraps")
	}
	for _, drift := range []float64{0.01, 0.04} {
		a, b := syntheticRuns(30_000, 6, drift)
		exactOpt := Options{Seed: 4}
		exactOpt.Metrics.ExactBootstrapMax = -1
		exact := Compare(a, b, exactOpt).Questions[0]
		bag := Compare(a, b, Options{Seed: 4}).Questions[0]
		if exact.Resampling != nil || bag.Resampling == nil || bag.Resampling.Items != 30_000 || bag.Resampling.Subsets != 10 {
			t.Fatalf("resampling: ordinary %+v, bag %+v", exact.Resampling, bag.Resampling)
		}
		for j, e := range exact.Deltas {
			g := bag.Deltas[j]
			if g.Delta.Value != e.Delta.Value {
				t.Errorf("drift %v %s: delta %v, want %v", drift, e.Metric, g.Delta.Value, e.Delta.Value)
			}
			w := e.Delta.Hi - e.Delta.Lo
			t.Logf("drift %.2f %-9s Δ=%+.5f ordinary [%+.5f, %+.5f] p=%.3f  bag [%+.5f, %+.5f] p=%.3f", drift, e.Metric, e.Delta.Value, e.Delta.Lo, e.Delta.Hi, e.P, g.Delta.Lo, g.Delta.Hi, g.P)
			if !(w > 0) {
				continue
			}
			if math.Abs(g.Delta.Lo-e.Delta.Lo) > 0.25*w || math.Abs(g.Delta.Hi-e.Delta.Hi) > 0.25*w {
				t.Errorf("drift %v %s: bag [%v, %v], ordinary [%v, %v]", drift, e.Metric, g.Delta.Lo, g.Delta.Hi, e.Delta.Lo, e.Delta.Hi)
			}
			if math.Abs(g.P-e.P) > 0.1 || g.PBelow != e.PBelow && math.Max(g.P, e.P) > 0.01 {
				t.Errorf("drift %v %s: bag p %v (below %v), ordinary p %v (below %v)", drift, e.Metric, g.P, g.PBelow, e.P, e.PBelow)
			}
		}
		if bag.Verdict != exact.Verdict {
			t.Errorf("drift %v: verdict %q, ordinary %q", drift, bag.Verdict, exact.Verdict)
		}
	}
}
