package compare

import (
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// Variant is one variant asked beside its question in a run: the wire
// question it asked and the derived id its answers are stored under.
type Variant struct {
	// Question is the base question's id, Name the variant's name and ID
	// the derived id (queue~v2).
	Question, Name, ID string
	// Asked is the variant's wire question; Threshold its noul threshold.
	Asked     provider.Question
	Threshold float64
}

// VariantComparison is one variant paired with its base question on the
// same items of one run: exactly the comparison of two runs, A asking the
// question and B asking the variant in its place, except that Holm's
// correction runs across the variants of the question rather than across
// questions.
type VariantComparison struct {
	Question string `json:"question"`
	Variant  string `json:"variant"`
	ID       string `json:"id"`
	// Comparison is the paired comparison, B = the variant; its ID is
	// the base question's id.
	Comparison QuestionComparison `json:"comparison"`
}

// CompareVariants pairs each variant with its base question within run
// (whose Obs hold the variants' answers under their derived ids). Each is
// compared as Compare compares two runs — same seed per question position,
// so the figures equal `jevlab compare` of a run of the question and a run
// of the promoted variant over the same items — then McNemar and the Brier
// test are Holm-corrected across the variants of each question and the
// verdicts set.
func CompareVariants(run RunData, vs []Variant, opt Options) []VariantComparison {
	out, _ := CompareVariantsLoaded(run, vs, opt) // in-memory RunData: no load to fail
	return out
}

// CompareVariantsLoaded is CompareVariants for a run whose observations
// are read on demand (RunData.Load): two questions at a time.
func CompareVariantsLoaded(run RunData, vs []Variant, opt Options) ([]VariantComparison, error) {
	opt = opt.withDefaults()
	var out []VariantComparison
	for _, v := range vs {
		if _, ok := run.Questions.Get(v.Question); !ok {
			continue
		}
		base, err := run.QuestionObs(v.Question)
		if err != nil {
			return nil, err
		}
		asked, err := run.QuestionObs(v.ID)
		if err != nil {
			return nil, err
		}
		a := RunData{ID: run.ID, Name: run.Name, Model: run.Model, Questions: run.Questions,
			Obs: map[string][]metrics.Obs{v.Question: base}, Thresholds: map[string]float64{v.Question: run.threshold(v.Question)}}
		qs := make(provider.Questions, len(run.Questions))
		copy(qs, run.Questions)
		for i := range qs {
			if qs[i].ID == v.Question {
				qs[i].Question = v.Asked
			}
		}
		th := v.Threshold
		if th <= 0 {
			th = run.threshold(v.Question)
		}
		b := RunData{ID: run.ID, Name: run.Name, Model: run.Model, Questions: qs,
			Obs: map[string][]metrics.Obs{v.Question: asked}, Thresholds: map[string]float64{v.Question: th}}
		c := Compare(a, b, opt)
		for _, qc := range c.Questions {
			if qc.ID == v.Question {
				out = append(out, VariantComparison{Question: v.Question, Variant: v.Name, ID: v.ID, Comparison: qc})
			}
		}
	}
	// Holm across the variants of each question.
	byQ := map[string][]int{}
	var order []string
	for i := range out {
		q := out[i].Question
		if _, ok := byQ[q]; !ok {
			order = append(order, q)
		}
		byQ[q] = append(byQ[q], i)
	}
	for _, q := range order {
		var idx []int
		var pm, pb []float64
		for _, i := range byQ[q] {
			qc := &out[i].Comparison
			if qc.Reason != "" && qc.Verdict == NotComparable {
				continue
			}
			qc.Reason, qc.Verdict, qc.Why = "", "", ""
			if qc.PairedLabelled == 0 {
				qc.McNemar.PHolm, qc.BrierPHolm = qc.McNemar.P, qc.BrierP
			} else {
				idx = append(idx, i)
				pm = append(pm, qc.McNemar.P)
				pb = append(pb, qc.BrierP)
			}
		}
		hm, hb := Holm(pm), Holm(pb)
		for k, i := range idx {
			out[i].Comparison.McNemar.PHolm = hm[k]
			out[i].Comparison.BrierPHolm = hb[k]
		}
		for _, i := range byQ[q] {
			if out[i].Comparison.Verdict == "" {
				verdict(&out[i].Comparison, opt)
			}
		}
	}
	return out, nil
}
