package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// QuestionType is the API's question discriminator.
type QuestionType string

// The three question types System One answers.
const (
	Noul   QuestionType = "noul"
	Choice QuestionType = "choice"
	Score  QuestionType = "score"
)

// Valid reports whether t is one of the API's question types (box: Jev
// 1.14, box.go).
func (t QuestionType) Valid() bool { return t == Noul || t == Choice || t == Score || t == Box }

// Option is one labelled criteria entry: a choice option, or a noul's
// "true"/"false" entry. Description is compact raw JSON ("null" when the
// label speaks for itself).
type Option struct {
	Label       string
	Description json.RawMessage
}

// Question is one typed question. Exactly the fields of its Type are used:
// Options for choice (required) and noul (optional, keys "true"/"false"),
// Levels for score (required, index = level).
type Question struct {
	Type QuestionType
	// Instructions is compact raw JSON (string, object, array or null);
	// nil when the field is absent.
	Instructions json.RawMessage
	// Options holds choice options or noul criteria in written order.
	Options []Option
	// Levels holds score levels, lowest first, as compact raw JSON.
	Levels []json.RawMessage
}

// Clone returns a deep copy of q that shares no memory with it, so a
// caller can keep a question while its owner edits the original. Absent
// (nil) slots stay nil and empty ones stay empty.
func (q *Question) Clone() Question {
	c := Question{Type: q.Type, Instructions: cloneRaw(q.Instructions)}
	if q.Options != nil {
		c.Options = make([]Option, len(q.Options))
		for i, o := range q.Options {
			c.Options[i] = Option{Label: o.Label, Description: cloneRaw(o.Description)}
		}
	}
	if q.Levels != nil {
		c.Levels = make([]json.RawMessage, len(q.Levels))
		for i, l := range q.Levels {
			c.Levels[i] = cloneRaw(l)
		}
	}
	return c
}

// cloneRaw copies v, keeping nil apart from empty.
func cloneRaw(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	return append(json.RawMessage{}, v...)
}

// OptionIndex returns the index of the option labelled label, or -1.
func (q *Question) OptionIndex(label string) int {
	for i := range q.Options {
		if q.Options[i].Label == label {
			return i
		}
	}
	return -1
}

// Size is the number of outcomes an answer distributes over: options for a
// choice, levels for a score, and 2 for a noul.
func (q *Question) Size() int {
	switch q.Type {
	case Choice:
		return len(q.Options)
	case Score:
		return len(q.Levels)
	case Noul:
		return 2
	}
	return 0
}

// MarshalJSON writes the question in wire form with criteria in order.
func (q Question) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(64 + len(q.Instructions) + 32*len(q.Options) + 32*len(q.Levels))
	q.appendJSON(&b)
	return b.Bytes(), nil
}

func (q *Question) appendJSON(b *bytes.Buffer) {
	b.WriteString(`{"type":`)
	writeJSONString(b, string(q.Type))
	if q.Instructions != nil {
		b.WriteString(`,"instructions":`)
		b.Write(q.Instructions)
	}
	switch q.Type {
	case Choice, Noul:
		if q.Type == Noul && len(q.Options) == 0 {
			break
		}
		b.WriteString(`,"criteria":{`)
		for i, o := range q.Options {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, o.Label)
			b.WriteByte(':')
			if o.Description == nil {
				b.WriteString("null")
			} else {
				b.Write(o.Description)
			}
		}
		b.WriteByte('}')
	case Score:
		b.WriteString(`,"criteria":[`)
		for i, l := range q.Levels {
			if i > 0 {
				b.WriteByte(',')
			}
			if l == nil {
				b.WriteString("null")
			} else {
				b.Write(l)
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
}

// UnmarshalJSON reads a wire question. It keeps criteria order and rejects
// fields the API does not define, so nothing is silently dropped. Limits are
// checked by Validate, not here.
func (q *Question) UnmarshalJSON(data []byte) error {
	var fields []rawField
	fields, err := objectFields(data)
	if err != nil {
		return err
	}
	var criteria json.RawMessage
	*q = Question{}
	for _, f := range fields {
		switch f.Key {
		case "type":
			var t string
			if err := json.Unmarshal(f.Value, &t); err != nil {
				return &FieldError{Field: "type", Msg: "must be a string: noul, choice or score"}
			}
			q.Type = QuestionType(t)
		case "instructions":
			q.Instructions = compact(f.Value)
		case "criteria":
			criteria = f.Value
		default:
			return &FieldError{Field: f.Key, Msg: "unknown field; a question has only type, instructions and criteria"}
		}
	}
	if q.Type == "" {
		return &FieldError{Field: "type", Msg: "missing; use noul, choice, score or box"}
	}
	if !q.Type.Valid() {
		return &FieldError{Field: "type", Msg: fmt.Sprintf("%q is not a question type; use noul, choice, score or box", string(q.Type))}
	}
	if criteria == nil || isNull(criteria) {
		return nil
	}
	if q.Type == Box {
		return &FieldError{Field: "criteria", Msg: "a box question has no criteria; its instructions name the target and the image"}
	}
	switch q.Type {
	case Choice, Noul:
		opts, err := objectFields(criteria)
		var dup *FieldError
		if errors.As(err, &dup) {
			return &FieldError{Field: "criteria." + dup.Field, Msg: "duplicate " + map[QuestionType]string{Choice: "option label", Noul: "key"}[q.Type]}
		}
		if err != nil {
			return &FieldError{Field: "criteria", Msg: "must be an object mapping " + map[QuestionType]string{Choice: "option label", Noul: `"true"/"false"`}[q.Type] + " to a description"}
		}
		q.Options = make([]Option, len(opts))
		for i, o := range opts {
			q.Options[i] = Option{Label: o.Key, Description: compact(o.Value)}
		}
	case Score:
		var levels []json.RawMessage
		if err := json.Unmarshal(criteria, &levels); err != nil {
			return &FieldError{Field: "criteria", Msg: "must be an array of levels, lowest first"}
		}
		for i := range levels {
			levels[i] = compact(levels[i])
		}
		q.Levels = levels
	}
	return nil
}

// rawField is one key/value of a JSON object in document order.
type rawField struct {
	Key   string
	Value json.RawMessage
}

// objectFields splits a JSON object into its fields in document order.
// Duplicate keys are an error: a JSON map cannot carry both.
func objectFields(data []byte) ([]rawField, error) {
	if out, ok := fastObjectFields(data); ok {
		return out, nil
	}
	return slowObjectFields(data)
}

// slowObjectFields is objectFields on encoding/json's decoder: it decides
// every input the fast scanner leaves alone and words the errors.
func slowObjectFields(data []byte) ([]rawField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("must be a JSON object")
	}
	var out []rawField
	seen := make(map[string]struct{})
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		key := kt.(string)
		if _, dup := seen[key]; dup {
			return nil, &FieldError{Field: key, Msg: "duplicate key"}
		}
		seen[key] = struct{}{}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("invalid JSON at %q: %w", key, err)
		}
		out = append(out, rawField{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	// UnmarshalJSON may be called directly, without json.Unmarshal's check
	// of the whole input: nothing may follow the object.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid JSON: data after the object")
	}
	return out, nil
}

// compact returns v without insignificant whitespace, keeping key order and
// number spelling. Invalid JSON is returned unchanged (Validate reports it).
func compact(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	if isCompact(v) {
		return append(json.RawMessage(nil), v...)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return append(json.RawMessage(nil), v...)
	}
	return json.RawMessage(b.Bytes())
}

// Compact is the exported form of compact: raw JSON without insignificant
// whitespace, key order and number spelling kept.
func Compact(v json.RawMessage) json.RawMessage { return compact(v) }

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// writeJSONString writes s as a JSON string with encoding/json's escaping,
// without HTML escaping.
func writeJSONString(b *bytes.Buffer, s string) {
	if isPlainASCII(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode appends a newline
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Text returns a short human-readable form of a raw text slot: the string
// itself for a JSON string, compact JSON otherwise, "" for null or absent.
func Text(v json.RawMessage) string {
	if v == nil || isNull(v) {
		return ""
	}
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return strings.TrimSpace(string(v))
}

// String encodes s as a raw JSON string value.
func String(s string) json.RawMessage {
	var b bytes.Buffer
	writeJSONString(&b, s)
	return json.RawMessage(b.Bytes())
}
