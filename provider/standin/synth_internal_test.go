package standin

import (
	"reflect"
	"testing"
)

func TestRoundHundredths(t *testing.T) {
	rep := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	repInt := func(parts ...[2]int) []int { // (count, value) pairs
		var out []int
		for _, p := range parts {
			for i := 0; i < p[0]; i++ {
				out = append(out, p[1])
			}
		}
		return out
	}
	tests := []struct {
		name string
		in   []float64
		want []int
	}{
		{"exact", []float64{0.25, 0.75}, []int{25, 75}},
		{"peaked", []float64{0.996, 0.004}, []int{100, 0}},
		{"thirds sum to 99", rep(3, 1.0/3), []int{33, 33, 33}},
		// 8 × 12.5 rounds to 13 each (104): four come back down, first first.
		{"eighths over", rep(8, 0.125), repInt([2]int{4, 12}, [2]int{4, 13})},
		// 77 × 1.2987 rounds to 1 each (77): 22 go up to reach 99.
		{"77 uniform under", rep(77, 1.0/77), repInt([2]int{22, 2}, [2]int{55, 1})},
		// 255 × 0.39 rounds to 0 (0): 99 go up to reach 99.
		{"255 uniform", rep(255, 1.0/255), repInt([2]int{99, 1}, [2]int{156, 0})},
	}
	for _, tt := range tests {
		got := roundHundredths(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		sum := 0
		for _, h := range got {
			sum += h
		}
		if sum < 99 || sum > 100 {
			t.Errorf("%s: sum %d", tt.name, sum)
		}
	}
}

func TestAppendHundredths(t *testing.T) {
	for h, want := range map[int]string{0: "0.0", 5: "0.05", 50: "0.5", 99: "0.99", 100: "1.0", 235: "2.35", 300: "3.0", 310: "3.1"} {
		if got := string(appendHundredths(nil, h)); got != want {
			t.Errorf("%d: got %s, want %s", h, got, want)
		}
	}
}

func TestTokenize(t *testing.T) {
	var got []uint64
	tokenize([]byte(`{"Card_Arrival":"My card hasn't arrived\nyet — 3 days","x":null}`), func(h uint64) { got = append(got, h) })
	var want []uint64
	for _, w := range []string{"card", "arrival", "card", "hasn", "arrived", "yet", "\xe2\x80\x94", "days"} {
		want = append(want, fnv(fnvOffset, []byte(w)))
	}
	// "my", "t", "3", "x", "null" and the "n" of the \n escape are dropped.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %d tokens %v, want %d %v", len(got), got, len(want), want)
	}
}

func TestShuffledIsPermutation(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		p := shuffled(10, seed)
		seen := map[int]bool{}
		for _, i := range p {
			seen[i] = true
		}
		if len(seen) != 10 {
			t.Fatalf("seed %d: %v is not a permutation", seed, p)
		}
	}
	if reflect.DeepEqual(shuffled(20, 1), shuffled(20, 2)) {
		t.Error("different seeds gave the same order")
	}
}
