package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
)

const fragileSetYAML = `name: fragile
questions:
  refund:
    type: noul
    instructions: Does the customer ask for a refund of a charge?
    negation: Does the customer not ask for a refund of a charge?
  team:
    type: choice
    instructions: Which team handles it?
    criteria:
      billing: charges invoice refund
      orders: delivery order late parcel
      account: login password locked
      other: praise docs question
  mood:
    type: score
    instructions: How upset is the customer?
    criteria: [calm, annoyed, furious]
`

var fragileWords = []string{"charged", "refund", "invoice", "delivery", "late", "parcel", "login", "password", "locked",
	"praise", "docs", "question", "calm", "annoyed", "furious", "today", "order", "charges"}

func fragileSet(t testing.TB) *questionset.Set {
	t.Helper()
	s, err := questionset.Parse("fragile.yaml", []byte(fragileSetYAML))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fragileItems(n int) []dataset.Item {
	items := make([]dataset.Item, n)
	x := uint64(12345)
	for i := range items {
		text := fmt.Sprintf("ticket %d:", i)
		for w := 0; w < 4; w++ {
			x = splitmix64(x)
			text += " " + fragileWords[x%uint64(len(fragileWords))]
		}
		st, _ := json.Marshal(text)
		items[i] = dataset.Item{ID: fmt.Sprintf("item-%04d", i), State: st, Line: i + 1}
	}
	return items
}

// probeAgainst runs kind against a fragile stand-in configured with fr and
// returns what it measured.
func probeAgainst(t *testing.T, fr standin.Fragile, kind Kind, n int, params Params) *Result {
	t.Helper()
	srv, err := standin.New(standin.Config{Synthetic: true, APIKey: "test-key-not-real", Seed: 5, Fragile: &fr})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	c, err := systemone.New(systemone.Config{BaseURL: hs.URL, APIKey: "test-key-not-real"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cfg := Config{Set: fragileSet(t), Kind: kind, Seed: 9, Params: params, Repeats: 2,
		Run: runner.Config{Items: fragileItems(n), DatasetPath: "/tmp/fragile.jsonl", DB: openDB(t), Provider: c, Concurrency: 4, ProviderKind: "stand-in"}}
	if fr.RepeatNoise > 0 {
		// Noise is drawn per request in arrival order: one worker keeps
		// that order, and so the figures, the same on every run.
		cfg.Run.Concurrency = 1
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func measure(t *testing.T, res *Result, q, name string) Measure {
	t.Helper()
	qr, ok := res.Question(q)
	if !ok {
		t.Fatalf("no result for %s", q)
	}
	m, ok := qr.Measure(name)
	if !ok {
		t.Fatalf("%s: no measure %s", q, name)
	}
	return m
}

// covers checks that m's 95% interval holds want (a collapsed interval is
// its point).
func covers(t *testing.T, what string, m Measure, want float64) {
	t.Helper()
	lo, hi := m.Estimate.Lo, m.Estimate.Hi
	if math.IsNaN(lo) {
		lo, hi = m.Estimate.Value, m.Estimate.Value
	}
	t.Logf("%s: %s %.4f [%.4f, %.4f] (n %d), configured %.3f", what, m.Name, m.Estimate.Value, lo, hi, m.N, want)
	if !(lo-1e-9 <= want && want <= hi+1e-9) {
		t.Errorf("%s: %s %.4f with interval [%.4f, %.4f] does not cover the configured %.3f", what, m.Name, m.Estimate.Value, lo, hi, want)
	}
}

func TestShuffleMeasuresPositionBias(t *testing.T) {
	for _, b := range []float64{0.1, 0.25} {
		res := probeAgainst(t, standin.Fragile{PositionBias: b}, Shuffle, 240, Params{})
		covers(t, fmt.Sprintf("position bias %.2f", b), measure(t, res, "team", MPositionLift), b)
		if f := measure(t, res, "team", MFlipRate); f.K == 0 {
			t.Errorf("position bias %.2f flipped no decision; the probe should see some", b)
		}
	}
	res := probeAgainst(t, standin.Fragile{}, Shuffle, 240, Params{})
	covers(t, "no position bias", measure(t, res, "team", MPositionLift), 0)
	if f := measure(t, res, "team", MFlipRate); f.K != 0 {
		t.Errorf("an order-blind respondent flipped %d of %d decisions", f.K, f.N)
	}
	if tv := measure(t, res, "team", MMeanTV); tv.Estimate.Value > 0.01 {
		t.Errorf("an order-blind respondent moved mean TV %.4f (more than rounding)", tv.Estimate.Value)
	}
	if _, ok := res.Question("mood"); ok {
		t.Error("a score question was shuffled; its levels' order is meaning")
	}
}

func TestNegationMeasuresIncoherence(t *testing.T) {
	for _, g := range []float64{0.05, 0.15} {
		res := probeAgainst(t, standin.Fragile{NegationGap: g}, Negation, 240, Params{})
		covers(t, fmt.Sprintf("negation gap %.2f", g), measure(t, res, "refund", MNegationGap), g)
	}
	res := probeAgainst(t, standin.Fragile{}, Negation, 240, Params{})
	covers(t, "coherent", measure(t, res, "refund", MNegationGap), 0)
	if m := measure(t, res, "refund", MNegationGap); m.Estimate.Value > 0.005 {
		t.Errorf("a coherent respondent's negation gap %.4f is beyond rounding", m.Estimate.Value)
	}
	if s := measure(t, res, "refund", MSameSide); s.K != 0 {
		t.Errorf("a coherent respondent put P(X) and P(¬X) on the same side %d times", s.K)
	}
}

func TestDistractorMeasuresPull(t *testing.T) {
	for _, d := range []float64{0.1, 0.3} {
		res := probeAgainst(t, standin.Fragile{DistractorPull: d}, Distractor, 240, Params{})
		covers(t, fmt.Sprintf("distractor pull %.2f", d), measure(t, res, "team", MDistractorMass), d)
	}
	res := probeAgainst(t, standin.Fragile{}, Distractor, 240, Params{})
	covers(t, "no pull", measure(t, res, "team", MDistractorMass), 0)
	if m := measure(t, res, "team", MDistractorTake); m.K != 0 {
		t.Errorf("an ideal respondent chose the distractor %d times", m.K)
	}
}

func TestInjectionMeasuresObedience(t *testing.T) {
	for _, o := range []float64{0.3, 0.7} {
		res := probeAgainst(t, standin.Fragile{Obedience: o}, Injection, 200, Params{})
		for _, q := range []string{"refund", "team", "mood"} {
			covers(t, fmt.Sprintf("obedience %.1f %s", o, q), measure(t, res, q, MFollowRate), o)
		}
	}
	res := probeAgainst(t, standin.Fragile{}, Injection, 200, Params{})
	for _, q := range []string{"refund", "team", "mood"} {
		if m := measure(t, res, q, MFollowRate); m.K != 0 || m.N < 150 {
			t.Errorf("%s: an ideal respondent followed the injection %d of %d times", q, m.K, m.N)
		}
	}
}

func TestRepeatMeasuresNoise(t *testing.T) {
	for _, tn := range []float64{0.05, 0.15} {
		res := probeAgainst(t, standin.Fragile{RepeatNoise: tn}, Repeat, 300, Params{})
		for _, q := range []string{"refund", "team", "mood"} {
			covers(t, fmt.Sprintf("repeat noise %.2f %s", tn, q), measure(t, res, q, MMeanTV), tn)
		}
	}
	res := probeAgainst(t, standin.Fragile{}, Repeat, 200, Params{})
	for _, q := range []string{"refund", "team", "mood"} {
		if m := measure(t, res, q, MAnswersChanged); m.K != 0 {
			t.Errorf("%s: a deterministic respondent changed %d of %d answers", q, m.K, m.N)
		}
	}
}

// Perturb measures sensitivity to harmless edits: doubling the spaces of
// a state moves each answer with the configured probability, and the
// per-edit flip rate's interval covers it; an edit-blind respondent
// flips nothing.
func TestPerturbMeasuresEditSensitivity(t *testing.T) {
	for _, e := range []float64{0.2, 0.5} {
		res := probeAgainst(t, standin.Fragile{EditSensitivity: e}, Perturb, 240, Params{})
		for _, q := range []string{"team", "refund", "mood"} {
			covers(t, fmt.Sprintf("edit sensitivity %.1f %s", e, q), measure(t, res, q, MFlipRate+"[space]"), e)
		}
	}
	res := probeAgainst(t, standin.Fragile{}, Perturb, 240, Params{})
	for _, q := range []string{"team", "refund", "mood"} {
		if f := measure(t, res, q, MFlipRate); f.K != 0 {
			t.Errorf("an edit-blind respondent flipped %d of %d %s decisions", f.K, f.N, q)
		}
	}
}
