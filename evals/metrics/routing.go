package metrics

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/jevlab/jevlab/provider"
)

// Routing is what a caller-side minimum confidence (a question set's
// min_confidence, an imported Noetic routeSwitch's minConfidence) does to a
// question's answers: an answer whose confidence is strictly under
// MinConfidence is routed to "uncertain" (a human, a fallback); the rest
// are kept and acted on. The confidence is the selective curve's (see
// Selective.ConfidenceName). Items whose call failed have no confidence and
// are left out (they are counted in the report's errors).
type Routing struct {
	MinConfidence float64 `json:"min_confidence"`
	Confidence    string  `json:"confidence"`
	// Answered counts the items with a usable answer (first repeat).
	Answered int `json:"answered"`
	// Routed counts answered items under MinConfidence; RoutedShare is
	// Routed/Answered with a bootstrap interval over the answered items.
	Routed      int      `json:"routed"`
	RoutedShare Estimate `json:"routed_share"`
	// Kept = Answered − Routed. KeptAccuracy is KeptCorrect/KeptLabelled
	// over the kept items that have a label (the same decision rule as
	// Accuracy), with a bootstrap interval from the same resamples.
	Kept         int      `json:"kept"`
	KeptLabelled int      `json:"kept_labelled"`
	KeptCorrect  int      `json:"kept_correct"`
	KeptAccuracy Estimate `json:"kept_accuracy"`
}

// String is the one-line summary every report prints, e.g.
// "min_confidence 0.60: 12.0% routed to uncertain (60/500) · accuracy of
// the rest 0.912 [0.880, 0.940] (403/440)".
func (r *Routing) String() string {
	head := "min_confidence " + formatCut(r.MinConfidence) + ": "
	if r.Answered == 0 {
		return head + "no answers to route"
	}
	acc := "—"
	if r.KeptAccuracy.Defined() {
		acc = fmt.Sprintf("%.3f", r.KeptAccuracy.Value)
		if r.KeptAccuracy.HasInterval() {
			acc += fmt.Sprintf(" [%.3f, %.3f]", r.KeptAccuracy.Lo, r.KeptAccuracy.Hi)
			if r.KeptAccuracy.Method == IntervalWilson {
				acc += " Wilson"
			}
		}
	}
	return fmt.Sprintf("%s%.1f%% routed to uncertain (%d/%d) · accuracy of the rest %s (%d/%d)",
		head, 100*r.RoutedShare.Value, r.Routed, r.Answered, acc, r.KeptCorrect, r.KeptLabelled)
}

// formatCut writes a cut with two decimals, or as many as it needs.
func formatCut(v float64) string {
	if s := strconv.FormatFloat(v, 'f', 2, 64); math.Abs(v-math.Round(v*100)/100) < 1e-12 {
		return s
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// routingAcc computes Routing for a minimum confidence cut, with the
// options' threshold, bootstrap and seed, one Rec per item: each answered
// item's cell (a byte) is kept for the resamples, not its Rec.
type routingAcc struct {
	q   *provider.Question
	opt Options
	r   *Routing
	cat []uint8
}

func newRoutingAcc(q *provider.Question, cut float64, opt Options) *routingAcc {
	return &routingAcc{q: q, opt: opt, r: &Routing{MinConfidence: cut, Confidence: confidenceName(q.Type, opt.Threshold)}}
}

// add reads one item's Rec.
func (a *routingAcc) add(o *Rec) {
	if !o.Usable() {
		return
	}
	q, r, opt := a.q, a.r, a.opt
	r.Answered++
	c := cellUnlabelled
	switch {
	case o.selConf(q, opt.Threshold) < r.MinConfidence:
		c = cellRouted
		r.Routed++
	case o.Label >= 0:
		r.KeptLabelled++
		c = cellWrong
		if o.Decision(q, opt.Threshold) == int(o.Label) {
			c = cellRight
			r.KeptCorrect++
		}
	}
	a.cat = append(a.cat, c)
}

// result is the Routing of the items added, with its intervals.
func (a *routingAcc) result() *Routing {
	r, cat, opt := a.r, a.cat, a.opt
	// Each answered item falls in one cell; a resample's figures are sums
	// of its cell counts, so a resample needs no per-item weights.
	r.Kept = r.Answered - r.Routed
	var cells routingCells
	for _, c := range cat {
		cells[c]++
	}
	r.RoutedShare, r.KeptAccuracy = Point(cells.share()), Point(cells.accuracy())
	b := opt.Bootstrap
	if b <= 0 || r.Answered == 0 {
		return r
	}
	ds, da := make([]float64, b), make([]float64, b)
	// The resamples are Resamples' for the same seed and n (chunks of 50,
	// each its own stream), drawn here one by one as cell counts.
	seed := opt.Seed ^ streamRouting
	for c := 0; c*chunk < b; c++ {
		rs := &Resampler{state: NewRand(seed+uint64(c)*0x9e3779b97f4a7c15, streamBootstrap).Uint64()}
		for j := c * chunk; j < min(b, (c+1)*chunk); j++ {
			rs.drawCells(cat, cells[:])
			ds[j], da[j] = cells.share(), cells.accuracy()
		}
	}
	r.RoutedShare.Lo, r.RoutedShare.Hi = Interval(ds)
	r.RoutedShare = proportionInterval(r.RoutedShare, r.Routed, r.Answered, true)
	if r.KeptAccuracy.Defined() {
		r.KeptAccuracy.Lo, r.KeptAccuracy.Hi = Interval(da)
		r.KeptAccuracy = proportionInterval(r.KeptAccuracy, r.KeptCorrect, r.KeptLabelled, true)
	}
	return r
}

// streamRouting keeps the routing resamples apart from the metrics'.
const streamRouting = 0x72_6f_75_74 // "rout"

// The cells of an answered item under a minimum confidence.
const (
	cellRouted     uint8 = iota
	cellRight            // kept, labelled, right
	cellWrong            // kept, labelled, wrong
	cellUnlabelled       // kept, no label
	numCells
)

type routingCells [numCells]float64

func (c *routingCells) share() float64 {
	return c[cellRouted] / (c[cellRouted] + c[cellRight] + c[cellWrong] + c[cellUnlabelled])
}

func (c *routingCells) accuracy() float64 {
	if t := c[cellRight] + c[cellWrong]; t > 0 {
		return c[cellRight] / t
	}
	return math.NaN()
}

// drawCells draws len(cat) items with replacement, as Next does, and
// counts the draws per cell: cells[c] is how many drawn items have cat c.
func (r *Resampler) drawCells(cat []uint8, cells []float64) {
	clear(cells)
	n := uint64(len(cat))
	st := r.state
	for range n {
		st += 0xa0761d6478bd642f
		hi, lo := bits.Mul64(st, st^0xe7037ed1a0b428db)
		j, _ := bits.Mul64(hi^lo, n)
		cells[cat[j]]++
	}
	r.state = st
}
