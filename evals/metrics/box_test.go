package metrics

import (
	"math"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

func edges(t, b, l, r float64) provider.Edges {
	return provider.Edges{Top: t, Bottom: b, Left: l, Right: r}
}

// TestBoxes checks mean IoU and IoU≥0.5 accuracy against hand-computed
// values: IoUs 1 (same box), 0 (disjoint), 1/7 (two half-squares offset by
// a quarter: 0.0625 / 0.4375) and exactly 0.5 (a half of the image against
// all of it, a hit); mean 23/56; 2 hits of 4, whose interval is Wilson's
// (too few of each for the bootstrap): [0.150039, 0.849961].
func TestBoxes(t *testing.T) {
	obs := []BoxObs{
		{edges(0.1, 0.6, 0.2, 0.9), edges(0.1, 0.6, 0.2, 0.9)},
		{edges(0, 0.2, 0, 0.2), edges(0.5, 0.9, 0.5, 0.9)},
		{edges(0, 0.5, 0, 0.5), edges(0.25, 0.75, 0.25, 0.75)},
		{edges(0, 1, 0, 0.5), edges(0, 1, 0, 1)},
	}
	r := Boxes(obs, Options{Seed: 1})
	if r.N != 4 || r.Hits != 2 {
		t.Fatalf("%+v", r)
	}
	if math.Abs(r.MeanIoU.Value-23.0/56) > 1e-12 {
		t.Errorf("mean IoU %v, want %v", r.MeanIoU.Value, 23.0/56)
	}
	if r.Hit50.Value != 0.5 || r.Hit50.Method != IntervalWilson || math.Abs(r.Hit50.Lo-0.150039) > 1e-6 || math.Abs(r.Hit50.Hi-0.849961) > 1e-6 {
		t.Errorf("IoU≥0.5 accuracy %+v", r.Hit50)
	}
	if r.MeanIoU.Method != IntervalBootstrap || !(r.MeanIoU.Lo < r.MeanIoU.Value && r.MeanIoU.Value < r.MeanIoU.Hi) || r.MeanIoU.Lo < 0 || r.MeanIoU.Hi > 1 {
		t.Errorf("mean IoU interval %+v", r.MeanIoU)
	}
	// Seeded: the same seed gives the same interval, another seed another.
	if r2 := Boxes(obs, Options{Seed: 1}); r2.MeanIoU != r.MeanIoU {
		t.Error("not reproducible")
	}
	var many []BoxObs
	for i := range 40 {
		d := float64(i) / 100
		many = append(many, BoxObs{edges(0.1+d, 0.6, 0.2, 0.9), edges(0.1, 0.6, 0.2+d, 0.9)})
	}
	m1, m2 := Boxes(many, Options{Seed: 1}), Boxes(many, Options{Seed: 2})
	if m1.MeanIoU.Lo == m2.MeanIoU.Lo && m1.MeanIoU.Hi == m2.MeanIoU.Hi {
		t.Errorf("the seed does not move the bootstrap: %+v %+v", m1.MeanIoU, m2.MeanIoU)
	}
	// Reversed edges (as a server may return them) cover nothing.
	if v := provider.IoU(edges(0.6, 0.1, 0.2, 0.9), edges(0.1, 0.6, 0.2, 0.9)); v != 0 {
		t.Errorf("reversed box IoU %v", v)
	}
	if e := Boxes(nil, Options{}); e.N != 0 || e.MeanIoU.Defined() {
		t.Errorf("empty: %+v", e)
	}
	if off := Boxes(obs, Options{Bootstrap: -1}); off.MeanIoU.HasInterval() || off.Hit50.HasInterval() {
		t.Errorf("intervals off: %+v", off)
	}
}
