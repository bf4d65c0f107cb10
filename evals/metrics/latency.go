package metrics

import (
	"math"
	"slices"
)

// NearestRank returns the q-quantile (0 < q <= 1) of sorted by the
// nearest-rank method: the value at rank ceil(q·n).
func NearestRank(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	r := int(math.Ceil(q*float64(n) - 1e-9))
	r = max(1, min(n, r))
	return sorted[r-1]
}

func latency(v []float64) Latency {
	if len(v) == 0 {
		return Latency{}
	}
	slices.Sort(v)
	var s float64
	for _, x := range v {
		s += x
	}
	return Latency{
		N:    len(v),
		P50:  NearestRank(v, 0.50),
		P95:  NearestRank(v, 0.95),
		P99:  NearestRank(v, 0.99),
		Mean: s / float64(len(v)),
		Max:  v[len(v)-1],
	}
}
