package dataset

import (
	"bytes"
	"testing"
)

func fuzzParse(t *testing.T, name string, data []byte) {
	set := demoSet(t)
	_ = Parse(name, bytes.NewReader(data), Options{}, set, func(it Item) error {
		if it.ID == "" {
			t.Fatal("item without id")
		}
		if stateProblem(it.State) != "" {
			t.Fatalf("item with bad state %q", it.State)
		}
		return nil
	})
	opt := Options{IDField: "k", StateField: "s", LabelFields: map[string]string{"queue": "q"}}
	_ = Parse(name, bytes.NewReader(data), opt, nil, func(Item) error { return nil })
}

// FuzzDatasetJSONL: the JSONL reader never panics, and every item it
// hands over has an id and a valid state.
func FuzzDatasetJSONL(f *testing.F) {
	for _, c := range malformedData {
		if c.file == "d.jsonl" {
			f.Add([]byte(c.in))
		}
	}
	f.Add([]byte(`{"id":"a","state":{"x":[1,2]},"labels":{"queue":"billing","urgency":"2","refund_request":"yes"}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, "f.jsonl", data) })
}

// FuzzDatasetCSV: the CSV reader never panics, and every item it hands
// over has an id and a valid state.
func FuzzDatasetCSV(f *testing.F) {
	for _, c := range malformedData {
		if c.file == "d.csv" {
			f.Add([]byte(c.in))
		}
	}
	f.Add([]byte("id,state,queue,urgency,refund_request\na,\"{\"\"m\"\":1}\",billing,1,no\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, "f.csv", data) })
}
