package questionset

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/jevlab/jevlab/provider"
	yaml "go.yaml.in/yaml/v3"
)

// Editing
//
// The helpers below change the Set; none of them touches the YAML node
// tree. Marshal/Save bring the tree in line with the Set by a structural
// diff (see Marshal), so editing the exported fields directly is equally
// safe, and comments survive wherever the commented node is unchanged. A
// renamed question or option keeps its comments when it stays at the same
// position. Every helper replaces the slices it changes instead of writing
// into them (copy on write), so a *provider.Request built earlier by
// Request is never modified under a goroutine that is sending it.
//
// The helpers check their own arguments (unknown id, duplicate label, index
// out of range) but not the whole set: call Validate (positions in the
// would-be file) or Request(nil).Validate() (cheaper, no positions) to see
// whether the set is ready to send.

// Clone returns a deep copy of s, node tree included, for undo.
func (s *Set) Clone() *Set {
	c := *s
	c.State = cloneRaw(s.State)
	c.Questions = make(provider.Questions, len(s.Questions))
	for i, e := range s.Questions {
		c.Questions[i] = provider.QuestionEntry{ID: e.ID, Question: e.Question.Clone()}
	}
	if s.Settings != nil {
		c.Settings = make(map[string]Settings, len(s.Settings))
		for k, v := range s.Settings {
			c.Settings[k] = Settings{Threshold: clonePtr(v.Threshold), MinConfidence: clonePtr(v.MinConfidence), Negation: cloneRaw(v.Negation), Costs: v.Costs.clone()}
		}
	}
	if s.Gates != nil {
		c.Gates = make(map[string]Gate, len(s.Gates))
		for k, g := range s.Gates {
			var ng Gate
			for _, f := range gateFields {
				*f.get(&ng) = clonePtr(*f.get(&g))
			}
			c.Gates[k] = ng
		}
	}
	if s.Variants != nil {
		c.Variants = make(map[string][]Variant, len(s.Variants))
		for k, vs := range s.Variants {
			cv := make([]Variant, len(vs))
			for i := range vs {
				cv[i] = vs[i].clone()
			}
			c.Variants[k] = cv
		}
	}
	if s.Split != nil {
		sp := *s.Split
		c.Split = &sp
	}
	c.Fixtures = append([]string(nil), s.Fixtures...)
	c.DatasetMap = s.DatasetMap.clone()
	c.orig = append([]byte(nil), s.orig...)
	if s.orig == nil {
		c.orig = nil
	}
	c.snapshot = append([]byte(nil), s.snapshot...)
	if s.doc != nil {
		c.doc = cloneNode(s.doc, map[*yaml.Node]*yaml.Node{})
	}
	return &c
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

func clonePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneNode deep-copies a node tree, keeping aliases pointing into the copy.
func cloneNode(n *yaml.Node, seen map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := seen[n]; ok {
		return c
	}
	c := *n
	seen[n] = &c
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = cloneNode(ch, seen)
		}
	}
	c.Alias = cloneNode(n.Alias, seen)
	return &c
}

// index returns the position of question id, or an error naming the ids.
func (s *Set) index(id string) (int, error) {
	for i := range s.Questions {
		if s.Questions[i].ID == id {
			return i, nil
		}
	}
	return -1, fmt.Errorf("no question %q (questions: %s)", id, strings.Join(s.Questions.IDs(), ", "))
}

// update applies fn to a copy of question id and stores the copy.
func (s *Set) update(id string, fn func(q *provider.Question) error) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	q := s.Questions[i].Question
	if err := fn(&q); err != nil {
		return fmt.Errorf("question %q: %w", id, err)
	}
	qs := make(provider.Questions, len(s.Questions))
	copy(qs, s.Questions)
	qs[i].Question = q
	s.Questions = qs
	return nil
}

// rawValue checks a text slot (instructions, description, level): valid
// JSON, returned compact. nil stays nil.
func rawValue(v json.RawMessage, what string) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if !json.Valid(v) {
		return nil, fmt.Errorf("%s is not valid JSON", what)
	}
	return provider.Compact(v), nil
}

// SetWorkingState replaces the working state (nil removes it). It must be
// a string, object or array.
func (s *Set) SetWorkingState(state json.RawMessage) error {
	if state == nil {
		s.State = nil
		return nil
	}
	raw, err := rawValue(state, "state")
	if err != nil {
		return err
	}
	if k := jsonKind(raw); k != "string" && k != "object" && k != "array" {
		return fmt.Errorf("state must be a string, object or array, not a %s", k)
	}
	s.State = raw
	return nil
}

// SetInstructions replaces question id's instructions: a JSON string,
// object or array (nil removes them). Use provider.String for plain text.
func (s *Set) SetInstructions(id string, v json.RawMessage) error {
	raw, err := rawValue(v, "instructions")
	if err != nil {
		return err
	}
	return s.update(id, func(q *provider.Question) error {
		q.Instructions = raw
		return nil
	})
}

// AddQuestion inserts q under id at position at (clamped; -1 = last).
func (s *Set) AddQuestion(id string, q provider.Question, at int) error {
	if id == "" {
		return fmt.Errorf("a question id must not be empty")
	}
	if _, ok := s.Questions.Get(id); ok {
		return fmt.Errorf("question %q already exists", id)
	}
	if !q.Type.Valid() {
		return fmt.Errorf("question %q: %q is not a question type; use noul, choice or score", id, q.Type)
	}
	qs := make(provider.Questions, 0, len(s.Questions)+1)
	at = clampInsert(at, len(s.Questions))
	qs = append(qs, s.Questions[:at]...)
	qs = append(qs, provider.QuestionEntry{ID: id, Question: q.Clone()})
	qs = append(qs, s.Questions[at:]...)
	s.Questions = qs
	return nil
}

// RemoveQuestion deletes question id with its settings and gate.
func (s *Set) RemoveQuestion(id string) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	qs := make(provider.Questions, 0, len(s.Questions)-1)
	qs = append(qs, s.Questions[:i]...)
	s.Questions = append(qs, s.Questions[i+1:]...)
	delete(s.Settings, id)
	delete(s.Gates, id)
	if _, ok := s.Variants[id]; ok {
		s.setVariants(id, nil)
	}
	return nil
}

// RenameQuestion changes a question's id, carrying its settings and gate.
// The id is not sent to the model, so recorded answers still match.
func (s *Set) RenameQuestion(old, new string) error {
	i, err := s.index(old)
	if err != nil {
		return err
	}
	if new == old {
		return nil
	}
	if new == "" || new == "*" {
		return fmt.Errorf("question id %q is not allowed", new)
	}
	if _, ok := s.Questions.Get(new); ok {
		return fmt.Errorf("question %q already exists", new)
	}
	if strings.Contains(new, VariantSep) && s.HasVariants() {
		return fmt.Errorf("question id %q: a set with variants keeps %q for variant ids (queue%sv2); choose another id", new, VariantSep, VariantSep)
	}
	qs := make(provider.Questions, len(s.Questions))
	copy(qs, s.Questions)
	qs[i].ID = new
	s.Questions = qs
	if st, ok := s.Settings[old]; ok {
		delete(s.Settings, old)
		s.Settings[new] = st
	}
	if g, ok := s.Gates[old]; ok {
		delete(s.Gates, old)
		s.Gates[new] = g
	}
	if vs, ok := s.Variants[old]; ok {
		s.setVariants(old, nil)
		s.setVariants(new, vs)
	}
	return nil
}

// MoveQuestion moves question id to position to (clamped).
func (s *Set) MoveQuestion(id string, to int) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	s.Questions = moved(s.Questions, i, to)
	return nil
}

// SetType changes question id's type, converting what it can:
//   - choice → score: each option becomes a level (its description, or
//     its label when the description is null); score → choice: each level
//     becomes an option labelled by the level's text when that is a usable
//     label, else "level_N" with the level as description;
//   - to noul: choice/score criteria are dropped (a noul's criteria are
//     only "true"/"false"); from noul: its true/false criteria become the
//     options "yes"/"no" (choice) or levels no, yes (score);
//   - a threshold is kept only on a noul, min_confidence only off one.
func (s *Set) SetType(id string, t provider.QuestionType) error {
	if !t.Valid() {
		return fmt.Errorf("%q is not a question type; use noul, choice or score", t)
	}
	err := s.update(id, func(q *provider.Question) error {
		if q.Type == t {
			return nil
		}
		from := *q
		q.Type, q.Options, q.Levels = t, nil, nil
		switch t {
		case provider.Choice:
			switch from.Type {
			case provider.Score:
				used := map[string]bool{}
				for i, l := range from.Levels {
					text := provider.Text(l)
					if len(l) > 0 && l[0] == '"' && usableLabel(text) && !used[text] {
						used[text] = true
						q.Options = append(q.Options, provider.Option{Label: text, Description: json.RawMessage("null")})
					} else {
						q.Options = append(q.Options, provider.Option{Label: fmt.Sprintf("level_%d", i), Description: l})
					}
				}
			case provider.Noul:
				q.Options = []provider.Option{{Label: "yes", Description: noulEntry(from, "true")}, {Label: "no", Description: noulEntry(from, "false")}}
			}
		case provider.Score:
			switch from.Type {
			case provider.Choice:
				for _, o := range from.Options {
					if o.Description == nil || string(o.Description) == "null" {
						q.Levels = append(q.Levels, provider.String(o.Label))
					} else {
						q.Levels = append(q.Levels, o.Description)
					}
				}
			case provider.Noul:
				no, yes := noulEntry(from, "false"), noulEntry(from, "true")
				if string(no) == "null" {
					no = provider.String("no")
				}
				if string(yes) == "null" {
					yes = provider.String("yes")
				}
				q.Levels = []json.RawMessage{no, yes}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if st, ok := s.Settings[id]; ok {
		if t == provider.Noul {
			st.MinConfidence = nil
		} else {
			st.Threshold, st.Negation = nil, nil
		}
		s.putSettings(id, st)
	}
	return nil
}

func noulEntry(q provider.Question, key string) json.RawMessage {
	if i := q.OptionIndex(key); i >= 0 && q.Options[i].Description != nil {
		return q.Options[i].Description
	}
	return json.RawMessage("null")
}

// usableLabel reports whether s can be a choice option label as it is.
func usableLabel(s string) bool {
	if s == "" || len(s) > 120 || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// AddOption inserts an option (choice) or a "true"/"false" criteria entry
// (noul) at position at (clamped; -1 = last). desc nil means null (the
// label speaks for itself).
func (s *Set) AddOption(id, label string, desc json.RawMessage, at int) error {
	raw, err := rawValue(desc, "description")
	if err != nil {
		return err
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	return s.update(id, func(q *provider.Question) error {
		if err := optionsOK(q); err != nil {
			return err
		}
		if msg := labelMessage(q, label); msg != "" {
			return fmt.Errorf("%s", msg)
		}
		if q.OptionIndex(label) >= 0 {
			return fmt.Errorf("option %q already exists", label)
		}
		at = clampInsert(at, len(q.Options))
		opts := make([]provider.Option, 0, len(q.Options)+1)
		opts = append(opts, q.Options[:at]...)
		opts = append(opts, provider.Option{Label: label, Description: raw})
		q.Options = append(opts, q.Options[at:]...)
		return nil
	})
}

// RemoveOption deletes option label.
func (s *Set) RemoveOption(id, label string) error {
	return s.update(id, func(q *provider.Question) error {
		i, err := optionIndex(q, label)
		if err != nil {
			return err
		}
		opts := make([]provider.Option, 0, len(q.Options)-1)
		opts = append(opts, q.Options[:i]...)
		q.Options = append(opts, q.Options[i+1:]...)
		return nil
	})
}

// RenameOption changes an option's label in place (its description and
// position stay). Note that recorded answers are keyed by the question
// body, so renaming an option means new answers.
func (s *Set) RenameOption(id, old, new string) error {
	return s.update(id, func(q *provider.Question) error {
		i, err := optionIndex(q, old)
		if err != nil {
			return err
		}
		if old == new {
			return nil
		}
		if msg := labelMessage(q, new); msg != "" {
			return fmt.Errorf("%s", msg)
		}
		if q.OptionIndex(new) >= 0 {
			return fmt.Errorf("option %q already exists", new)
		}
		opts := append([]provider.Option(nil), q.Options...)
		opts[i].Label = new
		q.Options = opts
		return nil
	})
}

// MoveOption moves option label to position to (clamped). Order is
// meaning: Jev's answers move with it.
func (s *Set) MoveOption(id, label string, to int) error {
	return s.update(id, func(q *provider.Question) error {
		i, err := optionIndex(q, label)
		if err != nil {
			return err
		}
		q.Options = moved(q.Options, i, to)
		return nil
	})
}

// SetOptionDescription replaces option label's description (nil = null).
func (s *Set) SetOptionDescription(id, label string, desc json.RawMessage) error {
	raw, err := rawValue(desc, "description")
	if err != nil {
		return err
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	return s.update(id, func(q *provider.Question) error {
		i, err := optionIndex(q, label)
		if err != nil {
			return err
		}
		opts := append([]provider.Option(nil), q.Options...)
		opts[i].Description = raw
		q.Options = opts
		return nil
	})
}

// AddLevel inserts a score level at position at (clamped; -1 = last).
func (s *Set) AddLevel(id string, at int, level json.RawMessage) error {
	raw, err := rawValue(level, "level")
	if err != nil {
		return err
	}
	if raw == nil {
		return fmt.Errorf("a level needs text, an object or an array")
	}
	return s.update(id, func(q *provider.Question) error {
		if q.Type != provider.Score {
			return fmt.Errorf("a %s has no levels; only a score does", q.Type)
		}
		at = clampInsert(at, len(q.Levels))
		lv := make([]json.RawMessage, 0, len(q.Levels)+1)
		lv = append(lv, q.Levels[:at]...)
		lv = append(lv, raw)
		q.Levels = append(lv, q.Levels[at:]...)
		return nil
	})
}

// RemoveLevel deletes level i.
func (s *Set) RemoveLevel(id string, i int) error {
	return s.update(id, func(q *provider.Question) error {
		if err := levelIndex(q, i); err != nil {
			return err
		}
		lv := make([]json.RawMessage, 0, len(q.Levels)-1)
		lv = append(lv, q.Levels[:i]...)
		q.Levels = append(lv, q.Levels[i+1:]...)
		return nil
	})
}

// SetLevel replaces level i.
func (s *Set) SetLevel(id string, i int, level json.RawMessage) error {
	raw, err := rawValue(level, "level")
	if err != nil {
		return err
	}
	if raw == nil {
		return fmt.Errorf("a level needs text, an object or an array")
	}
	return s.update(id, func(q *provider.Question) error {
		if err := levelIndex(q, i); err != nil {
			return err
		}
		lv := append([]json.RawMessage(nil), q.Levels...)
		lv[i] = raw
		q.Levels = lv
		return nil
	})
}

// MoveLevel moves level from to position to (clamped). The index is the
// level's value: moving a level changes what the score means.
func (s *Set) MoveLevel(id string, from, to int) error {
	return s.update(id, func(q *provider.Question) error {
		if err := levelIndex(q, from); err != nil {
			return err
		}
		q.Levels = moved(q.Levels, from, to)
		return nil
	})
}

// SetThreshold sets noul id's caller-side threshold (nil = default 0.5).
func (s *Set) SetThreshold(id string, v *float64) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	if v != nil {
		if s.Questions[i].Question.Type != provider.Noul {
			return fmt.Errorf("question %q: only a noul has a threshold", id)
		}
		if *v < 0 || *v > 1 {
			return fmt.Errorf("question %q: threshold %s is outside [0, 1]", id, formatFloat(*v))
		}
	}
	st := s.Settings[id]
	st.Threshold = clonePtr(v)
	s.putSettings(id, st)
	return nil
}

// SetMinConfidence sets question id's caller-side minimum confidence (nil
// removes it). A noul has no confidence.
func (s *Set) SetMinConfidence(id string, v *float64) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	if v != nil {
		if s.Questions[i].Question.Type == provider.Noul {
			return fmt.Errorf("question %q: a noul has no confidence; use a threshold", id)
		}
		if *v < 0 || *v > 1 {
			return fmt.Errorf("question %q: min_confidence %s is outside [0, 1]", id, formatFloat(*v))
		}
	}
	st := s.Settings[id]
	st.MinConfidence = clonePtr(v)
	s.putSettings(id, st)
	return nil
}

// SetGate sets the gate for question id or "*" (nil removes it).
func (s *Set) SetGate(id string, g *Gate) error {
	if id != "*" {
		if _, err := s.index(id); err != nil {
			return err
		}
	}
	if g == nil {
		delete(s.Gates, id)
		return nil
	}
	if s.Gates == nil {
		s.Gates = map[string]Gate{}
	}
	s.Gates[id] = *g
	return nil
}

func (s *Set) putSettings(id string, st Settings) {
	if st.empty() {
		delete(s.Settings, id)
		return
	}
	if s.Settings == nil {
		s.Settings = map[string]Settings{}
	}
	s.Settings[id] = st
}

func optionsOK(q *provider.Question) error {
	if q.Type == provider.Score {
		return fmt.Errorf("a score has levels, not options")
	}
	return nil
}

// labelMessage says why label cannot be added to q, or "".
func labelMessage(q *provider.Question, label string) string {
	if q.Type == provider.Noul {
		if label != "true" && label != "false" {
			return `a noul's criteria keys are only "true" and "false"`
		}
		return ""
	}
	if label == "" {
		return "option label is empty"
	}
	if strings.TrimSpace(label) != label {
		return "option label has leading or trailing whitespace"
	}
	for _, r := range label {
		if unicode.IsControl(r) {
			return "option label contains a control character"
		}
	}
	return ""
}

func optionIndex(q *provider.Question, label string) (int, error) {
	if err := optionsOK(q); err != nil {
		return -1, err
	}
	i := q.OptionIndex(label)
	if i < 0 {
		return -1, fmt.Errorf("no option %q", label)
	}
	return i, nil
}

func levelIndex(q *provider.Question, i int) error {
	if q.Type != provider.Score {
		return fmt.Errorf("a %s has no levels; only a score does", q.Type)
	}
	if i < 0 || i >= len(q.Levels) {
		return fmt.Errorf("level %d is out of range (0..%d)", i, len(q.Levels)-1)
	}
	return nil
}

func clampInsert(at, n int) int {
	if at < 0 || at > n {
		return n
	}
	return at
}

// moved returns a copy of list with element i moved to position to.
func moved[T any](list []T, i, to int) []T {
	if to < 0 {
		to = 0
	}
	if to >= len(list) {
		to = len(list) - 1
	}
	out := make([]T, 0, len(list))
	x := list[i]
	for j, e := range list {
		if j != i {
			out = append(out, e)
		}
	}
	out = append(out[:to], append([]T{x}, out[to:]...)...)
	return out
}
