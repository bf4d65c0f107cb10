package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// StandardAgentsBoolean is the Standard Agents spec's name for a noul, as
// the "type" of its answers: {"type": "boolean", "probability": p}.
const StandardAgentsBoolean = "boolean"

// SumTolerance is how far a distribution's sum may stray from 1. Jev rounds
// every probability to two decimals, so real sums run from 0.99 to 1.00.
const SumTolerance = 0.02

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
	var scratch []wireProb
	// One backing array for every answer's probabilities.
	total := 0
	for i := range req.Questions {
		if t := req.Questions[i].Question.Type; t == Choice || t == Score {
			total += req.Questions[i].Question.Size()
		}
	}
	back := make([]float64, total)
	for i := range req.Questions {
		e := &req.Questions[i]
		raw, ok := resp.Answers[e.ID]
		if !ok {
			probs = append(probs, &QuestionError{ID: e.ID, Err: fmt.Errorf("no answer")})
			continue
		}
		if n := e.Question.Size(); cap(scratch) < n {
			scratch = make([]wireProb, 0, max(n, 32))
		}
		var dst []float64
		if t := e.Question.Type; t == Choice || t == Score {
			n := e.Question.Size()
			dst, back = back[:n:n], back[n:]
		}
		a, errs := checkOneScratch(e.ID, &e.Question, raw, scratch, dst)
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
	var scratch [16]wireProb
	return checkOneScratch(id, q, raw, scratch[:0], nil)
}

// checkOneScratch is checkOne reading probabilities into scratch and
// aligning them into dst (nil: a new slice).
func checkOneScratch(id string, q *Question, raw json.RawMessage, scratch []wireProb, dst []float64) (Answer, []error) {
	if q.Type == Box {
		return checkBox(id, q, raw)
	}
	w, ok := fastAnswer(raw, scratch)
	w.dst = dst
	var a Answer
	if ok {
		errs, again := checkWire(id, q, raw, &w, &a)
		if !again {
			return a, errs
		}
	}
	w, err := slowAnswer(raw)
	w.dst = dst
	if err != nil {
		return Answer{}, []error{&FieldError{Field: "answer", Msg: "not a JSON object of the answer shape: " + err.Error()}}
	}
	errs, _ := checkWire(id, q, raw, &w, &a)
	return a, errs
}

// checkWire checks one read answer into *a (left zero on any problem).
// again is true when the fast reading met
// something only encoding/json may decide (a repeated probabilities key).
func checkWire(id string, q *Question, raw json.RawMessage, w *wire, a *Answer) (errs []error, again bool) {
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	*a = Answer{ID: id, Type: q.Type, Raw: raw}
	// A Standard Agents provider answers a noul as {"type": "boolean",
	// "probability": p}: its System One equivalent, read as such (Raw keeps
	// it as sent). Choice and score answers share System One's shape, with
	// confidence optional.
	boolean := w.hasType && w.typ == StandardAgentsBoolean && q.Type == Noul
	if !w.hasType {
		bad("type", "missing")
	} else if QuestionType(w.typ) != q.Type && !boolean {
		bad("type", "is %q but the question is a %s", w.typ, q.Type)
		*a = Answer{}
		return errs, false
	}
	unit := func(field string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1 {
			bad(field, "%v is outside [0, 1]", v)
		}
	}
	// A noul has no confidence; one sent anyway is ignored and stays in Raw.
	if w.hasConf && q.Type != Noul {
		unit("confidence", w.confidence)
		a.Confidence, a.HasConfidence = w.confidence, true
	}
	switch q.Type {
	case Noul:
		if boolean {
			if !w.hasProbability {
				bad("probability", "missing (a Standard Agents boolean answer carries P(true) as \"probability\")")
				break
			}
			unit("probability", w.probability)
			a.P = w.probability
			break
		}
		if !w.hasNoul {
			bad("noul", "missing")
			break
		}
		unit("noul", w.noul)
		a.P = w.noul
	case Choice:
		if !w.hasChoice {
			bad("choice", "missing")
		} else if i := optionIndexBytes(q, w.choice); i < 0 {
			bad("choice", "%q is not an option that was asked", w.choice)
		} else {
			a.Choice = q.Options[i].Label
		}
		// Keys out of position are looked up linearly for short option
		// lists (faster up to about 48), else in an open-addressed table
		// built on first need.
		var tab *labelTable
		index := func(k []byte) int {
			if len(q.Options) <= 48 || len(q.Options) > 255 {
				return q.labelIndex(k)
			}
			if tab == nil {
				tab = newLabelTable(q)
			}
			return tab.find(q, k)
		}
		var dup bool
		before := len(errs)
		a.Probs, dup = distribution(w, len(q.Options), index, func(i int) string { return q.Options[i].Label }, bad)
		if dup {
			*a = Answer{}
			return nil, true
		}
		if len(errs) == before && a.Choice != "" {
			checkArgmax(q, a, bad)
		}
	case Score:
		n := len(q.Levels)
		if !w.hasScore {
			bad("score", "missing")
		} else if s := w.score; math.IsNaN(s) || math.IsInf(s, 0) || s < 0 || s > float64(n-1) {
			bad("score", "%v is outside [0, %d]", s, n-1)
		} else {
			a.Score = s
		}
		var dup bool
		before := len(errs)
		a.Probs, dup = distribution(w, n, func(k []byte) int { return levelIndex(k, n) }, strconv.Itoa, bad)
		if dup {
			*a = Answer{}
			return nil, true
		}
		if len(errs) == before && w.hasScore {
			checkScoreMean(a.Score, a.Probs, bad)
		}
		if w.legend != nil {
			checkLegend(q, w.legend, bad)
		}
	}
	if len(errs) > 0 {
		*a = Answer{}
		return errs, false
	}
	return nil, false
}

// RoundingStep is the precision Jev rounds every probability to (two
// decimals). A reported value may be up to half a step from the value it
// was computed from, so two rounded values may differ by up to one step
// from the order of their unrounded ones.
const RoundingStep = 0.01

// roundingEps absorbs float64 error in the sums of rounded values
// (0.34-0.33 is 0.010000000000000009).
const roundingEps = 1e-6

// checkArgmax refuses a choice that is not the most probable option within
// rounding: its probability may trail the largest by at most RoundingStep
// (real recordings have such near-ties, e.g. 0.33 chosen over 0.34).
func checkArgmax(q *Question, a *Answer, bad func(string, string, ...any)) {
	ci := q.OptionIndex(a.Choice)
	if ci < 0 || ci >= len(a.Probs) {
		return
	}
	bi := 0
	for i, p := range a.Probs {
		if p > a.Probs[bi] {
			bi = i
		}
	}
	if a.Probs[bi]-a.Probs[ci] > RoundingStep+roundingEps {
		bad("choice", "%q has probability %v but %q has %v; the choice must be the most probable option (within the %.2f rounding of the probabilities)",
			a.Choice, a.Probs[ci], q.Options[bi].Label, a.Probs[bi], RoundingStep)
	}
}

// ScoreMeanRange is the range the probability-weighted mean level
// Σ i·p_i can take when each of probs is a value rounded to RoundingStep:
// every unrounded p_i lies within half a step of probs[i] and in [0, 1],
// and the unrounded values sum to 1. The bounds solve that linear program
// exactly (greedily: move the allowed mass to the highest levels for the
// upper bound, to the lowest for the lower); when no unrounded values can
// sum to 1 (a sum off by more than half a step per level) the missing mass
// is allowed at the extreme level.
func ScoreMeanRange(probs []float64) (lo, hi float64) {
	const h = RoundingStep / 2
	n := len(probs)
	if n == 0 {
		return 0, 0
	}
	base, sum := 0.0, 0.0
	minE := make([]float64, n)
	room := make([]float64, n)
	minSum := 0.0
	for i, p := range probs {
		base += float64(i) * p
		sum += p
		l, u := math.Max(-h, -p), math.Min(h, 1-p)
		if u < l {
			u = l
		}
		minE[i], room[i] = l, u-l
		minSum += l
	}
	// Σ e_i must equal d = 1 - Σ p_i; start every e_i at its lowest.
	need := (1 - sum) - minSum
	spread := func(order func(k int) int) float64 {
		rest, v := need, 0.0
		for k := 0; k < n; k++ {
			i := order(k)
			v += float64(i) * minE[i]
			if rest > 0 {
				add := math.Min(rest, room[i])
				v += float64(i) * add
				rest -= add
			}
		}
		// Mass no level can take (or too much taken already) goes to the
		// extreme that widens the range.
		if rest > 0 {
			v += float64(order(0)) * rest
		} else if need < 0 {
			v += float64(order(n-1)) * need
		}
		return v
	}
	hi = base + spread(func(k int) int { return n - 1 - k })
	lo = base + spread(func(k int) int { return k })
	return lo, hi
}

// checkScoreMean refuses a score that is not the probability-weighted mean
// of its own distribution: it must lie in ScoreMeanRange(probs), widened by
// half a step for the rounding of the score itself. (Jev computes the score
// from the unrounded probabilities: 3.99 with a rounded {"4": 1.0} is
// consistent, 3.0 is not.)
func checkScoreMean(score float64, probs []float64, bad func(string, string, ...any)) {
	lo, hi := ScoreMeanRange(probs)
	const slack = RoundingStep/2 + roundingEps
	if score < lo-slack || score > hi+slack {
		bad("score", "%v is not the probability-weighted mean of its probabilities (which allow %.3f to %.3f after rounding)", score, lo, hi)
	}
}

// checkLegend refuses a score legend that does not map "0".."n-1" to the
// levels asked. Values are compared as JSON values (a server may re-encode
// the criteria it echoes: escapes, key order and number spelling may
// differ, the value may not).
func checkLegend(q *Question, legend []byte, bad func(string, string, ...any)) {
	n := len(q.Levels)
	fields, err := objectFields(legend)
	if err != nil {
		bad("legend", "must be an object mapping each level index to its criterion: %v", err)
		return
	}
	seen := make([]bool, n)
	for _, f := range fields {
		i := levelIndex([]byte(f.Key), n)
		if i < 0 {
			bad("legend", "has %q, which is not a level that was asked (0 to %d)", f.Key, n-1)
			continue
		}
		seen[i] = true
		if !sameJSONValue(f.Value, q.Levels[i]) {
			bad("legend."+f.Key, "does not match level %d as asked", i)
		}
	}
	for i, ok := range seen {
		if !ok {
			bad("legend", "has no entry for level %d", i)
		}
	}
}

// sameJSONValue reports whether a and b are the same JSON value; nil
// (absent) counts as null.
func sameJSONValue(a, b []byte) bool {
	if b == nil {
		b = []byte("null")
	}
	if ca := compact(a); bytes.Equal(ca, compact(b)) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func optionIndexBytes(q *Question, label []byte) int {
	for i := range q.Options {
		if q.Options[i].Label == string(label) {
			return i
		}
	}
	return -1
}

// labelIndex returns the index of the option labelled k, or -1.
func (q *Question) labelIndex(k []byte) int {
	if len(k) == 0 {
		for i := range q.Options {
			if q.Options[i].Label == "" {
				return i
			}
		}
		return -1
	}
	for i := range q.Options {
		// Length and first byte first: most labels differ there.
		if l := q.Options[i].Label; len(l) == len(k) && l[0] == k[0] && l == string(k) {
			return i
		}
	}
	return -1
}

// levelIndex reads a score probabilities key: the level index in canonical
// decimal ("0", "1", …), or -1.
func levelIndex(k []byte, n int) int {
	if len(k) == 0 || len(k) > 2 || (len(k) > 1 && k[0] == '0') {
		return -1
	}
	v := 0
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return -1
		}
		v = v*10 + int(k[i]-'0')
	}
	if v >= n {
		return -1
	}
	return v
}

// distribution aligns the probabilities to n outcomes, index(k) giving the
// outcome of key k and name(i) the key of outcome i, checking coverage,
// range and sum. dup is true when a key repeats (only the fast reading can
// see that; encoding/json keeps the last).
func distribution(w *wire, n int, index func([]byte) int, name func(int) string, bad func(string, string, ...any)) (out []float64, dup bool) {
	if !w.hasProbs {
		bad("probabilities", "missing")
		return nil, false
	}
	out = w.dst
	if len(out) != n {
		out = make([]float64, n)
	}
	clear(out)
	var seenSmall [16]bool
	seen := seenSmall[:0]
	if n <= len(seenSmall) {
		seen = seenSmall[:n]
	} else {
		seen = make([]bool, n)
	}
	ok := true
	for j, e := range w.probs {
		key := w.keys[e.ks:e.ke]
		// Jev sends keys in any order; try the entry's own position first.
		i := -1
		if j < n && name(j) == string(key) {
			i = j
		} else {
			i = index(key)
		}
		if i < 0 {
			bad("probabilities", "has %q, which was not asked", key)
			ok = false
			continue
		}
		if seen[i] {
			return nil, true
		}
		seen[i] = true
		switch {
		case e.null:
			bad("probabilities."+string(key), "is null")
			ok = false
		case math.IsNaN(e.p) || math.IsInf(e.p, 0) || e.p < 0 || e.p > 1:
			bad("probabilities."+string(key), "%v is outside [0, 1]", e.p)
			ok = false
		default:
			out[i] = e.p
		}
	}
	for i := 0; i < n; i++ {
		if !seen[i] {
			bad("probabilities", "no probability for %q", name(i))
			ok = false
		}
	}
	if ok {
		sum := 0.0
		for _, p := range out {
			sum += p
		}
		if math.Abs(sum-1) > SumTolerance+1e-9 {
			bad("probabilities", "sum to %.4f; expected 1 within %.2f", sum, SumTolerance)
		}
	}
	return out, false
}

// labelTable finds an option by label: open addressing over a cheap hash of
// the label's length and a few of its bytes, sized for at most 255 options.
type labelTable struct {
	mask  uint32
	slots [512]uint8 // option index + 1; 0 is empty
}

func labelHash(b string) uint32 {
	n := len(b)
	h := uint32(n) * 0x9e3779b1
	if n > 0 {
		h ^= uint32(b[0])*0x85ebca6b ^ uint32(b[n-1])*0xc2b2ae35 ^ uint32(b[n/2])*0x27d4eb2f
		if n > 2 {
			h ^= uint32(b[n-2]) * 0x165667b1
		}
	}
	return h ^ h>>15
}

func newLabelTable(q *Question) *labelTable {
	t := &labelTable{mask: 511}
	for size := uint32(32); size < 512; size *= 2 {
		if int(size) >= 2*len(q.Options) {
			t.mask = size - 1
			break
		}
	}
	for i := range q.Options {
		h := labelHash(q.Options[i].Label) & t.mask
		for t.slots[h] != 0 {
			h = (h + 1) & t.mask
		}
		if i < 255 {
			t.slots[h] = uint8(i + 1)
		}
	}
	return t
}

// find returns the first option labelled k, or -1.
func (t *labelTable) find(q *Question, k []byte) int {
	h := labelHash(string(k)) & t.mask
	best := -1
	for t.slots[h] != 0 {
		i := int(t.slots[h]) - 1
		if q.Options[i].Label == string(k) && (best < 0 || i < best) {
			best = i
		}
		h = (h + 1) & t.mask
	}
	return best
}
