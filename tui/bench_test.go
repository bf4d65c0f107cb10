package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// largeChoiceSet is a set with one 255-option choice question.
func largeChoiceSet(tb testing.TB) *questionset.Set {
	tb.Helper()
	var b strings.Builder
	b.WriteString(`{"name":"large","state":"a long customer message about many things","questions":{"intent":{"type":"choice","instructions":"Which one?","criteria":{`)
	for i := 0; i < 255; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"option_%03d":"Description of option number %d, long enough to matter."`, i, i)
	}
	b.WriteString(`}}}}`)
	s, err := questionset.Parse("large.json", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkViewLargeChoice measures one View of the design screen at
// 200×60 showing a 255-option choice answer with ghost bars (two runs).
// Target: ≤ 2 ms per View.
func BenchmarkViewLargeChoice(b *testing.B) {
	set := largeChoiceSet(b)
	m, err := New(context.Background(), testOptions(set, &fakeProvider{}, "stand-in"))
	if err != nil {
		b.Fatal(err)
	}
	drive(m, tea.WindowSizeMsg{Width: 200, Height: 60})
	drive(m, keys("r")...)
	set.State = []byte(`"another message"`)
	drive(m, keys("r")...)
	view := m.View()
	if !strings.Contains(view, "before") || strings.Count(view, "\n") != 59 {
		b.Fatalf("unexpected frame:\n%s", view)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// startupDB returns a database holding 1M stored answers (200 runs × 1,000
// items × 5 questions), generated once into the temp directory and reused.
func startupDB(b *testing.B) string {
	b.Helper()
	path := filepath.Join(os.TempDir(), "jevlab-bench-startup-1M-v1.db")
	if _, err := os.Stat(path); err == nil {
		// Bring an older file up to the current schema before timing.
		db, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
		return path
	}
	tmp := path + ".partial"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	ctx := context.Background()
	db, err := store.Open(tmp)
	if err != nil {
		b.Fatal(err)
	}
	set := triageSet(b)
	qs := append(provider.Questions(nil), set.Questions...)
	for len(qs) < 5 {
		qe := qs[len(qs)%3]
		qe.ID = fmt.Sprintf("%s_%d", qe.ID, len(qs))
		qs = append(qs, qe)
	}
	body, _ := json.Marshal(map[string]any{"name": "bench", "questions": qs})
	hash, err := db.SaveQuestionSet(ctx, "bench", "", body)
	if err != nil {
		b.Fatal(err)
	}
	fp := &fakeProvider{}
	const runs, items = 200, 1000
	for r := 0; r < runs; r++ {
		run, err := db.CreateRun(ctx, store.NewRun{Name: fmt.Sprintf("bench %d", r), SetHash: hash, SetName: "bench", Model: "jev-latest", Repeat: 1, Total: items})
		if err != nil {
			b.Fatal(err)
		}
		batch := make([]store.ItemResult, 0, items)
		for i := 0; i < items; i++ {
			state := json.RawMessage(fmt.Sprintf(`"item %d of run %d"`, i, r))
			res, _ := fp.Ask(ctx, &provider.Request{Model: "jev-latest", State: state, Questions: qs})
			ir := store.ItemResult{ItemID: fmt.Sprintf("it-%04d", i), Seq: i, Model: res.Model, Usage: res.Usage}
			for k := range res.Answers {
				a := res.Answers[k]
				label := i % 2
				ir.Answers = append(ir.Answers, store.ItemAnswer{ItemID: ir.ItemID, QuestionID: a.ID, Seq: i, Answer: &a, Label: &label})
			}
			batch = append(batch, ir)
		}
		if _, err := db.SaveItems(ctx, run.ID, batch); err != nil {
			b.Fatal(err)
		}
		if err := db.FinishRun(ctx, run.ID, store.StatusDone, ""); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	return path
}

// BenchmarkStartup measures the first frame with a database holding 1M
// stored answers: opening the database, building the workbench, running
// its start-up commands (the runs list: metadata only, one page) and
// drawing. Target: ≤ 150 ms.
func BenchmarkStartup(b *testing.B) {
	path := startupDB(b)
	set := triageSet(b)
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		m, err := New(context.Background(), Options{Session: workbench.NewSession(set, workbench.DatasetSource{}, &workbench.RunTemplate{DB: db}), Provider: &fakeProvider{}, Mode: "stand-in", Renderer: asciiRenderer(), PollEvery: -1})
		if err != nil {
			b.Fatal(err)
		}
		drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
		runCmd(m, m.Init(), 0)
		if v := m.View(); !strings.Contains(v, "support-triage") {
			b.Fatalf("first frame:\n%s", v)
		}
		if rs := m.screens[screenRuns].(*runsModel); len(rs.runs) != 200 {
			b.Fatalf("runs screen read %d runs, want 200", len(rs.runs))
		}
		db.Close()
	}
}
