package store

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// parseExact, where it answers, gives strconv.ParseFloat's float64 to the
// bit (it answers for most stored probabilities: short decimals), and
// declines what it cannot read exactly; parseFloats reads appendFloats'
// text back bit for bit whichever path each number takes.
func TestParseExactIsStrconvs(t *testing.T) {
	check := func(s string) bool {
		f, ok := parseExact([]byte(s))
		if !ok {
			return false
		}
		g, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(f) != math.Float64bits(g) {
			t.Fatalf("%q: parseExact %v (bits %x), strconv %v (bits %x) %v", s, f, math.Float64bits(f), g, math.Float64bits(g), err)
		}
		return true
	}
	for _, s := range []string{"0", "-0", "1", "0.1", "0.7", "0.30000000000000004", "1e-05", "1.5e-07", "5e-324",
		"1.7976931348623157e+308", "4503599627370495", "0.4503599627370495", "1e22", "1e-22", "3e22", "1.5", "-2.25", "5.", ".5", "0.000", "007"} {
		check(s)
	}
	for _, s := range []string{"", "-", ".", "e5", "1e", "1e+", "1x", "NaN", "Inf", "-Inf", "1_0", "0x10", "+1", "1e99999", "4503599627370496", "12345678901234567", "1e23", "1e-23"} {
		if f, ok := parseExact([]byte(s)); ok {
			t.Errorf("%q read as %v; want declined", s, f)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	fast, n := 0, 0
	var ps []float64
	for range 200000 {
		var v float64
		switch rng.IntN(4) {
		case 0:
			v = rng.Float64()
		case 1: // a short decimal, as providers round
			d := math.Pow(10, float64(1+rng.IntN(6)))
			v = math.Round(rng.Float64()*d) / d
		case 2:
			v = rng.Float64() * math.Pow(10, float64(rng.IntN(40)-20))
		default:
			v = math.Float64frombits(rng.Uint64())
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
		}
		ps = append(ps, v)
		n++
		if check(strconv.FormatFloat(v, 'g', -1, 64)) {
			fast++
		}
	}
	if fast < n/5 || fast == n {
		t.Fatalf("the exact path read %d of %d numbers: the test does not exercise both paths", fast, n)
	}
	got, err := parseFloats(appendFloats(nil, ps))
	if err != nil || len(got) != len(ps) {
		t.Fatalf("parseFloats: %d numbers, %v; want %d", len(got), err, len(ps))
	}
	for i := range ps {
		if math.Float64bits(got[i]) != math.Float64bits(ps[i]) {
			t.Fatalf("number %d: %v read back as %v", i, ps[i], got[i])
		}
	}
}
