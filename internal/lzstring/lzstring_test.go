package lzstring

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/quick"
)

// refPair is one input and its encoding as computed by the npm package
// lz-string 1.5.0 (see testdata/gen-pairs.js).
type refPair struct {
	Input   string `json:"input"`
	Encoded string `json:"encoded"`
}

func loadPairs(t testing.TB) []refPair {
	t.Helper()
	data, err := os.ReadFile("testdata/pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	var pairs []refPair
	if err := json.Unmarshal(data, &pairs); err != nil {
		t.Fatal(err)
	}
	if len(pairs) < 10 {
		t.Fatalf("only %d reference pairs", len(pairs))
	}
	return pairs
}

func TestCompressMatchesNPM(t *testing.T) {
	for _, p := range loadPairs(t) {
		if got := CompressToEncodedURIComponent(p.Input); got != p.Encoded {
			t.Errorf("compress(%.40q)\n got %.80s\nwant %.80s", p.Input, got, p.Encoded)
		}
	}
}

func TestDecompressMatchesNPM(t *testing.T) {
	for _, p := range loadPairs(t) {
		got, err := DecompressFromEncodedURIComponent(p.Encoded)
		if err != nil {
			t.Errorf("decompress(%.40s): %v", p.Encoded, err)
			continue
		}
		if got != p.Input {
			t.Errorf("decompress(%.40s)\n got %.80q\nwant %.80q", p.Encoded, got, p.Input)
		}
	}
}

// Hand-checked small cases: "a" is code 0 (2 bits) + 'a' (8 bits,
// 0x61 LSB first = 10000110) + end marker 2 (3 bits: 010) + padding:
// 00 10000110 010 0 00 → 001000|011001|000000 → I Z A.
func TestSmallKnownValues(t *testing.T) {
	cases := map[string]string{"": "", "a": "IZA", "hello": "BYUwNmD2Q"}
	for in, want := range cases {
		if got := CompressToEncodedURIComponent(in); got != want {
			t.Errorf("compress(%q) = %q, want %q", in, got, want)
		}
		back, err := DecompressFromEncodedURIComponent(want)
		if err != nil || back != in {
			t.Errorf("decompress(%q) = %q, %v; want %q", want, back, err, in)
		}
	}
}

func TestDecompressSpaceIsPlus(t *testing.T) {
	// A '+' turned into a space by form decoding still decodes.
	enc := CompressToEncodedURIComponent(strings.Repeat("xyz?!", 40))
	if !strings.Contains(enc, "+") {
		t.Skip("encoding has no '+' to test with")
	}
	got, err := DecompressFromEncodedURIComponent(strings.ReplaceAll(enc, "+", " "))
	if err != nil || got != strings.Repeat("xyz?!", 40) {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestDecompressCorrupt(t *testing.T) {
	good := CompressToEncodedURIComponent(`{"apiVersion":"v1","documentText":"some state text","promptsText":"{}"}`)
	cases := []struct {
		name, in, want string
	}{
		{"bad character", "ab%cd", `character '%' at offset 2 is not in the URI-safe alphabet`},
		{"truncated", good[:len(good)/2], "stream ends without its end marker"},
		// literal 'a' then code 7 with a 4-entry dictionary: 00 10000110 111 + padding
		{"bad back-reference", "Ibg", "back-reference 7 beyond dictionary size 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecompressFromEncodedURIComponent(c.in)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want ErrCorrupt containing %q", err, c.want)
			}
		})
	}
}

func TestRoundTripProperty(t *testing.T) {
	f := func(s string) bool {
		s = strings.ToValidUTF8(s, "?")
		got, err := DecompressFromEncodedURIComponent(CompressToEncodedURIComponent(s))
		return err == nil && got == s
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000}); err != nil {
		t.Fatal(err)
	}
}

func FuzzDecompress(f *testing.F) {
	f.Add("IZA")
	f.Add("BYUwNmD2Q")
	f.Add("A-")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = DecompressFromEncodedURIComponent(s)
	})
}

func BenchmarkCompress(b *testing.B) {
	pairs := loadPairs(b)
	in := pairs[len(pairs)-2].Input // ~13 kB of repetitive text
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		CompressToEncodedURIComponent(in)
	}
}

func BenchmarkDecompress(b *testing.B) {
	pairs := loadPairs(b)
	p := pairs[len(pairs)-2]
	b.SetBytes(int64(len(p.Input)))
	for b.Loop() {
		if _, err := DecompressFromEncodedURIComponent(p.Encoded); err != nil {
			b.Fatal(err)
		}
	}
}

// A long run compresses to about sqrt(2n) codes, so output grows
// quadratically with the payload: the cap stops a crafted link.
func TestDecompressCap(t *testing.T) {
	run := strings.Repeat("a", 100000)
	enc := CompressToEncodedURIComponent(run)
	if len(enc) > 2000 {
		t.Fatalf("a run of 100000 compressed to %d characters; expected quadratic growth", len(enc))
	}
	vals := make([]uint16, len(enc))
	for i := 0; i < len(enc); i++ {
		vals[i] = uint16(strings.IndexByte(uriAlphabet, enc[i]))
	}
	if _, err := decompress(vals, 32, 99999); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("cap 99999: error %v, want ErrTooLarge", err)
	}
	out, err := decompress(vals, 32, 100000)
	if err != nil || len(out) != 100000 {
		t.Fatalf("cap 100000: %d units, %v", len(out), err)
	}
}
