package workbench

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// Label is an item's gold label for one question (dataset.Label).
type Label = dataset.Label

// ItemAnswer is one item's answer to one question (or variant) as a
// screen holds it: the answer and the question as it was asked (nil: the
// set's question as it is now).
type ItemAnswer struct {
	Answer *provider.Answer
	Asked  *provider.Question
}

// AnswerLookup returns item's answer to question (or variant) id; ok is
// false when there is none.
type AnswerLookup func(item, id string) (ItemAnswer, bool)

// ItemOrder is an order of the dataset screen's items.
type ItemOrder int

// The dataset screen's orders, cycled with one key.
const (
	// OrderFile is the dataset's own order.
	OrderFile ItemOrder = iota
	// OrderConfidentWrong puts first the items whose wrong decision had
	// the highest top prob (the largest over the item's questions); items
	// with no wrong decision follow in file order.
	OrderConfidentWrong
	// OrderMargin puts first the items with the smallest margin between
	// the top two outcomes (the smallest over the item's questions).
	OrderMargin
	// OrderDisagreement puts first the items whose base and variant
	// answers differ most (the largest total-variation distance over the
	// item's variants).
	OrderDisagreement
	// NItemOrders counts the orders.
	NItemOrders
)

// String names the order as the dataset screen shows it.
func (o ItemOrder) String() string {
	switch o {
	case OrderConfidentWrong:
		return "most confident wrong"
	case OrderMargin:
		return "smallest top-two margin"
	case OrderDisagreement:
		return "base vs variants"
	}
	return "file order"
}

// ItemSortValue is the value item it is ordered by under o, oriented so
// that larger comes first (a margin is negated); NaN when the item has
// nothing to rank by (no wrong decision, no answer, no variant answer).
func ItemSortValue(set *questionset.Set, it *Item, look AnswerLookup, o ItemOrder) float64 {
	best := math.NaN()
	take := func(x float64) {
		if math.IsNaN(best) || x > best {
			best = x
		}
	}
	switch o {
	case OrderConfidentWrong:
		for _, e := range set.Questions {
			l, ok := it.Labels[e.ID]
			if !ok || l.Index < 0 {
				continue
			}
			av, ok := itemView(set, &e.Question, e.ID, it.ID, look, l.Index)
			if ok && av.LabelKnown && av.DecisionIndex >= 0 && !av.Right {
				take(av.TopProb)
			}
		}
	case OrderMargin:
		for _, e := range set.Questions {
			a, ok := look(it.ID, e.ID)
			if !ok || a.Answer == nil {
				continue
			}
			q := a.Asked
			if q == nil {
				q = &e.Question
			}
			if d := distribution(q, a.Answer); len(d) >= 2 {
				m, _ := marginEntropy(d)
				take(-m)
			}
		}
	case OrderDisagreement:
		for _, r := range set.AllVariants() {
			a, ok1 := look(it.ID, r.Question)
			b, ok2 := look(it.ID, r.ID())
			if !ok1 || !ok2 || a.Answer == nil || b.Answer == nil || !sameShape(a.Answer, b.Answer) {
				continue
			}
			if tv := metrics.TV(a.Answer, b.Answer); !math.IsNaN(tv) {
				take(tv)
			}
		}
	}
	return best
}

// OrderItems returns the indices of items in order o: by ItemSortValue,
// largest first, ties and unrankable items (last) in file order.
func OrderItems(set *questionset.Set, items []Item, look AnswerLookup, o ItemOrder) []int {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	if o == OrderFile {
		return idx
	}
	val := make([]float64, len(items))
	for i := range items {
		val[i] = ItemSortValue(set, &items[i], look, o)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		va, vb := val[idx[a]], val[idx[b]]
		switch {
		case math.IsNaN(va):
			return false
		case math.IsNaN(vb):
			return true
		}
		return va > vb
	})
	return idx
}

func itemView(set *questionset.Set, q *provider.Question, id, item string, look AnswerLookup, label int) (AnswerView, bool) {
	a, ok := look(item, id)
	if !ok || a.Answer == nil {
		return AnswerView{}, false
	}
	return View(q, a.Answer, ViewOptions{Threshold: set.Threshold(id), True: label, Asked: a.Asked}), true
}

// ItemAccuracy is each question's accuracy over items (labels resolved
// against set, e.g. by Session.Labelled) and their answers: the items
// with a label and a decided answer are counted, as a run's report
// counts them. Accuracy is NaN when nothing is counted.
func ItemAccuracy(set *questionset.Set, items []Item, look AnswerLookup) []QuestionHeadline {
	out := make([]QuestionHeadline, 0, len(set.Questions))
	for _, e := range set.Questions {
		h := QuestionHeadline{ID: e.ID, Accuracy: math.NaN()}
		right := 0
		for i := range items {
			l, ok := items[i].Labels[e.ID]
			if !ok || l.Index < 0 {
				continue
			}
			av, ok := itemView(set, &e.Question, e.ID, items[i].ID, look, l.Index)
			if !ok || av.DecisionIndex < 0 {
				continue
			}
			h.Labelled++
			if av.Right {
				right++
			}
		}
		if h.Labelled > 0 {
			h.Accuracy = float64(right) / float64(h.Labelled)
		}
		out = append(out, h)
	}
	return out
}

// LabelChoice is one value a label prompt offers: the text shown and the
// JSON value Session.SetLabel writes.
type LabelChoice struct {
	Text  string
	Value json.RawMessage
}

// LabelChoices lists the labels question q can take, in its order: a
// choice's options, a score's levels, a noul's false and true. A score
// level is written as its index when byIndex (the item's label was
// written so), else as its text.
func LabelChoices(q *provider.Question, byIndex bool) []LabelChoice {
	var out []LabelChoice
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	switch q.Type {
	case provider.Noul:
		return []LabelChoice{{"false", json.RawMessage("false")}, {"true", json.RawMessage("true")}}
	case provider.Score:
		for i := 0; i < q.Size(); i++ {
			text := dataset.LevelText(q.Levels[i])
			v := str(text)
			if byIndex {
				v = json.RawMessage(strconv.Itoa(i))
			}
			out = append(out, LabelChoice{Text: strconv.Itoa(i) + " " + text, Value: v})
		}
	default:
		for i := range q.Options {
			l := q.Options[i].Label
			out = append(out, LabelChoice{Text: l, Value: str(l)})
		}
	}
	return out
}
