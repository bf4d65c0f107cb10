package metrics

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// SyntheticChoice returns a k-option question and n answered, labelled
// observations with two-decimal probabilities (as Jev rounds them) whose
// top option is right about 70% of the time.
func syntheticChoice(n, k int, seed uint64) (*provider.Question, []Obs) {
	q := &provider.Question{Type: provider.Choice}
	for i := range k {
		q.Options = append(q.Options, provider.Option{Label: fmt.Sprintf("o%02d", i)})
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	obs := make([]Obs, n)
	probs := make([]float64, n*k)
	answers := make([]provider.Answer, n)
	for i := range n {
		p := probs[i*k : (i+1)*k : (i+1)*k]
		top := rng.IntN(k)
		peak := float64(30+rng.IntN(70)) / 100
		rest := 1 - peak
		for j := range p {
			if j != top {
				p[j] = float64(int(rest/float64(k-1)*100)) / 100
			}
		}
		p[top] = peak
		y := top
		if rng.Float64() > 0.7 {
			y = rng.IntN(k)
		}
		answers[i] = provider.Answer{Type: provider.Choice, Choice: q.Options[top].Label, Probs: p}
		obs[i] = Obs{ItemID: fmt.Sprintf("it%07d", i), Answer: &answers[i], Label: y, HasLabel: true, LatencyMS: float64(200 + rng.IntN(600)), InputTokens: 400}
	}
	return q, obs
}

// BenchmarkMetrics computes every metric of 1M choice answers over 20
// options without bootstrap or noise-floor resampling.
func BenchmarkMetrics(b *testing.B) {
	q, obs := syntheticChoice(1_000_000, 20, 1)
	opt := Options{Bootstrap: -1, NoiseFloorDraws: -1}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := uint64(0)
	b.ResetTimer()
	for b.Loop() {
		r := Compute(q, obs, opt)
		if r.Labelled != len(obs) {
			b.Fatalf("labelled %d", r.Labelled)
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapInuse)
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(peak)/(1<<20), "heap-inuse-MB")
	b.ReportMetric(float64(before.HeapInuse)/(1<<20), "input-heap-MB")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
}

// BenchmarkECEFloor100k draws the default 1,000 perfectly calibrated
// samples of a 100k-item choice question (what every report pays).
func BenchmarkECEFloor100k(b *testing.B) {
	q, obs := syntheticChoice(100_000, 20, 1)
	d := Prepare(q, obs, Options{})
	b.ResetTimer()
	for b.Loop() {
		if m, _ := d.ECEFloor(DefaultNoiseFloorDraws, 1); !(m > 0) {
			b.Fatalf("floor %v", m)
		}
	}
}
