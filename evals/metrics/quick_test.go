package metrics

import (
	"math"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

func noulObs(ps []float64, ys []int) []Obs {
	out := make([]Obs, len(ps))
	for i, p := range ps {
		out[i] = Obs{ItemID: string(rune('a' + i)), Answer: &provider.Answer{ID: "q", Type: provider.Noul, P: p}, Label: ys[i], HasLabel: true}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestNoulFirstThree checks accuracy, Brier and ECE on a hand-computed case.
func TestNoulFirstThree(t *testing.T) {
	q := &provider.Question{Type: provider.Noul}
	// p: 0.9 y1 (correct), 0.8 y0 (wrong), 0.3 y0 (correct), 0.6 y1 (correct)
	r := Compute(q, noulObs([]float64{0.9, 0.8, 0.3, 0.6}, []int{1, 0, 0, 1}), Options{Bootstrap: -1})
	if !near(r.Accuracy.Value, 0.75) {
		t.Errorf("accuracy %v, want 0.75", r.Accuracy.Value)
	}
	// Brier: (0.01 + 0.64 + 0.09 + 0.16)/4 = 0.225
	if !near(r.Brier.Value, 0.225) {
		t.Errorf("brier %v, want 0.225", r.Brier.Value)
	}
	// 10 bins (lo,hi]: 0.9→bin 8, 0.8→bin 7, 0.3→bin 2, 0.6→bin 5; each bin one item:
	// |1-0.9| + |0-0.8| + |0-0.3| + |1-0.6| = 0.1+0.8+0.3+0.4 = 1.6, /4 = 0.4
	if !near(r.ECE.Value, 0.4) {
		t.Errorf("ece %v, want 0.4", r.ECE.Value)
	}
}
