package provider

import "testing"

// TestDecisionFor checks that a choice decision follows the provider's
// choice field on a rounded tie (entity-merge em-0048 answered curator with
// merge 0.37 = curator 0.37) and even against the argmax (em-0289 answered
// keep_separate 0.33 while merge had 0.34).
func TestDecisionFor(t *testing.T) {
	q := &Question{Type: Choice, Options: []Option{{Label: "merge"}, {Label: "keep_separate"}, {Label: "curator"}, {Label: "unknown"}}}
	cases := []struct {
		name   string
		choice string
		probs  []float64
		want   int
		argmax int
	}{
		{"tie follows choice", "curator", []float64{0.37, 0.26, 0.37, 0}, 2, 0},
		{"below argmax follows choice", "keep_separate", []float64{0.34, 0.33, 0.33, 0}, 1, 0},
		{"unknown label falls back to argmax", "", []float64{0.1, 0.7, 0.2, 0}, 1, 1},
	}
	for _, c := range cases {
		a := &Answer{Type: Choice, Choice: c.choice, Probs: c.probs}
		if got := a.DecisionFor(q, 0.5); got != c.want {
			t.Errorf("%s: DecisionFor = %d, want %d", c.name, got, c.want)
		}
		if got := a.Decision(0.5); got != c.argmax {
			t.Errorf("%s: Decision = %d, want %d", c.name, got, c.argmax)
		}
	}
	n := &Answer{Type: Noul, P: 0.7}
	if n.DecisionFor(nil, 0.7) != 1 || n.DecisionFor(nil, 0.71) != 0 {
		t.Error("noul threshold is inclusive at p >= t")
	}
}
