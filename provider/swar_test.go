package provider

import (
	"encoding/binary"
	"testing"
)

// TestSpecialWordExhaustivePerByte: for every byte value in every position
// of an otherwise plain word, specialWord agrees with plainStringByte.
func TestSpecialWordExhaustivePerByte(t *testing.T) {
	for pos := 0; pos < 8; pos++ {
		for v := 0; v < 256; v++ {
			w := []byte("abcdefgh")
			w[pos] = byte(v)
			got := specialWord(binary.LittleEndian.Uint64(w))
			if got != !plainStringByte[v] {
				t.Fatalf("byte %#x at %d: special %v", v, pos, got)
			}
		}
	}
	// Two specials, and specials next to high bytes.
	for _, s := range []string{"\x00\xff\"\\abcd", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", "        ", "~~~~~~~~"} {
		want := false
		for i := 0; i < 8; i++ {
			want = want || !plainStringByte[s[i]]
		}
		if specialWord(binary.LittleEndian.Uint64([]byte(s))) != want {
			t.Errorf("%q: want %v", s, want)
		}
	}
}
