package probe

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/store"
)

const demoDir = "../../fixtures/demo-triage"

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "probe.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func loadDemo(t testing.TB) (*questionset.Set, []dataset.Item, string) {
	t.Helper()
	set, err := questionset.Load(filepath.Join(demoDir, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path, _ := filepath.Abs(filepath.Join(demoDir, "dataset.jsonl"))
	items, err := dataset.Load(path, dataset.Options{}.ForSet(set), set)
	if err != nil {
		t.Fatal(err)
	}
	items, _ = dataset.ResolveLabels(set, items, nil)
	return set, items, path
}

func recording(t testing.TB, name string) Recording {
	t.Helper()
	c, err := fixtures.NewCache(fixtures.CacheConfig{Files: []string{filepath.Join(demoDir, name)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return Recording{Name: name, Provider: c}
}

// The demo-triage recordings hold the same ten requests answered three
// times by Jev; the repeat probe reports exactly what the files hold.
func TestRepeatOnRealRecordings(t *testing.T) {
	set, items, path := loadDemo(t)
	db := openDB(t)
	cfg := Config{Set: set, Kind: Repeat, Run: runner.Config{Items: items, DatasetPath: path, DB: db, Concurrency: 2, ProviderKind: "offline"},
		Recordings: []Recording{recording(t, "recorded.jsonl"), recording(t, "recorded-run2.jsonl")}}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"refund_request": 1, "queue": 1, "urgency": 4}
	dec, ans, n := 0, 0, 0
	for _, q := range res.Questions {
		if len(q.Pairs) != 1 {
			t.Fatalf("%s: %d pairs, want 1", q.Question, len(q.Pairs))
		}
		p := q.Pairs[0]
		if p.N != 10 || p.Decisions != 0 || p.Answers != want[q.Question] {
			t.Errorf("%s: %+v, want 0 decisions and %d answers changed of 10", q.Question, p, want[q.Question])
		}
		dec, ans, n = dec+p.Decisions, ans+p.Answers, n+p.N
		m, _ := q.Measure(MFlipRate)
		if m.K != 0 || m.N != 10 || m.Estimate.Lo != 0 || !(m.Estimate.Hi > 0.25 && m.Estimate.Hi < 0.35) {
			t.Errorf("%s: flip rate %+v, want 0 of 10 with Wilson [0, 0.278]", q.Question, m)
		}
	}
	if dec != 0 || ans != 6 || n != 30 {
		t.Errorf("base vs run2: %d decisions, %d answers changed of %d; want 0, 6 of 30", dec, ans, n)
	}

	// All three recordings: the pairwise figures.
	cfg.Recordings = append(cfg.Recordings, recording(t, "recorded-shuffled.jsonl"))
	res, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("runs %v, want 3 (one per recording)", res.Runs)
	}
	wantPairs := map[string][3]int{"refund_request": {1, 2, 3}, "queue": {1, 1, 1}, "urgency": {4, 4, 3}}
	tot := [3]int{}
	for _, q := range res.Questions {
		if len(q.Pairs) != 3 {
			t.Fatalf("%s: %d pairs, want 3", q.Question, len(q.Pairs))
		}
		for i, p := range q.Pairs {
			if p.Decisions != 0 || p.N != 10 {
				t.Errorf("%s pair %s/%s: %+v, want 0 decisions of 10", q.Question, p.A, p.B, p)
			}
			if w := wantPairs[q.Question][i]; p.Answers != w {
				t.Errorf("%s pair %s/%s: %d answers changed, want %d", q.Question, p.A, p.B, p.Answers, w)
			}
			tot[i] += p.Answers
		}
		t.Logf("%s: %+v", q.Question, q.Pairs)
	}
	if tot[0] != 6 || tot[1] != 7 {
		t.Errorf("answers changed: base/run2 %d, base/shuffled %d; want 6 and 7 of 30", tot[0], tot[1])
	}
	t.Logf("run2 vs shuffled: %d of 30 answers changed", tot[2])
	// Load by any of the runs gives the same figures.
	again, err := Load(context.Background(), db, res.Runs[2], Stats{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Runs) != 3 || again.Questions[2].Pairs[1].Answers != 4 {
		t.Errorf("Load from the third run: %+v", again)
	}
}
