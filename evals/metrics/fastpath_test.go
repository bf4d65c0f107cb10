package metrics

import (
	"math"
	"testing"
)

// The bootstrap's fast paths (four interleaved cell copies when conf
// groups are few; a score's label × decision × nearest cells) give
// bit for bit what the plain per-item loops give, under resample weights.
func TestFastPathsEqualPlainLoops(t *testing.T) {
	for name, q := range recQuestions() {
		t.Run(name, func(t *testing.T) {
			d := Prepare(q, mixedObs(q, 8000, 3), Options{})
			if name != "score" && d.sc.cellX == nil {
				t.Fatalf("%d conf groups over %d items: the interleaved path is not taken", len(d.cgVal), d.N)
			}
			if name == "score" && d.ydncell == nil {
				t.Fatal("score cells path not taken")
			}
			plain := d.Fork()
			plain.sc.cellX, plain.ydncell = nil, nil
			ms := d.Metrics()
			got, want := make([]float64, len(ms)), make([]float64, len(ms))
			rs := NewResampler(5, d.N)
			for r := range 6 {
				var w []float64
				if r > 0 {
					w = rs.Next()
				}
				d.EvalAll(ms, w, got)
				plain.EvalAll(ms, w, want)
				for j, m := range ms {
					if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
						t.Errorf("resample %d %s: fast %v, plain %v", r, m, got[j], want[j])
					}
				}
			}
		})
	}
}
