package costs

import (
	"fmt"
	"math"
	"sort"
)

// ChoiceCosts are the costs of a choice question's outcomes: Matrix[t][d]
// is the cost of deciding option d when option t is true (the diagonal is
// 0: a right decision costs nothing), Abstain the cost of abstaining
// (nil: the question never abstains).
type ChoiceCosts struct {
	Options []string    `json:"options"`
	Matrix  [][]float64 `json:"matrix"`
	Abstain *float64    `json:"abstain,omitempty"`
}

// Validate checks that the matrix is square over the options, its
// diagonal 0 and every cost finite and not negative.
func (c ChoiceCosts) Validate() error {
	k := len(c.Options)
	if len(c.Matrix) != k {
		return fmt.Errorf("costs: matrix has %d rows for %d options", len(c.Matrix), k)
	}
	for t, row := range c.Matrix {
		if len(row) != k {
			return fmt.Errorf("costs: matrix row %s has %d entries for %d options", c.Options[t], len(row), k)
		}
		for d, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("costs: %s decided as %s costs %g; a cost must be a number ≥ 0", c.Options[t], c.Options[d], v)
			}
			if t == d && v != 0 {
				return fmt.Errorf("costs: %s decided as %s costs %g; a right decision costs 0", c.Options[t], c.Options[d], v)
			}
		}
	}
	if c.Abstain != nil && (math.IsNaN(*c.Abstain) || math.IsInf(*c.Abstain, 0) || *c.Abstain < 0) {
		return fmt.Errorf("costs: abstain %g must be a number ≥ 0", *c.Abstain)
	}
	return nil
}

// ChoicePoint is one labelled choice answer: its decision, the
// confidence it is decided with (the top probability) and the true
// option.
type ChoicePoint struct {
	Conf     float64
	Decision int
	Label    int
}

// ChoiceOutcome is what a confidence cut-point does on a set of choice
// answers: decide when the confidence is at least Cutpoint, abstain
// below it.
type ChoiceOutcome struct {
	Cutpoint float64 `json:"-"`
	N        int     `json:"n"`
	// Confusion[t][d] counts decided answers by true option t and
	// decision d; Abstained[t] the abstentions on true option t.
	Confusion [][]int `json:"confusion"`
	Abstained []int   `json:"abstained"`
	Correct   int     `json:"correct"`
	Errors    int     `json:"errors"`
	Abstain   int     `json:"abstain"`
	// Coverage is the share decided; PerThousand the expected cost per
	// 1,000 items (Cost / N × 1000).
	Coverage    float64 `json:"coverage"`
	Cost        float64 `json:"cost"`
	PerThousand float64 `json:"per_thousand"`
}

// EvaluateChoice applies the cut-point cut to pts: decide when Conf ≥
// cut, abstain below. Points whose decision or label is out of range are
// not counted.
func EvaluateChoice(pts []ChoicePoint, cut float64, c ChoiceCosts) ChoiceOutcome {
	k := len(c.Options)
	o := ChoiceOutcome{Cutpoint: cut, Confusion: make([][]int, k), Abstained: make([]int, k)}
	for i := range o.Confusion {
		o.Confusion[i] = make([]int, k)
	}
	ab := 0.0
	if c.Abstain != nil {
		ab = *c.Abstain
	}
	for _, p := range pts {
		if p.Label < 0 || p.Label >= k || p.Decision < 0 || p.Decision >= k {
			continue
		}
		o.N++
		if p.Conf < cut {
			o.Abstain++
			o.Abstained[p.Label]++
			o.Cost += ab
			continue
		}
		o.Confusion[p.Label][p.Decision]++
		o.Cost += c.Matrix[p.Label][p.Decision]
		if p.Label == p.Decision {
			o.Correct++
		} else {
			o.Errors++
		}
	}
	if o.N > 0 {
		o.Coverage = float64(o.N-o.Abstain) / float64(o.N)
		o.PerThousand = o.Cost / float64(o.N) * 1000
	}
	return o
}

// ChoiceCandidates are the cut-points worth trying: every distinct
// confidence, ascending (the lowest decides everything), then +Inf
// (abstain on everything). A cut-point between two of them decides
// exactly as the next one up.
func ChoiceCandidates(pts []ChoicePoint) []float64 {
	cs := make([]float64, 0, len(pts)+1)
	for _, p := range pts {
		cs = append(cs, p.Conf)
	}
	sort.Float64s(cs)
	out := cs[:0]
	for i, v := range cs {
		if i == 0 || v != cs[i-1] {
			out = append(out, v)
		}
	}
	return append(out, math.Inf(1))
}

// BetterChoice reports whether a is preferred to b: lower cost, then
// fewer abstentions (the lower cut-point).
func BetterChoice(a, b ChoiceOutcome) bool {
	switch {
	case a.Cost < b.Cost-eps:
		return true
	case a.Cost > b.Cost+eps:
		return false
	}
	return a.Cutpoint < b.Cutpoint
}

// FitChoice returns the cost-optimal confidence cut-point on pts (the
// first by BetterChoice among all candidates), in O(n log n). Without
// an abstention cost it never abstains: the cut-point is the lowest
// candidate and the outcome is the cost of deciding everything.
func FitChoice(pts []ChoicePoint, c ChoiceCosts) ChoiceOutcome {
	k := len(c.Options)
	var in []ChoicePoint
	for _, p := range pts {
		if p.Label >= 0 && p.Label < k && p.Decision >= 0 && p.Decision < k {
			in = append(in, p)
		}
	}
	cands := ChoiceCandidates(in)
	if c.Abstain == nil {
		return EvaluateChoice(in, cands[0], c)
	}
	ab := *c.Abstain
	// Cost(cut) = Σ_{conf ≥ cut} cost(point) + #(conf < cut)·abstain; walk
	// the candidates ascending, moving points below the cut as it rises.
	sort.Slice(in, func(i, j int) bool { return in[i].Conf < in[j].Conf })
	total := 0.0
	for _, p := range in {
		total += c.Matrix[p.Label][p.Decision]
	}
	bestI, bestCost := -1, 0.0
	j := 0
	decided := total
	for i, t := range cands {
		for j < len(in) && in[j].Conf < t {
			decided -= c.Matrix[in[j].Label][in[j].Decision]
			j++
		}
		cost := decided + float64(j)*ab
		if bestI < 0 || cost < bestCost-eps {
			bestI, bestCost = i, cost
		}
	}
	return EvaluateChoice(in, cands[bestI], c)
}
