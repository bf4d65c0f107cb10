package questionset

import (
	"strings"
	"testing"
)

const mappedSet = `name: m
questions:
  queue:
    type: choice
    instructions: Which team?
    criteria: {billing: null, other: null}
  urgency:
    type: score
    instructions: How urgent?
    criteria: [low, high]
# the dataset as it comes
dataset:
  path: cases.jsonl   # jev-packs cases
  id: case_id
  state: /input/ticket
  labels:
    queue: expect.queue
    urgency: {field: expect.urgency, values: {lo: 0, hi: "1"}}
`

// TestDatasetMapping parses the mapping form of dataset:, saves an
// unchanged set byte for byte, and keeps the mapping through an edit.
func TestDatasetMapping(t *testing.T) {
	s, err := Parse("m.yaml", []byte(mappedSet))
	if err != nil {
		t.Fatal(err)
	}
	m := s.DatasetMap
	if s.Dataset != "cases.jsonl" || m == nil || m.ID != "case_id" || m.State != "/input/ticket" || len(m.Labels) != 2 {
		t.Fatalf("mapping %+v (%q)", m, s.Dataset)
	}
	if l := m.Labels[1]; l.Question != "urgency" || l.Field != "expect.urgency" || l.Values["lo"] != "0" || l.Values["hi"] != "1" {
		t.Errorf("label %+v", l)
	}
	out, err := s.Marshal()
	if err != nil || string(out) != mappedSet {
		t.Fatalf("unchanged save differs (%v):\n%s", err, out)
	}
	c := s.Clone()
	if err := c.RenameQuestion("queue", "team"); err != nil {
		t.Fatal(err)
	}
	out, err = c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("m.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if back.DatasetMap == nil || back.DatasetMap.ID != "case_id" || back.DatasetMap.Labels[1].Values["hi"] != "1" || !strings.Contains(string(out), "# jev-packs cases") {
		t.Errorf("after edit:\n%s", out)
	}
	// The plain form still works and has no mapping.
	plain, err := Parse("p.yaml", []byte("questions:\n  q: {type: noul, instructions: \"Yes?\"}\ndataset: d.jsonl\n"))
	if err != nil || plain.Dataset != "d.jsonl" || plain.DatasetMap != nil {
		t.Errorf("plain: %v %+v", err, plain)
	}
}

// TestDatasetMappingErrors: each broken mapping names its place.
func TestDatasetMappingErrors(t *testing.T) {
	head := "questions:\n  q: {type: noul, instructions: \"Yes?\"}\n"
	for _, c := range []struct{ in, want string }{
		{"dataset: {id: x}\n", `m.yaml:3:10: dataset.path: missing; the mapping form of dataset: needs path: FILE`},
		{"dataset: {path: d.jsonl, ids: x}\n", `m.yaml:3:26: dataset.ids:`},
		{"dataset: {path: d.jsonl, state: s, state_fields: [a]}\n", `dataset.state_fields: give state or state_fields, not both`},
		{"dataset: {path: d.jsonl, labels: [q]}\n", `dataset.labels: must map question ids to fields`},
		{"dataset: {path: d.jsonl, labels: {q: {values: {a: 1}}}}\n", `dataset.labels.q.field: missing`},
		{"dataset: {path: d.jsonl, labels: {q: {field: f, values: {a: null}}}}\n", `dataset.labels.q.values.a: must be a label`},
		{"dataset: {path: d.jsonl, state_fields: a}\n", `dataset.state_fields: must be a list of fields`},
	} {
		_, err := Parse("m.yaml", []byte(head+c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.in, err, c.want)
		}
	}
}
