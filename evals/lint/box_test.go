package lint

import (
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
)

// TestBoxNeedsJev114: lint knows jev-latest (still 1.13) and 1.13 refuse
// box questions, by TypeSafe's names and the hosts' alike, and passes a set
// asking jev-1.14.0 or jev-preview.
func TestBoxNeedsJev114(t *testing.T) {
	for model, want := range map[string]bool{
		"": true, "jev-latest": true, "jev-1.13.0": true, "~typesafe/jev-latest": true, "typesafe/jev-1.13": true,
		"jev-1.14.0": false, "jev-preview": false, "typesafe/jev-1.14.0": false,
	} {
		src := "name: b\nstate: {photo: img}\nquestions:\n  mug:\n    type: box\n    instructions: the mug in `photo`\n"
		if model != "" {
			src = "model: " + model + "\n" + src
		}
		set, err := questionset.Parse("b.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var got *Finding
		fs := Lint(set, nil, Options{})
		for i := range fs {
			if fs[i].ID == IDBoxModel {
				got = &fs[i]
			}
		}
		if (got != nil) != want {
			t.Errorf("model %q: finding %v, want %v (%v)", model, got, want, fs)
			continue
		}
		if got != nil {
			line := 5 // the question's type:
			if model != "" {
				line = 6
			}
			if got.Severity != SeverityError || got.Line != line || !strings.Contains(got.Message, "Invalid request.") || !strings.Contains(got.Fix, "jev-1.14.0") {
				t.Errorf("model %q: %+v", model, got)
			}
		}
	}
}
