// Package dialects imports question sets from the decision dialects people
// already write (Standard Agents DecisionQuestions, the assistant-runtime
// POST /api/decisions body, Noetic DecideQuestions and decide/routeSwitch
// nodes, TypeSafe Playground share links) and exports a question set as a
// Playground share link.
//
// Import is faithful or it fails: every field of the source either lands in
// the question set (wire questions, caller-side settings, the working state)
// or is recorded in the set's notes, and a construct that has no equivalent
// is an *Error naming where it is and why. Nothing is dropped silently.
package dialects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// Dialect names a source format.
type Dialect string

// The dialects Import reads.
const (
	StandardAgents   Dialect = "standard-agents"
	AssistantRuntime Dialect = "assistant-runtime"
	Noetic           Dialect = "noetic"
	Playground       Dialect = "playground"
)

// Dialects lists every dialect Import reads, in documentation order.
func Dialects() []Dialect {
	return []Dialect{StandardAgents, AssistantRuntime, Noetic, Playground}
}

// ParseDialect returns the dialect named s.
func ParseDialect(s string) (Dialect, error) {
	for _, d := range Dialects() {
		if string(d) == s {
			return d, nil
		}
	}
	names := make([]string, 0, 4)
	for _, d := range Dialects() {
		names = append(names, string(d))
	}
	return "", fmt.Errorf("unknown dialect %q; use one of %s", s, strings.Join(names, ", "))
}

// Error is an import failure: the source, the dialect, the JSON path of the
// offending field (empty for the whole document) and what to do.
type Error struct {
	Source  string  // the input's name: a file, "stdin" or "link"
	Dialect Dialect // the dialect it was read as
	Path    string  // JSON path of the offending field, e.g. decide.questions.team.choices
	Msg     string  // what is wrong and what to do
	Err     error   // underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Dialect))
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Imported is the result of an import: the question set and the notes that
// say how constructs without a slot of their own were carried (node-level
// instructions, a runtime profile, routing). Notes are also written into the
// set's file by Marshal, so they travel with it.
type Imported struct {
	Set   *questionset.Set
	Notes []string
}

// Marshal renders the imported set as a question-set file: a comment header
// naming the source and every note, then the set as questionset.Marshal
// writes it.
func (im *Imported) Marshal(dialect Dialect, source string) ([]byte, error) {
	body, err := im.Set.Marshal()
	if err != nil {
		return nil, fmt.Errorf("marshal imported set: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Imported by jevlab from %s (%s).\n", oneLine(source), dialect)
	for _, n := range im.Notes {
		writeComment(&b, "Note: "+n)
	}
	b.Write(body)
	return b.Bytes(), nil
}

func writeComment(b *bytes.Buffer, text string) {
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("# ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// Import reads data written in dialect d. source names the input in messages
// (a file name, "stdin", or a link).
func Import(d Dialect, source string, data []byte) (*Imported, error) {
	im := &importer{dialect: d, source: source}
	var err error
	switch d {
	case StandardAgents:
		err = im.standardAgents(data)
	case AssistantRuntime:
		err = im.assistantRuntime(data)
	case Noetic:
		err = im.noetic(data)
	case Playground:
		err = im.playground(data)
	default:
		_, err = ParseDialect(string(d))
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return &Imported{Set: im.set(), Notes: im.notes}, nil
}

// importer accumulates what the source says.
type importer struct {
	dialect   Dialect
	source    string
	name      string
	model     string
	state     json.RawMessage
	questions provider.Questions
	settings  map[string]questionset.Settings
	notes     []string
}

func (im *importer) fail(path, format string, args ...any) error {
	return &Error{Source: im.source, Dialect: im.dialect, Path: path, Msg: fmt.Sprintf(format, args...)}
}

func (im *importer) wrap(path string, err error) error {
	return &Error{Source: im.source, Dialect: im.dialect, Path: path, Msg: err.Error(), Err: err}
}

func (im *importer) note(format string, args ...any) {
	im.notes = append(im.notes, fmt.Sprintf(format, args...))
}

func (im *importer) setting(id string) questionset.Settings {
	if im.settings == nil {
		im.settings = make(map[string]questionset.Settings)
	}
	return im.settings[id]
}

func (im *importer) set() *questionset.Set {
	return &questionset.Set{
		Name:      im.name,
		Model:     im.model,
		State:     im.state,
		Questions: im.questions,
		Settings:  im.settings,
	}
}

// addQuestion validates q against the API's limits and appends it.
func (im *importer) addQuestion(path, id string, q provider.Question) error {
	if id == "" {
		return im.fail(path, "a question id must not be empty; give the question a name")
	}
	if err := q.Validate(); err != nil {
		var ve *provider.ValidationError
		msg := err.Error()
		if asValidation(err, &ve) {
			parts := make([]string, len(ve.Problems))
			for i, p := range ve.Problems {
				parts[i] = p.Error()
			}
			msg = strings.Join(parts, "; ")
		}
		return &Error{Source: im.source, Dialect: im.dialect, Path: path,
			Msg: "cannot be sent to a System One server: " + msg, Err: err}
	}
	im.questions = append(im.questions, provider.QuestionEntry{ID: id, Question: q})
	return nil
}

func asValidation(err error, ve **provider.ValidationError) bool {
	v, ok := err.(*provider.ValidationError)
	if ok {
		*ve = v
	}
	return ok
}

// setState takes a context/state value: a string, object or array; null or
// absent leaves the set without a working state.
func (im *importer) setState(path string, v json.RawMessage) error {
	if v == nil {
		return nil
	}
	switch provider.KindOfJSON(v) {
	case 's', 'o', 'a':
		im.state = provider.Compact(v)
	case 'n':
		im.note("%s was null; the set has no working state", path)
	default:
		return im.fail(path, "must be a string, object or array (System One state), not a %s", provider.KindOfJSON(v))
	}
	return nil
}

// field is one key/value of a JSON object in document order.
type field struct {
	Key   string
	Value json.RawMessage
}

// object is a decoded JSON object, in order, with the path it was read at.
type object struct {
	path   string
	fields []field
}

// addQuestions reads each field of qs, in document order, as the question
// with that id (read gets the field's path, the id and the raw value) and
// adds it to the set. An empty map is an error: a System One request needs
// at least one question.
func (im *importer) addQuestions(qs *object, read func(path, id string, raw json.RawMessage) (provider.Question, error)) error {
	if len(qs.fields) == 0 {
		return im.fail(qs.path, "is empty; a System One request needs at least one question")
	}
	for _, f := range qs.fields {
		path := join(qs.path, f.Key)
		q, err := read(path, f.Key, f.Value)
		if err != nil {
			return err
		}
		if err := im.addQuestion(path, f.Key, q); err != nil {
			return err
		}
	}
	return nil
}

// questionType reads the type field of a question in the shapes that name
// their types boolean, choice and score (Standard Agents, Noetic).
func (im *importer) questionType(path string, o *object) (string, error) {
	tv := o.get("type")
	if tv == nil {
		return "", im.fail(join(path, "type"), "missing; use boolean, choice or score")
	}
	return im.str(join(path, "type"), tv)
}

// parseObject decodes raw as a JSON object in document order. Duplicate keys
// are an error: one of the two values would be lost.
func (im *importer) parseObject(path string, raw json.RawMessage) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, im.fail(path, "invalid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		k := provider.KindOfJSON(raw)
		if k == 'x' {
			var v any
			return nil, im.fail(path, "invalid JSON: %v", json.Unmarshal(raw, &v))
		}
		return nil, im.fail(path, "must be a JSON object, not a %s", k)
	}
	o := &object{path: path}
	seen := make(map[string]bool)
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, im.fail(path, "invalid JSON: %v", err)
		}
		key := kt.(string)
		if seen[key] {
			return nil, im.fail(join(path, key), "duplicate key; one of the two values would be lost")
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, im.fail(join(path, key), "invalid JSON: %v", err)
		}
		o.fields = append(o.fields, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, im.fail(path, "invalid JSON: %v", err)
	}
	if dec.More() {
		return nil, im.fail(path, "unexpected data after the JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, im.fail(path, "unexpected data after the JSON object")
	}
	return o, nil
}

// get returns the value of key, or nil.
func (o *object) get(key string) json.RawMessage {
	for _, f := range o.fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// only fails on the first key not in allowed, naming what the dialect has.
func (im *importer) only(o *object, what string, allowed ...string) error {
	ok := make(map[string]bool, len(allowed))
	for _, a := range allowed {
		ok[a] = true
	}
	for _, f := range o.fields {
		if !ok[f.Key] {
			sorted := append([]string(nil), allowed...)
			sort.Strings(sorted)
			return im.fail(join(o.path, f.Key), "unknown field of %s; it has no equivalent in a jevlab question set (known fields: %s)",
				what, strings.Join(sorted, ", "))
		}
	}
	return nil
}

// str decodes a JSON string value.
func (im *importer) str(path string, v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", im.fail(path, "must be a string, not a %s", provider.KindOfJSON(v))
	}
	return s, nil
}

// probability decodes a number in [0, 1].
func (im *importer) probability(path string, v json.RawMessage) (float64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, im.fail(path, "must be a number between 0 and 1, not a %s", provider.KindOfJSON(v))
	}
	if f < 0 || f > 1 {
		return 0, im.fail(path, "%v is outside [0, 1]", f)
	}
	return f, nil
}

// textSlot checks a text slot (instructions, a criteria entry): a string,
// object, array or null, returned compact.
func (im *importer) textSlot(path string, v json.RawMessage) (json.RawMessage, error) {
	switch provider.KindOfJSON(v) {
	case 's', 'o', 'a', 'n':
		return provider.Compact(v), nil
	}
	return nil, im.fail(path, "must be text (a string, object or array), not a %s", provider.KindOfJSON(v))
}

// options reads an ordered label → description object.
func (im *importer) options(path string, v json.RawMessage) ([]provider.Option, error) {
	o, err := im.parseObject(path, v)
	if err != nil {
		return nil, err
	}
	opts := make([]provider.Option, 0, len(o.fields))
	for _, f := range o.fields {
		d, err := im.textSlot(join(path, f.Key), f.Value)
		if err != nil {
			return nil, err
		}
		opts = append(opts, provider.Option{Label: f.Key, Description: d})
	}
	return opts, nil
}

// levels reads an array of text slots.
func (im *importer) levels(path string, v json.RawMessage) ([]json.RawMessage, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, im.fail(path, "must be an array of levels, lowest first, not a %s", provider.KindOfJSON(v))
	}
	out := make([]json.RawMessage, len(raw))
	for i, l := range raw {
		t, err := im.textSlot(fmt.Sprintf("%s[%d]", path, i), l)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func join(path, key string) string {
	if needsQuoting(key) {
		key = fmt.Sprintf("[%q]", key)
		if path == "" {
			return key
		}
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func needsQuoting(key string) bool {
	if key == "" {
		return true
	}
	for _, c := range key {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return true
		}
	}
	return false
}
