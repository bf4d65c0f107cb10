package workbench

import (
	"fmt"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// VariantRef names one variant of one question (questionset.VariantRef).
type VariantRef = questionset.VariantRef

// VariantComparison is a variant paired with its question on the same
// items of one run (compare.VariantComparison).
type VariantComparison = compare.VariantComparison

// compareVariants pairs each of a run's variants with its question, with
// the seed and resamples of the run's metrics, so a run's report and
// `jevlab compare` of two separate runs (base, promoted variant) agree.
func compareVariants(data compare.RunData, set *questionset.Set, refs []VariantRef, opt metrics.Options) ([]VariantComparison, error) {
	var vs []compare.Variant
	for _, r := range refs {
		q, ok := set.VariantQuestion(r)
		if !ok {
			continue
		}
		vs = append(vs, compare.Variant{Question: r.Question, Name: r.Name, ID: r.ID(), Asked: q, Threshold: set.Threshold(r.ID())})
	}
	co := DefaultCompareOptions()
	co.Seed, co.Bootstrap, co.Metrics = opt.Seed, opt.Bootstrap, opt
	return compare.CompareVariantsLoaded(data, vs, co)
}

// VariantPair is one variant of a run view beside its question: the wire
// question it asked and its paired comparison.
type VariantPair struct {
	Ref        VariantRef
	Asked      provider.Question
	Threshold  float64
	Comparison *VariantComparison
}

// VariantPairs lists the variant pairs of a run view in the order the run
// asked them (what the evaluate screen's variants table draws).
func (v *RunView) VariantPairs() []VariantPair {
	var out []VariantPair
	for _, r := range v.Variants {
		q, ok := v.Set.VariantQuestion(r)
		if !ok {
			continue
		}
		p := VariantPair{Ref: r, Asked: q, Threshold: v.Set.Threshold(r.ID())}
		for i := range v.Report.Variants {
			if v.Report.Variants[i].ID == r.ID() {
				p.Comparison = &v.Report.Variants[i]
			}
		}
		out = append(out, p)
	}
	return out
}

// VariantAnswer returns item's first answer to variant r laid out for
// drawing beside its question's, with its label marked.
func (v *RunView) VariantAnswer(item string, r VariantRef) (AnswerView, *ItemResult) {
	res := v.Items[item][r.ID()]
	q, ok := v.Set.VariantQuestion(r)
	if !ok {
		return AnswerView{}, res
	}
	o := ViewOptions{Threshold: v.Set.Threshold(r.ID()), True: -1}
	var a *provider.Answer
	if res != nil {
		a, o.True = res.Answer, res.Label
	}
	return View(&q, a, o), res
}

// PromoteVariant makes question q's variant name the question in the
// session's set: the old wording becomes a variant (named "prev", "prev2",
// … unless keepAs names it), so nothing is lost, and every other variant
// keeps asking what it asked. It returns the old wording's variant name.
// The set is changed in memory; saving it is the caller's.
func (s *Session) PromoteVariant(q, name, keepAs string) (string, error) {
	kept, err := s.Set.PromoteVariant(q, name, keepAs)
	if err != nil {
		return "", fmt.Errorf("promote %s: %w", questionset.VariantID(q, name), err)
	}
	return kept, nil
}

// VariantsToAsk returns the variants a run of the session asks: every
// variant of the set when all is true, else none.
func (s *Session) VariantsToAsk(all bool) []VariantRef {
	if !all {
		return nil
	}
	return s.Set.AllVariants()
}
