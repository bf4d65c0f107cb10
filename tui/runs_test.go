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
