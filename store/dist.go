package store

import (
	"encoding/binary"
	"math"
)

// A distribution (or a box's edges) in packed answers of version 2 is
//
//	uvarint scale+1, uvarint n, then n uvarints m: the numbers m/10^scale
//	uvarint 0,       uvarint n, then n × 8 B float64 bits
//
// Providers round probabilities to a few decimals (Jev to hundredths), so
// most distributions take one byte per number, and read back with one
// division each instead of parsing text. Either form gives back the
// float64s bit for bit: a number is stored scaled only when m/10^scale,
// computed as the decoder computes it, is that number exactly (which the
// shortest decimal text of a number with at most scale decimals also
// parses to; see parseExact).

// maxDistScale is the most decimal places a distribution is stored scaled
// at: beyond it the numbers are rarely decimals, and m grows past a few
// bytes.
const maxDistScale = 9

// scaledAt returns m with m/10^d == p to the bit (m < 2⁵³), or false.
func scaledAt(p float64, d int) (uint64, bool) {
	if !(p >= 0) || p > 1e15 {
		return 0, false
	}
	x := math.Round(p * pow10[d])
	if x >= 1<<53 {
		return 0, false
	}
	m := uint64(x)
	return m, math.Float64bits(float64(m)/pow10[d]) == math.Float64bits(p)
}

// distScale is the fewest decimal places at which every number of ps is
// stored exactly scaled, or -1 when there is none up to maxDistScale.
func distScale(ps []float64) int {
	d := 0
	for _, p := range ps {
		for {
			if _, ok := scaledAt(p, d); ok {
				break
			}
			if d++; d > maxDistScale {
				return -1
			}
		}
	}
	// A number exact at fewer places is exact at more (10m/10^(d+1) is
	// the same real number), but each is checked again at d by appendDist.
	return d
}

// appendDist appends ps in the form above.
func appendDist(b []byte, ps []float64) []byte {
	if d := distScale(ps); d >= 0 {
		start := len(b)
		b = binary.AppendUvarint(b, uint64(d+1))
		b = binary.AppendUvarint(b, uint64(len(ps)))
		ok := true
		for _, p := range ps {
			m, exact := scaledAt(p, d)
			if !exact {
				ok = false
				break
			}
			b = binary.AppendUvarint(b, m)
		}
		if ok {
			return b
		}
		b = b[:start]
	}
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p))
	}
	return b
}

// dist reads a distribution appendDist wrote, into buf(n) (an empty slice
// with room for n): never nil, empty when n is 0.
func (r *reader) dist(buf func(n int) []float64) []float64 {
	form := r.uvarint()
	n := r.uvarint()
	width := uint64(1) // the least a number takes
	if form == 0 {
		width = 8
	}
	if r.err != nil || form > maxDistScale+1 || n > uint64(len(r.b))/width {
		r.fail()
		return nil
	}
	out := buf(int(n))
	if form == 0 {
		for range n {
			out = append(out, r.float())
		}
		return out
	}
	div := pow10[form-1]
	for range n {
		// Most numbers take one byte (below 128: hundredths, tenths).
		if b := r.b; len(b) > 0 && b[0] < 0x80 {
			out = append(out, float64(b[0])/div)
			r.b = b[1:]
			continue
		}
		out = append(out, float64(r.uvarintLong())/div)
	}
	if r.err != nil {
		return nil
	}
	return out
}

// skipDist moves r past a distribution appendDist wrote.
func (r *reader) skipDist() {
	form := r.uvarint()
	n := r.uvarint()
	if r.err != nil || form > maxDistScale+1 {
		r.fail()
		return
	}
	if form == 0 {
		if n > uint64(len(r.b))/8 {
			r.fail()
			return
		}
		r.b = r.b[8*n:]
		return
	}
	// n uvarints end in n bytes below 0x80 (a report reading one
	// question skips every other question's distribution).
	b := r.b
	i := 0
	for k := uint64(0); k < n; i++ {
		if i == len(b) {
			r.fail()
			return
		}
		if b[i] < 0x80 {
			k++
		}
	}
	r.b = b[i:]
}
