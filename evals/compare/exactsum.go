package compare

import (
	"math"
	"math/big"
	"math/bits"
)

// exactWords is how many 64-bit words hold any sum of up to 2³¹ finite
// float64s: bit i weighs 2^(i−1074), from the smallest subnormal to
// above the largest float64 times 2³¹.
const exactWords = (1074 + 1024 + 31 + 63) / 64

// exactSum adds finite non-negative float64s without rounding (a
// fixed-point accumulator over every bit a float64 can have), so its sum,
// rounded once by Float64, is the same whatever the order of the
// additions: a comparison's drift is the same whether the runs were read
// merged by item id or held whole, in any order.
type exactSum struct {
	w   [exactWords]uint64 // little-endian
	bad bool               // a negative, infinite or NaN value was added
}

// add adds x.
func (s *exactSum) add(x float64) {
	if x == 0 {
		return
	}
	if !(x > 0) || math.IsInf(x, 0) {
		s.bad = true
		return
	}
	b := math.Float64bits(x)
	exp := int(b >> 52 & 0x7ff)
	mant := b & (1<<52 - 1)
	off := 0 // a subnormal: mant × 2^−1074
	if exp > 0 {
		mant |= 1 << 52
		off = exp - 1 // mant × 2^(exp−1075)
	}
	i, sh := off/64, uint(off%64)
	var carry uint64
	s.w[i], carry = bits.Add64(s.w[i], mant<<sh, 0)
	hi := uint64(0)
	if sh > 0 {
		hi = mant >> (64 - sh)
	}
	for i++; (hi != 0 || carry != 0) && i < exactWords; i++ {
		s.w[i], carry = bits.Add64(s.w[i], hi, carry)
		hi = 0
	}
}

// Float64 is the sum rounded to the nearest float64 (NaN when a negative,
// infinite or NaN value was added).
func (s *exactSum) Float64() float64 {
	if s.bad {
		return math.NaN()
	}
	buf := make([]byte, 8*exactWords)
	for i, w := range s.w { // big-endian for SetBytes
		for k := range 8 {
			buf[len(buf)-1-8*i-k] = byte(w >> (8 * k))
		}
	}
	n := new(big.Int).SetBytes(buf)
	f, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(n), -1074).Float64()
	return f
}
