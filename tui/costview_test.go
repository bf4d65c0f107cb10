package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/jevlab/jevlab/evals/questionset"
)

// withCosts declares costs on demo-triage's refund_request (a noul) and
// queue (a choice).
func withCosts(t *testing.T, opt Options) {
	t.Helper()
	set := opt.Session.Set
	half, one := 0.5, 1.0
	if set.Settings == nil {
		set.Settings = map[string]questionset.Settings{}
	}
	st := set.Settings["refund_request"]
	st.Costs = &questionset.Costs{FalsePositive: 5, FalseNegative: 1, Abstain: &half}
	set.Settings["refund_request"] = st
	st = set.Settings["queue"]
	st.Costs = &questionset.Costs{Choice: true, Matrix: map[string]map[string]float64{"billing": {"technical": 5}}, Other: &one, Abstain: &one}
	set.Settings["queue"] = st
}

// TestCostView: on the evaluate screen the cost view of the selected
// question follows the noul threshold (,/.) and the confidence cut-point
// (←/→): confusion counts, coverage, errors and cost per 1,000 move with
// them.
func TestCostView(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			for _, step := range []string{"noul", "choice"} {
				t.Run(step, func(t *testing.T) {
					opt := demoTriage(t)
					withCosts(t, opt)
					withDB(&opt, openDB(t))
					tm := startDataset(t, opt, sz.w, sz.h)
					tm.Type("3r")
					waitFor(t, tm, "Metrics · run")
					right := func(n int) {
						for range n {
							typeKeys(tm, press(tea.KeyRight))
						}
					}
					want := []string{"threshold 0.60 (,/. moves it): yes at p ≥ 0.70, no below 0.30", "expected cost per 1,000 items"}
					switch step {
					case "noul":
						tm.Type("..")
						right(4)
					case "choice":
						tm.Type("]")
						right(9)
						want = []string{"cut 0.95 (←/→ moves it): decide", "expected cost per 1,000 items"}
					}
					if sz.h < 30 {
						typeKeys(tm, press(tea.KeyPgDown))
					}
					waitFor(t, tm, want[0]) // the renderer repaints changed lines only
					_, view := finish(t, tm)
					if !strings.Contains(view, "expected cost per 1,000 items") {
						t.Errorf("no cost view:\n%s", view)
					}
					golden.RequireEqual(t, []byte(normalize(view)))
				})
			}
		})
	}
}
