package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// A field reference names where a value sits in a JSONL row: a top-level
// field name ("gold_label"), a dotted path into nested objects and arrays
// ("expect.queue", "turns.0.text") or a JSON Pointer (RFC 6901,
// "/input/ticket", with ~1 for "/" and ~0 for "~"). A top-level field whose
// name is the whole reference wins over a dotted reading, so a field named
// "gold.label" is still found. CSV columns are flat: there a reference is
// a column name.

// ForSet returns o completed with the field mapping of set's dataset:
// (questionset.DatasetMapping): every field o leaves empty is taken from
// the set; a label mapped in o wins over the set's for that question. Use
// it when reading the set's own dataset; a dataset named on the command
// line (--data) is read with the flags alone.
func (o Options) ForSet(set *questionset.Set) Options {
	if set == nil || set.DatasetMap == nil {
		return o
	}
	m := set.DatasetMap
	if o.IDField == "" {
		o.IDField = m.ID
	}
	if o.StateField == "" && len(o.StateFields) == 0 {
		o.StateField = m.State
		o.StateFields = append([]string(nil), m.StateFields...)
	}
	for _, l := range m.Labels {
		if _, ok := o.LabelFields[l.Question]; ok {
			continue
		}
		if o.LabelFields == nil {
			o.LabelFields = map[string]string{}
		}
		o.LabelFields[l.Question] = l.Field
		if len(l.Values) > 0 {
			if o.LabelValues == nil {
				o.LabelValues = map[string]map[string]string{}
			}
			o.LabelValues[l.Question] = l.Values
		}
	}
	o.fromSet = true
	return o
}

// ParseStateFields parses a --state-fields value: a comma-separated list of
// field references, each optionally NAME=REF, whose values are combined
// into one object state {NAME: value, …} in the order given. Without a
// NAME the key is the reference's last segment.
func (o *Options) ParseStateFields(v string) error {
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return fmt.Errorf("--state-fields %q: an empty field; list fields as subject,body", v)
		}
		o.StateFields = append(o.StateFields, part)
	}
	_, err := stateKeys(o.StateFields)
	if err != nil {
		return fmt.Errorf("--state-fields %q: %w", v, err)
	}
	return nil
}

// stateKey splits a --state-fields entry into its object key and field
// reference.
func stateKey(entry string) (key, ref string) {
	if k, r, ok := strings.Cut(entry, "="); ok && k != "" && r != "" {
		return k, r
	}
	segs := pathSegments(entry)
	if len(segs) == 0 {
		return entry, entry
	}
	return segs[len(segs)-1], entry
}

// stateKeys returns the object keys of entries, refusing duplicates.
func stateKeys(entries []string) ([]string, error) {
	keys := make([]string, len(entries))
	seen := map[string]string{}
	for i, e := range entries {
		k, _ := stateKey(e)
		if prev, dup := seen[k]; dup {
			return nil, fmt.Errorf("%s and %s both become the state field %q; name one with NAME=FIELD", prev, e, k)
		}
		seen[k] = e
		keys[i] = k
	}
	return keys, nil
}

// pathSegments splits a field reference into its segments: a JSON Pointer
// by "/" (unescaped), anything else by ".".
func pathSegments(ref string) []string {
	if strings.HasPrefix(ref, "/") {
		parts := strings.Split(ref[1:], "/")
		for i, p := range parts {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
		return parts
	}
	return strings.Split(ref, ".")
}

// rowFields is one JSONL row's top-level fields with a memo of the nested
// objects already decoded, so several paths into one object decode it once.
type rowFields struct {
	top  map[string]json.RawMessage
	memo map[string]any // path prefix (joined by \x00) → map[string]json.RawMessage or []json.RawMessage
}

// lookup finds ref in the row: the top-level field named ref, else the
// path it spells. ok is false when any step is missing.
func (r *rowFields) lookup(ref string) (json.RawMessage, bool) {
	if v, ok := r.top[ref]; ok {
		return v, true
	}
	segs := pathSegments(ref)
	if len(segs) < 2 && !strings.HasPrefix(ref, "/") {
		return nil, false
	}
	cur, ok := r.top[segs[0]]
	if !ok {
		return nil, false
	}
	prefix := segs[0]
	for _, seg := range segs[1:] {
		node, ok := r.decoded(prefix, cur)
		if !ok {
			return nil, false
		}
		switch n := node.(type) {
		case map[string]json.RawMessage:
			cur, ok = n[seg]
		case []json.RawMessage:
			i, err := strconv.Atoi(seg)
			ok = err == nil && i >= 0 && i < len(n) && strconv.Itoa(i) == seg
			if ok {
				cur = n[i]
			}
		}
		if !ok {
			return nil, false
		}
		prefix += "\x00" + seg
	}
	return cur, true
}

// decoded returns raw decoded one level (object or array), memoised by
// its path.
func (r *rowFields) decoded(prefix string, raw json.RawMessage) (any, bool) {
	if v, ok := r.memo[prefix]; ok {
		return v, v != nil
	}
	if r.memo == nil {
		r.memo = map[string]any{}
	}
	raw = bytes.TrimSpace(raw)
	var out any
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			out = m
		}
	case len(raw) > 0 && raw[0] == '[':
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) == nil {
			out = a
		}
	}
	r.memo[prefix] = out
	return out, out != nil
}

// combineState builds the object state of StateFields from one row; the
// message is "" on success.
func (rd *reader) combineState(get func(ref string) (json.RawMessage, bool)) (json.RawMessage, string) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range rd.opt.StateFields {
		key, ref := stateKey(e)
		v, ok := get(ref)
		if !ok {
			return nil, fmt.Sprintf("missing %q, one of the state fields (%s)", ref, strings.Join(rd.opt.StateFields, ", "))
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(provider.String(key))
		b.WriteByte(':')
		b.Write(provider.Compact(v))
	}
	b.WriteByte('}')
	return b.Bytes(), ""
}

// mapValue applies the question's value mapping (LabelValues) to a raw
// label: a string or other scalar found in the map is replaced by its
// label; anything else is left for ResolveLabel to judge.
func (rd *reader) mapValue(q string, raw json.RawMessage) (json.RawMessage, string) {
	vals := rd.opt.LabelValues[q]
	if len(vals) == 0 || len(raw) == 0 || isNull(raw) {
		return raw, ""
	}
	key := string(bytes.TrimSpace(raw))
	var s string
	if key[0] == '"' && json.Unmarshal([]byte(key), &s) == nil {
		key = s
	}
	to, ok := vals[key]
	if !ok {
		known := make([]string, 0, len(vals))
		for k := range vals {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, fmt.Sprintf("value %s is not in the dataset mapping's values for this question (%s)", raw, strings.Join(known, ", "))
	}
	if _, err := strconv.Atoi(to); err == nil {
		return json.RawMessage(to), ""
	}
	return provider.String(to), ""
}

// flagHint names where a mapping came from, for messages.
func (rd *reader) flagHint(flag string) string {
	if rd.opt.fromSet {
		return flag + " or the set's dataset: mapping"
	}
	return flag
}
