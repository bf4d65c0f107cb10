package tui

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/jevlab/jevlab/evals/probe"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
)

// fragileClient is the live client against an in-process stand-in that
// moves mass toward the first option by bias.
func fragileClient(t *testing.T, bias float64) provider.Provider {
	t.Helper()
	srv, err := standin.New(standin.Config{Synthetic: true, Seed: 1, Fragile: &standin.Fragile{PositionBias: bias}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := systemone.New(systemone.Config{BaseURL: ts.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// probeLineOf is the stability line `jevlab probe` prints for question
// qid of probe run id (its renderProbe prints q.Line() of the result
// probe.Run returns, which is probe.Load of the run it stored).
func probeLineOf(t *testing.T, opt Options, id, qid string) string {
	t.Helper()
	res, err := probe.Load(context.Background(), opt.Session.Template.DB, id, probe.Stats{Seed: workbench.CanonicalSeed})
	if err != nil {
		t.Fatal(err)
	}
	q, ok := res.Question(qid)
	if !ok {
		t.Fatalf("probe run %s has no result for %s", id, qid)
	}
	return q.Line()
}

// TestEvalProbe evaluates demo-triage against a stand-in with a position
// bias, selects the
// queue question, runs a shuffle probe of it from the screen (p, then s),
// and shows its stability line: the line the probe command prints for
// that run. w opens the worst items; esc closes them.
func TestEvalProbe(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			opt := demoTriage(t)
			db := withDB(&opt, openDB(t))
			opt.Provider, opt.Mode = fragileClient(t, 0.3), "stand-in"
			tm := startDataset(t, opt, sz.w, sz.h)
			tm.Type("3r")
			waitFor(t, tm, "Metrics · run", "Probes · none of refund_request")
			tm.Type("]")
			waitFor(t, tm, "Probes · none of queue")
			tm.Type("p")
			waitFor(t, tm, "Probe which kind?")
			tm.Type("s")
			// The stability lines reload after the probe is done; w opens
			// their worst items, so wait for the line itself (one wait: the
			// two may arrive in one frame).
			waitFor(t, tm, "done: run", "flip_rate")
			tm.Type("w")
			waitFor(t, tm, "Worst items · queue", "dt-003")
			typeKeys(tm, press(tea.KeyEsc))
			waitFor(t, tm, "Probes of queue")
			fm, view := finish(t, tm)
			ev := fm.screens[screenEval].(*evalModel)
			lines := ev.probes.lines
			if len(lines) != 1 || lines[0].Kind != "shuffle" {
				t.Fatalf("probe lines %+v", lines)
			}
			want := probeLineOf(t, opt, lines[0].Run, "queue")
			if lines[0].Line != want || !strings.Contains(want, "flip_rate ") {
				t.Errorf("the screen's stability line\n  %s\nis not the probe command's\n  %s", lines[0].Line, want)
			}
			// The line as drawn (wrapped at the width, never cut).
			flat := strings.Join(strings.Fields(strings.ReplaceAll(normalize(view), "shuffle", " ")), " ")
			if !strings.Contains(flat, strings.Join(strings.Fields(want), " ")[:40]) {
				t.Errorf("the screen does not show the line %q:\n%s", want, view)
			}
			if lines[0].BaseRun != ev.v.Run.ID {
				t.Errorf("probe measured against %s, the run shown is %s", lines[0].BaseRun, ev.v.Run.ID)
			}
			if _, err := db.Run(context.Background(), lines[0].Run); err != nil {
				t.Errorf("probe run not stored: %v", err)
			}
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}
