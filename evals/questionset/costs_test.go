package questionset

import (
	"strings"
	"testing"
)

const choiceCostsSet = `questions:
  queue:
    type: choice
    instructions: Which queue?
    criteria: {billing: Billing., technical: Technical., account: Account.}
    costs: %s
`

func parseCosts(t *testing.T, costs string) (*Set, error) {
	t.Helper()
	return Parse("q.yaml", []byte(strings.Replace(choiceCostsSet, "%s", costs, 1)))
}

// A choice's costs: a matrix (true → decided), per-option false_choice
// costs and other fill every wrong pair; bad ones are refused with the
// field, the line and what to do.
func TestChoiceCosts(t *testing.T) {
	s, err := parseCosts(t, "{matrix: {billing: {technical: 5}}, false_choice: {account: 2}, other: 1, abstain: 0.5}")
	if err == nil {
		t.Fatal("matrix and false_choice together accepted")
	}
	s, err = parseCosts(t, "{matrix: {billing: {technical: 5, account: 2}}, other: 1, abstain: 0.5}")
	if err != nil {
		t.Fatal(err)
	}
	q := s.Questions[0].Question
	c := s.Settings["queue"].Costs
	m := c.MatrixFor(&q)
	want := [][]float64{{0, 5, 2}, {1, 0, 1}, {1, 1, 0}}
	for i := range want {
		for j := range want[i] {
			if m[i][j] != want[i][j] {
				t.Fatalf("matrix %v, want %v", m, want)
			}
		}
	}
	if !c.Choice || *c.Abstain != 0.5 {
		t.Errorf("costs %+v", c)
	}
	s, err = parseCosts(t, "{false_choice: {billing: 3, technical: 1, account: 2}}")
	if err != nil {
		t.Fatal(err)
	}
	q = s.Questions[0].Question
	if m := s.Settings["queue"].Costs.MatrixFor(&q); m[1][0] != 3 || m[2][0] != 3 || m[0][1] != 1 || m[0][2] != 2 || m[0][0] != 0 {
		t.Errorf("false_choice matrix %v", m)
	}
	// The body of a revision does not depend on the order costs were written in.
	a, _ := parseCosts(t, "{matrix: {billing: {technical: 5, account: 2}, account: {billing: 4}}, other: 1}")
	b, _ := parseCosts(t, "{other: 1, matrix: {account: {billing: 4}, billing: {account: 2, technical: 5}}}")
	if string(a.QuestionBody("queue")) != string(b.QuestionBody("queue")) || !strings.Contains(string(a.QuestionBody("queue")), `"costs":{"matrix":{"account":{"billing":4},"billing":{"account":2,"technical":5}},"other":1}`) {
		t.Errorf("bodies differ or lack costs:\n%s\n%s", a.QuestionBody("queue"), b.QuestionBody("queue"))
	}
	for _, tc := range []struct{ costs, msg string }{
		{"{matrix: {billing: {technical: 5}}}", "no cost for billing decided as account; list it or set other"},
		{"{false_choice: {billing: 3}}", "no cost for billing decided as technical"},
		{"{matrix: {biling: {technical: 5}}, other: 1}", `"biling" is not an option of queue (options: billing, technical, account)`},
		{"{matrix: {billing: {billing: 5}}, other: 1}", "a right decision costs 0"},
		{"{false_choice: {billing: -1}, other: 1}", "a cost must not be negative"},
		{"{abstain: 1}", "needs matrix, false_choice or other"},
		{"{false_positive: 1, other: 1}", "unknown field"},
		{"[1, 2]", "must be a mapping"},
	} {
		_, err := parseCosts(t, tc.costs)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "q.yaml:") {
			t.Errorf("costs %s: %v, want %q", tc.costs, err, tc.msg)
		}
	}
}
