// Package costs turns a noul's probabilities into decisions with
// consequences: given what a false positive, a false negative and an
// abstention cost, it evaluates thresholds (confusion counts, coverage,
// errors, expected cost per 1,000 items) and fits the cost-optimal ones.
//
// Decisions: yes when p ≥ hi, no when p < lo, abstain in between (lo ≤
// hi; lo = hi never abstains). Without an abstention cost only lo = hi is
// considered.
package costs

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Costs are the costs of a noul's outcomes; right decisions cost 0.
type Costs struct {
	FalsePositive float64 `json:"false_positive"`
	FalseNegative float64 `json:"false_negative"`
	// Abstain is the cost of abstaining (routing to a human); nil means
	// the question never abstains.
	Abstain *float64 `json:"abstain,omitempty"`
}

// Validate checks that every cost is finite and not negative.
func (c Costs) Validate() error {
	check := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("costs: %s %g must be a number ≥ 0", name, v)
		}
		return nil
	}
	if err := check("false_positive", c.FalsePositive); err != nil {
		return err
	}
	if err := check("false_negative", c.FalseNegative); err != nil {
		return err
	}
	if c.Abstain != nil {
		return check("abstain", *c.Abstain)
	}
	return nil
}

// Point is one labelled answer: the noul's p and the true label.
type Point struct {
	P     float64
	Label bool
}

// Outcome is what a pair of thresholds does on a set of points.
type Outcome struct {
	Lo, Hi                  float64
	N                       int
	TP, FP, TN, FN, Abstain int
	// Coverage is the share decided (not abstained); Errors FP + FN.
	Coverage float64
	Errors   int
	// Cost is the total cost; PerThousand the expected cost per 1,000
	// items (Cost / N × 1000).
	Cost        float64
	PerThousand float64
}

// Evaluate applies thresholds lo ≤ hi to pts.
func Evaluate(pts []Point, lo, hi float64, c Costs) Outcome {
	o := Outcome{Lo: lo, Hi: hi, N: len(pts)}
	ab := 0.0
	if c.Abstain != nil {
		ab = *c.Abstain
	}
	for _, p := range pts {
		switch {
		case p.P >= hi:
			if p.Label {
				o.TP++
			} else {
				o.FP++
			}
		case p.P < lo:
			if p.Label {
				o.FN++
			} else {
				o.TN++
			}
		default:
			o.Abstain++
		}
	}
	o.Errors = o.FP + o.FN
	o.Cost = float64(o.FP)*c.FalsePositive + float64(o.FN)*c.FalseNegative + float64(o.Abstain)*ab
	if o.N > 0 {
		o.Coverage = float64(o.N-o.Abstain) / float64(o.N)
		o.PerThousand = o.Cost / float64(o.N) * 1000
	}
	return o
}

// Candidates are the thresholds worth trying on pts: every distinct p,
// ascending, then +Inf (never yes). A threshold between two of them
// decides exactly as the next one up.
func Candidates(pts []Point) []float64 {
	ps := make([]float64, 0, len(pts)+1)
	for _, p := range pts {
		ps = append(ps, p.P)
	}
	sort.Float64s(ps)
	out := ps[:0]
	for i, p := range ps {
		if i == 0 || p != ps[i-1] {
			out = append(out, p)
		}
	}
	return append(out, math.Inf(1))
}

// eps absorbs rounding when comparing costs.
const eps = 1e-9

// Better reports whether outcome a is preferred to b: lower cost, then
// fewer abstentions, then the lower hi, then the lower lo.
func Better(a, b Outcome) bool {
	switch {
	case a.Cost < b.Cost-eps:
		return true
	case a.Cost > b.Cost+eps:
		return false
	case a.Abstain != b.Abstain:
		return a.Abstain < b.Abstain
	case a.Hi != b.Hi:
		return a.Hi < b.Hi
	}
	return a.Lo < b.Lo
}

// Fit returns the cost-optimal thresholds on pts (the first by Better
// among all candidate pairs), in O(n log n).
func Fit(pts []Point, c Costs) Outcome {
	cands := Candidates(pts)
	k := len(cands)
	// below[i]: points with p < cands[i]; posBelow[i]: of them positive.
	sorted := append([]Point(nil), pts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].P < sorted[j].P })
	below := make([]int, k)
	posBelow := make([]int, k)
	j, pos := 0, 0
	for i, t := range cands {
		for j < len(sorted) && sorted[j].P < t {
			if sorted[j].Label {
				pos++
			}
			j++
		}
		below[i], posBelow[i] = j, pos
	}
	n := len(pts)
	totalPos := pos
	outcome := func(li, hi int) Outcome {
		o := Outcome{Lo: cands[li], Hi: cands[hi], N: n}
		o.FN = posBelow[li]
		o.TN = below[li] - posBelow[li]
		o.Abstain = below[hi] - below[li]
		o.TP = totalPos - posBelow[hi]
		o.FP = (n - below[hi]) - o.TP
		o.Errors = o.FP + o.FN
		ab := 0.0
		if c.Abstain != nil {
			ab = *c.Abstain
		}
		o.Cost = float64(o.FP)*c.FalsePositive + float64(o.FN)*c.FalseNegative + float64(o.Abstain)*ab
		if n > 0 {
			o.Coverage = float64(n-o.Abstain) / float64(n)
			o.PerThousand = o.Cost / float64(n) * 1000
		}
		return o
	}
	var best Outcome
	found := false
	try := func(o Outcome) {
		if !found || Better(o, best) {
			best, found = o, true
		}
	}
	if c.Abstain == nil {
		for i := range cands {
			try(outcome(i, i))
		}
		return best
	}
	// For a fixed hi the lo part of the cost is FN·cFN − below(lo)·cA (plus
	// terms of hi only); its minimum over lo ≤ hi, ties to the larger lo
	// (fewer abstentions), runs along as hi ascends.
	ab := *c.Abstain
	bestLo := -1
	var bestF float64
	for hi := range cands {
		f := float64(posBelow[hi])*c.FalseNegative - float64(below[hi])*ab
		if bestLo < 0 || f <= bestF+eps {
			bestLo, bestF = hi, f
		}
		try(outcome(bestLo, hi))
	}
	return best
}

// outcomeJSON is Outcome's JSON form: a threshold of +Inf (never yes, or
// never no for lo) is null, since JSON has no infinity.
type outcomeJSON struct {
	Lo          *float64 `json:"lo"`
	Hi          *float64 `json:"hi"`
	N           int      `json:"n"`
	TP          int      `json:"tp"`
	FP          int      `json:"fp"`
	TN          int      `json:"tn"`
	FN          int      `json:"fn"`
	Abstain     int      `json:"abstain"`
	Coverage    float64  `json:"coverage"`
	Errors      int      `json:"errors"`
	Cost        float64  `json:"cost"`
	PerThousand float64  `json:"per_thousand"`
}

// Threshold returns t for JSON: nil for +Inf (never).
func Threshold(t float64) *float64 {
	if math.IsInf(t, 1) {
		return nil
	}
	return &t
}

func fromThreshold(t *float64) float64 {
	if t == nil {
		return math.Inf(1)
	}
	return *t
}

// MarshalJSON writes o with lo and hi null when +Inf (never).
func (o Outcome) MarshalJSON() ([]byte, error) {
	return json.Marshal(outcomeJSON{Lo: Threshold(o.Lo), Hi: Threshold(o.Hi), N: o.N, TP: o.TP, FP: o.FP, TN: o.TN, FN: o.FN,
		Abstain: o.Abstain, Coverage: o.Coverage, Errors: o.Errors, Cost: o.Cost, PerThousand: o.PerThousand})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	var j outcomeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("costs outcome: %w", err)
	}
	*o = Outcome{Lo: fromThreshold(j.Lo), Hi: fromThreshold(j.Hi), N: j.N, TP: j.TP, FP: j.FP, TN: j.TN, FN: j.FN,
		Abstain: j.Abstain, Coverage: j.Coverage, Errors: j.Errors, Cost: j.Cost, PerThousand: j.PerThousand}
	return nil
}

// MinFitLabels and MinFitClass are the fewest labelled answers, and the
// fewest of each label, a fit needs before its thresholds are worth
// loading: below them the optimum is decided by a handful of items.
const (
	MinFitLabels = 50
	MinFitClass  = 5
)

// TooFew says why pts are too few to fit thresholds on ("" when enough).
func TooFew(pts []Point) string {
	pos := 0
	for _, p := range pts {
		if p.Label {
			pos++
		}
	}
	switch {
	case len(pts) < MinFitLabels:
		return fmt.Sprintf("%d labelled answers to fit on; cost-optimal thresholds need at least %d", len(pts), MinFitLabels)
	case pos < MinFitClass || len(pts)-pos < MinFitClass:
		return fmt.Sprintf("%d true and %d false labels to fit on; cost-optimal thresholds need at least %d of each", pos, len(pts)-pos, MinFitClass)
	}
	return ""
}
