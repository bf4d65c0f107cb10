// Package lzstring implements the URI-safe form of the lz-string format
// (compressToEncodedURIComponent / decompressFromEncodedURIComponent of the
// npm package lz-string 1.5.0), which the TypeSafe Playground uses for its
// share links.
//
// lz-string works on UTF-16 code units, like JavaScript strings. Go strings
// are converted to UTF-16 before compressing and back after decompressing, so
// any valid UTF-8 text round-trips and produces the same output as the npm
// package.
package lzstring

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
)

// uriAlphabet is the 64-character alphabet of the URI-safe encoding: one
// character carries six bits.
const uriAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$"

// ErrCorrupt reports a payload that is not a valid lz-string stream.
var ErrCorrupt = errors.New("lz-string payload is corrupt")

// ErrTooLarge reports a payload that would decompress to more than
// MaxDecompressed code units. LZW output can grow quadratically with the
// input, so a short crafted link could otherwise exhaust memory.
var ErrTooLarge = errors.New("lz-string payload decompresses to too much data")

// MaxDecompressed caps the decompressed size in UTF-16 code units (64 Mi,
// 128 MiB as UTF-16): far above any Playground share.
const MaxDecompressed = 64 << 20

// CompressToEncodedURIComponent compresses s exactly as lz-string's
// compressToEncodedURIComponent does.
func CompressToEncodedURIComponent(s string) string {
	if s == "" {
		return ""
	}
	w := bitWriter{bitsPerChar: 6}
	compress(utf16.Encode([]rune(s)), &w)
	return w.sb.String()
}

// DecompressFromEncodedURIComponent reverses CompressToEncodedURIComponent.
// Spaces are read as '+', as the npm package does (a '+' that went through
// form decoding). A character outside the alphabet, a truncated stream or an
// invalid back-reference is an error wrapping ErrCorrupt.
func DecompressFromEncodedURIComponent(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	s = strings.ReplaceAll(s, " ", "+")
	vals := make([]uint16, len(s))
	for i := 0; i < len(s); i++ {
		v := strings.IndexByte(uriAlphabet, s[i])
		if v < 0 {
			return "", fmt.Errorf("%w: character %q at offset %d is not in the URI-safe alphabet", ErrCorrupt, s[i], i)
		}
		vals[i] = uint16(v)
	}
	units, err := decompress(vals, 32, MaxDecompressed)
	if err != nil {
		return "", err
	}
	return string(utf16.Decode(units)), nil
}

// bitWriter packs values into characters of bitsPerChar bits, most
// significant bit first, as lz-string does.
type bitWriter struct {
	bitsPerChar int
	val         int
	pos         int
	sb          strings.Builder
}

func (w *bitWriter) bit(b int) {
	w.val = w.val<<1 | b
	if w.pos == w.bitsPerChar-1 {
		w.pos = 0
		w.sb.WriteByte(uriAlphabet[w.val])
		w.val = 0
	} else {
		w.pos++
	}
}

// bits writes the low n bits of v, least significant first.
func (w *bitWriter) bits(v, n int) {
	for i := 0; i < n; i++ {
		w.bit(v & 1)
		v >>= 1
	}
}

// flush pads the last character with zero bits.
func (w *bitWriter) flush() {
	for {
		w.val <<= 1
		if w.pos == w.bitsPerChar-1 {
			w.sb.WriteByte(uriAlphabet[w.val])
			return
		}
		w.pos++
	}
}

// dictKey is an LZW dictionary entry: the code of a prefix extended by one
// code unit.
type dictKey struct {
	prefix int
	c      uint16
}

// compress is lz-string's LZW variant: single code units are introduced as
// 8- or 16-bit literals the first time they are emitted, codes grow one bit
// whenever the dictionary doubles, and code 2 ends the stream.
func compress(in []uint16, w *bitWriter) {
	singles := make(map[uint16]int)  // code unit → code
	pending := make(map[uint16]bool) // code units not yet emitted as a literal
	pairs := make(map[dictKey]int)
	dictSize, numBits, enlargeIn := 3, 2, 2

	grow := func() {
		enlargeIn--
		if enlargeIn == 0 {
			enlargeIn = 1 << numBits
			numBits++
		}
	}
	// The current phrase: its code, and its code unit when it is one unit.
	wCode, wLen := 0, 0
	var wUnit uint16
	emit := func() {
		if wLen == 1 && pending[wUnit] {
			if wUnit < 256 {
				w.bits(0, numBits)
				w.bits(int(wUnit), 8)
			} else {
				w.bits(1, numBits)
				w.bits(int(wUnit), 16)
			}
			grow()
			delete(pending, wUnit)
		} else {
			w.bits(wCode, numBits)
		}
		grow()
	}
	for _, c := range in {
		if _, ok := singles[c]; !ok {
			singles[c] = dictSize
			dictSize++
			pending[c] = true
		}
		if wLen > 0 {
			if code, ok := pairs[dictKey{wCode, c}]; ok {
				wCode, wLen = code, wLen+1
				continue
			}
			emit()
			pairs[dictKey{wCode, c}] = dictSize
			dictSize++
		}
		wCode, wLen, wUnit = singles[c], 1, c
	}
	if wLen > 0 {
		emit()
	}
	w.bits(2, numBits)
	w.flush()
}

// bitReader reads values packed by bitWriter.
type bitReader struct {
	data  []uint16
	val   uint16
	pos   uint16
	reset uint16
	index int
}

// bits reads n bits, least significant first. Reading past the end yields
// zero bits, as in the npm package; decompress detects the overrun.
func (r *bitReader) bits(n int) int {
	out := 0
	for i := 0; i < n; i++ {
		b := r.val & r.pos
		r.pos >>= 1
		if r.pos == 0 {
			r.pos = r.reset
			if r.index < len(r.data) {
				r.val = r.data[r.index]
			} else {
				r.val = 0
			}
			r.index++
		}
		if b != 0 {
			out |= 1 << i
		}
	}
	return out
}

func decompress(data []uint16, reset uint16, maxOut int) ([]uint16, error) {
	r := &bitReader{data: data, val: data[0], pos: reset, reset: reset, index: 1}
	dict := [][]uint16{nil, nil, nil}
	enlargeIn, numBits := 4, 3

	var first []uint16
	switch r.bits(2) {
	case 0:
		first = []uint16{uint16(r.bits(8))}
	case 1:
		first = []uint16{uint16(r.bits(16))}
	case 2:
		return nil, nil
	default:
		return nil, fmt.Errorf("%w: invalid first token", ErrCorrupt)
	}
	dict = append(dict, first)
	w := first
	out := append([]uint16(nil), first...)
	for {
		if r.index > len(data) {
			return nil, fmt.Errorf("%w: stream ends without its end marker (truncated link?)", ErrCorrupt)
		}
		c := r.bits(numBits)
		switch c {
		case 0, 1:
			n := 8
			if c == 1 {
				n = 16
			}
			dict = append(dict, []uint16{uint16(r.bits(n))})
			c = len(dict) - 1
			enlargeIn--
		case 2:
			return out, nil
		}
		if enlargeIn == 0 {
			enlargeIn = 1 << numBits
			numBits++
		}
		var entry []uint16
		switch {
		case c < len(dict) && dict[c] != nil:
			entry = dict[c]
		case c == len(dict):
			entry = append(append(make([]uint16, 0, len(w)+1), w...), w[0])
		default:
			return nil, fmt.Errorf("%w: back-reference %d beyond dictionary size %d", ErrCorrupt, c, len(dict))
		}
		if len(out)+len(entry) > maxOut {
			return nil, fmt.Errorf("%w (more than %d code units)", ErrTooLarge, maxOut)
		}
		out = append(out, entry...)
		dict = append(dict, append(append(make([]uint16, 0, len(w)+1), w...), entry[0]))
		enlargeIn--
		w = entry
		if enlargeIn == 0 {
			enlargeIn = 1 << numBits
			numBits++
		}
	}
}
