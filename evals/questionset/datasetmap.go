package questionset

import (
	"bytes"
	"sort"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// DatasetMapping says how the set's dataset file maps onto items when it
// is not in jevlab's own layout: the mapping form of `dataset:`,
//
//	dataset: {path: cases.jsonl, id: case_id, state: state,
//	          labels: {queue: expect.queue,
//	                   urgency: {field: expect.urgency, values: {low: 0, high: 2}}}}
//
// Field references are top-level names, dotted paths (expect.queue) or
// JSON Pointers (/expect/queue), as the dataset package reads them. The
// plain form `dataset: file.jsonl` has no mapping (Set.DatasetMap nil).
type DatasetMapping struct {
	// ID and State name the id and state fields ("" = the defaults).
	ID, State string
	// StateFields combines several fields into an object state (entries
	// are REF or NAME=REF); it excludes State.
	StateFields []string
	// Labels map questions to the fields holding their labels, in file
	// order.
	Labels []LabelMapping
}

// LabelMapping maps one question's label to a dataset field.
type LabelMapping struct {
	Question string
	Field    string
	// Values translates a value as the file writes it into the label
	// jevlab reads (an option label, a level index or text, true/false);
	// nil when the field holds jevlab labels already.
	Values map[string]string
	// valueOrder keeps the file order of Values for saving.
	valueOrder []string
}

// NewLabelMapping returns a label mapping whose values (file value →
// label, in the order of keys) are written back in that order.
func NewLabelMapping(question, field string, keys []string, values map[string]string) LabelMapping {
	return LabelMapping{Question: question, Field: field, Values: values, valueOrder: keys}
}

var datasetFields = []string{"path", "id", "state", "state_fields", "labels"}

// datasetMapping parses the mapping form of `dataset:`.
func (p *parser) datasetMapping(s *Set, n *yaml.Node) {
	pairs, err := p.conv.pairs(n, 1)
	if err != nil {
		p.posErr(err, n, "", "dataset")
		return
	}
	m := &DatasetMapping{}
	for _, kv := range pairs {
		f := "dataset." + kv.key
		switch kv.key {
		case "path":
			s.Dataset = p.text(kv.value, "", f)
			s.datasetAt = [2]int{deref(kv.value).Line, deref(kv.value).Column}
		case "id":
			m.ID = p.text(kv.value, "", f)
		case "state":
			m.State = p.text(kv.value, "", f)
		case "state_fields":
			d := deref(kv.value)
			if d.Kind != yaml.SequenceNode {
				p.errAt(d, "", f, "must be a list of fields, e.g. [subject, body]")
				continue
			}
			for _, e := range d.Content {
				if t := p.text(e, "", f); t != "" {
					m.StateFields = append(m.StateFields, t)
				}
			}
		case "labels":
			p.labelMappings(m, kv.value)
		default:
			p.unknown(kv.keyNode, "", f, datasetFields, "a dataset mapping has "+listWords(datasetFields))
		}
	}
	if s.Dataset == "" {
		p.errAt(n, "", "dataset.path", "missing; the mapping form of dataset: needs path: FILE")
	}
	if m.State != "" && len(m.StateFields) > 0 {
		p.errAt(n, "", "dataset.state_fields", "give state or state_fields, not both")
	}
	s.DatasetMap = m
}

func (p *parser) labelMappings(m *DatasetMapping, n *yaml.Node) {
	d := deref(n)
	if d.Kind != yaml.MappingNode {
		p.errAt(d, "", "dataset.labels", "must map question ids to fields, e.g. {queue: expect.queue}")
		return
	}
	pairs, err := p.conv.pairs(d, 2)
	if err != nil {
		p.posErr(err, d, "", "dataset.labels")
		return
	}
	for _, kv := range pairs {
		f := "dataset.labels." + kv.key
		v := deref(kv.value)
		if v.Kind != yaml.MappingNode {
			if t := p.text(v, kv.key, f); t != "" {
				m.Labels = append(m.Labels, LabelMapping{Question: kv.key, Field: t})
			}
			continue
		}
		lm := LabelMapping{Question: kv.key}
		inner, err := p.conv.pairs(v, 3)
		if err != nil {
			p.posErr(err, v, kv.key, f)
			continue
		}
		for _, e := range inner {
			switch e.key {
			case "field":
				lm.Field = p.text(e.value, kv.key, f+".field")
			case "values":
				vals := deref(e.value)
				vp, err := p.conv.pairs(vals, 4)
				if err != nil || vals.Kind != yaml.MappingNode {
					p.errAt(vals, kv.key, f+".values", "must map a value as the file writes it to a label, e.g. {low: 0, high: 2}")
					continue
				}
				lm.Values = map[string]string{}
				for _, x := range vp {
					xv := deref(x.value)
					if xv.Kind != yaml.ScalarNode || xv.ShortTag() == "!!null" {
						p.errAt(xv, kv.key, f+".values."+x.key, "must be a label: an option label, a level index or text, or true/false")
						continue
					}
					lm.Values[x.key] = xv.Value
					lm.valueOrder = append(lm.valueOrder, x.key)
				}
			default:
				p.unknown(e.keyNode, kv.key, f+"."+e.key, []string{"field", "values"}, "a label mapping has field and values")
			}
		}
		if lm.Field == "" {
			p.errAt(v, kv.key, f+".field", "missing; name the field holding this question's label")
			continue
		}
		m.Labels = append(m.Labels, lm)
	}
}

// writeDataset writes the dataset field's canonical JSON: the path, or the
// mapping object.
func (s *Set) writeDataset(b *bytes.Buffer) {
	m := s.DatasetMap
	if m == nil {
		writeString(b, s.Dataset)
		return
	}
	b.WriteString(`{"path":`)
	writeString(b, s.Dataset)
	if m.ID != "" {
		b.WriteString(`,"id":`)
		writeString(b, m.ID)
	}
	if m.State != "" {
		b.WriteString(`,"state":`)
		writeString(b, m.State)
	}
	if len(m.StateFields) > 0 {
		b.WriteString(`,"state_fields":[`)
		for i, f := range m.StateFields {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, f)
		}
		b.WriteByte(']')
	}
	if len(m.Labels) > 0 {
		b.WriteString(`,"labels":{`)
		for i, l := range m.Labels {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, l.Question)
			b.WriteByte(':')
			if len(l.Values) == 0 {
				writeString(b, l.Field)
				continue
			}
			b.WriteString(`{"field":`)
			writeString(b, l.Field)
			b.WriteString(`,"values":{`)
			for j, k := range l.orderedValues() {
				if j > 0 {
					b.WriteByte(',')
				}
				writeString(b, k)
				b.WriteByte(':')
				v := l.Values[k]
				if i, err := strconv.Atoi(v); err == nil && strconv.Itoa(i) == v {
					b.WriteString(v)
				} else {
					writeString(b, v)
				}
			}
			b.WriteString("}}")
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
}

// orderedValues lists the value keys in file order, then any added since.
func (l LabelMapping) orderedValues() []string {
	out := make([]string, 0, len(l.Values))
	seen := map[string]bool{}
	for _, k := range l.valueOrder {
		if _, ok := l.Values[k]; ok && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range l.Values {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// clone returns a deep copy of m (nil for nil).
func (m *DatasetMapping) clone() *DatasetMapping {
	if m == nil {
		return nil
	}
	c := *m
	c.StateFields = append([]string(nil), m.StateFields...)
	c.Labels = make([]LabelMapping, len(m.Labels))
	for i, l := range m.Labels {
		l.valueOrder = append([]string(nil), l.valueOrder...)
		if l.Values != nil {
			vals := make(map[string]string, len(l.Values))
			for k, v := range l.Values {
				vals[k] = v
			}
			l.Values = vals
		}
		c.Labels[i] = l
	}
	return &c
}
