package compare

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// syntheticRun returns n labelled answers to a k-option choice question;
// drift moves that share of B's answers to another option.
func syntheticRuns(n, k int, drift float64) (RunData, RunData) {
	q := provider.Question{Type: provider.Choice}
	for i := range k {
		q.Options = append(q.Options, provider.Option{Label: fmt.Sprintf("o%02d", i)})
	}
	qs := provider.Questions{{ID: "c", Question: q}}
	rng := rand.New(rand.NewPCG(5, 5))
	a := RunData{ID: "A", Questions: qs, Obs: map[string][]metrics.Obs{}}
	b := RunData{ID: "B", Questions: qs, Obs: map[string][]metrics.Obs{}}
	oa, ob := make([]metrics.Obs, n), make([]metrics.Obs, n)
	aa, ab := make([]provider.Answer, n), make([]provider.Answer, n)
	mk := func(top int, peak float64) []float64 {
		p := make([]float64, k)
		for j := range p {
			p[j] = float64(int((1-peak)/float64(k-1)*100)) / 100
		}
		p[top] = peak
		return p
	}
	for i := range n {
		top := rng.IntN(k)
		y := top
		if rng.Float64() > 0.7 {
			y = rng.IntN(k)
		}
		peak := float64(30+rng.IntN(70)) / 100
		aa[i] = provider.Answer{Type: provider.Choice, Choice: q.Options[top].Label, Probs: mk(top, peak)}
		tb := top
		if rng.Float64() < drift {
			tb = rng.IntN(k)
		}
		ab[i] = provider.Answer{Type: provider.Choice, Choice: q.Options[tb].Label, Probs: mk(tb, peak)}
		id := fmt.Sprintf("it%07d", i)
		oa[i] = metrics.Obs{ItemID: id, Answer: &aa[i], Label: y, HasLabel: true}
		ob[n-1-i] = metrics.Obs{ItemID: id, Answer: &ab[i], Label: y, HasLabel: true}
	}
	a.Obs["c"], b.Obs["c"] = oa, ob
	return a, b
}

func benchCompare(b *testing.B, boot int) {
	ra, rb := syntheticRuns(100_000, 20, 0.05)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := uint64(0)
	b.ResetTimer()
	for b.Loop() {
		c := Compare(ra, rb, Options{Seed: 1, Bootstrap: boot})
		if c.Questions[0].PairedLabelled != 100_000 {
			b.Fatalf("paired %d", c.Questions[0].PairedLabelled)
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

// BenchmarkCompare pairs two 100k-item choice runs (20 options) by item id
// and computes every delta, McNemar, flips and drift, with the default
// paired bootstrap (B = 1000).
func BenchmarkCompare(b *testing.B) { benchCompare(b, 0) }

// BenchmarkCompareNoBootstrap is the same comparison with point deltas only.
func BenchmarkCompareNoBootstrap(b *testing.B) { benchCompare(b, -1) }
