package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/costs"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

const costSetYAML = `questions:
  dup:
    type: noul
    instructions: Are these the same?
    costs: {false_positive: 1000, false_negative: 1}
`

// noulObs makes n labelled noul observations: p rising with i, a true
// label on every third.
func noulObs(n int) []metrics.Obs {
	var out []metrics.Obs
	for i := range n {
		l := 0
		if i%3 == 0 {
			l = 1
		}
		out = append(out, metrics.Obs{ItemID: fmt.Sprintf("it%03d", i), Answer: &provider.Answer{Type: provider.Noul, P: float64(i%10) / 10}, Label: l, HasLabel: true})
	}
	return out
}

// TestCostCutpointEntries: a fit on enough labels is written as a loadable
// "checked" entry; one on too few is marked and has null thresholds (the
// fitted values only under "fitted"); an infinite threshold (never yes)
// is written as null rather than breaking the JSON.
func TestCostCutpointEntries(t *testing.T) {
	set, err := questionset.Parse("q.yaml", []byte(costSetYAML))
	if err != nil {
		t.Fatal(err)
	}
	sp := questionset.SplitSpec{Seed: 1, Test: 0.5}
	for _, tc := range []struct {
		n      int
		status string
	}{{200, "checked"}, {20, "too few labels"}} {
		rep := &RunReport{Costs: FitCosts(set, map[string][]metrics.Obs{"dup": noulObs(tc.n)}, sp, "")}
		es := CostCutpointFile(rep)
		if len(es) != 1 || es[0].Status != tc.status || es[0].Kind != "cost" {
			t.Fatalf("n %d: %+v", tc.n, es)
		}
		e := es[0]
		// A false positive costing 1000 against 1 for a false negative: never say yes.
		if !math.IsInf(e.Fit.Hi, 1) || e.Fitted.YesAt != nil {
			t.Errorf("n %d: fit %+v fitted %+v, want never yes", tc.n, e.Fit, e.Fitted)
		}
		var b strings.Builder
		if err := WriteJSON(&b, CutpointFileAll(rep)); err != nil {
			t.Fatalf("n %d: %v", tc.n, err)
		}
		var back []map[string]any
		if err := json.Unmarshal([]byte(b.String()), &back); err != nil || len(back) != 1 {
			t.Fatalf("n %d: %v\n%s", tc.n, err, b.String())
		}
		if tc.status == "too few labels" {
			if back[0]["thresholds"] != nil || !strings.Contains(e.Warning, "need at least 50") {
				t.Errorf("too few: %s", b.String())
			}
		} else if th, ok := back[0]["thresholds"].(map[string]any); !ok || th["yes_at"] != nil || e.Check == nil {
			t.Errorf("checked: %s", b.String())
		}
		var round CostCutpointEntry
		raw, _ := json.Marshal(e)
		if err := json.Unmarshal(raw, &round); err != nil || round.Fit != e.Fit || *round.Check != *e.Check {
			t.Errorf("round trip %v: %+v vs %+v", err, round.Fit, e.Fit)
		}
	}
	// Too few of one class, though enough labels.
	pts := make([]costs.Point, 60)
	pts[0].Label = true
	if s := costs.TooFew(pts); !strings.Contains(s, "1 true and 59 false") {
		t.Errorf("one class: %q", s)
	}
}
