package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// BenchmarkAnswerIndexBackfill opens a database of 100k exchanges (three
// questions each, demo-triage's shape) stored before the answer index: the
// one-time cost of the upgrade, reported per exchange.
func BenchmarkAnswerIndexBackfill(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	const questions = `"questions":{"refund_request":{"type":"noul","instructions":"Does the message ask for a refund?"},` +
		`"queue":{"type":"choice","instructions":"Which team?","criteria":{"billing":"Payments.","technical":"Errors.","other":"Anything else."}},` +
		`"urgency":{"type":"score","instructions":"How soon?","criteria":["Can wait.","Days.","Today."]}}`
	const resp = `{"model":"jev-1.13.0","answers":{"refund_request":{"type":"noul","noul":0.99},` +
		`"queue":{"type":"choice","choice":"billing","confidence":1.0,"probabilities":{"billing":1.0,"technical":0.0,"other":0.0}},` +
		`"urgency":{"type":"score","score":2.0,"confidence":1.0,"probabilities":{"0":0.0,"1":0.0,"2":1.0}}},"usage":{"input_tokens":250}}`
	exs := make([]provider.Exchange, n)
	for i := range exs {
		exs[i] = provider.Exchange{Request: []byte(fmt.Sprintf(`{"model":"jev-latest","state":{"message":"stored message %d"},%s}`, i, questions)),
			Response: []byte(resp), RecordedAt: "2026-11-01T00:00:00Z"}
	}
	dir := b.TempDir()
	orig := filepath.Join(dir, "orig.db")
	preIndexDB(b, orig, exs)
	data, err := os.ReadFile(orig)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := filepath.Join(dir, fmt.Sprintf("copy%d.db", i))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		db, err := Open(p)
		if err != nil {
			b.Fatal(err)
		}
		var rows int
		if err := db.sql.QueryRow(`SELECT count(*) FROM answer_index`).Scan(&rows); err != nil || rows != 3*n {
			b.Fatalf("%d rows (%v), want %d", rows, err, 3*n)
		}
		db.Close()
		if i == 0 {
			b.StopTimer()
			st, err := os.Stat(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Size()-int64(len(data)))/float64(3*n), "db-bytes/answer")
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/exchange")
}

// scaleItem is item i of the scale set's shape (a choice over 22, a choice
// over 15, two 5-level scores, four nouls), answered live.
func scaleItem(i int) ItemResult {
	at := time.Date(2026, 12, 1, 10, 0, 0, i*1000, time.UTC)
	prov := provider.Provenance{Source: provider.SourceLive, Model: "standin-synthetic-1", RecordedAt: at}
	it := ItemResult{ItemID: fmt.Sprintf("item-%06d", i), Seq: i, LatencyMS: 3.5, Usage: provider.Usage{InputTokens: 180, OutputTokens: 40},
		CostUSD: 7.56e-6, Model: "standin-synthetic-1", Attempts: 1}
	add := func(qid string, an *provider.Answer, decided string, label int, text string) {
		an.ID, an.Provenance = qid, prov
		l := label
		it.Answers = append(it.Answers, ItemAnswer{ItemID: it.ItemID, QuestionID: qid, Seq: i, Decided: decided, LatencyMS: 3.5,
			Label: &l, LabelText: text, Answer: an})
	}
	choice := func(qid string, n int) {
		ps := make([]float64, n)
		k := i % n
		ps[k], ps[(k+1)%n] = 0.87, 0.13
		raw := fmt.Sprintf(`{"type":"choice","choice":"opt%d","confidence":0.87,"probabilities":{`, k)
		for j := 0; j < n; j++ {
			if j > 0 {
				raw += ","
			}
			raw += fmt.Sprintf(`"opt%d":%g`, j, ps[j])
		}
		raw += "}}"
		add(qid, &provider.Answer{Type: provider.Choice, Choice: fmt.Sprint("opt", k), Confidence: 0.87, HasConfidence: true, Probs: ps, Raw: []byte(raw)},
			fmt.Sprint("opt", k), k, fmt.Sprint("opt", k))
	}
	choice("topic", 22)
	choice("team", 15)
	for _, q := range []string{"urgency", "tone"} {
		lv := i % 5
		ps := []float64{0, 0, 0, 0, 0}
		ps[lv] = 1
		add(q, &provider.Answer{Type: provider.Score, Score: float64(lv), Confidence: 1, HasConfidence: true, Probs: ps,
			Raw: []byte(fmt.Sprintf(`{"type":"score","score":%d.0,"confidence":1.0,"probabilities":{"0":%g,"1":%g,"2":%g,"3":%g,"4":%g}}`, lv, ps[0], ps[1], ps[2], ps[3], ps[4]))},
			fmt.Sprint(lv), lv, "")
	}
	for _, q := range []string{"refund", "spam", "angry", "vip"} {
		p := float64(i%100) / 100
		add(q, &provider.Answer{Type: provider.Noul, P: p, Raw: []byte(fmt.Sprintf(`{"type":"noul","noul":%g}`, p))},
			fmt.Sprint(p), i%2, "")
	}
	return it
}

// BenchmarkForEachAnswerNoRaw reads a run of 100k items × 8 answers (10k
// with -short) the way metrics do, without raw bytes: the cost of opening
// a large run's report.
func BenchmarkForEachAnswerNoRaw(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	db := openTemp(b)
	r := newRun(b, db, "bench", "jev-latest")
	ctx := context.Background()
	batch := make([]ItemResult, 0, 500)
	for i := 0; i < n; i++ {
		batch = append(batch, scaleItem(i))
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := db.SaveItems(ctx, r.ID, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		got := 0
		if err := db.ForEachAnswerNoRaw(ctx, r.ID, func(a *ItemAnswer) error {
			got++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if got != 8*n {
			b.Fatalf("%d answers, want %d", got, 8*n)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkForEachQuestionAnswerNoRaw reads the same run question by
// question, as reports and comparisons do (8 passes).
func BenchmarkForEachQuestionAnswerNoRaw(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	db := openTemp(b)
	r := newRun(b, db, "bench", "jev-latest")
	ctx := context.Background()
	batch := make([]ItemResult, 0, 500)
	for i := 0; i < n; i++ {
		batch = append(batch, scaleItem(i))
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := db.SaveItems(ctx, r.ID, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	qs := []string{"topic", "team", "urgency", "tone", "refund", "spam", "angry", "vip"}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		got := 0
		for _, q := range qs {
			if err := db.ForEachQuestionAnswerNoRaw(ctx, r.ID, q, func(a *ItemAnswer) error {
				got++
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		if got != 8*n {
			b.Fatalf("%d answers, want %d", got, 8*n)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}
