package questionset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// Variants
//
// A question may carry named variants, a caller-side key never sent as
// such:
//
//	queue:
//	  type: choice
//	  instructions: Which team should handle this message?
//	  criteria: {billing: …, technical: …}
//	  variants:
//	    v2: {instructions: "Route the message to one team."}
//
// A variant overrides any of its question's fields but the type
// (instructions, criteria, threshold, min_confidence); what it does not
// override it inherits. Asked beside its base in the same request (the
// answers are independent and see the same state), it is sent under the
// derived id "queue~v2" (VariantID). In a set with variants no question id
// may contain "~", and a variant name is letters, digits, "_", "-" and
// ".", so a derived id can never be a real id nor two variants' ids.

// VariantSep separates a question id from a variant name in a derived id.
const VariantSep = "~"

// variantNameRE is the form of a variant name.
var variantNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// variantFields are the fields a variant may have.
var variantFields = []string{"instructions", "criteria", "threshold", "min_confidence"}

// Variant is one named rewording of a question: the fields it overrides
// (nil: inherited from the question).
type Variant struct {
	Name string
	// Instructions replace the question's (compact JSON); nil inherits.
	Instructions json.RawMessage
	// Options replace a choice's options or a noul's criteria; Levels a
	// score's levels. Both nil: the question's criteria.
	Options []provider.Option
	Levels  []json.RawMessage
	// Threshold and MinConfidence replace the question's caller-side
	// settings; nil inherits.
	Threshold     *float64
	MinConfidence *float64
}

// HasCriteria reports whether the variant replaces the criteria.
func (v *Variant) HasCriteria() bool { return v.Options != nil || v.Levels != nil }

func (v *Variant) clone() Variant {
	c := Variant{Name: v.Name, Instructions: cloneRaw(v.Instructions), Threshold: clonePtr(v.Threshold), MinConfidence: clonePtr(v.MinConfidence)}
	if v.Options != nil {
		c.Options = make([]provider.Option, len(v.Options))
		for i, o := range v.Options {
			c.Options[i] = provider.Option{Label: o.Label, Description: cloneRaw(o.Description)}
		}
	}
	if v.Levels != nil {
		c.Levels = make([]json.RawMessage, len(v.Levels))
		for i, l := range v.Levels {
			c.Levels[i] = cloneRaw(l)
		}
	}
	return c
}

// VariantID is the id variant name of question id is asked under.
func VariantID(id, name string) string { return id + VariantSep + name }

// SplitVariantID splits a derived id into its question id and variant
// name; ok is false for a plain question id.
func SplitVariantID(id string) (question, name string, ok bool) {
	i := strings.Index(id, VariantSep)
	if i < 0 {
		return id, "", false
	}
	return id[:i], id[i+len(VariantSep):], true
}

// ValidVariantName reports whether name can name a variant.
func ValidVariantName(name string) bool { return variantNameRE.MatchString(name) }

// VariantRef names one variant of one question.
type VariantRef struct {
	Question string `json:"question"`
	Name     string `json:"variant"`
}

// ID is the derived id the variant is asked under.
func (r VariantRef) ID() string { return VariantID(r.Question, r.Name) }

// HasVariants reports whether any question has a variant.
func (s *Set) HasVariants() bool {
	for _, vs := range s.Variants {
		if len(vs) > 0 {
			return true
		}
	}
	return false
}

// AllVariants lists every variant in question order, then file order.
func (s *Set) AllVariants() []VariantRef {
	var out []VariantRef
	for _, e := range s.Questions {
		for _, v := range s.Variants[e.ID] {
			out = append(out, VariantRef{Question: e.ID, Name: v.Name})
		}
	}
	return out
}

// Variant returns question id's variant name.
func (s *Set) Variant(id, name string) (*Variant, bool) {
	for i := range s.Variants[id] {
		if s.Variants[id][i].Name == name {
			return &s.Variants[id][i], true
		}
	}
	return nil, false
}

// SelectVariants reads --variants values: "all" (every variant), "Q" (all
// of question Q's) or "Q:v2,v3". Several values add up; the result is in
// set order without duplicates. An unknown question or variant is an
// error naming what there is.
func (s *Set) SelectVariants(specs []string) ([]VariantRef, error) {
	want := map[VariantRef]bool{}
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		if spec == "all" {
			if !s.HasVariants() {
				return nil, fmt.Errorf("--variants all: the set has no variants (add variants: {v2: {instructions: …}} to a question)")
			}
			for _, r := range s.AllVariants() {
				want[r] = true
			}
			continue
		}
		qid, names, hasNames := strings.Cut(spec, ":")
		if _, ok := s.Questions.Get(qid); !ok {
			return nil, fmt.Errorf("--variants %s: no question %q (questions: %s)", spec, qid, strings.Join(s.Questions.IDs(), ", "))
		}
		have := s.variantNames(qid)
		if len(have) == 0 {
			return nil, fmt.Errorf("--variants %s: question %q has no variants", spec, qid)
		}
		if !hasNames {
			for _, n := range have {
				want[VariantRef{qid, n}] = true
			}
			continue
		}
		for _, n := range strings.Split(names, ",") {
			n = strings.TrimSpace(n)
			if !slices.Contains(have, n) {
				return nil, fmt.Errorf("--variants %s: question %q has no variant %q (it has %s)", spec, qid, n, strings.Join(have, ", "))
			}
			want[VariantRef{qid, n}] = true
		}
	}
	var out []VariantRef
	for _, r := range s.AllVariants() {
		if want[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Set) variantNames(id string) []string {
	var out []string
	for _, v := range s.Variants[id] {
		out = append(out, v.Name)
	}
	return out
}

// VariantQuestion returns the wire question variant r asks: its question
// with the variant's fields laid over it.
func (s *Set) VariantQuestion(r VariantRef) (provider.Question, bool) {
	base, ok := s.Questions.Get(r.Question)
	if !ok {
		return provider.Question{}, false
	}
	v, ok := s.Variant(r.Question, r.Name)
	if !ok {
		return provider.Question{}, false
	}
	return v.apply(base), true
}

func (v *Variant) apply(base *provider.Question) provider.Question {
	q := base.Clone()
	if v.Instructions != nil {
		q.Instructions = cloneRaw(v.Instructions)
	}
	c := v.clone()
	if c.Options != nil {
		q.Options = c.Options
	}
	if c.Levels != nil {
		q.Levels = c.Levels
	}
	return q
}

// AskedQuestion returns the wire question asked under id: a question of
// the set, or a variant under its derived id.
func (s *Set) AskedQuestion(id string) (provider.Question, bool) {
	if q, ok := s.Questions.Get(id); ok {
		return q.Clone(), true
	}
	if qid, name, ok := SplitVariantID(id); ok {
		return s.VariantQuestion(VariantRef{qid, name})
	}
	return provider.Question{}, false
}

// RequestWith is Request with the variants vs asked beside their
// questions, each under its derived id, after every question.
func (s *Set) RequestWith(state json.RawMessage, vs []VariantRef) *provider.Request {
	req := s.Request(state)
	if len(vs) == 0 {
		return req
	}
	qs := make(provider.Questions, len(req.Questions), len(req.Questions)+len(vs))
	copy(qs, req.Questions)
	for _, r := range vs {
		if q, ok := s.VariantQuestion(r); ok {
			qs = append(qs, provider.QuestionEntry{ID: r.ID(), Question: q})
		}
	}
	req.Questions = qs
	return req
}

// variantSetting resolves a derived id's caller-side setting: the
// variant's own, else its question's.
func (s *Set) variantSetting(id string, get func(st Settings) *float64, own func(v *Variant) *float64) (*float64, string) {
	qid, name, ok := SplitVariantID(id)
	if ok {
		if v, found := s.Variant(qid, name); found && own(v) != nil {
			return own(v), qid
		}
	} else {
		qid = id
	}
	if st, found := s.Settings[qid]; found {
		return get(st), qid
	}
	return nil, qid
}

// writeVariants writes question id's variants as the file's JSON
// ("variants":{…}) after a comma, or nothing.
func (s *Set) writeVariants(b *bytes.Buffer, id string, typ provider.QuestionType) {
	vs := s.Variants[id]
	if len(vs) == 0 {
		return
	}
	b.WriteString(`,"variants":{`)
	for i := range vs {
		v := &vs[i]
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, v.Name)
		b.WriteString(":{")
		n := 0
		field := func(k string) {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			writeString(b, k)
			b.WriteByte(':')
		}
		if v.Instructions != nil {
			field("instructions")
			b.Write(v.Instructions)
		}
		if v.HasCriteria() {
			field("criteria")
			q := provider.Question{Type: typ, Options: v.Options, Levels: v.Levels}
			if typ == provider.Noul && len(q.Options) == 0 {
				b.WriteString("{}")
			} else {
				body, _ := q.MarshalJSON()
				var w struct {
					Criteria json.RawMessage `json:"criteria"`
				}
				if json.Unmarshal(body, &w) == nil && w.Criteria != nil {
					b.Write(w.Criteria)
				} else {
					b.WriteString("null")
				}
			}
		}
		if v.Threshold != nil {
			field("threshold")
			b.WriteString(formatFloat(*v.Threshold))
		}
		if v.MinConfidence != nil {
			field("min_confidence")
			b.WriteString(formatFloat(*v.MinConfidence))
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
}

// AddVariant adds (or replaces) question id's variant v, checking its name
// and the type rules of its settings.
func (s *Set) AddVariant(id string, v Variant) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	if !ValidVariantName(v.Name) {
		return fmt.Errorf("question %q: variant name %q: use letters, digits, _, - and . (at most 64, starting with a letter or digit)", id, v.Name)
	}
	if strings.Contains(id, VariantSep) {
		return fmt.Errorf("question %q: a question whose id contains %q cannot have variants (its variant ids would be ambiguous); rename it", id, VariantSep)
	}
	t := s.Questions[i].Question.Type
	if v.Threshold != nil && t != provider.Noul {
		return fmt.Errorf("question %q: variant %q: only a noul has a threshold", id, v.Name)
	}
	if v.MinConfidence != nil && t == provider.Noul {
		return fmt.Errorf("question %q: variant %q: a noul has no confidence; use a threshold", id, v.Name)
	}
	if v.Options != nil && t == provider.Score || v.Levels != nil && t != provider.Score {
		return fmt.Errorf("question %q: variant %q: criteria of the wrong shape for a %s", id, v.Name, t)
	}
	c := v.clone()
	vs := append([]Variant(nil), s.Variants[id]...)
	replaced := false
	for k := range vs {
		if vs[k].Name == v.Name {
			vs[k], replaced = c, true
		}
	}
	if !replaced {
		vs = append(vs, c)
	}
	s.setVariants(id, vs)
	return nil
}

// RemoveVariant deletes question id's variant name.
func (s *Set) RemoveVariant(id, name string) error {
	if _, ok := s.Variant(id, name); !ok {
		return fmt.Errorf("question %q has no variant %q", id, name)
	}
	var vs []Variant
	for _, v := range s.Variants[id] {
		if v.Name != name {
			vs = append(vs, v)
		}
	}
	s.setVariants(id, vs)
	return nil
}

func (s *Set) setVariants(id string, vs []Variant) {
	m := make(map[string][]Variant, len(s.Variants)+1)
	for k, v := range s.Variants {
		m[k] = v
	}
	if len(vs) == 0 {
		delete(m, id)
	} else {
		m[id] = vs
	}
	if len(m) == 0 {
		m = nil
	}
	s.Variants = m
}

// PromoteVariant makes question id's variant name the question: its
// wording (instructions, criteria, settings) becomes the question's, and
// the old wording becomes a variant named keepAs ("" picks "prev", "prev2",
// …), so nothing is lost. Every other variant keeps asking exactly what it
// asked. It returns the name the old wording was kept under.
func (s *Set) PromoteVariant(id, name, keepAs string) (string, error) {
	i, err := s.index(id)
	if err != nil {
		return "", err
	}
	v, ok := s.Variant(id, name)
	if !ok {
		return "", fmt.Errorf("question %q has no variant %q (it has %s)", id, name, strings.Join(s.variantNames(id), ", "))
	}
	oldQ := s.Questions[i].Question.Clone()
	oldSt := s.Settings[id]
	if keepAs == "" {
		keepAs = "prev"
		for k := 2; ; k++ {
			if _, taken := s.Variant(id, keepAs); !taken || keepAs == name {
				break
			}
			keepAs = fmt.Sprintf("prev%d", k)
		}
	} else if !ValidVariantName(keepAs) {
		return "", fmt.Errorf("question %q: variant name %q: use letters, digits, _, - and .", id, keepAs)
	} else if _, taken := s.Variant(id, keepAs); taken && keepAs != name {
		return "", fmt.Errorf("question %q already has a variant %q", id, keepAs)
	}
	// Each variant's full effective form, before anything moves.
	type full struct {
		name   string
		q      provider.Question
		th, mc *float64
	}
	effective := func(v *Variant) full {
		f := full{name: v.Name, q: v.apply(&oldQ), th: oldSt.Threshold, mc: oldSt.MinConfidence}
		if v.Threshold != nil {
			f.th = v.Threshold
		}
		if v.MinConfidence != nil {
			f.mc = v.MinConfidence
		}
		return f
	}
	promoted := effective(v)
	var rest []full
	for k := range s.Variants[id] {
		if s.Variants[id][k].Name != name {
			rest = append(rest, effective(&s.Variants[id][k]))
		}
	}
	old := full{name: keepAs, q: oldQ, th: oldSt.Threshold, mc: oldSt.MinConfidence}
	// The new question.
	qs := make(provider.Questions, len(s.Questions))
	copy(qs, s.Questions)
	qs[i].Question = promoted.q.Clone()
	s.Questions = qs
	s.putSettings(id, Settings{Threshold: clonePtr(promoted.th), MinConfidence: clonePtr(promoted.mc)})
	// Every other wording, re-expressed against it.
	diff := func(f full) Variant {
		nv := Variant{Name: f.name}
		if !bytes.Equal(f.q.Instructions, promoted.q.Instructions) {
			nv.Instructions = cloneRaw(f.q.Instructions)
			if nv.Instructions == nil {
				nv.Instructions = json.RawMessage(`null`)
			}
		}
		b, _ := (&provider.Question{Type: promoted.q.Type, Options: promoted.q.Options, Levels: promoted.q.Levels}).MarshalJSON()
		a2, _ := (&provider.Question{Type: f.q.Type, Options: f.q.Options, Levels: f.q.Levels}).MarshalJSON()
		if !bytes.Equal(a2, b) {
			c := f.q.Clone()
			nv.Options, nv.Levels = c.Options, c.Levels
			if f.q.Type == provider.Score && nv.Levels == nil {
				nv.Levels = []json.RawMessage{}
			}
			if f.q.Type != provider.Score && nv.Options == nil {
				nv.Options = []provider.Option{}
			}
		}
		th := func(p *float64) float64 {
			if p == nil {
				return DefaultThreshold
			}
			return *p
		}
		if f.q.Type == provider.Noul && th(f.th) != th(promoted.th) {
			x := th(f.th)
			nv.Threshold = &x
		}
		if f.q.Type != provider.Noul && !samePtr(f.mc, promoted.mc) {
			if f.mc == nil {
				x := 0.0 // no minimum: every answer is kept
				nv.MinConfidence = &x
			} else {
				nv.MinConfidence = clonePtr(f.mc)
			}
		}
		return nv
	}
	var vs []Variant
	for _, f := range rest {
		vs = append(vs, diff(f))
	}
	vs = append(vs, diff(old))
	s.setVariants(id, vs)
	return keepAs, nil
}

func samePtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
