package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"sort"
	"strconv"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// SnapshotJSON returns the canonical JSON of what a run depends on in a
// question set: its name, requested model, working state and the wire
// questions with their caller-side settings, in file order. Paths (dataset,
// fixtures) and gates are left out, so moving a file keeps the version; any
// rewording makes a new one. The result parses with questionset.Parse.
func SnapshotJSON(s *questionset.Set) []byte {
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	b.Write(provider.String(s.Title()))
	b.WriteString(`,"model":`)
	b.Write(provider.String(s.ModelName()))
	if s.State != nil {
		b.WriteString(`,"state":`)
		b.Write(provider.Compact(s.State))
	}
	b.WriteString(`,"questions":`)
	b.Write(s.QuestionsJSON())
	b.WriteByte('}')
	return b.Bytes()
}

// ParseSnapshot turns a stored snapshot back into a question set.
func ParseSnapshot(name string, body []byte) (*questionset.Set, error) {
	s, err := questionset.Parse(name, body)
	if err != nil {
		return nil, fmt.Errorf("stored question set %s: %w", name, err)
	}
	return s, nil
}

// datasetHasher computes a dataset snapshot's content hash over its items
// in order: id, compact state and labels (sorted by question id).
type datasetHasher struct {
	h   hash.Hash
	n   int
	buf []byte
}

func newDatasetHasher() *datasetHasher { return &datasetHasher{h: sha256.New()} }

func (d *datasetHasher) add(it *dataset.Item) {
	d.n++
	d.buf = d.buf[:0]
	d.buf = binary.AppendUvarint(d.buf, uint64(len(it.ID)))
	d.buf = append(d.buf, it.ID...)
	st := provider.Compact(it.State)
	d.buf = binary.AppendUvarint(d.buf, uint64(len(st)))
	d.buf = append(d.buf, st...)
	d.buf = append(d.buf, labelsJSON(it.Labels)...)
	d.buf = append(d.buf, '\n')
	d.h.Write(d.buf)
}

func (d *datasetHasher) sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

// labelsJSON encodes labels as {"question":{"index":i,"text":t}} with
// sorted keys; nil when there are none.
func labelsJSON(labels map[string]dataset.Label) []byte {
	if len(labels) == 0 {
		return nil
	}
	ids := make([]string, 0, len(labels))
	for id := range labels {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		l := labels[id]
		b.Write(provider.String(id))
		b.WriteString(`:{"index":`)
		b.WriteString(strconv.Itoa(l.Index))
		b.WriteString(`,"text":`)
		b.Write(provider.String(l.Text))
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ParseLabels decodes the labels stored with a dataset snapshot item.
func ParseLabels(raw []byte) (map[string]dataset.Label, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var m map[string]struct {
		Index int    `json:"index"`
		Text  string `json:"text"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("stored labels: %w", err)
	}
	out := make(map[string]dataset.Label, len(m))
	for k, v := range m {
		out[k] = dataset.Label{Index: v.Index, Text: v.Text}
	}
	return out, nil
}
