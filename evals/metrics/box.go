package metrics

import (
	"math"
	"slices"

	"github.com/jevlab/jevlab/provider"
)

// BoxObs is one box answer (Jev 1.14) with its labelled box.
type BoxObs struct {
	Pred, Label provider.Edges
}

// BoxReport measures box answers against labelled boxes: the mean
// intersection over union with a seeded percentile-bootstrap 95% interval,
// and the share of answers with IoU ≥ BoxHitIoU (the usual "correct
// detection") with the interval a proportion gets (bootstrap, or Wilson
// when hits or misses are few).
type BoxReport struct {
	N       int      `json:"n"`
	MeanIoU Estimate `json:"mean_iou"`
	Hit50   Estimate `json:"iou50_accuracy"`
	Hits    int      `json:"iou50_hits"`
}

// BoxHitIoU is the IoU at which a box answer counts as correct.
const BoxHitIoU = 0.5

// streamBox is the bootstrap stream of box metrics (apart from the other
// metrics', so adding box questions moves no other interval).
const streamBox = 0xb0c5

// Boxes computes the box report of obs with opt's seed and resamples.
func Boxes(obs []BoxObs, opt Options) BoxReport {
	n := len(obs)
	r := BoxReport{N: n, MeanIoU: Point(math.NaN()), Hit50: Point(math.NaN())}
	if n == 0 {
		return r
	}
	ious := make([]float64, n)
	sum := 0.0
	for i, o := range obs {
		ious[i] = provider.IoU(o.Pred, o.Label)
		sum += ious[i]
		if ious[i] >= BoxHitIoU {
			r.Hits++
		}
	}
	r.MeanIoU = Point(sum / float64(n))
	r.Hit50 = Point(float64(r.Hits) / float64(n))
	b := opt.Bootstrap
	if b == 0 {
		b = 1000
	}
	want := b > 0
	if want {
		rs := NewResampler(opt.Seed^streamBox, n)
		means := make([]float64, b)
		hits := make([]float64, b)
		for k := range b {
			w := rs.Next()
			s, h := 0.0, 0.0
			for i, c := range w {
				s += c * ious[i]
				if ious[i] >= BoxHitIoU {
					h += c
				}
			}
			means[k], hits[k] = s/float64(n), h/float64(n)
		}
		slices.Sort(means)
		slices.Sort(hits)
		r.MeanIoU.Lo, r.MeanIoU.Hi = Interval(means)
		r.Hit50.Lo, r.Hit50.Hi = Interval(hits)
		r.MeanIoU = bootInterval(r.MeanIoU)
	}
	r.Hit50 = proportionInterval(r.Hit50, r.Hits, n, want)
	return r
}

// BoxPairs are a box question's observations as BoxObs: per item the
// first repeat (as Compute reads every question), answered with a box and
// labelled with one, in their order. ids are the items, in the same order.
func BoxPairs(obs []Obs) (pairs []BoxObs, ids []string) {
	for _, o := range firstRepeat(obs) {
		if !o.HasLabel || o.LabelBox == nil {
			continue
		}
		e, ok := o.Answer.BoxOf()
		if !ok {
			continue
		}
		pairs = append(pairs, BoxObs{Pred: e, Label: *o.LabelBox})
		ids = append(ids, o.ItemID)
	}
	return pairs, ids
}

// BoxesOf is Boxes of a box question's observations (BoxPairs).
func BoxesOf(obs []Obs, opt Options) BoxReport {
	pairs, _ := BoxPairs(obs)
	return Boxes(pairs, opt)
}
