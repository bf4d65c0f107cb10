package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// API limits.
const (
	MinOptions = 2
	MaxOptions = 255
	MinLevels  = 2
	MaxLevels  = 10
	// DefaultMaxRequestBytes is the default ceiling on a serialized request.
	DefaultMaxRequestBytes = 8 << 20
)

// Limits are the configurable parts of validation.
type Limits struct {
	// MaxRequestBytes caps the serialized request; 0 means the default.
	MaxRequestBytes int
}

// Validate checks r against the API's limits with the default Limits.
func (r *Request) Validate() error { return r.ValidateWith(Limits{}) }

// ValidateWith checks every rule and returns a *ValidationError listing each
// problem with its question id and field, or nil.
func (r *Request) ValidateWith(lim Limits) error {
	var probs []error
	add := func(id, field, msg string) {
		fe := &FieldError{Field: field, Msg: msg}
		if id == "" {
			probs = append(probs, fe)
		} else {
			probs = append(probs, &QuestionError{ID: id, Err: fe})
		}
	}
	if r.Model == "" {
		add("", "model", "missing; name a model such as jev-latest")
	}
	switch KindOfJSON(r.State) {
	case 's', 'o', 'a':
	case 0:
		add("", "state", "missing; give a string, object or array")
	case 'n':
		add("", "state", "is null; give a string, object or array")
	case 'x':
		add("", "state", "is not valid JSON")
	default:
		add("", "state", "must be a string, object or array, not a "+KindOfJSON(r.State).String())
	}
	if len(r.Questions) == 0 {
		add("", "questions", "at least one question is required")
	}
	seen := make(map[string]bool, len(r.Questions))
	for _, e := range r.Questions {
		if seen[e.ID] {
			add(e.ID, "id", "duplicate question id")
		}
		seen[e.ID] = true
		for _, p := range e.Question.problems() {
			probs = append(probs, &QuestionError{ID: e.ID, Err: p})
		}
	}
	if r.NeedsImages() && !r.DangerZone.Images {
		what := "box questions"
		if len(r.Assets) > 0 {
			what = "image assets"
		}
		add("", "danger_zone", what+" are experimental (Jev 1.14) and need the Images Danger-Zone opt-in: --images, or danger_zone: {images: true} in the set")
	}
	r.assetProblems(func(field, msg string) { add("", field, msg) })
	if len(probs) == 0 {
		max := lim.MaxRequestBytes
		if max <= 0 {
			max = DefaultMaxRequestBytes
		}
		if len(r.Assets) > 0 && max < MaxImageRequestBytes {
			max = MaxImageRequestBytes // the Images opt-in's cap, every use of an image counted
		}
		if n := r.Size(); n > max {
			add("", "request", fmt.Sprintf("serialized size %d bytes exceeds the limit of %d bytes; shorten the state or split the questions", n, max))
		}
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

// Size returns the exact length in bytes of the request as MarshalJSON
// writes it, without building it.
func (r *Request) Size() int {
	n := len(`{"model":,"state":,"questions":{}}`) + jsonStringLen(r.Model)
	if r.State == nil {
		n += len("null")
	} else {
		n += len(r.State)
	}
	for i := range r.Questions {
		if i > 0 {
			n++ // comma
		}
		n += jsonStringLen(r.Questions[i].ID) + 1 + r.Questions[i].Question.size()
	}
	return n + r.assetsSize()
}

// size is the length of the question as appendJSON writes it.
func (q *Question) size() int {
	n := len(`{"type":}`) + jsonStringLen(string(q.Type))
	if q.Instructions != nil {
		n += len(`,"instructions":`) + len(q.Instructions)
	}
	raw := func(v json.RawMessage) int {
		if v == nil {
			return len("null")
		}
		return len(v)
	}
	switch q.Type {
	case Choice, Noul:
		if q.Type == Noul && len(q.Options) == 0 {
			break
		}
		n += len(`,"criteria":{}`)
		for i, o := range q.Options {
			if i > 0 {
				n++
			}
			n += jsonStringLen(o.Label) + 1 + raw(o.Description)
		}
	case Score:
		n += len(`,"criteria":[]`)
		for i, l := range q.Levels {
			if i > 0 {
				n++
			}
			n += raw(l)
		}
	}
	return n
}

// jsonStringLen is the length of s encoded by writeJSONString.
func jsonStringLen(s string) int {
	if isPlainASCII(s) {
		return len(s) + 2
	}
	var b bytes.Buffer
	writeJSONString(&b, s)
	return b.Len()
}

// Validate checks one question on its own and returns every problem.
func (q *Question) Validate() error {
	if p := q.problems(); len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

func (q *Question) problems() []error {
	var probs []error
	add := func(field, format string, args ...any) {
		probs = append(probs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !q.Type.Valid() {
		add("type", "%q is not a question type; use noul, choice, score or box", string(q.Type))
		return probs
	}
	if q.Instructions != nil {
		switch k := KindOfJSON(q.Instructions); k {
		case 's', 'o', 'a', 'n':
		case 'x':
			add("instructions", "is not valid JSON")
		default:
			add("instructions", "must be a string, object or array, not a %s", k)
		}
	}
	checkEntry := func(field string, v json.RawMessage, nullOK bool) {
		switch k := KindOfJSON(v); k {
		case 's', 'o', 'a':
		case 'n', 0:
			if !nullOK {
				add(field, "is null; give text, an object or an array")
			}
		case 'x':
			add(field, "is not valid JSON")
		default:
			add(field, "must be a string, object or array, not a %s", k)
		}
	}
	switch q.Type {
	case Box:
		if len(q.Options) > 0 || len(q.Levels) > 0 {
			add("criteria", "a box question has no criteria; its instructions name the target and the image")
		}
		if q.Instructions == nil || KindOfJSON(q.Instructions) == 'n' {
			add("instructions", "missing; a box question's instructions name the target and the image it is in (e.g. \"the coffee mug in `photo`\")")
		}
	case Noul:
		if len(q.Levels) > 0 {
			add("criteria", "a noul's criteria is an object with keys \"true\"/\"false\", not a list")
		}
		var seenTrue, seenFalse bool
		for _, o := range q.Options {
			seen := &seenTrue
			switch o.Label {
			case "true":
			case "false":
				seen = &seenFalse
			default:
				add("criteria."+o.Label, "a noul's criteria keys are only \"true\" and \"false\"")
				continue
			}
			if *seen {
				add("criteria."+o.Label, "duplicate key")
			}
			*seen = true
			if !entryOK(o.Description, true) {
				checkEntry("criteria."+o.Label, o.Description, true)
			}
		}
	case Choice:
		if len(q.Levels) > 0 {
			add("criteria", "a choice's criteria is an object mapping option labels to descriptions, not a list")
			break
		}
		switch n := len(q.Options); {
		case n < MinOptions:
			add("criteria", "has %d option(s); a choice needs at least %d", n, MinOptions)
		case n > MaxOptions:
			add("criteria", "has %d options; a choice allows at most %d", n, MaxOptions)
		}
		// Field names are built only when there is a problem to report.
		field := func(i int) string {
			if q.Options[i].Label == "" {
				return fmt.Sprintf("criteria[%d]", i)
			}
			return "criteria." + q.Options[i].Label
		}
		var seen map[string]bool
		if len(q.Options) > 16 {
			seen = make(map[string]bool, len(q.Options))
		}
		for i, o := range q.Options {
			if msg := labelProblem(o.Label); msg != "" {
				add(field(i), "%s", msg)
			}
			dup := false
			if seen != nil {
				dup = seen[o.Label]
				seen[o.Label] = true
			} else {
				for j := 0; j < i; j++ {
					if q.Options[j].Label == o.Label {
						dup = true
						break
					}
				}
			}
			if dup {
				add(field(i), "duplicate option label")
			}
			if !entryOK(o.Description, true) {
				checkEntry(field(i), o.Description, true)
			}
		}
	case Score:
		if len(q.Options) > 0 {
			add("criteria", "a score's criteria is an array of levels, lowest first, not an object")
			break
		}
		switch n := len(q.Levels); {
		case n < MinLevels:
			add("criteria", "has %d level(s); a score needs at least %d", n, MinLevels)
		case n > MaxLevels:
			add("criteria", "has %d levels; a score allows at most %d", n, MaxLevels)
		}
		for i, l := range q.Levels {
			if !entryOK(l, false) {
				checkEntry(fmt.Sprintf("criteria[%d]", i), l, false)
			}
		}
	}
	return probs
}

// entryOK is the fast accept for a criteria entry: a string, object or
// array (or null when nullOK) that is valid JSON. When it says false,
// checkEntry decides and words the problem.
func entryOK(v json.RawMessage, nullOK bool) bool {
	if len(v) == 0 {
		return v == nil && nullOK
	}
	switch v[0] {
	case '"', '{', '[':
		return fastValid(v)
	case 'n':
		return nullOK && string(v) == "null"
	}
	return false
}

// labelProblem returns why label cannot be a choice option, or "".
func labelProblem(label string) string {
	if label == "" {
		return "option label is empty"
	}
	if plainLabel(label) {
		return ""
	}
	if !utf8.ValidString(label) {
		return "option label is not valid UTF-8"
	}
	r, _ := utf8.DecodeRuneInString(label)
	l, _ := utf8.DecodeLastRuneInString(label)
	if unicode.IsSpace(r) || unicode.IsSpace(l) {
		return "option label has leading or trailing whitespace"
	}
	for _, c := range label {
		if unicode.IsControl(c) {
			return "option label contains a control character"
		}
	}
	return ""
}

// JSONKind is the kind of a raw JSON value, told by its first significant
// byte: 's' string, 'o' object, 'a' array, 'n' null, 'd' number,
// 'b' boolean, 'x' not valid JSON, 0 absent (a nil value). Callers compare
// it with those byte literals and print it with %s.
type JSONKind byte

// KindOfJSON classifies v (see JSONKind). v must be one whole JSON value to
// be classified by its first byte; anything else, including an empty
// non-nil v, is 'x'.
func KindOfJSON(v json.RawMessage) JSONKind {
	if v == nil {
		return 0
	}
	if !fastValid(v) && !json.Valid(v) {
		return 'x'
	}
	for _, c := range v {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			return 's'
		case '{':
			return 'o'
		case '[':
			return 'a'
		case 'n':
			return 'n'
		case 't', 'f':
			return 'b'
		default:
			return 'd'
		}
	}
	return 0
}

// String names the kind for messages such as "must be an object, not a
// number": "string", "object", "array", "null", "boolean", "number",
// "invalid JSON" ('x') or "missing value" (absent).
func (k JSONKind) String() string {
	switch k {
	case 's':
		return "string"
	case 'o':
		return "object"
	case 'a':
		return "array"
	case 'n':
		return "null"
	case 'b':
		return "boolean"
	case 'd':
		return "number"
	case 'x':
		return "invalid JSON"
	}
	return "missing value"
}

// plainLabel is the fast accept for the common label: printable ASCII with
// no space at either end.
func plainLabel(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
