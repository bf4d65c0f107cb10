package provider

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// SumTolerance is how far a distribution's sum may stray from 1. Jev rounds
// every probability to two decimals, so real sums run from 0.99 to 1.00.
const SumTolerance = 0.02

// wireAnswer is the union of the answer shapes; pointers tell absent from zero.
type wireAnswer struct {
	Type          *string             `json:"type"`
	Noul          *float64            `json:"noul"`
	Choice        *string             `json:"choice"`
	Score         *float64            `json:"score"`
	Confidence    *float64            `json:"confidence"`
	Probabilities map[string]*float64 `json:"probabilities"`
	Legend        json.RawMessage     `json:"legend"`
}

// Check reads resp against the questions of req and returns one Answer per
// question, in request order. Every rule of the contract is checked: one
// answer per question of the question's type, distributions covering exactly
// the options or levels asked, every value finite and in range, sums within
// SumTolerance. Answers for ids not asked are dropped; unknown fields are kept
// in Answer.Raw. Nothing is renormalised, rounded or thresholded. Any
// violation yields a *CheckError and no answers.
func Check(req *Request, resp *Response) ([]Answer, error) {
	var probs []error
	out := make([]Answer, 0, len(req.Questions))
	for i := range req.Questions {
		e := &req.Questions[i]
		raw, ok := resp.Answers[e.ID]
		if !ok {
			probs = append(probs, &QuestionError{ID: e.ID, Err: fmt.Errorf("no answer")})
			continue
		}
		a, errs := checkOne(e.ID, &e.Question, raw)
		if len(errs) > 0 {
			for _, err := range errs {
				probs = append(probs, &QuestionError{ID: e.ID, Err: err})
			}
			continue
		}
		a.Provenance.Model = resp.Model
		out = append(out, a)
	}
	if len(probs) > 0 {
		return nil, &CheckError{Problems: probs}
	}
	return out, nil
}

// CheckAnswer checks one raw answer object against q.
func CheckAnswer(id string, q *Question, raw json.RawMessage) (Answer, error) {
	a, errs := checkOne(id, q, raw)
	if len(errs) > 0 {
		probs := make([]error, len(errs))
		for i, err := range errs {
			probs[i] = &QuestionError{ID: id, Err: err}
		}
		return Answer{}, &CheckError{Problems: probs}
	}
	return a, nil
}

func checkOne(id string, q *Question, raw json.RawMessage) (Answer, []error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	var w wireAnswer
	if err := json.Unmarshal(raw, &w); err != nil {
		bad("answer", "not a JSON object of the answer shape: %v", err)
		return Answer{}, errs
	}
	a := Answer{ID: id, Type: q.Type, Raw: raw}
	if w.Type == nil {
		bad("type", "missing")
	} else if QuestionType(*w.Type) != q.Type {
		bad("type", "is %q but the question is a %s", *w.Type, q.Type)
		return Answer{}, errs
	}
	unit := func(field string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1 {
			bad(field, "%v is outside [0, 1]", v)
		}
	}
	// A noul has no confidence; one sent anyway is ignored and stays in Raw.
	if w.Confidence != nil && q.Type != Noul {
		unit("confidence", *w.Confidence)
		a.Confidence, a.HasConfidence = *w.Confidence, true
	}
	switch q.Type {
	case Noul:
		if w.Noul == nil {
			bad("noul", "missing")
			break
		}
		unit("noul", *w.Noul)
		a.P = *w.Noul
	case Choice:
		if w.Choice == nil {
			bad("choice", "missing")
		} else if q.OptionIndex(*w.Choice) < 0 {
			bad("choice", "%q is not an option that was asked", *w.Choice)
		} else {
			a.Choice = *w.Choice
		}
		a.Probs = distribution(w.Probabilities, len(q.Options), func(i int) string { return q.Options[i].Label }, bad)
	case Score:
		n := len(q.Levels)
		if w.Score == nil {
			bad("score", "missing")
		} else if s := *w.Score; math.IsNaN(s) || math.IsInf(s, 0) || s < 0 || s > float64(n-1) {
			bad("score", "%v is outside [0, %d]", s, n-1)
		} else {
			a.Score = s
		}
		a.Probs = distribution(w.Probabilities, n, strconv.Itoa, bad)
	}
	if len(errs) > 0 {
		return Answer{}, errs
	}
	return a, nil
}

// distribution aligns a probability map to n keys named by key(i), checking
// coverage, range and sum.
func distribution(m map[string]*float64, n int, key func(int) string, bad func(string, string, ...any)) []float64 {
	if m == nil {
		bad("probabilities", "missing")
		return nil
	}
	out := make([]float64, n)
	sum, ok := 0.0, true
	for i := 0; i < n; i++ {
		k := key(i)
		p, present := m[k]
		switch {
		case !present:
			bad("probabilities", "no probability for %q", k)
			ok = false
		case p == nil:
			bad("probabilities."+k, "is null")
			ok = false
		case math.IsNaN(*p) || math.IsInf(*p, 0) || *p < 0 || *p > 1:
			bad("probabilities."+k, "%v is outside [0, 1]", *p)
			ok = false
		default:
			out[i] = *p
			sum += *p
		}
	}
	if len(m) > n {
		for k := range m {
			if !hasKey(k, n, key) {
				bad("probabilities", "has %q, which was not asked", k)
				ok = false
			}
		}
	}
	if ok && math.Abs(sum-1) > SumTolerance+1e-9 {
		bad("probabilities", "sum to %.4f; expected 1 within %.2f", sum, SumTolerance)
	}
	return out
}

func hasKey(k string, n int, key func(int) string) bool {
	for i := 0; i < n; i++ {
		if key(i) == k {
			return true
		}
	}
	return false
}
