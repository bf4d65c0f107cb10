package questionset

import (
	"strings"
	"testing"
)

func TestNegationKey(t *testing.T) {
	src := "questions:\n  refund:\n    type: noul\n    instructions: Is it a refund request?\n    negation: Is it NOT a refund request?\n"
	s, err := Parse("n.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Negation("refund")); got != `"Is it NOT a refund request?"` {
		t.Fatalf("negation %s", got)
	}
	if b, _ := s.Request([]byte(`"x"`)).MarshalJSON(); strings.Contains(string(b), "NOT") {
		t.Errorf("the negation was sent: %s", b)
	}
	if !strings.Contains(string(s.QuestionsJSON()), `"negation":"Is it NOT a refund request?"`) {
		t.Errorf("the snapshot lacks the negation: %s", s.QuestionsJSON())
	}
	c := s.Clone()
	if err := c.SetInstructions("refund", []byte(`"Is it a return?"`)); err != nil {
		t.Fatal(err)
	}
	out, err := c.Marshal()
	if err != nil || !strings.Contains(string(out), "negation: Is it NOT a refund request?") {
		t.Errorf("save lost the negation (%v):\n%s", err, out)
	}
	for _, bad := range []struct{ src, want string }{
		{"questions:\n  q:\n    type: choice\n    criteria: {a: x, b: y}\n    negation: not a\n", "only a noul has a negation"},
		{"questions:\n  q:\n    type: noul\n    negation: \"\"\n", "negation: is empty"},
	} {
		if _, err := Parse("bad.yaml", []byte(bad.src)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.src, err, bad.want)
		}
	}
}
