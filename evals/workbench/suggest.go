package workbench

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// SuggestOptions tune Suggest.
type SuggestOptions struct {
	// N is how many items to suggest (0: all that can be ranked).
	N int
	// Questions limits the ranking to these question ids (none: every
	// question of the run).
	Questions []string
	// Diversity weighs the similarity penalty (0 means
	// DefaultDiversity; negative switches it off).
	Diversity float64
}

// DefaultDiversity is the weight of the similarity penalty: an item as
// similar to one already chosen as to itself loses half a point.
const DefaultDiversity = 0.5

// Suggestion is one unlabelled item worth labelling, with why.
type Suggestion struct {
	Rank   int             `json:"rank"`
	ItemID string          `json:"id"`
	Line   int             `json:"line"`
	State  json.RawMessage `json:"state"`
	// Score is Uncertainty + Disagreement, what the ranking maximises
	// before the similarity penalty; Similarity is the largest word
	// overlap (Jaccard) with an item ranked before it.
	Score        float64 `json:"score"`
	Uncertainty  float64 `json:"uncertainty"`
	Disagreement float64 `json:"disagreement"`
	Similarity   float64 `json:"similarity"`
	// Margin and Entropy are the means over the item's questions of the
	// top-two margin and the entropy normalised to [0, 1].
	Margin  float64 `json:"margin"`
	Entropy float64 `json:"entropy"`
	// Questions are the unlabelled questions ranked; Decisions the run's
	// decision for each.
	Questions []string          `json:"questions"`
	Decisions map[string]string `json:"decisions"`
}

// Suggest ranks the items that lack a label (for the questions asked) by
// how much a label would teach, from the answers of run views[0]:
// uncertainty (1 − top-two margin and the normalised entropy, averaged)
// plus disagreement (the mean total-variation distance between the
// answer and the same item's answers from the run's variants and from
// the other views, e.g. a second run). Items are then picked greedily
// (maximal marginal relevance) with a penalty for word overlap with the
// items already picked, so the list is not twenty copies of one ticket.
func Suggest(items []Item, views []*RunView, opt SuggestOptions) ([]Suggestion, error) {
	if len(views) == 0 || views[0] == nil {
		return nil, fmt.Errorf("no run to rank by: evaluate the set first (jevlab eval FILE)")
	}
	v := views[0]
	if v.Items == nil {
		return nil, fmt.Errorf("run %s was loaded without its items", v.Run.ID)
	}
	qids := opt.Questions
	if len(qids) == 0 {
		qids = v.Set.Questions.IDs()
	}
	for _, q := range qids {
		if v.Question(q) == nil {
			return nil, fmt.Errorf("run %s has no question %q (questions: %s)", v.Run.ID, q, strings.Join(v.Set.Questions.IDs(), ", "))
		}
	}
	lambda := opt.Diversity
	if lambda == 0 {
		lambda = DefaultDiversity
	}
	var cands []Suggestion
	var toks []map[string]bool
	for _, it := range items {
		s := Suggestion{ItemID: it.ID, Line: it.Line, State: it.State, Decisions: map[string]string{}}
		var nu int
		for _, q := range qids {
			if _, labelled := it.Labels[q]; labelled {
				continue
			}
			r := v.Items[it.ID][q]
			if r == nil || r.Answer == nil {
				continue
			}
			question := v.Question(q)
			dist := distribution(question, r.Answer)
			if len(dist) < 2 {
				continue
			}
			m, h := marginEntropy(dist)
			s.Margin += m
			s.Entropy += h
			s.Uncertainty += ((1 - m) + h) / 2
			var tv float64
			var nd int
			for _, vr := range v.Variants {
				if vr.Question != q {
					continue
				}
				if o := v.Items[it.ID][vr.ID()]; o != nil && o.Answer != nil && sameShape(r.Answer, o.Answer) {
					tv += metrics.TV(r.Answer, o.Answer)
					nd++
				}
			}
			for _, ov := range views[1:] {
				if ov == nil || ov.Items == nil {
					continue
				}
				if o := ov.Items[it.ID][q]; o != nil && o.Answer != nil && sameShape(r.Answer, o.Answer) {
					tv += metrics.TV(r.Answer, o.Answer)
					nd++
				}
			}
			if nd > 0 {
				s.Disagreement += tv / float64(nd)
			}
			av := View(question, r.Answer, ViewOptions{Threshold: v.Set.Threshold(q), True: -1})
			s.Decisions[q] = av.Decision
			s.Questions = append(s.Questions, q)
			nu++
		}
		if nu == 0 {
			continue
		}
		f := float64(nu)
		s.Margin, s.Entropy, s.Uncertainty, s.Disagreement = s.Margin/f, s.Entropy/f, s.Uncertainty/f, s.Disagreement/f
		s.Score = s.Uncertainty + s.Disagreement
		cands = append(cands, s)
		toks = append(toks, words(it.State))
	}
	// Stable start: best score first, item order on ties.
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cands[order[a]].Score > cands[order[b]].Score })
	n := opt.N
	if n <= 0 || n > len(cands) {
		n = len(cands)
	}
	maxSim := make([]float64, len(cands))
	picked := make([]bool, len(cands))
	var out []Suggestion
	for len(out) < n {
		best, bestVal := -1, math.Inf(-1)
		for _, i := range order {
			if picked[i] {
				continue
			}
			val := cands[i].Score
			if lambda > 0 {
				val -= lambda * maxSim[i]
			}
			if val > bestVal {
				best, bestVal = i, val
			}
		}
		picked[best] = true
		s := cands[best]
		s.Similarity = maxSim[best]
		s.Rank = len(out) + 1
		out = append(out, s)
		if lambda > 0 {
			for i := range cands {
				if !picked[i] {
					maxSim[i] = max(maxSim[i], jaccard(toks[i], toks[best]))
				}
			}
		}
	}
	return out, nil
}

// distribution is an answer's probabilities over its outcomes (a noul's
// false, true).
func distribution(q *provider.Question, a *provider.Answer) []float64 {
	if q.Type == provider.Noul {
		if math.IsNaN(a.P) {
			return nil
		}
		return []float64{1 - a.P, a.P}
	}
	if len(a.Probs) != q.Size() {
		return nil
	}
	return a.Probs
}

func sameShape(a, b *provider.Answer) bool {
	return a.Type == b.Type && len(a.Probs) == len(b.Probs)
}

// marginEntropy returns the top-two margin and the entropy normalised by
// ln k (both in [0, 1]) of a distribution, renormalised first.
func marginEntropy(p []float64) (margin, entropy float64) {
	var sum float64
	for _, x := range p {
		sum += max(x, 0)
	}
	if sum <= 0 {
		return 0, 1
	}
	top := make([]float64, len(p))
	for i, x := range p {
		q := max(x, 0) / sum
		top[i] = q
		if q > 0 {
			entropy -= q * math.Log(q)
		}
	}
	slices.SortFunc(top, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	return top[0] - top[1], entropy / math.Log(float64(len(p)))
}

// words are the distinct lowercase words (3+ letters or digits) of a state.
func words(state json.RawMessage) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(string(state)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) >= 3 {
			out[w] = true
		}
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
