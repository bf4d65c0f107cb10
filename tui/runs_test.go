package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
)

// The first pick is A (the baseline) whatever the runs' ages, s swaps, a
// run stored by another process shows up on the next poll, and a screen
// change clears the status line.
func TestRunsPickSwapPoll(t *testing.T) {
	opt := demoTriage(t)
	db := withDB(&opt, openDB(t))
	seedRuns(t, opt, db)
	m := newModel(t, opt)
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 30})
	runCmd(m, m.Init(), 0)
	rs := m.screens[screenRuns].(*runsModel)
	cm := m.screens[screenCompare].(*compareModel)
	drive(m, keys("4")...)
	newer, older := rs.runs[0].ID, rs.runs[1].ID // rows newest first
	drive(m, keys(" j ")...)                     // the newer first: it is A, though it is not the older
	if m.active != screenCompare || cm.c == nil || cm.c.A.ID != newer || cm.c.B.ID != older {
		t.Fatalf("A %v B %v, want A = the first pick %s", cm.c.A.ID, cm.c.B.ID, newer)
	}
	if v := m.View(); !strings.Contains(v, "A (baseline) "+newer) {
		t.Errorf("compare screen does not name A the baseline:\n%s", v)
	}
	drive(m, keys("4s")...)
	if cm.c.A.ID != older || cm.c.B.ID != newer {
		t.Fatalf("after s: A %s B %s", cm.c.A.ID, cm.c.B.ID)
	}
	// Another process stores a run: the poll notices it.
	s := workbench.NewSession(opt.Session.Set, opt.Session.Dataset, &workbench.RunTemplate{DB: db, Provider: &fakeProvider{}, Concurrency: 1})
	raw, _ := workbench.LoadItems(context.Background(), s.Set, s.Dataset)
	third, err := s.StartRun(context.Background(), raw, "elsewhere", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	drive(m, runsPollMsg{})
	if len(rs.runs) != 3 || rs.runs[0].ID != third {
		t.Fatalf("after a poll the list has %d runs, newest %s", len(rs.runs), rs.runs[0].ID)
	}
	drive(m, keys("4")...)
	if v := m.View(); !strings.Contains(v, "elsewhere") || !strings.Contains(v, "queue ") {
		t.Errorf("the new run's name and accuracy are not shown:\n%s", v)
	}
	m.e.fail("something about runs")
	drive(m, keys("3")...)
	if m.e.flash != "" {
		t.Errorf("status line kept %q across a screen change", m.e.flash)
	}
}

// While a comparison runs, its progress line counts both runs' items
// read, then says the resampling is what remains; the line goes once the
// comparison is shown.
func TestCompareProgressLine(t *testing.T) {
	opt := demoTriage(t)
	db := withDB(&opt, openDB(t))
	a, b := seedRuns(t, opt, db)
	m := newModel(t, opt)
	drive(m, tea.WindowSizeMsg{Width: 140, Height: 30}, keys("4")[0])
	ra, err := db.ResolveRun(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := db.ResolveRun(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	drive(m, gotoScreenMsg{to: screenCompare})
	_, cmd := m.Update(compareMsg{a: ra, b: rb})
	cm := m.screens[screenCompare].(*compareModel)
	if v := m.View(); !strings.Contains(v, "comparing A "+a+" → B "+b) || !strings.Contains(v, "esc cancels") {
		t.Fatalf("no progress line before the comparison ran:\n%s", v)
	}
	ch := make(chan workbench.LoadProgress)
	close(ch) // the next wait ends at once
	drive(m, loadProgressMsg{for_: screenCompare, seq: cm.ld.seq, p: workbench.LoadProgress{Read: 7, Total: 20}, ch: ch})
	if v := m.View(); !strings.Contains(v, "7 of 20 items read") {
		t.Fatalf("progress line without the items read:\n%s", v)
	}
	drive(m, loadProgressMsg{for_: screenCompare, seq: cm.ld.seq, p: workbench.LoadProgress{Read: 20, Total: 20}, ch: ch})
	if v := m.View(); !strings.Contains(v, "every item read, resampling the paired items") {
		t.Fatalf("progress line once every item is read:\n%s", v)
	}
	// The comparison itself.
	for _, c := range cmd().(tea.BatchMsg) {
		if r, ok := c().(comparedMsg); ok {
			runMsg(m, r, 0)
		}
	}
	if cm.c == nil || strings.Contains(m.View(), "esc cancels") {
		t.Fatalf("comparison not shown, or the progress line stayed:\n%s", m.View())
	}
}
