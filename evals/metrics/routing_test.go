package metrics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// routingChoices is a fixed vector of eight choice answers (4 options) with
// their top probability, decision and label, worked through by hand below.
func routingChoices() []Obs {
	probs := [][]float64{
		{0.90, 0.05, 0.03, 0.02}, // i000 top .90 dec a, label a: kept, right
		{0.10, 0.80, 0.05, 0.05}, // i001 top .80 dec b, label c: kept, wrong
		{0.10, 0.10, 0.60, 0.20}, // i002 top .60 dec c, label c: kept (= the cut), right
		{0.55, 0.15, 0.15, 0.15}, // i003 top .55 dec a, label a: routed
		{0.30, 0.30, 0.20, 0.20}, // i004 top .30 dec a, label b: routed
		{0.05, 0.05, 0.05, 0.85}, // i005 top .85 dec d, label d: kept, right
		{0.40, 0.35, 0.15, 0.10}, // i006 top .40 dec a, label a: routed
		{0.70, 0.10, 0.10, 0.10}, // i007 top .70 dec a, unlabelled: kept, no label
	}
	obs := choices(probs, []int{0, 1, 2, 0, 0, 3, 0, 0}, []int{0, 2, 2, 0, 1, 3, 0, 0})
	obs[7].HasLabel = false
	// A failed call has no confidence: left out of the routing.
	obs = append(obs, Obs{ItemID: "i008", ErrKind: "timeout", Label: 0, HasLabel: true})
	return obs
}

// TestRoutingHandComputed: at min_confidence 0.6 the items under it are
// i003 (.55), i004 (.30) and i006 (.40): 3 of the 8 answered routed
// (37.5%); the kept five hold four labelled (i000, i001, i002, i005) of
// which three are right: accuracy of the rest 3/4 = 0.75.
func TestRoutingHandComputed(t *testing.T) {
	cut := 0.6
	r := Compute(qChoice, routingChoices(), Options{Bootstrap: -1, MinConfidence: &cut}).Selective.Routing
	if r == nil {
		t.Fatal("no routing computed")
	}
	if r.Answered != 8 || r.Routed != 3 || r.Kept != 5 || r.KeptLabelled != 4 || r.KeptCorrect != 3 {
		t.Errorf("counts %+v, want answered 8 routed 3 kept 5 labelled 4 correct 3", *r)
	}
	check(t, "routed share", r.RoutedShare.Value, 0.375)
	check(t, "kept accuracy", r.KeptAccuracy.Value, 0.75)
	if r.Confidence != "max prob" || r.MinConfidence != 0.6 {
		t.Errorf("confidence %q cut %v", r.Confidence, r.MinConfidence)
	}
	want := "min_confidence 0.60: 37.5% routed to uncertain (3/8) · accuracy of the rest 0.750 (3/4)"
	if got := r.String(); got != want {
		t.Errorf("line\n got %q\nwant %q", got, want)
	}
	// Overall accuracy is 5/7 (i000, i002, i003, i005, i006 right of seven
	// labelled answers): routing does not change the headline.
	full := Compute(qChoice, routingChoices(), Options{Bootstrap: -1, MinConfidence: &cut})
	check(t, "accuracy", full.Accuracy.Value, 5.0/7)

	// No MinConfidence: no routing.
	if r := Compute(qChoice, routingChoices(), Options{Bootstrap: -1}).Selective.Routing; r != nil {
		t.Errorf("routing without min_confidence: %+v", *r)
	}
}

func TestRoutingEdges(t *testing.T) {
	tests := []struct {
		name                      string
		cut                       float64
		routed, labelled, correct int
		line                      string
	}{
		// Nothing is under 0: every answer kept, accuracy 5/7.
		{"zero routes nothing", 0, 0, 7, 5, "min_confidence 0.00: 0.0% routed to uncertain (0/8) · accuracy of the rest 0.714 (5/7)"},
		// Everything is under 0.95: nothing kept, accuracy undefined.
		{"all routed", 0.95, 8, 0, 0, "min_confidence 0.95: 100.0% routed to uncertain (8/8) · accuracy of the rest — (0/0)"},
		// 0.85 keeps i000 (.90) and i005 (.85, on the cut): both right.
		{"on the cut is kept", 0.85, 6, 2, 2, "min_confidence 0.85: 75.0% routed to uncertain (6/8) · accuracy of the rest 1.000 (2/2)"},
		// A cut with more decimals is written in full.
		{"three decimals", 0.805, 6, 2, 2, "min_confidence 0.805: 75.0% routed to uncertain (6/8) · accuracy of the rest 1.000 (2/2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Compute(qChoice, routingChoices(), Options{Bootstrap: -1, MinConfidence: &tc.cut}).Selective.Routing
			if r.Routed != tc.routed || r.KeptLabelled != tc.labelled || r.KeptCorrect != tc.correct {
				t.Errorf("routed %d labelled %d correct %d, want %d %d %d", r.Routed, r.KeptLabelled, r.KeptCorrect, tc.routed, tc.labelled, tc.correct)
			}
			if got := r.String(); got != tc.line {
				t.Errorf("line\n got %q\nwant %q", got, tc.line)
			}
		})
	}
	// No answer at all.
	cut := 0.5
	r := Compute(qChoice, []Obs{{ItemID: "x", ErrKind: "timeout"}}, Options{MinConfidence: &cut}).Selective.Routing
	if r.Answered != 0 || !strings.HasSuffix(r.String(), "no answers to route") {
		t.Errorf("no answers: %+v %q", *r, r.String())
	}
}

// TestRoutingScoreUsesProviderConfidence: a score routes on the provider's
// confidence, not the top probability.
func TestRoutingScoreUsesProviderConfidence(t *testing.T) {
	mk := func(p []float64, conf float64, y int) Obs {
		return Obs{ItemID: "s", Answer: &provider.Answer{Type: provider.Score, Probs: p, Confidence: conf, HasConfidence: true}, Label: y, HasLabel: true}
	}
	obs := []Obs{
		mk([]float64{0.9, 0.05, 0.05}, 0.3, 0), // top .9 but confidence .3: routed
		mk([]float64{0.4, 0.35, 0.25}, 0.8, 1), // top .4 but confidence .8: kept, argmax 0 ≠ 1: wrong
		mk([]float64{0.1, 0.1, 0.8}, 0.7, 2),   // kept, right
	}
	cut := 0.5
	r := Compute(qScore3, obs, Options{Bootstrap: -1, MinConfidence: &cut}).Selective.Routing
	if r.Routed != 1 || r.KeptLabelled != 2 || r.KeptCorrect != 1 || r.Confidence != "provider confidence" {
		t.Errorf("score routing %+v", *r)
	}
}

// TestRoutingMatchesCurve: with every answer labelled, the kept accuracy is
// the selective curve's accuracy at the lowest confidence at or above the
// cut, and the kept share its coverage (the same confidence, two codes).
func TestRoutingMatchesCurve(t *testing.T) {
	obs := routingChoices()[:7] // the seven labelled answers
	cut := 0.6
	rep := Compute(qChoice, obs, Options{Bootstrap: -1, MinConfidence: &cut})
	r := rep.Selective.Routing
	var pt *CurvePoint
	for i := range rep.Selective.Curve {
		c := &rep.Selective.Curve[i]
		if c.Threshold >= cut && (pt == nil || c.Threshold < pt.Threshold) {
			pt = c
		}
	}
	if pt == nil {
		t.Fatal("no curve point at or above the cut")
	}
	check(t, "kept accuracy vs curve", r.KeptAccuracy.Value, pt.Accuracy)
	check(t, "kept share vs coverage", 1-r.RoutedShare.Value, pt.Coverage)
}

// TestRoutingBootstrap: intervals are reproducible for a seed, hold the
// point value, and stay inside [0, 1]; JSON carries them.
func TestRoutingBootstrap(t *testing.T) {
	var obs []Obs
	for range 25 {
		obs = append(obs, routingChoices()...)
	}
	for i := range obs {
		obs[i].ItemID = string(rune('A'+i/26)) + string(rune('a'+i%26))
	}
	cut := 0.6
	opt := Options{Bootstrap: 400, Seed: 7, MinConfidence: &cut, NoiseFloorDraws: -1}
	a := Compute(qChoice, obs, opt).Selective.Routing
	b := Compute(qChoice, obs, opt).Selective.Routing
	if *a != *b {
		t.Errorf("not reproducible:\n%+v\n%+v", *a, *b)
	}
	for name, e := range map[string]Estimate{"share": a.RoutedShare, "accuracy": a.KeptAccuracy} {
		if !e.HasInterval() || e.Lo > e.Value || e.Hi < e.Value || e.Lo < 0 || e.Hi > 1 || e.Lo == e.Hi {
			t.Errorf("%s interval %+v", name, e)
		}
	}
	check(t, "share", a.RoutedShare.Value, 0.375)
	check(t, "accuracy", a.KeptAccuracy.Value, 0.75)
	js, err := json.Marshal(Compute(qChoice, obs, opt).Selective)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Routing Routing `json:"routing"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Routing.MinConfidence != 0.6 || back.Routing.Routed != 75 || math.Abs(back.Routing.KeptAccuracy.Lo-a.KeptAccuracy.Lo) > 1e-12 {
		t.Errorf("json round trip %s", js)
	}
}

// BenchmarkRouting is the cost min_confidence adds to Compute: 10,000
// choice answers over 20 options with the default bootstrap (B = 1000).
// "off" computes without min_confidence, "on" with it. Measured on the
// shared 2-core machine: off ≈ 20 ms, on ≈ 32 ms (the routing bootstrap
// draws 10M items one by one as cell counts, single-threaded; the first
// cut, which summed per-item weights, took ≈ 106 ms).
func BenchmarkRouting(b *testing.B) {
	q, obs := syntheticChoice(10_000, 20, 1)
	cut := 0.6
	for _, tc := range []struct {
		name string
		cut  *float64
	}{{"off", nil}, {"on", &cut}} {
		b.Run(tc.name, func(b *testing.B) {
			opt := Options{Seed: 1, NoiseFloorDraws: -1, MinConfidence: tc.cut}
			for b.Loop() {
				if r := Compute(q, obs, opt); (r.Selective.Routing != nil) != (tc.cut != nil) {
					b.Fatal("routing not as asked")
				}
			}
		})
	}
}

// TestDrawCellsIsNext: drawCells counts, per cell, exactly the items Next
// would draw from the same state.
func TestDrawCellsIsNext(t *testing.T) {
	cat := []uint8{0, 1, 2, 3, 1, 1, 0, 2, 3, 3, 1}
	a := NewResampler(42, len(cat))
	b := &Resampler{state: a.state}
	for range 20 {
		w := a.Next()
		var want routingCells
		for i, x := range w {
			want[cat[i]] += x
		}
		var got routingCells
		b.drawCells(cat, got[:])
		if got != want {
			t.Fatalf("cells %v, Next gives %v", got, want)
		}
	}
}
