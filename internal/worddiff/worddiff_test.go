package worddiff

import "testing"

func TestPlain(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"Which team should handle this?", "Which team should route this?", "Which team should [-handle-] {+route+} this?"},
		{"a b c", "a b c", "a b c"},
		{"", "new words", "{+new words+}"},
		{"instructions: x\ncriteria:\n  other: misc", "instructions: x\ncriteria:\n  general: misc", "instructions: x\ncriteria:\n[-other:-] {+general:+} misc"},
	} {
		ops := Diff(c.a, c.b)
		if got := Plain(ops); got != c.want {
			t.Errorf("%q → %q:\n got %q\nwant %q", c.a, c.b, got, c.want)
		}
		if Changed(ops) != (c.a != c.b) {
			t.Errorf("%q → %q: Changed %v", c.a, c.b, Changed(ops))
		}
	}
}
