package questionset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

const variantsExample = `name: triage
state: {message: "charged twice"}
questions:
  queue:
    type: choice
    instructions: Which team should handle this message?
    criteria:
      billing: Payments and refunds.
      technical: Errors and outages.
    min_confidence: 0.6
    variants:
      # a shorter wording
      v2: {instructions: "Route the message to one team."}
      v3:
        criteria:
          technical: Errors and outages.
          billing: Payments, charges and refunds.
        min_confidence: 0.7
  urgent:
    type: noul
    instructions: Does this need attention today?
    variants:
      strict: {instructions: "Must a human answer within the hour?", threshold: 0.8}
`

func TestVariantsParseRequestAndSave(t *testing.T) {
	s, err := Parse("t.yaml", []byte(variantsExample))
	if err != nil {
		t.Fatal(err)
	}
	refs := s.AllVariants()
	if len(refs) != 3 || refs[0].ID() != "queue~v2" || refs[1].ID() != "queue~v3" || refs[2].ID() != "urgent~strict" {
		t.Fatalf("variants %v", refs)
	}
	// Never sent as such: the plain request has only the questions.
	if req := s.Request(nil); len(req.Questions) != 2 {
		t.Fatalf("plain request has %d questions", len(req.Questions))
	}
	req := s.RequestWith(nil, refs)
	if got := strings.Join(req.Questions.IDs(), ","); got != "queue,urgent,queue~v2,queue~v3,urgent~strict" {
		t.Fatalf("ids %s", got)
	}
	var body strings.Builder
	b, _ := json.Marshal(req)
	body.Write(b)
	if strings.Contains(body.String(), "variants") || strings.Contains(body.String(), "min_confidence") {
		t.Fatalf("caller-side keys sent: %s", body.String())
	}
	v2, _ := req.Questions.Get("queue~v2")
	if provider.Text(v2.Instructions) != "Route the message to one team." || len(v2.Options) != 2 || v2.Options[0].Label != "billing" {
		t.Fatalf("v2 = %+v", v2)
	}
	v3, _ := req.Questions.Get("queue~v3")
	if provider.Text(v3.Instructions) != "Which team should handle this message?" || v3.Options[0].Label != "technical" {
		t.Fatalf("v3 = %+v", v3)
	}
	if s.Threshold("urgent~strict") != 0.8 || s.Threshold("urgent") != 0.5 {
		t.Fatal("variant threshold")
	}
	if m, ok := s.MinConfidence("queue~v2"); !ok || m != 0.6 {
		t.Fatalf("v2 inherits min_confidence: %v %v", m, ok)
	}
	if m, _ := s.MinConfidence("queue~v3"); m != 0.7 {
		t.Fatalf("v3 min_confidence %v", m)
	}
	// Unchanged: the original bytes; an edit elsewhere keeps the variants
	// and their comment.
	out, _ := s.Marshal()
	if string(out) != variantsExample {
		t.Fatal("unchanged set not byte-identical")
	}
	if err := s.SetInstructions("urgent", provider.String("Is it urgent?")); err != nil {
		t.Fatal(err)
	}
	out, err = s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "# a shorter wording") || !strings.Contains(string(out), "strict: {instructions: \"Must a human answer within the hour?\", threshold: 0.8}") {
		t.Fatalf("variants not kept:\n%s", out)
	}
	back, err := Parse("t.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.AllVariants()) != 3 || string(back.QuestionsJSON()) != string(s.QuestionsJSON()) {
		t.Fatalf("round trip lost variants:\n%s\n%s", back.QuestionsJSON(), s.QuestionsJSON())
	}
	// JSON round trip too.
	js := FromRequest(s.Request(nil))
	js.Variants = s.Clone().Variants
	js.Settings = s.Clone().Settings
	js.isJSON = true
	data, err := js.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err = Parse("t.json", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if string(back.QuestionsJSON()) != string(js.QuestionsJSON()) {
		t.Fatal("JSON round trip differs")
	}
}

func TestVariantsSelect(t *testing.T) {
	s, err := Parse("t.yaml", []byte(variantsExample))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		specs []string
		want  string
		err   string
	}{
		{[]string{"all"}, "queue~v2 queue~v3 urgent~strict", ""},
		{[]string{"queue"}, "queue~v2 queue~v3", ""},
		{[]string{"queue:v3,v2"}, "queue~v2 queue~v3", ""},
		{[]string{"urgent:strict", "queue:v3"}, "queue~v3 urgent~strict", ""},
		{[]string{"queue:v9"}, "", `question "queue" has no variant "v9" (it has v2, v3)`},
		{[]string{"nope"}, "", `no question "nope"`},
	} {
		got, err := s.SelectVariants(c.specs)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.specs, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.specs, err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID())
		}
		if strings.Join(ids, " ") != c.want {
			t.Errorf("%v: %v, want %s", c.specs, ids, c.want)
		}
	}
}

func TestVariantsErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"questions:\n  a~b: {type: noul}\n  q:\n    type: noul\n    variants: {v2: {instructions: x}}\n",
			`t.yaml:2:3: question "a~b": a question id cannot contain "~" in a set with variants`},
		{"questions:\n  q:\n    type: noul\n    variants: {\"bad name\": {instructions: x}}\n",
			`question "q": variants.bad name: a variant name is letters`},
		{"questions:\n  q:\n    type: noul\n    variants: {v2: {type: choice}}\n",
			`question "q": variants.v2.type: a variant keeps its question's type`},
		{"questions:\n  q:\n    type: choice\n    criteria: {a: x, b: y}\n    variants: {v2: {threshold: 0.3}}\n",
			`variants.v2.threshold: only a noul has a threshold`},
		{"questions:\n  q:\n    type: choice\n    criteria: {a: x, b: y}\n    variants: {v2: {criteria: {a: x}}}\n",
			`t.yaml:5:21: question "q": variants.v2.criteria: `},
		{"questions:\n  q:\n    type: choice\n    criteria: {a: x, b: y}\n    variants: {v2: {instrucions: x}}\n",
			`variants.v2.instrucions: unknown field; did you mean instructions?`},
	} {
		_, err := Parse("t.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.yaml, err, c.want)
		}
	}
	// A plain set may still use "~" in ids.
	if _, err := Parse("t.yaml", []byte("questions:\n  a~b: {type: noul}\n")); err != nil {
		t.Fatal(err)
	}
}

func TestPromoteVariantKeepsEveryWording(t *testing.T) {
	s, err := Parse("t.yaml", []byte(variantsExample))
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	asked := func(set *Set) map[string]string {
		out := map[string]string{}
		req := set.RequestWith(nil, set.AllVariants())
		for _, e := range req.Questions {
			b, _ := e.Question.MarshalJSON()
			mc, _ := set.MinConfidence(e.ID)
			out[e.ID] = string(b) + " th=" + formatFloat(set.Threshold(e.ID)) + " mc=" + formatFloat(mc)
		}
		return out
	}
	before = asked(s)
	kept, err := s.PromoteVariant("queue", "v3", "")
	if err != nil {
		t.Fatal(err)
	}
	if kept != "prev" {
		t.Fatalf("kept as %q", kept)
	}
	after := asked(s)
	if after["queue"] != before["queue~v3"] {
		t.Fatalf("promoted question\n%s\nwant\n%s", after["queue"], before["queue~v3"])
	}
	if after["queue~prev"] != before["queue"] {
		t.Fatalf("old wording\n%s\nwant\n%s", after["queue~prev"], before["queue"])
	}
	if after["queue~v2"] != before["queue~v2"] {
		t.Fatalf("v2 changed\n%s\nwant\n%s", after["queue~v2"], before["queue~v2"])
	}
	if _, ok := after["queue~v3"]; ok {
		t.Fatal("v3 still a variant")
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("t.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := asked(back); got["queue~prev"] != before["queue"] || got["queue"] != before["queue~v3"] {
		t.Fatalf("saved promotion differs:\n%s", out)
	}
	// Promoting back restores the original question.
	if _, err := s.PromoteVariant("queue", "prev", "v3"); err != nil {
		t.Fatal(err)
	}
	again := asked(s)
	for id, want := range before {
		if again[id] != want {
			t.Errorf("%s after two promotions\n%s\nwant\n%s", id, again[id], want)
		}
	}
	// Noul threshold moves with the wording.
	if _, err := s.PromoteVariant("urgent", "strict", "loose"); err != nil {
		t.Fatal(err)
	}
	if s.Threshold("urgent") != 0.8 || s.Threshold("urgent~loose") != 0.5 {
		t.Fatalf("thresholds %v %v", s.Threshold("urgent"), s.Threshold("urgent~loose"))
	}
	if _, err := s.PromoteVariant("urgent", "nope", ""); err == nil {
		t.Fatal("unknown variant promoted")
	}
}
