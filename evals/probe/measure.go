package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// Measure is one measured figure of a probe with its interval: Wilson for
// a share (K of N), bootstrap over items for a mean (N items).
type Measure struct {
	Name     string           `json:"name"`
	Estimate metrics.Estimate `json:"estimate"`
	K        int              `json:"k,omitempty"`
	N        int              `json:"n"`
	// Share is true for a K-of-N share, false for a mean.
	Share bool `json:"share"`
}

// PairCount is one pair of answer sets of the repeat probe: how many of N
// items changed their decision and how many changed any value at all.
type PairCount struct {
	A         string `json:"a"`
	B         string `json:"b"`
	Decisions int    `json:"decisions_changed"`
	Answers   int    `json:"answers_changed"`
	N         int    `json:"n"`
}

// ItemEffect is one item's effect, for the worst-items list.
type ItemEffect struct {
	Item  string  `json:"item"`
	Value float64 `json:"value"`
	Note  string  `json:"note,omitempty"`
}

// QuestionResult is what one probe measured on one question.
type QuestionResult struct {
	Question string                `json:"question"`
	Type     provider.QuestionType `json:"type"`
	Measures []Measure             `json:"measures"`
	// PerOption is the shuffle's mean |Δp| of each option, in set order.
	PerOption []OptionMeasure `json:"per_option,omitempty"`
	// Pairs are the repeat probe's pairwise counts.
	Pairs []PairCount `json:"pairs,omitempty"`
	// Worst are the items with the largest effect, largest first (at most
	// WorstItems).
	Worst []ItemEffect `json:"worst,omitempty"`
}

// OptionMeasure is one option's mean |Δp|.
type OptionMeasure struct {
	Option   string           `json:"option"`
	Estimate metrics.Estimate `json:"estimate"`
}

// WorstItems is how many worst items a result lists per question.
const WorstItems = 5

// Measure returns the measure named name, if present.
func (q *QuestionResult) Measure(name string) (Measure, bool) {
	for _, m := range q.Measures {
		if m.Name == name {
			return m, true
		}
	}
	return Measure{}, false
}

// Measure names, per kind.
const (
	MFlipRate       = "flip_rate"       // share of decisions that changed
	MAnswersChanged = "answers_changed" // share of answers with any value changed (repeat)
	MMeanTV         = "mean_tv"         // mean total-variation distance ½Σ|Δp| (noul: |Δp|)
	MPositionLift   = "position_lift"   // mean probability the first position adds (shuffle)
	MNegationGap    = "negation_gap"    // mean |P(X) + P(¬X) − 1|
	MNegationBias   = "negation_sum_minus_one"
	MSameSide       = "same_side_rate" // share of items with P(X), P(¬X) on the same side of the threshold
	MDistractorMass = "distractor_mass"
	MDistractorTake = "distractor_taken"
	MFollowRate     = "follow_rate" // share of decisions that followed the injection
	MAgreement      = "agreement"   // share of items whose most probable noul is the choice's decision
	MSpearman       = "spearman"    // mean rank correlation of the choice and the nouls
	MNoulSum        = "noul_sum"    // mean Σ P over one choice's nouls
)

// set of answers: item → question → answer by repeat.
type answerSet struct {
	name  string
	items map[string]map[string][]*provider.Answer
	order []string
}

func (s *answerSet) get(item, q string, rep int) *provider.Answer {
	as := s.items[item][q]
	if rep < len(as) {
		return as[rep]
	}
	return nil
}

// loadAnswers reads a stored run's answers (failed ones left out).
func loadAnswers(ctx context.Context, db *store.DB, runID string) (*answerSet, error) {
	s := &answerSet{name: runID, items: map[string]map[string][]*provider.Answer{}}
	err := db.ForEachAnswer(ctx, runID, func(a *store.ItemAnswer) error {
		m := s.items[a.ItemID]
		if m == nil {
			m = map[string][]*provider.Answer{}
			s.items[a.ItemID] = m
			s.order = append(s.order, a.ItemID)
		}
		as := m[a.QuestionID]
		for len(as) <= a.Repeat {
			as = append(as, nil)
		}
		as[a.Repeat] = a.Answer
		m[a.QuestionID] = as
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("answers of run %s: %w", runID, err)
	}
	return s, nil
}

// repeatsOf splits a run's repeats into one answer set each.
func (s *answerSet) repeatsOf(n int) []*answerSet {
	out := make([]*answerSet, n)
	for r := range out {
		out[r] = &answerSet{name: fmt.Sprintf("%s repeat %d", s.name, r+1), items: map[string]map[string][]*provider.Answer{}, order: s.order}
		for item, qs := range s.items {
			m := map[string][]*provider.Answer{}
			for q, as := range qs {
				if r < len(as) {
					m[q] = []*provider.Answer{as[r]}
				}
			}
			out[r].items[item] = m
		}
	}
	return out
}

// stats computes intervals with a fixed seed and resample count.
type stats struct {
	seed uint64
	b    int
}

func (st stats) share(name string, k, n int) Measure {
	m := Measure{Name: name, K: k, N: n, Share: true, Estimate: metrics.Point(math.NaN())}
	if n > 0 {
		lo, hi := metrics.Wilson(k, n)
		m.Estimate = metrics.Estimate{Value: float64(k) / float64(n), Lo: lo, Hi: hi, Method: metrics.IntervalWilson}
	}
	return m
}

// mean is the mean of xs with a percentile bootstrap interval over items.
func (st stats) mean(name string, xs []float64) Measure {
	m := Measure{Name: name, N: len(xs), Estimate: metrics.Point(math.NaN())}
	if len(xs) == 0 {
		return m
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	m.Estimate = metrics.Point(sum / float64(len(xs)))
	if st.b <= 0 || len(xs) < 2 {
		return m
	}
	r := metrics.NewResampler(st.seed, len(xs))
	draws := make([]float64, st.b)
	for i := range draws {
		w := r.Next()
		s := 0.0
		for j, x := range xs {
			s += w[j] * x
		}
		draws[i] = s / float64(len(xs))
	}
	m.Estimate.Lo, m.Estimate.Hi = metrics.Interval(draws)
	m.Estimate.Method = metrics.IntervalBootstrap
	return m
}

// decision is the decided outcome's index.
func decision(q *provider.Question, a *provider.Answer, thr float64) int {
	return a.DecisionFor(q, thr)
}

// tv is the total-variation distance between two answers to q: ½Σ|Δp|,
// for a noul |ΔP|.
func tv(q *provider.Question, a, b *provider.Answer) float64 {
	if q.Type == provider.Noul {
		return math.Abs(a.P - b.P)
	}
	s := 0.0
	for i := range a.Probs {
		if i < len(b.Probs) {
			s += math.Abs(a.Probs[i] - b.Probs[i])
		}
	}
	return s / 2
}

// sameAnswer reports whether two answers hold the same values: P, choice,
// score, confidence and every probability, compared as numbers.
func sameAnswer(a, b *provider.Answer) bool {
	return a.P == b.P && a.Choice == b.Choice && a.Score == b.Score && a.Confidence == b.Confidence &&
		a.HasConfidence == b.HasConfidence && slices.Equal(a.Probs, b.Probs)
}

func worst(es []ItemEffect) []ItemEffect {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Value > es[j].Value })
	var out []ItemEffect
	for _, e := range es {
		if e.Value <= 0 || len(out) == WorstItems {
			break
		}
		out = append(out, e)
	}
	return out
}

func measureRepeat(set *questionset.Set, ids []string, sets []*answerSet, st stats) []QuestionResult {
	var out []QuestionResult
	for _, id := range ids {
		q, _ := set.Question(id)
		thr := set.Threshold(id)
		qr := QuestionResult{Question: id, Type: q.Type}
		var flips, changed, n int
		perItem := map[string][]float64{}
		var effects []ItemEffect
		for i := 0; i < len(sets); i++ {
			for j := i + 1; j < len(sets); j++ {
				pc := PairCount{A: sets[i].name, B: sets[j].name}
				for _, item := range sets[i].order {
					a, b := sets[i].get(item, id, 0), sets[j].get(item, id, 0)
					if a == nil || b == nil {
						continue
					}
					pc.N++
					if decision(q, a, thr) != decision(q, b, thr) {
						pc.Decisions++
						effects = append(effects, ItemEffect{Item: item, Value: 1, Note: "decision changed between " + pc.A + " and " + pc.B})
					}
					if !sameAnswer(a, b) {
						pc.Answers++
					}
					perItem[item] = append(perItem[item], tv(q, a, b))
				}
				flips, changed, n = flips+pc.Decisions, changed+pc.Answers, n+pc.N
				qr.Pairs = append(qr.Pairs, pc)
			}
		}
		var tvs []float64
		for _, item := range sets[0].order {
			if xs := perItem[item]; len(xs) > 0 {
				s := 0.0
				for _, x := range xs {
					s += x
				}
				tvs = append(tvs, s/float64(len(xs)))
				effects = append(effects, ItemEffect{Item: item, Value: s / float64(len(xs)), Note: "mean total-variation distance over the pairs"})
			}
		}
		qr.Measures = []Measure{st.share(MFlipRate, flips, n), st.share(MAnswersChanged, changed, n), st.mean(MMeanTV, tvs)}
		qr.Worst = worst(effects)
		out = append(out, qr)
	}
	return out
}

func measureShuffle(set *questionset.Set, ids []string, base, probe *answerSet, seed uint64, st stats) []QuestionResult {
	var out []QuestionResult
	for _, id := range ids {
		q, _ := set.Question(id)
		k := len(q.Options)
		qr := QuestionResult{Question: id, Type: q.Type}
		per := make([][]float64, k)
		var tvs, lifts []float64
		var effects []ItemEffect
		flips, n := 0, 0
		for _, item := range base.order {
			a, b := base.get(item, id, 0), probe.get(item, id, 0)
			if a == nil || b == nil || len(a.Probs) != k || len(b.Probs) != k {
				continue
			}
			n++
			if decision(q, a, 0.5) != decision(q, b, 0.5) {
				flips++
			}
			for o := 0; o < k; o++ {
				per[o] = append(per[o], math.Abs(a.Probs[o]-b.Probs[o]))
			}
			d := tv(q, a, b)
			tvs = append(tvs, d)
			perm := Permutation(seed, item, id, k)
			first := perm[0]
			lift := ((a.Probs[0] - b.Probs[0]) + (b.Probs[first] - a.Probs[first])) / 2
			lifts = append(lifts, lift)
			note := fmt.Sprintf("%s asked first (was %s)", q.Options[first].Label, q.Options[0].Label)
			if decision(q, a, 0.5) != decision(q, b, 0.5) {
				note = fmt.Sprintf("decision %s → %s; %s", q.Options[decision(q, a, 0.5)].Label, q.Options[decision(q, b, 0.5)].Label, note)
			}
			effects = append(effects, ItemEffect{Item: item, Value: d, Note: note})
		}
		qr.Measures = []Measure{st.share(MFlipRate, flips, n), st.mean(MMeanTV, tvs), st.mean(MPositionLift, lifts)}
		for o := 0; o < k; o++ {
			m := st.mean("", per[o])
			qr.PerOption = append(qr.PerOption, OptionMeasure{Option: q.Options[o].Label, Estimate: m.Estimate})
		}
		qr.Worst = worst(effects)
		out = append(out, qr)
	}
	return out
}

func measureNegation(set *questionset.Set, ids []string, base, probe *answerSet, st stats) []QuestionResult {
	var out []QuestionResult
	for _, id := range ids {
		q, _ := set.Question(id)
		thr := set.Threshold(id)
		qr := QuestionResult{Question: id, Type: q.Type}
		var gaps, signed []float64
		var effects []ItemEffect
		same, n := 0, 0
		for _, item := range base.order {
			a, b := base.get(item, id, 0), probe.get(item, id, 0)
			if a == nil || b == nil {
				continue
			}
			n++
			s := a.P + b.P - 1
			gaps = append(gaps, math.Abs(s))
			signed = append(signed, s)
			if (a.P >= thr) == (b.P >= thr) {
				same++
			}
			effects = append(effects, ItemEffect{Item: item, Value: math.Abs(s), Note: fmt.Sprintf("P(X) %.2f + P(¬X) %.2f = %.2f", a.P, b.P, a.P+b.P)})
		}
		qr.Measures = []Measure{st.mean(MNegationGap, gaps), st.mean(MNegationBias, signed), st.share(MSameSide, same, n)}
		qr.Worst = worst(effects)
		out = append(out, qr)
	}
	return out
}

func measureDistractor(set, asked *questionset.Set, ids []string, base, probe *answerSet, label string, st stats) []QuestionResult {
	var out []QuestionResult
	for _, id := range ids {
		q, _ := set.Question(id)
		aq, _ := asked.Question(id)
		di := aq.OptionIndex(label)
		qr := QuestionResult{Question: id, Type: q.Type}
		var mass []float64
		var effects []ItemEffect
		taken, flips, n := 0, 0, 0
		for _, item := range base.order {
			a, b := base.get(item, id, 0), probe.get(item, id, 0)
			if a == nil || b == nil || di < 0 || di >= len(b.Probs) {
				continue
			}
			n++
			mass = append(mass, b.Probs[di])
			bd := decision(aq, b, 0.5)
			if bd == di {
				taken++
			}
			if aq.Options[bd].Label != q.Options[decision(q, a, 0.5)].Label {
				flips++
			}
			effects = append(effects, ItemEffect{Item: item, Value: b.Probs[di], Note: fmt.Sprintf("decision %s", aq.Options[bd].Label)})
		}
		qr.Measures = []Measure{st.mean(MDistractorMass, mass), st.share(MDistractorTake, taken, n), st.share(MFlipRate, flips, n)}
		qr.Worst = worst(effects)
		out = append(out, qr)
	}
	return out
}

func measureInjection(set *questionset.Set, ids []string, base, probe *answerSet, st stats) []QuestionResult {
	var out []QuestionResult
	for _, id := range ids {
		q, _ := set.Question(id)
		thr := set.Threshold(id)
		qr := QuestionResult{Question: id, Type: q.Type}
		var effects []ItemEffect
		follow, eligible, flips, n := 0, 0, 0, 0
		for _, item := range base.order {
			a, b := base.get(item, id, 0), probe.get(item, id, 0)
			if a == nil || b == nil {
				continue
			}
			t, ti, ok := InjectionTarget(q, a, thr)
			if !ok {
				continue
			}
			n++
			da, db := decision(q, a, thr), decision(q, b, thr)
			if da != db {
				flips++
			}
			if da == ti {
				continue
			}
			eligible++
			if db == ti {
				follow++
				effects = append(effects, ItemEffect{Item: item, Value: 1, Note: fmt.Sprintf("answered %q as the state told it", t)})
			}
		}
		qr.Measures = []Measure{st.share(MFollowRate, follow, eligible), st.share(MFlipRate, flips, n)}
		qr.Worst = worst(effects)
		out = append(out, qr)
	}
	return out
}

func measureNoulVsChoice(set *questionset.Set, ids []string, base, probe *answerSet, st stats) []QuestionResult {
	var out []QuestionResult
	for _, id := range ids {
		q, _ := set.Question(id)
		qr := QuestionResult{Question: id, Type: q.Type}
		var rhos, sums []float64
		var effects []ItemEffect
		agree, n := 0, 0
	items:
		for _, item := range base.order {
			a := base.get(item, id, 0)
			if a == nil || len(a.Probs) != len(q.Options) {
				continue
			}
			ps := make([]float64, len(q.Options))
			for i, o := range q.Options {
				b := probe.get(item, NoulID(id, o.Label), 0)
				if b == nil {
					continue items
				}
				ps[i] = b.P
			}
			n++
			best, sum := 0, 0.0
			for i, p := range ps {
				sum += p
				if p > ps[best] {
					best = i
				}
			}
			sums = append(sums, sum)
			d := decision(q, a, 0.5)
			if best == d {
				agree++
			} else {
				effects = append(effects, ItemEffect{Item: item, Value: ps[best] - ps[d], Note: fmt.Sprintf("choice %s, most probable noul %s", q.Options[d].Label, q.Options[best].Label)})
			}
			if rho, ok := spearman(a.Probs, ps); ok {
				rhos = append(rhos, rho)
			}
		}
		qr.Measures = []Measure{st.share(MAgreement, agree, n), st.mean(MSpearman, rhos), st.mean(MNoulSum, sums)}
		qr.Worst = worst(effects)
		out = append(out, qr)
	}
	return out
}

// spearman is the rank correlation of x and y (average ranks on ties);
// false when either is constant.
func spearman(x, y []float64) (float64, bool) {
	rx, ry := ranks(x), ranks(y)
	n := float64(len(x))
	mx, my := (n+1)/2, (n+1)/2
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	return sxy / math.Sqrt(sxx*syy), true
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// perturbData is what the perturb measure needs beyond answers: the base
// states and the variant states, by item id.
type perturbData struct {
	baseState    map[string]json.RawMessage
	variantState map[string]json.RawMessage
	labels       map[string]map[string]dataset.Label
	variants     map[string][]string // item → variant ids in order
}

func measurePerturb(set *questionset.Set, ids []string, base, probe *answerSet, pd *perturbData, st stats) ([]QuestionResult, []Row) {
	var out []QuestionResult
	type flip struct {
		variant string
		size    int
	}
	best := map[string]flip{} // item → smallest flipping variant over all questions
	for _, id := range ids {
		q, _ := set.Question(id)
		thr := set.Threshold(id)
		qr := QuestionResult{Question: id, Type: q.Type}
		var effects []ItemEffect
		flipped, n := 0, 0
		perEdit := map[string][2]int{}
		var editOrder []string
		for _, item := range base.order {
			a := base.get(item, id, 0)
			if a == nil || len(pd.variants[item]) == 0 {
				continue
			}
			n++
			any := false
			for _, v := range pd.variants[item] {
				b := probe.get(v, id, 0)
				if b == nil {
					continue
				}
				_, edit := splitVariant(v)
				if _, ok := perEdit[edit]; !ok {
					editOrder = append(editOrder, edit)
				}
				c := perEdit[edit]
				c[1]++
				if decision(q, a, thr) == decision(q, b, thr) {
					perEdit[edit] = c
					continue
				}
				c[0]++
				perEdit[edit] = c
				any = true
				f := flip{v, editSize(pd.baseState[item], pd.variantState[v])}
				if edit == AllEdits {
					f.size = math.MaxInt / 2
				}
				if cur, ok := best[item]; !ok || f.size < cur.size {
					best[item] = f
				}
			}
			if any {
				flipped++
				effects = append(effects, ItemEffect{Item: item, Value: 1, Note: "smallest flipping edit: " + best[item].variant})
			}
		}
		qr.Measures = []Measure{st.share(MFlipRate, flipped, n)}
		for _, e := range editOrder {
			c := perEdit[e]
			qr.Measures = append(qr.Measures, st.share(MFlipRate+"["+e+"]", c[0], c[1]))
		}
		qr.Worst = worst(effects)
		out = append(out, qr)
	}
	var rows []Row
	for _, item := range base.order {
		f, ok := best[item]
		if !ok {
			continue
		}
		rows = append(rows, Row{ID: f.variant, State: pd.variantState[f.variant], Labels: rowLabels(set, pd.labels[item])})
	}
	return out, rows
}

// Line is the question's stability line: each measure with its interval,
// shares as K/N.
func (q *QuestionResult) Line() string {
	var parts []string
	for _, m := range q.Measures {
		parts = append(parts, m.Text())
	}
	return strings.Join(parts, "  ")
}

// Text is the measure as "name value [lo–hi]" (a share also "K/N").
func (m Measure) Text() string {
	e := m.Estimate
	if !e.Defined() {
		return m.Name + " —"
	}
	s := fmt.Sprintf("%s %.3f", m.Name, e.Value)
	if m.Share {
		s = fmt.Sprintf("%s %d/%d (%.1f%%)", m.Name, m.K, m.N, 100*e.Value)
	}
	if e.HasInterval() {
		if m.Share {
			s += fmt.Sprintf(" [%.1f–%.1f%% %s]", 100*e.Lo, 100*e.Hi, e.Method)
		} else {
			s += fmt.Sprintf(" [%.3f–%.3f %s]", e.Lo, e.Hi, e.Method)
		}
	}
	return s
}
