package tui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
)

// TestLittleBootstrapHeaders: above 20,000 labelled items the evaluate
// and compare screens name the bag of little bootstraps (its subsets and
// their size, ⌈21000^0.7⌉ = 1061) exactly as show's and compare's text
// print it for the same report and comparison.
func TestLittleBootstrapHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("21,000-item reports")
	}
	const n = 21_000
	const want = "bag of little bootstraps: 10 subsets of 1061 items"
	q := provider.Questions{{ID: "refund", Question: provider.Question{Type: provider.Noul}}}
	rng := rand.New(rand.NewPCG(1, 2))
	a := compare.RunData{ID: "r-a", Questions: q, Obs: map[string][]metrics.Obs{}}
	b := compare.RunData{ID: "r-b", Questions: q, Obs: map[string][]metrics.Obs{}}
	for i := range n {
		p := float64(rng.IntN(101)) / 100
		y := 0
		if rng.Float64() < p {
			y = 1
		}
		id := fmt.Sprintf("it%05d", i)
		a.Obs["refund"] = append(a.Obs["refund"], metrics.Obs{ItemID: id, Answer: &provider.Answer{Type: provider.Noul, P: p}, Label: y, HasLabel: true})
		pb := min(1, p+0.05*float64(rng.IntN(2)))
		b.Obs["refund"] = append(b.Obs["refund"], metrics.Obs{ItemID: id, Answer: &provider.Answer{Type: provider.Noul, P: pb}, Label: y, HasLabel: true})
	}

	// The evaluate screen against show's text, for one report.
	qr := metrics.Compute(&q[0].Question, a.Obs["refund"], metrics.Options{Seed: workbench.CanonicalSeed})
	qr.ID = "refund"
	if shown := report.ConventionsOf([]*metrics.QuestionReport{qr}); !strings.Contains(shown, want) {
		t.Fatalf("show's conventions do not name the bag:\n%s", shown)
	}
	mdl := newModel(t, demoTriage(t))
	ev := mdl.screens[screenEval].(*evalModel)
	ev.v = &workbench.RunView{Run: &workbench.Run{ID: "r-a"}, Report: &workbench.RunReport{Questions: []*workbench.QuestionReport{qr}}}
	if head := strings.Join(ev.metricsTable(240), "\n"); !strings.Contains(head, want) {
		t.Errorf("evaluate screen does not name the bag as show does (%q):\n%s", want, head)
	}

	// The compare screen against compare's text, for one comparison.
	c := compare.Compare(a, b, compare.Options{Seed: workbench.CanonicalSeed})
	var text strings.Builder
	if err := report.WriteCompareText(&text, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), want) {
		t.Fatalf("compare's text does not name the bag:\n%s", text.String())
	}
	cm := mdl.screens[screenCompare].(*compareModel)
	cm.c, cm.w = c, 240
	cm.draw()
	if head := strings.Join(cm.head, "\n"); !strings.Contains(head, want) {
		t.Errorf("compare screen does not name the bag as compare does (%q):\n%s", want, head)
	}
}
