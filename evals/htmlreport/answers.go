package htmlreport

import (
	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/provider"
)

// AnswerLookup returns an Input.Answer over runs (in Input.Runs order):
// each run's first-repeat answer of a question to an item, indexed on
// first use of a question.
func AnswerLookup(runs ...compare.RunData) func(r int, q, item string) *provider.Answer {
	type key struct {
		r int
		q string
	}
	idx := map[key]map[string]*provider.Answer{}
	return func(r int, q, item string) *provider.Answer {
		if r < 0 || r >= len(runs) {
			return nil
		}
		k := key{r, q}
		m, ok := idx[k]
		if !ok {
			m = map[string]*provider.Answer{}
			rep := map[string]int{}
			for _, o := range runs[r].Obs[q] {
				if o.Answer == nil {
					continue
				}
				if prev, seen := rep[o.ItemID]; seen && prev <= o.Repeat {
					continue
				}
				rep[o.ItemID] = o.Repeat
				m[o.ItemID] = o.Answer
			}
			idx[k] = m
		}
		return m[item]
	}
}
