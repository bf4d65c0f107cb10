package questionset

import (
	"strings"
	"testing"
)

const designExample = `# Support triage
name: support-triage
model: jev-latest
state:                       # the working state used while designing
  message: "I was charged twice for order A-104"
questions:
  team:
    type: choice
    instructions: Which team should handle this ticket?
    criteria:
      billing: {what: "charges, refunds, invoices", not_for: "delivery"}
      orders: null
  urgent:
    type: noul
    instructions: Does this need attention today?
    threshold: 0.7           # caller-side threshold for accuracy metrics (default 0.5); never sent
  anger:
    type: score
    instructions: How upset is the customer?
    criteria: [calm, annoyed, furious]
dataset: support.jsonl       # optional default dataset, relative to this file
`

func TestParseDesignExample(t *testing.T) {
	s, err := Parse("support.yaml", []byte(designExample))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Request(nil).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"jev-latest","state":{"message":"I was charged twice for order A-104"},"questions":{"team":{"type":"choice","instructions":"Which team should handle this ticket?","criteria":{"billing":{"what":"charges, refunds, invoices","not_for":"delivery"},"orders":null}},"urgent":{"type":"noul","instructions":"Does this need attention today?"},"anger":{"type":"score","instructions":"How upset is the customer?","criteria":["calm","annoyed","furious"]}}}`
	if string(got) != want {
		t.Errorf("request\n got %s\nwant %s", got, want)
	}
	if th := s.Threshold("urgent"); th != 0.7 {
		t.Errorf("threshold = %v, want 0.7", th)
	}
	if th := s.Threshold("team"); th != 0.5 {
		t.Errorf("default threshold = %v, want 0.5", th)
	}
	if s.Name != "support-triage" || s.Dataset != "support.jsonl" {
		t.Errorf("name %q dataset %q", s.Name, s.Dataset)
	}
	if strings.Contains(string(got), "threshold") {
		t.Error("threshold reached the request")
	}
}

// QuestionsJSON is the questions object in file order with caller-side
// settings folded into their question, no HTML escaping, numbers spelled
// shortest.
func TestQuestionsJSON(t *testing.T) {
	s, err := Parse("q.yaml", []byte(`questions:
  z<&>: {type: noul, instructions: "a & b", threshold: 0.70}
  a:
    type: choice
    criteria: {x: null, y: why}
    min_confidence: 1e-7
  m: {type: score, criteria: [lo, hi]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z<&>":{"type":"noul","instructions":"a & b","threshold":0.7},` +
		`"a":{"type":"choice","criteria":{"x":null,"y":"why"},"min_confidence":1e-07},` +
		`"m":{"type":"score","criteria":["lo","hi"]}}`
	if got := string(s.QuestionsJSON()); got != want {
		t.Errorf("QuestionsJSON\n got %s\nwant %s", got, want)
	}
}
