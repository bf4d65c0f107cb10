package bars

import (
	"math"
	"testing"
	"unicode/utf8"
)

func TestBar(t *testing.T) {
	tests := []struct {
		frac  float64
		width int
		want  string
	}{
		{0, 4, "    "},
		{math.NaN(), 4, "    "},
		{-1, 4, "    "},
		{1, 4, "████"},
		{2, 4, "████"},
		{0.5, 4, "██  "},
		{1.0 / 32, 4, "▏   "}, // one eighth of 32
		{7.0 / 32, 4, "▉   "},
		{12.0 / 32, 4, "█▌  "},
		{0.53, 40, "█████████████████████▎                  "}, // 169.6 → 170 = 21 full + 2
		{0.55, 40, "██████████████████████                  "}, // 176 = 22 full
		{0.99, 10, "█████████▉"},                               // 79.2 → 79
		{0.01, 40, "▍                                       "}, // 3.2 → 3
		{0.5, 0, ""},
	}
	for _, tt := range tests {
		got := Bar(tt.frac, tt.width)
		if got != tt.want {
			t.Errorf("Bar(%v, %d) = %q, want %q", tt.frac, tt.width, got, tt.want)
		}
		if n := utf8.RuneCountInString(got); tt.width > 0 && n != tt.width {
			t.Errorf("Bar(%v, %d) has %d cells", tt.frac, tt.width, n)
		}
	}
}

func TestBarDistinguishesTwoHundredths(t *testing.T) {
	if Bar(0.53, 40) == Bar(0.55, 40) {
		t.Fatal("0.53 and 0.55 draw the same 40-cell bar")
	}
	if Eighths(0.55, 40)-Eighths(0.53, 40) != 6 {
		t.Fatalf("eighths %d vs %d", Eighths(0.53, 40), Eighths(0.55, 40))
	}
}

func TestMarker(t *testing.T) {
	tests := []struct {
		frac  float64
		width int
		want  string
	}{
		{0.5, 10, "     ^    "},
		{0, 4, "^   "},
		{1, 4, "   ^"},
		{0.7, 10, "       ^  "},
	}
	for _, tt := range tests {
		if got := Marker(tt.frac, tt.width, '^'); got != tt.want {
			t.Errorf("Marker(%v, %d) = %q, want %q", tt.frac, tt.width, got, tt.want)
		}
	}
}
