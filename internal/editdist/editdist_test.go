package editdist

import "testing"

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"same", "same", 0},
		{"kitten", "sitting", 3}, // k→s, e→i, +g
		{"flaw", "lawn", 2},      // -f, +n
		{"instructions", "instrutions", 1},
		{"criteria", "critera", 1},
		{"ab", "ba", 2}, // no transposition step: two substitutions
		{"café", "cafe", 1},
		{"日本", "日本語", 1},
	}
	for _, tt := range tests {
		if got := Levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Levenshtein(tt.b, tt.a); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}
