package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Fast paths for reading responses and answers. Like fastjson.go they only
// ever accept: input they do not fully understand (escapes in keys or
// values, duplicate fields, a field name that differs from a known one only
// in case, numbers out of range, invalid JSON) is handed to encoding/json,
// which then decides. So a bug here costs speed, never changes what is
// accepted; FuzzCheck compares both paths.

// DecodeResponse reads a /v1/systemone response body. It gives the same
// result as json.Unmarshal into a Response, faster; the raw answers alias
// data, which must not be modified afterwards.
func DecodeResponse(data []byte) (*Response, error) {
	if r, ok := fastResponse(data); ok {
		return r, nil
	}
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// foldsTo reports whether key matches one of names case-insensitively
// (encoding/json's rule for struct fields; the slow path must then decide).
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

// plainString returns the value of the JSON string at data[i] when it needs
// no unescaping, and the index past it; ok is false otherwise.
func plainString(data []byte, i int) (s []byte, end int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, -1, false
	}
	end, plain := scanString(data, i)
	if end < 0 {
		return nil, -1, false
	}
	s = data[i+1 : end-1]
	if !plain && (bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s)) {
		return nil, -1, false
	}
	return s, end, true
}

// numberEnd is scanNumber guarded against running off the end and against
// a value that is not a number.
func numberEnd(data []byte, i int) int {
	if i >= len(data) || !(data[i] == '-' || '0' <= data[i] && data[i] <= '9') {
		return -1
	}
	return scanNumber(data, i)
}

func isNullAt(data []byte, i int) bool {
	return len(data)-i >= 4 && string(data[i:i+4]) == "null"
}

// number reads the JSON number at data[i] as encoding/json would into a
// float64.
func number(data []byte, i int) (v float64, end int, ok bool) {
	end = numberEnd(data, i)
	if end < 0 {
		return 0, -1, false
	}
	if v, ok := shortDecimal(data[i:end]); ok {
		return v, end, true
	}
	v, err := strconv.ParseFloat(string(data[i:end]), 64)
	if err != nil {
		return 0, -1, false
	}
	return v, end, true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// shortDecimal parses a number of the form -?d+(.d+)? with at most 15
// digits and no exponent, the shape Jev sends (0.07, 1.0). m and 10^k are
// exact in a float64, so the one division m/10^k is correctly rounded: the
// same result as strconv.ParseFloat (whose "exact" path does the same).
func shortDecimal(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	var m uint64
	digits, frac, dot := 0, 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	v := float64(m) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}

// objectLoop walks the object at data[i], calling field for each key with
// the index of its value; field returns the index past the value or -1.
func objectLoop(data []byte, i int, field func(key []byte, at int) int) (end int, ok bool) {
	i = skipWS(data, i)
	if i >= len(data) || data[i] != '{' {
		return -1, false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		key, kend, ok := plainString(data, i)
		if !ok {
			return -1, false
		}
		i = skipWS(data, kend)
		if i >= len(data) || data[i] != ':' {
			return -1, false
		}
		i = field(key, skipWS(data, i+1))
		if i < 0 {
			return -1, false
		}
		i = skipWS(data, i)
		if i >= len(data) {
			return -1, false
		}
		switch data[i] {
		case '}':
			return i + 1, true
		case ',':
			i = skipWS(data, i+1)
		default:
			return -1, false
		}
	}
}

func fastResponse(data []byte) (*Response, bool) {
	r := &Response{}
	var seenModel, seenAnswers, seenUsage bool
	end, ok := objectLoop(data, 0, func(key []byte, at int) int {
		switch string(key) {
		case "model":
			if seenModel {
				return -1
			}
			seenModel = true
			if isNullAt(data, at) {
				return at + 4
			}
			s, end, ok := plainString(data, at)
			if !ok {
				return -1
			}
			r.Model = string(s)
			return end
		case "answers":
			if seenAnswers {
				return -1
			}
			seenAnswers = true
			if isNullAt(data, at) {
				return at + 4
			}
			r.Answers = make(map[string]json.RawMessage, 8)
			end, ok := objectLoop(data, at, func(key []byte, at int) int {
				vend := scanValue(data, at, 0)
				if vend < 0 {
					return -1
				}
				if _, dup := r.Answers[string(key)]; dup {
					return -1
				}
				r.Answers[string(key)] = json.RawMessage(data[at:vend:vend])
				return vend
			})
			if !ok {
				return -1
			}
			return end
		case "usage":
			if seenUsage {
				return -1
			}
			seenUsage = true
			if isNullAt(data, at) {
				return at + 4
			}
			return usageAt(data, at, &r.Usage)
		default:
			if foldsTo(key, "model", "answers", "usage") {
				return -1
			}
			return scanValue(data, at, 0)
		}
	})
	if !ok || skipWS(data, end) != len(data) {
		return nil, false
	}
	return r, true
}

// wire is one answer object as read from the wire; has* tell absent (or
// null) from zero.
type wire struct {
	typ                     string
	choice                  []byte
	noul, score, confidence float64
	hasType, hasChoice      bool
	hasNoul, hasScore       bool
	hasConf, hasProbs       bool
	// probability is a Standard Agents boolean answer's P(true).
	probability    float64
	hasProbability bool
	// legend is a score's legend value as received (nil: absent or null).
	legend []byte
	probs  []wireProb
	keys   []byte    // what wireProb offsets index
	dst    []float64 // where distribution aligns them
}

// wireProb is one probabilities entry in wire order.
type wireProb struct {
	ks, ke int32 // the key is keys[ks:ke]; offsets keep the entry pointer-free
	p      float64
	null   bool
}

// fastAnswer reads an answer object; ok is false when encoding/json must
// decide. Probabilities are appended to scratch[:0].
func fastAnswer(raw []byte, scratch []wireProb) (w wire, ok bool) {
	w, end, ok := fastAnswerAt(raw, 0, scratch)
	if !ok || skipWS(raw, end) != len(raw) {
		return wire{}, false
	}
	return w, true
}

// fastAnswerAt reads the answer object starting at raw[start] (after
// whitespace) and returns the index past it. It is written without closures:
// it runs once per answer on every call.
func fastAnswerAt(raw []byte, start int, scratch []wireProb) (w wire, end int, ok bool) {
	const (
		fType = 1 << iota
		fNoul
		fChoice
		fScore
		fConf
		fProbs
		fLegend
		fProbability
	)
	var seen uint16
	i := skipWS(raw, start)
	if i >= len(raw) || raw[i] != '{' {
		return wire{}, -1, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return w, i + 1, true
	}
	for {
		ks, ke := plainKeyAt(raw, i)
		if ke < 0 {
			return wire{}, -1, false
		}
		i = skipWS(raw, ke+1)
		if i >= len(raw) || raw[i] != ':' {
			return wire{}, -1, false
		}
		i = skipWS(raw, i+1)
		key := raw[ks:ke]
		var flag uint16
		switch string(key) {
		case "type":
			flag = fType
		case "noul":
			flag = fNoul
		case "choice":
			flag = fChoice
		case "score":
			flag = fScore
		case "confidence":
			flag = fConf
		case "probabilities":
			flag = fProbs
		case "legend":
			flag = fLegend
		case "probability":
			flag = fProbability
		default:
			if foldsTo(key, "type", "noul", "choice", "score", "confidence", "probabilities", "legend", "probability") {
				return wire{}, -1, false
			}
			if i = scanValue(raw, i, 0); i < 0 {
				return wire{}, -1, false
			}
		}
		if flag != 0 {
			if seen&flag != 0 {
				return wire{}, -1, false // repeated field: encoding/json keeps the last
			}
			seen |= flag
			if isNullAt(raw, i) {
				i += 4 // null reads as absent
			} else {
				switch flag {
				case fType, fChoice:
					s, e, ok := plainString(raw, i)
					if !ok {
						return wire{}, -1, false
					}
					if flag == fChoice {
						w.choice, w.hasChoice = s, true
					} else {
						w.typ, w.hasType = typeName(s), true
					}
					i = e
				case fNoul, fScore, fConf, fProbability:
					v, e, ok := numAt(raw, i)
					if !ok {
						return wire{}, -1, false
					}
					switch flag {
					case fNoul:
						w.noul, w.hasNoul = v, true
					case fProbability:
						w.probability, w.hasProbability = v, true
					case fScore:
						w.score, w.hasScore = v, true
					default:
						w.confidence, w.hasConf = v, true
					}
					i = e
				case fLegend:
					e := scanValue(raw, i, 0)
					if e < 0 {
						return wire{}, -1, false
					}
					w.legend, i = raw[i:e], e
				case fProbs:
					w.hasProbs, w.keys = true, raw
					if w.probs, i = probsAt(raw, i, scratch[:0]); i < 0 {
						return wire{}, -1, false
					}
				}
			}
		}
		i = skipWS(raw, i)
		if i >= len(raw) {
			return wire{}, -1, false
		}
		switch raw[i] {
		case '}':
			return w, i + 1, true
		case ',':
			i = skipWS(raw, i+1)
		default:
			return wire{}, -1, false
		}
	}
}

// typeName returns the type string, without allocating for the three
// known types.
func typeName(s []byte) string {
	switch string(s) {
	case "noul":
		return "noul"
	case "choice":
		return "choice"
	case "score":
		return "score"
	case "boolean":
		return "boolean"
	}
	return string(s)
}

// plainKeyAt finds the object key at raw[i]: a string of printable ASCII
// without escapes. It returns the bounds of its text, or ke -1.
func plainKeyAt(raw []byte, i int) (ks, ke int) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, -1
	}
	ks = i + 1
	for j := ks; j < len(raw); j++ {
		c := raw[j]
		if c == '"' {
			return ks, j
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return 0, -1
		}
	}
	return 0, -1
}

// numAt reads the JSON number at raw[i] as encoding/json would into a
// float64, parsing the short decimals Jev sends directly.
func numAt(raw []byte, i int) (v float64, end int, ok bool) {
	// Fast: 0|[1-9]d* (. d+)? with at most 15 digits in all.
	k, m, digits, frac := i, uint64(0), 0, 0
	good := k < len(raw) && raw[k] >= '0' && raw[k] <= '9'
	if good && raw[k] == '0' {
		k++
		digits = 1
	} else {
		for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
			m = m*10 + uint64(raw[k]-'0')
			k++
			digits++
		}
	}
	if good && k < len(raw) && raw[k] == '.' {
		k++
		f0 := k
		for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
			m = m*10 + uint64(raw[k]-'0')
			k++
		}
		frac = k - f0
		digits += frac
		good = frac > 0
	}
	if good && digits <= 15 && k < len(raw) && raw[k] != 'e' && raw[k] != 'E' {
		return float64(m) / pow10[frac], k, true
	}
	return number(raw, i)
}

// wireAnswer is the encoding/json shape of an answer, for the slow path;
// pointers tell absent from zero.
type wireAnswer struct {
	Type          *string             `json:"type"`
	Noul          *float64            `json:"noul"`
	Choice        *string             `json:"choice"`
	Score         *float64            `json:"score"`
	Confidence    *float64            `json:"confidence"`
	Probabilities map[string]*float64 `json:"probabilities"`
	Legend        json.RawMessage     `json:"legend"`
	Probability   *float64            `json:"probability"`
}

// slowAnswer reads an answer with encoding/json.
func slowAnswer(raw []byte) (wire, error) {
	var a wireAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return wire{}, err
	}
	var w wire
	if a.Type != nil {
		w.typ, w.hasType = *a.Type, true
	}
	if a.Noul != nil {
		w.noul, w.hasNoul = *a.Noul, true
	}
	if a.Choice != nil {
		w.choice, w.hasChoice = []byte(*a.Choice), true
	}
	if a.Score != nil {
		w.score, w.hasScore = *a.Score, true
	}
	if a.Confidence != nil {
		w.confidence, w.hasConf = *a.Confidence, true
	}
	if a.Probability != nil {
		w.probability, w.hasProbability = *a.Probability, true
	}
	if len(a.Legend) > 0 && !isNull(a.Legend) {
		w.legend = a.Legend
	}
	if a.Probabilities != nil {
		w.hasProbs = true
		w.probs = make([]wireProb, 0, len(a.Probabilities))
		for k, p := range a.Probabilities {
			e := wireProb{ks: int32(len(w.keys))}
			w.keys = append(w.keys, k...)
			e.ke = int32(len(w.keys))
			if p == nil {
				e.null = true
			} else {
				e.p = *p
			}
			w.probs = append(w.probs, e)
		}
	}
	return w, nil
}

// ValidJSON reports whether v is one valid JSON value, exactly as json.Valid
// does, usually faster.
func ValidJSON(v []byte) bool { return fastValid(v) || json.Valid(v) }

// DecodeError says a response body is not a System One answer body at all.
type DecodeError struct{ Err error }

func (e *DecodeError) Error() string {
	return "the response is not a System One answer body: " + e.Err.Error()
}

// Unwrap returns the JSON error.
func (e *DecodeError) Unwrap() error { return e.Err }

// CheckResponse decodes a /v1/systemone response body and checks it against
// req: the same outcome as DecodeResponse followed by Check, in one pass
// over the body. It fills the Result's Model, Answers and Usage. A body that
// does not decode gives a *DecodeError, a broken answer a *CheckError.
// Answers' Raw alias body.
func CheckResponse(req *Request, body []byte) (*Result, error) {
	if res, err, ok := fastCheckResponse(req, body); ok {
		return res, err
	}
	resp, err := DecodeResponse(body)
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	answers, err := Check(req, resp)
	if err != nil {
		return nil, err
	}
	return &Result{Model: resp.Model, Answers: answers, Usage: resp.Usage}, nil
}

// fastCheckResponse is CheckResponse in one pass; ok is false when the
// two-step path must decide.
func fastCheckResponse(req *Request, body []byte) (res *Result, err error, ok bool) {
	qs := req.Questions
	n := len(qs)
	out := make([]Answer, n)
	var smallErrs [16][]error
	errs := smallErrs[:0]
	if n <= len(smallErrs) {
		errs = smallErrs[:n]
	} else {
		errs = make([][]error, n)
	}
	var smallFound [16]bool
	found := smallFound[:0]
	if n <= len(smallFound) {
		found = smallFound[:n]
	} else {
		found = make([]bool, n)
	}
	total := 0
	for i := range qs {
		if t := qs[i].Question.Type; t == Choice || t == Score {
			total += qs[i].Question.Size()
		}
	}
	back := make([]float64, total)
	var smallOffs [16]int
	offs := smallOffs[:0] // each question's place in back
	if n <= len(smallOffs) {
		offs = smallOffs[:n]
	} else {
		offs = make([]int, n)
	}
	for i, o := 0, 0; i < n; i++ {
		offs[i] = o
		if t := qs[i].Question.Type; t == Choice || t == Score {
			o += qs[i].Question.Size()
		}
	}
	var scratch []wireProb
	var byID map[string]int
	next := 0 // answers usually come in question order
	lookup := func(id []byte) int {
		if next < n && qs[next].ID == string(id) {
			return next
		}
		if n <= 16 {
			for i := range qs {
				if qs[i].ID == string(id) {
					return i
				}
			}
			return -1
		}
		if byID == nil {
			byID = make(map[string]int, n)
			for i := range qs {
				byID[qs[i].ID] = i
			}
		}
		if i, ok := byID[string(id)]; ok {
			return i
		}
		return -1
	}
	var model string
	var usage Usage
	var seenModel, seenAnswers, seenUsage bool
	end, ok := objectLoop(body, 0, func(key []byte, at int) int {
		switch string(key) {
		case "model":
			if seenModel {
				return -1
			}
			seenModel = true
			if isNullAt(body, at) {
				return at + 4
			}
			s, end, ok := plainString(body, at)
			if !ok {
				return -1
			}
			model = string(s)
			return end
		case "usage":
			if seenUsage {
				return -1
			}
			seenUsage = true
			if isNullAt(body, at) {
				return at + 4
			}
			return usageAt(body, at, &usage)
		case "answers":
			if seenAnswers {
				return -1
			}
			seenAnswers = true
			if isNullAt(body, at) {
				return at + 4
			}
			end, ok := objectLoop(body, at, func(id []byte, at int) int {
				i := lookup(id)
				if i < 0 { // not asked: dropped, but it must still be JSON
					return scanValue(body, at, 0)
				}
				if found[i] {
					return -1 // a repeated id: encoding/json keeps the last
				}
				found[i] = true
				next = i + 1
				q := &qs[i].Question
				if q.Type == Box {
					return -1 // box answers are read by Check (checkBox)
				}
				if sz := q.Size(); cap(scratch) < sz {
					scratch = make([]wireProb, 0, max(sz, 32))
				}
				w, end, ok := fastAnswerAt(body, at, scratch)
				if !ok {
					return -1
				}
				if t := q.Type; t == Choice || t == Score {
					sz := q.Size()
					w.dst = back[offs[i] : offs[i]+sz : offs[i]+sz]
				}
				raw := json.RawMessage(body[skipWS(body, at):end:end])
				es, again := checkWire(qs[i].ID, q, raw, &w, &out[i])
				if again {
					return -1
				}
				errs[i] = es
				return end
			})
			if !ok {
				return -1
			}
			return end
		default:
			if foldsTo(key, "model", "answers", "usage") {
				return -1
			}
			return scanValue(body, at, 0)
		}
	})
	if !ok || skipWS(body, end) != len(body) {
		return nil, nil, false
	}
	var probs []error
	for i := range qs {
		if !found[i] {
			probs = append(probs, &QuestionError{ID: qs[i].ID, Err: fmt.Errorf("no answer")})
			continue
		}
		for _, e := range errs[i] {
			probs = append(probs, &QuestionError{ID: qs[i].ID, Err: e})
		}
		out[i].Provenance.Model = model
	}
	if len(probs) > 0 {
		return nil, &CheckError{Problems: probs}, true
	}
	return &Result{Model: model, Answers: out, Usage: usage}, nil, true
}

// usageAt reads the usage object at data[at] into u, as encoding/json would.
func usageAt(data []byte, at int, u *Usage) int {
	var seenIn, seenOut bool
	end, ok := objectLoop(data, at, func(key []byte, at int) int {
		var dst *int64
		switch string(key) {
		case "input_tokens":
			if seenIn {
				return -1
			}
			seenIn, dst = true, &u.InputTokens
		case "output_tokens":
			if seenOut {
				return -1
			}
			seenOut, dst = true, &u.OutputTokens
		default:
			if foldsTo(key, "input_tokens", "output_tokens") {
				return -1
			}
			return scanValue(data, at, 0)
		}
		if isNullAt(data, at) {
			return at + 4
		}
		end := numberEnd(data, at)
		if end < 0 {
			return -1
		}
		v, err := strconv.ParseInt(string(data[at:end]), 10, 64)
		if err != nil {
			return -1
		}
		*dst = v
		return end
	})
	if !ok {
		return -1
	}
	return end
}

// probsAt reads a probabilities object at raw[at] whose keys are plain
// strings and whose values are numbers or null, appending the entries to
// probs. It returns end -1 for anything else (the caller then defers to
// encoding/json). It is the hot loop of answer checking, so it is written
// without closures and parses Jev's short decimals in the same pass.
func probsAt(raw []byte, at int, probs []wireProb) ([]wireProb, int) {
	i := at
	if i >= len(raw) || raw[i] != '{' {
		return probs, -1
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return probs, i + 1
	}
	for {
		ks, ke := plainKeyAt(raw, i)
		if ke < 0 {
			return probs, -1
		}
		e := wireProb{ks: int32(ks), ke: int32(ke)}
		i = skipWS(raw, ke+1)
		if i >= len(raw) || raw[i] != ':' {
			return probs, -1
		}
		i = skipWS(raw, i+1)
		if isNullAt(raw, i) {
			e.null = true
			i += 4
		} else {
			v, end, ok := numAt(raw, i)
			if !ok {
				return probs, -1
			}
			e.p, i = v, end
		}
		probs = append(probs, e)
		i = skipWS(raw, i)
		if i >= len(raw) {
			return probs, -1
		}
		switch raw[i] {
		case '}':
			return probs, i + 1
		case ',':
			i = skipWS(raw, i+1)
		default:
			return probs, -1
		}
	}
}
