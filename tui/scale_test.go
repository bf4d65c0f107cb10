package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// scaleSet is issue 11's 8-question set: a choice over 22 options, a
// choice over 15, two 5-level scores and four nouls.
func scaleSet(tb testing.TB) *questionset.Set {
	tb.Helper()
	opts := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"opt_%02d":"option %d"`, i, i)
		}
		return b.String()
	}
	qs := fmt.Sprintf(`"c22":{"type":"choice","instructions":"Which intent?","criteria":{%s}},`+
		`"c15":{"type":"choice","instructions":"Which product?","criteria":{%s}},`+
		`"s1":{"type":"score","instructions":"How upset?","criteria":["l0","l1","l2","l3","l4"]},`+
		`"s2":{"type":"score","instructions":"How complex?","criteria":["l0","l1","l2","l3","l4"]},`+
		`"n1":{"type":"noul","instructions":"Urgent?"},"n2":{"type":"noul","instructions":"Refund?"},`+
		`"n3":{"type":"noul","instructions":"Legal?"},"n4":{"type":"noul","instructions":"Churn risk?"}`, opts(22), opts(15))
	s, err := questionset.Parse("scale.json", []byte(`{"name":"scale","state":"a message","questions":{`+qs+`}}`))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// storeScaleRun stores one finished run of set over n generated items
// (labelled, answers drawn from a seeded generator: right about 70% of the
// time), in batches, and returns it.
func storeScaleRun(tb testing.TB, db *store.DB, set *questionset.Set, n int) *workbench.Run {
	tb.Helper()
	ctx := context.Background()
	body, err := json.Marshal(map[string]any{"name": "scale", "questions": set.Questions})
	if err != nil {
		tb.Fatal(err)
	}
	hash, err := db.SaveQuestionSet(ctx, "scale", "", body)
	if err != nil {
		tb.Fatal(err)
	}
	run, err := db.CreateRun(ctx, store.NewRun{Name: fmt.Sprintf("scale %d", n), SetHash: hash, SetName: "scale", Model: "jev-latest", Repeat: 1, Total: n})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	const batch = 2000
	buf := make([]store.ItemResult, 0, batch)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("it-%07d", i)
		ir := store.ItemResult{ItemID: id, Seq: i, Model: "jev-1", Usage: provider.Usage{InputTokens: 800}}
		for _, qe := range set.Questions {
			k := qe.Question.Size()
			label := rng.IntN(k)
			a := provider.Answer{ID: qe.ID, Type: qe.Question.Type, Provenance: provider.Provenance{Source: provider.SourceStandIn, Model: "jev-1"}}
			guess := label
			if rng.Float64() > 0.7 {
				guess = rng.IntN(k)
			}
			if qe.Question.Type == provider.Noul {
				p := 0.2 + 0.6*rng.Float64()
				if guess == 1 {
					p = math.Max(p, 1-p)
				} else {
					p = math.Min(p, 1-p)
				}
				a.P = math.Round(p*1e4) / 1e4
			} else {
				ps := make([]float64, k)
				rest := 0.0
				for j := range ps {
					ps[j] = rng.Float64()
					rest += ps[j]
				}
				top := 0.3 + 0.6*rng.Float64()
				for j := range ps {
					ps[j] = (1 - top) * ps[j] / rest
				}
				ps[guess] += top
				a.Probs, a.Confidence, a.HasConfidence = ps, ps[guess], true
				if qe.Question.Type == provider.Choice {
					a.Choice = qe.Question.Options[guess].Label
				} else {
					for j, p := range ps {
						a.Score += float64(j) * p
					}
				}
			}
			ir.Answers = append(ir.Answers, store.ItemAnswer{ItemID: id, QuestionID: qe.ID, Seq: i, Answer: &a, Label: &label})
		}
		buf = append(buf, ir)
		if len(buf) == batch || i == n-1 {
			if _, err := db.SaveItems(ctx, run.ID, buf); err != nil {
				tb.Fatal(err)
			}
			buf = buf[:0]
		}
	}
	if err := db.FinishRun(ctx, run.ID, store.StatusDone, ""); err != nil {
		tb.Fatal(err)
	}
	r, err := db.ResolveRun(ctx, run.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// scaleOptions opens the workbench on set over db, with a build name so
// the evaluate screen stores and reads run summaries.
func scaleOptions(set *questionset.Set, db *store.DB, build string) Options {
	opt := testOptions(set, &fakeProvider{}, "stand-in")
	opt.Session = workbench.NewSession(set, workbench.DatasetSource{}, &workbench.RunTemplate{DB: db, Build: build})
	return opt
}

// TestEvaluateLargeRun opens a large stored run (10,000 items × 8
// questions) on the evaluate screen through the runs screen, twice: the
// first open computes the report and stores its summary (a progress line
// while it reads), the second reads the summary. It logs the time to the
// first full frame (the metrics table) each time.
func TestEvaluateLargeRun(t *testing.T) {
	const n = 10_000 // the bootstrap of the first open takes seconds on a loaded 2-core machine
	set := scaleSet(t)
	db := openDB(t)
	start := time.Now()
	run := storeScaleRun(t, db, set, n)
	t.Logf("stored %d items × %d questions in %v", n, len(set.Questions), time.Since(start).Round(time.Millisecond))

	frame := func(label string, want ...string) time.Duration {
		tm := startTM(t, newModel(t, scaleOptions(set, db, "test-build")), 160, 48)
		tm.Type("4")
		waitFor(t, tm, "Runs 1 of 1")
		t0 := time.Now()
		typeKeys(tm, press(tea.KeyEnter))
		// The first open's bootstrap (1,000 resamples of 10,000 items × 8
		// questions) takes seconds, and minutes under -race on a 2-core
		// machine that something else keeps busy: wait far longer than
		// waitFor's 10 s.
		var seen []byte
		texts := append([]string{"Metrics · run " + run.ID, "c22 ", "n4 "}, want...)
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			seen = append(seen, b...)
			for _, s := range texts {
				if !bytes.Contains(seen, []byte(s)) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(8*time.Minute), teatest.WithCheckInterval(10*time.Millisecond))
		d := time.Since(t0)
		t.Logf("%s open: first full frame in %v", label, d.Round(time.Millisecond))
		_, view := finish(t, tm)
		if !strings.Contains(view, "Metrics · run "+run.ID) {
			t.Errorf("%s open: the final frame lost the metrics:\n%s", label, view)
		}
		return d
	}
	// The first open reads every answer: the progress line shows while it
	// does (drawn at once, before the load ends).
	frame("first", "reading run "+run.ID, "report computed from its answers")
	// The second open reads the stored summary.
	if d := frame("second", "from its stored summary"); d > 10*time.Second {
		t.Errorf("second open took %v: the stored summary was not used", d)
	}
}

// TestEvaluateLoadCancel: esc stops a load in flight — its context is
// cancelled, its result dropped and the screen says so — and a newer open
// supersedes an older one; the answers read after the report fill the
// per-item views and reach the dataset screen.
func TestEvaluateLoadCancel(t *testing.T) {
	set := scaleSet(t)
	db := openDB(t)
	run := storeScaleRun(t, db, set, 7_000) // 56,000 answers: two loads
	m := newModel(t, scaleOptions(set, db, "test-build"))
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 48}, keys("3")[0])
	ev := m.screens[screenEval].(*evalModel)

	// Open, then esc before the load runs.
	_, cmd := m.Update(openRunMsg{run: run})
	if !strings.Contains(m.View(), "reading run "+run.ID) || !strings.Contains(m.View(), "esc cancels") {
		t.Fatalf("no progress line before the load ran:\n%s", m.View())
	}
	drive(m, press(tea.KeyEsc))
	if !strings.Contains(m.View(), "stopped reading run "+run.ID) {
		t.Fatalf("esc did not say the load stopped:\n%s", m.View())
	}
	var got evalLoadMsg
	for _, c := range cmd().(tea.BatchMsg) {
		if msg, ok := c().(evalLoadMsg); ok {
			got = msg
		}
	}
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("the cancelled load returned %v, want context.Canceled", got.err)
	}
	runMsg(m, got, 0)
	if ev.v != nil || strings.Contains(m.View(), "esc cancels") {
		t.Fatalf("a cancelled load was shown:\n%s", m.View())
	}

	// Two opens: only the newer one's result is shown.
	_, old := m.Update(openRunMsg{run: run})
	drive(m, openRunMsg{run: run}) // runs both loads of the newer open
	if !ev.answersRead() || ev.v == nil {
		t.Fatalf("the newer open did not read the report and the answers:\n%s", m.View())
	}
	v := ev.v
	for _, c := range old().(tea.BatchMsg) {
		if msg, ok := c().(evalLoadMsg); ok {
			runMsg(m, msg, 0)
		}
	}
	if ev.v != v {
		t.Fatal("a superseded load replaced the newer view")
	}
	if len(ev.v.ItemIDs) != 7_000 || strings.Contains(m.View(), "esc cancels") {
		t.Fatalf("answers: %d items read; view:\n%s", len(ev.v.ItemIDs), m.View())
	}
	if ds := m.screens[screenDataset].(*datasetModel); ds.runID != run.ID || len(ds.results) != 7_000 {
		t.Fatalf("the dataset screen got run %q with %d items", ds.runID, len(ds.results))
	}
	// The noul's confusion and the provider's confidence are drawn from
	// the answers, not the placeholder.
	drive(m, keys("]]]]]")...)
	if view := strings.Join(ev.lines, "\n"); strings.Contains(view, "needs the run's answers") || strings.Contains(view, " … ") {
		t.Fatalf("per-item views still wait for answers:\n%s", view)
	}
}

// BenchmarkEvaluateFirstFrame measures the evaluate screen's first full
// frame (the metrics table drawn) of a stored run of N items × 8
// questions, for each N in $JEVLAB_SCALE (default 20000; `make
// bench-scale` runs 10000,100000): "first_ms" opens it as the first time
// (reading every answer, computing and storing the summary), "summary_ms"
// as every later time (reading the stored summary). Target at 100k: ≤ 1 s.
// Each size's database is generated once into the temp directory.
func BenchmarkEvaluateFirstFrame(b *testing.B) {
	sizes := []int{20_000}
	if env := os.Getenv("JEVLAB_SCALE"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("JEVLAB_SCALE=%q: want sizes like 10000,100000", env)
			}
			sizes = append(sizes, n)
		}
	}
	set := scaleSet(b)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			db, run := scaleDB(b, set, n)
			var first, second time.Duration
			for b.Loop() {
				build := fmt.Sprintf("bench %d", time.Now().UnixNano()) // no summary stored for it yet
				first += openFirstFrame(b, set, db, run, build)
				second += openFirstFrame(b, set, db, run, build)
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first_ms")
			b.ReportMetric(float64(second.Milliseconds())/float64(b.N), "summary_ms")
		})
	}
}

// scaleDB opens (generating it the first time) a database in the temp
// directory holding one run of set over n items.
func scaleDB(b *testing.B, set *questionset.Set, n int) (*store.DB, *workbench.Run) {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("jevlab-bench-firstframe-%d-v1.db", n))
	if _, err := os.Stat(path); err != nil {
		tmp := path + ".partial"
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(tmp + suffix)
		}
		db, err := store.Open(tmp)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		storeScaleRun(b, db, set, n)
		b.Logf("generated %d items in %v", n, time.Since(start).Round(time.Second))
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
	db, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	run, err := db.ResolveRun(context.Background(), "latest")
	if err != nil {
		b.Fatal(err)
	}
	return db, run
}

// openFirstFrame opens run on a new workbench's evaluate screen and
// returns the time until the metrics table is drawn (the report load
// only: the answers load that follows is cancelled).
func openFirstFrame(b *testing.B, set *questionset.Set, db *store.DB, run *workbench.Run, build string) time.Duration {
	b.Helper()
	m, err := New(context.Background(), scaleOptions(set, db, build))
	if err != nil {
		b.Fatal(err)
	}
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 48}, keys("3")[0])
	start := time.Now()
	_, cmd := m.Update(openRunMsg{run: run})
	var next tea.Cmd
	for _, c := range cmd().(tea.BatchMsg) {
		if msg, ok := c().(evalLoadMsg); ok {
			_, next = m.Update(msg)
		}
	}
	view := m.View()
	d := time.Since(start)
	if !strings.Contains(view, "Metrics · run "+run.ID) {
		b.Fatalf("no metrics in the first frame:\n%s", view)
	}
	m.screens[screenEval].(*evalModel).ld.stop()
	_ = next // the answers load is not run
	return d
}
