package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// An Edit is one harmless change of a state.
type Edit struct {
	// Name is its short name, also the suffix of the probe item's id
	// (ITEM~NAME).
	Name string
	// Apply returns the edited state, or ok false when the edit does not
	// apply (field order of a text state) or changes nothing.
	Apply func(state json.RawMessage) (json.RawMessage, bool)
}

// Edits returns the perturb probe's edits, in the order they are tried:
//
//   - "space": every space in the state's text doubled;
//   - "case": the state's text lowercased;
//   - "order": an object state's fields in reverse order;
//   - "sentence": the given sentence appended (only when one is given).
//
// Keys are never changed. The probe also asks "all" (every edit that
// applies, one after another), so a flip that needs several edits is seen.
func Edits(sentence string) []Edit {
	es := []Edit{
		{"space", func(s json.RawMessage) (json.RawMessage, bool) {
			return mapText(s, func(t string) string { return strings.ReplaceAll(t, " ", "  ") })
		}},
		{"case", func(s json.RawMessage) (json.RawMessage, bool) { return mapText(s, strings.ToLower) }},
		{"order", func(s json.RawMessage) (json.RawMessage, bool) {
			fs, err := objectFields(bytes.TrimSpace(s))
			if err != nil || len(fs) < 2 {
				return nil, false
			}
			for i, j := 0, len(fs)-1; i < j; i, j = i+1, j-1 {
				fs[i], fs[j] = fs[j], fs[i]
			}
			return writeObject(fs), true
		}},
	}
	if sentence != "" {
		es = append(es, Edit{"sentence", func(s json.RawMessage) (json.RawMessage, bool) {
			out, err := InjectText(s, sentence)
			return out, err == nil
		}})
	}
	return es
}

// AllEdits is the name of the variant with every edit applied.
const AllEdits = "all"

// variantID is the probe item id of an item's variant.
func variantID(item, edit string) string { return item + "~" + edit }

// splitVariant splits a probe item id into the item's id and the edit.
func splitVariant(id string) (item, edit string) {
	i := strings.LastIndexByte(id, '~')
	if i < 0 {
		return id, ""
	}
	return id[:i], id[i+1:]
}

// mapText rewrites every string value of a JSON state (keys kept, order
// kept); ok is false when nothing changed.
func mapText(state json.RawMessage, fn func(string) string) (json.RawMessage, bool) {
	out, err := mapStrings(bytes.TrimSpace(state), fn)
	if err != nil || bytes.Equal(out, provider.Compact(state)) {
		return nil, false
	}
	return out, true
}

func mapStrings(raw []byte, fn func(string) string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty value")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return marshalNoEscape(fn(s)), nil
	case '{':
		fs, err := objectFields(raw)
		if err != nil {
			return nil, err
		}
		for i := range fs {
			v, err := mapStrings(fs[i].value, fn)
			if err != nil {
				return nil, err
			}
			fs[i].value = v
		}
		return writeObject(fs), nil
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, err
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				b.WriteByte(',')
			}
			v, err := mapStrings(provider.Compact(e), fn)
			if err != nil {
				return nil, err
			}
			b.Write(v)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	}
	return provider.Compact(raw), nil
}

func perturbPlan(set *questionset.Set, o Options) (*Plan, error) {
	ids := idsOf(set, o, nil)
	edits := Edits(o.Params.Sentence)
	p := &Plan{Kind: Perturb, Set: set, Questions: ids}
	p.Items = func(it dataset.Item, emit func(dataset.Item) error) error {
		all := it.State
		applied := 0
		for _, e := range edits {
			st, ok := e.Apply(it.State)
			if !ok {
				continue
			}
			v := it
			v.ID, v.State = variantID(it.ID, e.Name), st
			if err := emit(v); err != nil {
				return err
			}
			if next, ok := e.Apply(all); ok {
				all = next
				applied++
			}
		}
		if applied > 1 {
			v := it
			v.ID, v.State = variantID(it.ID, AllEdits), all
			return emit(v)
		}
		return nil
	}
	return p, nil
}

// editSize is how many bytes an edit changed: the lengths of the two
// middles left after the common prefix and suffix are cut off.
func editSize(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	return (len(a) - i - j) + (len(b) - i - j)
}

// Row is a dataset row (JSON Lines) for a kept perturbation: the edited
// state with the item's labels, so the flip becomes a regression case.
type Row struct {
	ID     string                     `json:"id"`
	State  json.RawMessage            `json:"state"`
	Labels map[string]json.RawMessage `json:"labels,omitempty"`
}

// rowLabels writes labels the way dataset rows hold them: a noul's as
// true/false, a choice's as its option label, a score's as its level index.
func rowLabels(set *questionset.Set, labels map[string]dataset.Label) map[string]json.RawMessage {
	if len(labels) == 0 {
		return nil
	}
	out := map[string]json.RawMessage{}
	for id, l := range labels {
		q, ok := set.Question(id)
		if !ok {
			continue
		}
		switch q.Type {
		case provider.Noul:
			out[id] = json.RawMessage(map[bool]string{true: "true", false: "false"}[l.Index == 1])
		case provider.Choice:
			out[id] = marshalNoEscape(l.Text)
		case provider.Score:
			out[id] = json.RawMessage(fmt.Sprint(l.Index))
		}
	}
	return out
}
