package compare

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigSum is the sum of xs computed with math/big at a precision that
// holds it exactly, rounded once to a float64.
func bigSum(xs []float64) float64 {
	s := new(big.Float).SetPrec(4096)
	for _, x := range xs {
		s.Add(s, new(big.Float).SetPrec(4096).SetFloat64(x))
	}
	f, _ := s.Float64()
	return f
}

// exactSum's sum is the exactly computed sum rounded once, in whatever
// order the numbers come; a naive sum is not.
func TestExactSumIsOrderFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	naiveDiffers := false
	for trial := range 300 {
		xs := make([]float64, 1+rng.IntN(2000))
		for i := range xs {
			switch trial % 4 {
			case 0: // probabilities' distances, as drift adds
				xs[i] = math.Round(rng.Float64()*100) / 100 / 2
			case 1:
				xs[i] = rng.Float64()
			case 2: // any magnitude, subnormals included
				xs[i] = math.Ldexp(rng.Float64(), rng.IntN(2100)-1080)
			default:
				xs[i] = rng.Float64() * math.Pow(10, float64(rng.IntN(30)-15))
			}
		}
		want := bigSum(xs)
		var naive [2]float64
		for k := range 2 {
			var s exactSum
			for _, x := range xs {
				s.add(x)
				naive[k] += x
			}
			if got := s.Float64(); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("trial %d (%d numbers), order %d: exact sum %v, want %v", trial, len(xs), k, got, want)
			}
			rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		}
		naiveDiffers = naiveDiffers || naive[0] != naive[1]
	}
	if !naiveDiffers {
		t.Fatal("no naive sum depended on the order: the test does not show what exactSum is for")
	}
	var s exactSum
	s.add(math.MaxFloat64)
	s.add(math.MaxFloat64)
	if got := s.Float64(); !math.IsInf(got, 1) {
		t.Errorf("2 × MaxFloat64 = %v, want +Inf", got)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		var s exactSum
		s.add(0.5)
		s.add(bad)
		if got := s.Float64(); !math.IsNaN(got) {
			t.Errorf("a sum with %v = %v, want NaN", bad, got)
		}
	}
	var zero exactSum
	zero.add(0)
	if got := zero.Float64(); got != 0 || math.Signbit(got) {
		t.Errorf("empty sum = %v", got)
	}
}
