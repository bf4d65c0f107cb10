package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
)

// TestEvalScreenRouting: a run of a set whose queue has min_confidence 0.9
// shows, under queue's accuracy–coverage, the routing line: of the ten
// recorded demo-triage answers only dt-008's top probability (0.82) is
// under 0.9, and every queue answer is right. urgency (no min_confidence)
// shows none.
func TestEvalScreenRouting(t *testing.T) {
	opt := demoTriage(t)
	cut := 0.9
	if err := opt.Set.SetMinConfidence("queue", &cut); err != nil {
		t.Fatal(err)
	}
	db := withDB(&opt, openDB(t))
	runA, _ := seedRuns(t, opt, db)
	m := newModel(t, opt)
	drive(m, tea.WindowSizeMsg{Width: 140, Height: 40})
	ra, err := workbench.LoadRun(context.Background(), db, runA, workbench.ViewConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ev := m.screens[screenEval].(*evalModel)
	ev.v = ra
	const line = " min_confidence 0.90: 10.0% routed to uncertain (1/10) · accuracy of the rest 1.000 [0.701, 1.000] Wilson (9/9)"
	for i, r := range ra.Report.Questions {
		ev.qi = i
		ev.draw()
		text := normalize(strings.Join(ev.lines, "\n"))
		has := strings.Contains(text, "\n"+line+"\n") || strings.HasSuffix(text, "\n"+line)
		if r.ID == "queue" && !has {
			t.Errorf("queue: the screen lacks %q:\n%s", line, text)
		}
		if r.ID != "queue" && strings.Contains(text, "min_confidence") {
			t.Errorf("%s shows routing without min_confidence:\n%s", r.ID, text)
		}
	}
}
