package store

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// BenchmarkSaveItems stores items of 8 choice answers in batches of 256,
// the runner's write path; it reports items/s for storage alone.
func BenchmarkSaveItems(b *testing.B) {
	db := openTemp(b)
	r := newRun(b, db, "bench", "jev-latest")
	ctx := context.Background()
	mk := func(i int) ItemResult {
		it := ItemResult{ItemID: fmt.Sprint("item-", i), Seq: i, LatencyMS: 3.5, Usage: provider.Usage{InputTokens: 180}, CostUSD: 7.56e-6, Model: "standin-synthetic-1", Attempts: 1}
		for q := 0; q < 8; q++ {
			lab := q % 3
			it.Answers = append(it.Answers, ItemAnswer{QuestionID: fmt.Sprint("q", q), Decided: "orders", LatencyMS: 3.5, Label: &lab, LabelText: "orders",
				Answer: &provider.Answer{ID: fmt.Sprint("q", q), Type: provider.Choice, Choice: "orders", Confidence: 0.61, HasConfidence: true,
					Probs: []float64{0.2, 0.61, 0.19}, Raw: []byte(`{"type":"choice","choice":"orders","probabilities":{"orders":0.61,"billing":0.2,"account":0.19},"confidence":0.61}`),
					Provenance: provider.Provenance{Source: provider.SourceLive, Model: "standin-synthetic-1"}}})
		}
		return it
	}
	batch := make([]ItemResult, 0, 256)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch = append(batch, mk(i))
		if len(batch) == cap(batch) || i == b.N-1 {
			if _, err := db.SaveItems(ctx, r.ID, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/item")
}

// cpuTime is the process's user + system CPU time, which (unlike wall
// time) a busy shared machine does not inflate much.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
