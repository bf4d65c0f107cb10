package questionset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

func TestEditHelpers(t *testing.T) {
	s := mustParse(t, "s.yaml", designExample)
	req := s.Request(nil) // must not change under the edits below
	before := requestJSON(t, s)
	steps := []struct {
		name string
		do   func() error
	}{
		{"instructions", func() error { return s.SetInstructions("team", provider.String("Who owns it?")) }},
		{"add option", func() error { return s.AddOption("team", "other", json.RawMessage(`"anything else"`), 1) }},
		{"move option", func() error { return s.MoveOption("team", "other", 99) }},
		{"describe option", func() error { return s.SetOptionDescription("team", "orders", provider.String("parcels")) }},
		{"rename option", func() error { return s.RenameOption("team", "orders", "shipping") }},
		{"remove option", func() error { return s.RemoveOption("team", "billing") }},
		{"add level", func() error { return s.AddLevel("anger", -1, provider.String("livid")) }},
		{"set level", func() error { return s.SetLevel("anger", 0, json.RawMessage(`{"label":"calm"}`)) }},
		{"move level", func() error { return s.MoveLevel("anger", 3, 0) }},
		{"remove level", func() error { return s.RemoveLevel("anger", 1) }},
		{"min confidence", func() error { c := 0.3; return s.SetMinConfidence("anger", &c) }},
		{"rename question", func() error { return s.RenameQuestion("urgent", "today") }},
		{"move question", func() error { return s.MoveQuestion("anger", 0) }},
		{"state", func() error { return s.SetWorkingState(json.RawMessage(`"hello"`)) }},
		{"gate", func() error { a := 0.9; return s.SetGate("today", &Gate{MinAccuracy: &a}) }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
	want := `{"model":"jev-latest","state":"hello","questions":{"anger":{"type":"score","instructions":"How upset is the customer?","criteria":["livid","annoyed","furious"]},"team":{"type":"choice","instructions":"Who owns it?","criteria":{"shipping":"parcels","other":"anything else"}},"today":{"type":"noul","instructions":"Does this need attention today?"}}}`
	if got := requestJSON(t, s); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if s.Threshold("today") != 0.7 {
		t.Error("rename lost the threshold")
	}
	if g := s.GateFor("today"); g.MinAccuracy == nil || *g.MinAccuracy != 0.9 {
		t.Error("gate not set")
	}
	if b, _ := req.MarshalJSON(); string(b) != before {
		t.Errorf("an earlier request changed under the edits: %s", b)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back := mustParse(t, "s.yaml", string(out))
	if requestJSON(t, back) != want {
		t.Errorf("saved file loads differently:\n%s", out)
	}
	if c, ok := back.MinConfidence("anger"); !ok || c != 0.3 {
		t.Error("min_confidence lost")
	}
	// Comments on untouched parts survive; the renamed question keeps its
	// threshold comment.
	for _, c := range []string{"# the working state used while designing", "# caller-side threshold for accuracy metrics", "# optional default dataset"} {
		if !strings.Contains(string(out), c) {
			t.Errorf("comment %q lost:\n%s", c, out)
		}
	}
}

func TestEditErrors(t *testing.T) {
	s := mustParse(t, "s.yaml", designExample)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"unknown question", s.SetInstructions("nope", nil), `no question "nope" (questions: team, urgent, anger)`},
		{"bad json", s.SetInstructions("team", json.RawMessage(`{`)), `instructions is not valid JSON`},
		{"dup option", s.AddOption("team", "billing", nil, -1), `question "team": option "billing" already exists`},
		{"space label", s.AddOption("team", " x", nil, -1), `question "team": option label has leading or trailing whitespace`},
		{"empty label", s.RenameOption("team", "billing", ""), `question "team": option label is empty`},
		{"option on score", s.AddOption("anger", "x", nil, -1), `question "anger": a score has levels, not options`},
		{"noul key", s.AddOption("urgent", "maybe", nil, -1), `question "urgent": a noul's criteria keys are only "true" and "false"`},
		{"missing option", s.RemoveOption("team", "nope"), `question "team": no option "nope"`},
		{"level range", s.RemoveLevel("anger", 3), `question "anger": level 3 is out of range (0..2)`},
		{"level on choice", s.AddLevel("team", 0, provider.String("x")), `question "team": a choice has no levels; only a score does`},
		{"threshold on choice", func() error { x := 0.5; return s.SetThreshold("team", &x) }(), `question "team": only a noul has a threshold`},
		{"threshold range", func() error { x := 1.5; return s.SetThreshold("urgent", &x) }(), `question "urgent": threshold 1.5 is outside [0, 1]`},
		{"confidence on noul", func() error { x := 0.5; return s.SetMinConfidence("urgent", &x) }(), `question "urgent": a noul has no confidence; use a threshold`},
		{"rename to existing", s.RenameQuestion("team", "anger"), `question "anger" already exists`},
		{"add existing", s.AddQuestion("team", provider.Question{Type: provider.Noul}, 0), `question "team" already exists`},
		{"bad type", s.SetType("team", "boolean"), `"boolean" is not a question type; use noul, choice or score`},
		{"state number", s.SetWorkingState(json.RawMessage(`42`)), `state must be a string, object or array, not a number`},
	}
	for _, c := range cases {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, c.err, c.want)
		}
	}
	if got := requestJSON(t, s); got != requestJSON(t, mustParse(t, "s.yaml", designExample)) {
		t.Errorf("failed edits changed the set: %s", got)
	}
}

func TestSetType(t *testing.T) {
	s := mustParse(t, "s.yaml", designExample)
	c := 0.4
	if err := s.SetMinConfidence("anger", &c); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		id   string
		to   provider.QuestionType
		want string
	}{
		{"anger", provider.Choice, `{"type":"choice","instructions":"How upset is the customer?","criteria":{"calm":null,"annoyed":null,"furious":null}}`},
		{"anger", provider.Score, `{"type":"score","instructions":"How upset is the customer?","criteria":["calm","annoyed","furious"]}`},
		{"team", provider.Score, `{"type":"score","instructions":"Which team should handle this ticket?","criteria":[{"what":"charges, refunds, invoices","not_for":"delivery"},"orders"]}`},
		{"team", provider.Choice, `{"type":"choice","instructions":"Which team should handle this ticket?","criteria":{"level_0":{"what":"charges, refunds, invoices","not_for":"delivery"},"orders":null}}`},
		{"urgent", provider.Choice, `{"type":"choice","instructions":"Does this need attention today?","criteria":{"yes":null,"no":null}}`},
		{"anger", provider.Noul, `{"type":"noul","instructions":"How upset is the customer?"}`},
	} {
		if err := s.SetType(step.id, step.to); err != nil {
			t.Fatal(err)
		}
		q, _ := s.Question(step.id)
		if b, _ := q.MarshalJSON(); string(b) != step.want {
			t.Errorf("%s → %s:\n got %s\nwant %s", step.id, step.to, b, step.want)
		}
	}
	if _, ok := s.MinConfidence("anger"); ok {
		t.Error("a noul kept min_confidence")
	}
	if s.Threshold("urgent") != 0.5 {
		t.Error("a choice kept its threshold")
	}
	if err := s.Validate(); err != nil {
		t.Errorf("converted set invalid: %v", err)
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := mustParse(t, "s.yaml", designExample)
	c := s.Clone()
	if err := c.RenameOption("team", "orders", "shipping"); err != nil {
		t.Fatal(err)
	}
	c.Questions[0].Question.Options[0].Description[2] = 'X' // even in-place writes
	if _, err := c.Marshal(); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != designExample {
		t.Errorf("editing the clone changed the original:\n%s", out)
	}
}

func TestNewSetFromScratch(t *testing.T) {
	s := New("fresh")
	if err := s.AddQuestion("ok", provider.Question{Type: provider.Noul, Instructions: provider.String("Is it ok?")}, -1); err != nil {
		t.Fatal(err)
	}
	if err := s.AddQuestion("first", provider.Question{Type: provider.Score, Levels: []json.RawMessage{provider.String("low"), provider.String("high")}}, 0); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "name: fresh\nquestions:\n  first:\n    type: score\n    criteria:\n      - low\n      - high\n  ok:\n    type: noul\n    instructions: Is it ok?\n"
	if string(out) != want {
		t.Errorf("got\n%s", out)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	if err := s.RemoveQuestion("first"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveQuestion("ok"); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "questions: is empty") {
		t.Errorf("empty set: %v", err)
	}
}

// TestSavedAdoptsBackgroundWrite: the workbench marshals, writes in the
// background, then tells the set; an unchanged set then marshals to the
// written bytes, and a later edit patches the adopted tree.
func TestSavedAdoptsBackgroundWrite(t *testing.T) {
	s := New("bg")
	if err := s.AddQuestion("q", provider.Question{Type: provider.Noul}, -1); err != nil {
		t.Fatal(err)
	}
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	data = append([]byte("# written by hand later\n"), data...) // as if the file gained a comment
	s.Saved("bg.yaml", data)
	if out, _ := s.Marshal(); string(out) != string(data) || s.Path != "bg.yaml" {
		t.Errorf("unchanged set after Saved:\n%s", out)
	}
	if err := s.SetInstructions("q", provider.String("Is it?")); err != nil {
		t.Fatal(err)
	}
	out, _ := s.Marshal()
	want := "# written by hand later\nname: bg\nquestions:\n  q:\n    type: noul\n    instructions: Is it?\n"
	if string(out) != want {
		t.Errorf("edit after Saved:\n%s", out)
	}
}

func TestChanged(t *testing.T) {
	s := mustParse(t, "s.yaml", designExample)
	if s.Changed() {
		t.Error("fresh load reports a change")
	}
	x := 0.6
	if err := s.SetThreshold("urgent", &x); err != nil {
		t.Fatal(err)
	}
	if !s.Changed() {
		t.Error("edit not seen")
	}
	x = 0.7
	if err := s.SetThreshold("urgent", &x); err != nil {
		t.Fatal(err)
	}
	if s.Changed() {
		t.Error("an edit undone by hand still reports a change")
	}
	if !New("n").Changed() {
		t.Error("a never-saved set reports no change")
	}
}
