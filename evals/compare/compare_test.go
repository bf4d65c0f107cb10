package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/metrics/metricstest"
	"github.com/jevlab/jevlab/provider"
)

// loadRun reads a recorded exchange file of a testdata set joined with the
// set's dataset.jsonl labels, as one run.
func loadRun(t testing.TB, set, file string) RunData {
	t.Helper()
	r := metricstest.Load(t, set, file)
	return RunData{ID: file, Questions: r.Questions, Obs: r.Obs}
}

// TestDemoTriageRecordings compares the base recording with the repeat and
// the option-shuffled recordings. The testdata README states: 0 of 30
// decisions flipped in both; answers whose values changed 6 of 30 (run2:
// refund_request 1, queue 1, urgency 4) and 7 of 30 (shuffled: 2, 1, 4).
func TestDemoTriageRecordings(t *testing.T) {
	base := loadRun(t, "demo-triage", "recorded.jsonl")
	for _, c := range []struct {
		file    string
		changed map[string]int
		total   int
	}{
		{"recorded-run2.jsonl", map[string]int{"refund_request": 1, "queue": 1, "urgency": 4}, 6},
		{"recorded-shuffled.jsonl", map[string]int{"refund_request": 2, "queue": 1, "urgency": 4}, 7},
	} {
		t.Run(c.file, func(t *testing.T) {
			other := loadRun(t, "demo-triage", c.file)
			cmp := Compare(base, other, Options{Seed: 1})
			flips, changed := 0, 0
			for _, q := range cmp.Questions {
				if q.Paired != 10 || q.PairedLabelled != 10 {
					t.Errorf("%s: paired %d labelled %d, want 10", q.ID, q.Paired, q.PairedLabelled)
				}
				flips += q.Drift.ChangedDecisions
				changed += q.Drift.ChangedValues
				if q.Drift.ChangedValues != c.changed[q.ID] {
					t.Errorf("%s: %d answers changed values, want %d", q.ID, q.Drift.ChangedValues, c.changed[q.ID])
				}
				if q.Flips.Fixed+q.Flips.Broken+q.Flips.Changed != 0 || q.McNemar.P != 1 {
					t.Errorf("%s: flips %+v mcnemar %+v", q.ID, q.Flips, q.McNemar)
				}
				if q.Verdict == Regressed || q.Verdict == Improved {
					t.Errorf("%s: verdict %s (%s)", q.ID, q.Verdict, q.Why)
				}
				t.Logf("%s: %s — %s; drift mean TV %.4f", q.ID, q.Verdict, q.Why, q.Drift.MeanTV)
			}
			if flips != 0 || changed != c.total {
				t.Errorf("flipped %d of 30 (want 0), changed values %d of 30 (want %d)", flips, changed, c.total)
			}
			if cmp.Verdict == Regressed || len(cmp.Regressions) > 0 {
				t.Errorf("overall verdict %s", cmp.Verdict)
			}
		})
	}
}

// TestRepeatsAsNoiseFloor treats the repeat recording as repeat 1 of the
// base run: the shuffled run then differs from it no more than it differs
// from itself on decisions.
func TestRepeatsAsNoiseFloor(t *testing.T) {
	base := loadRun(t, "demo-triage", "recorded.jsonl")
	run2 := loadRun(t, "demo-triage", "recorded-run2.jsonl")
	for id, obs := range run2.Obs {
		for _, o := range obs {
			o.Repeat = 1
			base.Obs[id] = append(base.Obs[id], o)
		}
	}
	cmp := Compare(base, loadRun(t, "demo-triage", "recorded-shuffled.jsonl"), Options{Seed: 1})
	for _, q := range cmp.Questions {
		if !q.Noise.Known || q.Noise.A.Items != 10 || q.Noise.A.Flipped != 0 {
			t.Errorf("%s: noise %+v", q.ID, q.Noise)
		}
		if q.Verdict == Regressed {
			t.Errorf("%s regressed: %s", q.ID, q.Why)
		}
	}
}

func TestExactMcNemarReference(t *testing.T) {
	b, err := os.ReadFile("../metrics/testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		McNemar []struct {
			B, C int
			P    float64
		} `json:"mcnemar"`
		EM struct {
			B, C int
			P    float64
		} `json:"entity_merge_mcnemar_noul_vs_action"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	cases := append(ref.McNemar, ref.EM)
	if len(cases) < 5 {
		t.Fatal("reference has too few McNemar cases")
	}
	for _, c := range cases {
		if got := ExactMcNemar(c.B, c.C); math.Abs(got-c.P) > 1e-9 {
			t.Errorf("McNemar b=%d c=%d: %v, statsmodels %v", c.B, c.C, got, c.P)
		}
	}
	// hand: b=5 c=0 → 2·(1/32)
	if got := ExactMcNemar(5, 0); got != 0.0625 {
		t.Errorf("b=5 c=0: %v", got)
	}
	// large n stays finite
	if got := ExactMcNemar(50000, 50500); !(got > 0 && got < 1) {
		t.Errorf("large: %v", got)
	}
}

func TestHolm(t *testing.T) {
	// sorted .01 .02 .04 → ×3 ×2 ×1 = .03 .04 .04 (monotone)
	got := Holm([]float64{0.04, 0.01, 0.02})
	want := []float64{0.04, 0.03, 0.04}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("holm %v, want %v", got, want)
		}
	}
	if got := Holm([]float64{0.5, 0.6}); got[0] != 1 || got[1] != 1 {
		t.Errorf("capped at 1: %v", got)
	}
}

// synthetic builds a noul run: item i answers p[i] with label y[i].
func synthetic(id string, ps []float64, ys []int) RunData {
	rd := RunData{ID: id, Questions: provider.Questions{{ID: "q", Question: provider.Question{Type: provider.Noul}}}, Obs: map[string][]metrics.Obs{}}
	for i, p := range ps {
		rd.Obs["q"] = append(rd.Obs["q"], metrics.Obs{ItemID: fmt.Sprintf("it%03d", i), Answer: &provider.Answer{Type: provider.Noul, P: p}, Label: ys[i], HasLabel: true})
	}
	return rd
}

func TestRegressionDetected(t *testing.T) {
	n := 60
	pa, pb, ys := make([]float64, n), make([]float64, n), make([]int, n)
	for i := range n {
		ys[i] = i % 2
		// A is right everywhere; B breaks 20 items and fixes none
		pa[i] = 0.2 + 0.6*float64(ys[i])
		pb[i] = pa[i]
		if i < 20 {
			pb[i] = 1 - pa[i]
		}
	}
	a, b := synthetic("A", pa, ys), synthetic("B", pb, ys)
	// shuffle B's item order: pairing is by id, not position
	obs := b.Obs["q"]
	for i, j := 0, len(obs)-1; i < j; i, j = i+1, j-1 {
		obs[i], obs[j] = obs[j], obs[i]
	}
	c := Compare(a, b, Options{Seed: 9, Bootstrap: 300})
	q := c.Questions[0]
	if q.McNemar.ARightBWrong != 20 || q.McNemar.AWrongBRight != 0 || q.Flips.Broken != 20 || q.Flips.Fixed != 0 {
		t.Fatalf("mcnemar %+v flips %+v", q.McNemar, q.Flips)
	}
	if q.Verdict != Regressed || c.Verdict != Regressed || c.Regressions[0] != "q" {
		t.Errorf("verdict %s / %s: %s", q.Verdict, c.Verdict, q.Why)
	}
	acc := q.Deltas[0]
	if acc.Metric != "accuracy" || math.Abs(acc.Delta.Value+20.0/60) > 1e-12 || !acc.Significant || acc.Better || acc.Delta.Hi >= 0 {
		t.Errorf("accuracy delta %+v", acc)
	}
	if q.Flips.Items[0].Kind != "broken" || math.Abs(q.Flips.Items[0].Shift+0.6) > 1e-12 {
		t.Errorf("first flip %+v", q.Flips.Items[0])
	}
	// reversed roles: improvement
	c = Compare(b, a, Options{Seed: 9, Bootstrap: 300})
	if c.Verdict != Improved || c.Questions[0].Flips.Fixed != 20 {
		t.Errorf("reverse verdict %s flips %+v", c.Verdict, c.Questions[0].Flips)
	}
	// the same comparison is reproducible for a seed
	c1 := Compare(a, b, Options{Seed: 9, Bootstrap: 300})
	c2 := Compare(a, b, Options{Seed: 9, Bootstrap: 300})
	j1, _ := json.Marshal(c1)
	j2, _ := json.Marshal(c2)
	if string(j1) != string(j2) {
		t.Error("same seed, different comparison")
	}
	if !strings.Contains(c1.Conventions, "seed 9") {
		t.Errorf("conventions lack the seed: %s", c1.Conventions)
	}
}

func TestWithinNoiseFromRepeats(t *testing.T) {
	n := 60
	pa, pb, ys := make([]float64, n), make([]float64, n), make([]int, n)
	for i := range n {
		ys[i] = 1
		pa[i] = 0.9
		pb[i] = 0.9
		if i < 20 {
			pb[i] = 0.1
		}
	}
	a, b := synthetic("A", pa, ys), synthetic("B", pb, ys)
	// A's own repeat flips half the items: B's 1/3 is within that noise
	for i := range n {
		p := 0.9
		if i%2 == 0 {
			p = 0.1
		}
		a.Obs["q"] = append(a.Obs["q"], metrics.Obs{ItemID: fmt.Sprintf("it%03d", i), Repeat: 1, Answer: &provider.Answer{Type: provider.Noul, P: p}, Label: 1, HasLabel: true})
	}
	c := Compare(a, b, Options{Seed: 1, Bootstrap: 200})
	q := c.Questions[0]
	if q.Verdict != WithinNoise || !q.Noise.Known || q.Noise.FlipRate != 0.5 {
		t.Errorf("verdict %s (%s) noise %+v", q.Verdict, q.Why, q.Noise)
	}
}

func TestLabelFreeDriftAndRemap(t *testing.T) {
	opts := []provider.Option{{Label: "x"}, {Label: "y"}, {Label: "z"}}
	qa := provider.Question{Type: provider.Choice, Options: opts}
	qb := provider.Question{Type: provider.Choice, Options: []provider.Option{opts[2], opts[0], opts[1]}}
	mk := func(q provider.Question, choice string, probs []float64) RunData {
		return RunData{Questions: provider.Questions{{ID: "c", Question: q}}, Obs: map[string][]metrics.Obs{
			"c": {{ItemID: "1", Answer: &provider.Answer{Type: provider.Choice, Choice: choice, Probs: probs}}},
		}}
	}
	// same distribution, options reordered in B: no drift at all
	a := mk(qa, "x", []float64{0.6, 0.3, 0.1})
	b := mk(qb, "x", []float64{0.1, 0.6, 0.3})
	q := Compare(a, b, Options{}).Questions[0]
	if q.Reason != "" || q.Drift.MeanTV != 0 || q.Drift.ChangedDecisions != 0 || q.Verdict != NoChange {
		t.Errorf("reordered: %+v", q)
	}
	// decision moves from x to y: TV = ½(.3+.3) = .3, |Δp(x)| = .3
	b = mk(qa, "y", []float64{0.3, 0.6, 0.1})
	q = Compare(a, b, Options{}).Questions[0]
	if q.Drift.ChangedDecisions != 1 || math.Abs(q.Drift.MeanTV-0.3) > 1e-12 || math.Abs(q.Drift.MeanAbsDeltaP-0.3) > 1e-12 || q.PairedLabelled != 0 {
		t.Errorf("drift %+v", q.Drift)
	}
	if !strings.Contains(q.Why, "no labels") {
		t.Errorf("why %q", q.Why)
	}
	// incompatible questions are reported, not compared
	b = RunData{Questions: provider.Questions{{ID: "c", Question: provider.Question{Type: provider.Noul}}, {ID: "new", Question: provider.Question{Type: provider.Noul}}}}
	c := Compare(a, b, Options{})
	q = c.Questions[0]
	if q.Verdict != NotComparable || !strings.Contains(q.Reason, "type changed") {
		t.Errorf("type change: %+v", q)
	}
	if len(c.Questions) != 2 || c.Questions[1].ID != "new" || !strings.Contains(c.Questions[1].Reason, "absent from run A") || c.Verdict != NotComparable {
		t.Errorf("question only in B: %+v (verdict %s)", c.Questions, c.Verdict)
	}
}
