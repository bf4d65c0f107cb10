package srcpos

import (
	"errors"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		file      string
		line, col int
		want      string
	}{
		{"set.yaml", 12, 5, "set.yaml:12:5"},
		{"set.yaml", 12, 0, "set.yaml:12"},
		{"set.yaml", 0, 5, "set.yaml"},
		{"set.yaml", 0, 0, "set.yaml"},
		{"", 3, 1, ":3:1"},
		{"", 0, 0, ""},
	}
	for _, tt := range tests {
		if got := Format(tt.file, tt.line, tt.col); got != tt.want {
			t.Errorf("Format(%q, %d, %d) = %q, want %q", tt.file, tt.line, tt.col, got, tt.want)
		}
	}
}

type posErr struct{ msg string }

func (e *posErr) Error() string { return e.msg }

func TestJoinAndUnwrap(t *testing.T) {
	list := []*posErr{{"a.yaml:1: first"}, {"a.yaml:7: second"}}
	if got, want := Join(list), "a.yaml:1: first\na.yaml:7: second"; got != want {
		t.Errorf("Join = %q, want %q", got, want)
	}
	if got := Join([]*posErr(nil)); got != "" {
		t.Errorf("Join(nil) = %q, want empty", got)
	}
	un := Unwrap(list)
	if len(un) != 2 {
		t.Fatalf("Unwrap gave %d errors, want 2", len(un))
	}
	var pe *posErr
	if !errors.As(un[1], &pe) || pe != list[1] {
		t.Errorf("Unwrap()[1] = %v, want the second problem itself", un[1])
	}
}
