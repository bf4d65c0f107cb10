package metrics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// Reference values: statsmodels 0.13.5 proportion_confint(method="wilson")
// and a scipy brentq solve of Newcombe's method-5 score equation, computed
// once offline.
func TestWilsonReference(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{10, 10, 0.722467200137111, 1},
		{8, 10, 0.490162471536642, 0.943317848545625},
		{0, 10, 0, 0.277532799862889},
		{398, 400, 0.981955081563757, 0.998627747045290},
		{1, 10, 0.017876213095073, 0.404150026795239},
	} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 1e-12 || math.Abs(hi-c.hi) > 1e-12 {
			t.Errorf("Wilson(%d, %d) = [%.15f, %.15f], want [%.15f, %.15f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	// hand check of 10/10: z²/n = 0.384146, so lo = 1/(1+0.384146) = 0.72247
	if lo, _ := Wilson(10, 10); math.Abs(lo-1/(1+z975*z975/10)) > 1e-12 {
		t.Errorf("10/10 lower %v", lo)
	}
}

func TestNewcombeReference(t *testing.T) {
	for _, c := range []struct {
		auc    float64
		m, n   int
		lo, hi float64
	}{
		{1, 2, 8, 0.531985119456, 1},
		{0, 3, 7, 0, 0.399891752419},
		{0.8, 10, 20, 0.580749032066, 0.914738239135},
		{0.5, 5, 5, 0.205613057289, 0.794386942711},
		{0.9375, 4, 4, 0.513328475121, 0.994570375724},
	} {
		lo, hi := NewcombeAUROC(c.auc, c.m, c.n)
		if math.Abs(lo-c.lo) > 1e-9 || math.Abs(hi-c.hi) > 1e-9 {
			t.Errorf("Newcombe(%g, %d, %d) = [%.12f, %.12f], want [%.12f, %.12f]", c.auc, c.m, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// demo-triage's refund_request is 10/10 right with 2 positives: the
// bootstrap gave accuracy 1 [1, 1] and AUROC 1 [1, 1]. Now accuracy has the
// Wilson interval [0.722, 1] and AUROC Newcombe's [0.532, 1], each saying
// which it is; AUPRC, with no closed form, has no interval rather than a
// point one.
func TestDegenerateIntervalsDemoTriage(t *testing.T) {
	rec := loadRecording(t, "demo-triage", "recorded.jsonl")
	opt := Options{Seed: 1, NoiseFloorDraws: -1}
	r := Compute(rec.question(t, "refund_request"), rec.obs("refund_request"), opt)
	if r.Correct != 10 || r.Labelled != 10 {
		t.Fatalf("correct %d/%d", r.Correct, r.Labelled)
	}
	if a := r.Accuracy; a.Method != IntervalWilson || math.Abs(a.Lo-0.722467200137111) > 1e-12 || a.Hi != 1 {
		t.Errorf("accuracy %+v, want Wilson [0.7225, 1]", a)
	}
	if a := r.Noul.AUROC; a.Method != IntervalNewcombe || math.Abs(a.Lo-0.531985119456) > 1e-9 || a.Hi != 1 {
		t.Errorf("AUROC %+v (positives %d), want Newcombe [0.532, 1]", a, r.Noul.Positives)
	}
	if a := r.Noul.AUPRC; a.HasInterval() || a.Method != IntervalCollapsed {
		t.Errorf("AUPRC %+v, want no interval (collapsed)", a)
	}
	for name, e := range map[string]Estimate{"accuracy": r.Accuracy, "auroc": r.Noul.AUROC, "brier": r.Brier, "ece": r.ECE} {
		if e.HasInterval() && e.Hi-e.Lo < 1e-12 {
			t.Errorf("%s has a degenerate interval %+v", name, e)
		}
	}
	// JSON says which interval each figure has
	b, _ := json.Marshal(r)
	for _, want := range []string{`"accuracy":{"value":1,"lo":0.72246720013711`, `,"hi":1,"interval":"wilson"},"correct":10`, `"interval":"newcombe"`, `"interval":"collapsed"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	// urgency 8/10: 2 failures, under MinTailCount: Wilson too
	u := Compute(rec.question(t, "urgency"), rec.obs("urgency"), opt)
	if u.Accuracy.Method != IntervalWilson || math.Abs(u.Accuracy.Lo-0.490162471536642) > 1e-12 {
		t.Errorf("urgency accuracy %+v", u.Accuracy)
	}
	// Banking77 (389/500) keeps its bootstrap interval
	bk := loadFixture(t, "banking77", "recorded.jsonl")
	br := Compute(bk.question(t, "intent"), bk.obs("intent"), Options{Seed: 1, NoiseFloorDraws: -1})
	if br.Accuracy.Method != IntervalBootstrap || !closeTo(br.Accuracy.Lo, 0.742, 0.002) {
		t.Errorf("banking77 accuracy %+v", br.Accuracy)
	}
	// with intervals switched off nothing is invented
	off := Compute(rec.question(t, "refund_request"), rec.obs("refund_request"), Options{Bootstrap: -1, NoiseFloorDraws: -1})
	if off.Accuracy.HasInterval() || off.Accuracy.Method != "" || off.Noul.AUROC.HasInterval() {
		t.Errorf("no bootstrap: %+v %+v", off.Accuracy, off.Noul.AUROC)
	}
}

// Banking77: accuracy 0.778 against a mean top probability of 0.912.
func TestMeanConfidenceBanking77(t *testing.T) {
	bk := loadFixture(t, "banking77", "recorded.jsonl")
	obs := bk.obs("intent")
	r := Compute(bk.question(t, "intent"), obs, Options{Seed: 1, NoiseFloorDraws: -1})
	var sum float64
	n := 0
	for _, o := range obs {
		if o.Answer != nil && o.HasLabel {
			sum += o.Answer.Probs[Decide(bk.question(t, "intent"), o.Answer, 0.5)]
			n++
		}
	}
	if !closeTo(r.MeanConfidence.Value, sum/float64(n), 1e-12) || math.Abs(r.MeanConfidence.Value-0.912) > 0.0005 {
		t.Errorf("mean confidence %v, want %v (0.912)", r.MeanConfidence.Value, sum/float64(n))
	}
	if !closeTo(r.Overconfidence.Value, r.MeanConfidence.Value-r.Accuracy.Value, 1e-12) || !r.Overconfidence.HasInterval() || r.Overconfidence.Lo <= 0 {
		t.Errorf("overconfidence %+v (accuracy %v)", r.Overconfidence, r.Accuracy.Value)
	}
}

// At a noul threshold other than 0.5 the confidence of a decision is the
// probability of the outcome that threshold decides, not max(p, 1−p).
func TestThresholdedNoulConfidence(t *testing.T) {
	q := &provider.Question{Type: provider.Noul}
	ps := []float64{0.4, 0.35, 0.9, 0.2, 0.6, 0.1}
	ys := []int{1, 0, 1, 0, 1, 0}
	var obs []Obs
	for i, p := range ps {
		obs = append(obs, Obs{ItemID: string(rune('a' + i)), Answer: &provider.Answer{Type: provider.Noul, P: p}, Label: ys[i], HasLabel: true})
	}
	r := Compute(q, obs, Options{Threshold: 0.3, Bootstrap: -1, NoiseFloorDraws: -1})
	// decisions at 0.3: T T T F T F; confidences .4 .35 .9 .8 .6 .9
	want := (0.4 + 0.35 + 0.9 + 0.8 + 0.6 + 0.9) / 6
	if !closeTo(r.MeanConfidence.Value, want, 1e-12) {
		t.Errorf("mean confidence %v, want %v", r.MeanConfidence.Value, want)
	}
	if !strings.Contains(r.Selective.ConfidenceName, "threshold 0.3") || strings.Contains(r.Selective.ConfidenceName, "max(p,1-p)") {
		t.Errorf("confidence name %q", r.Selective.ConfidenceName)
	}
	// the curve's highest cut is the most confident decision: 0.9 (two items)
	if c := r.Selective.Curve[0]; c.Threshold != 0.9 || c.N != 2 {
		t.Errorf("first curve point %+v", c)
	}
	// the item p=0.35 (decided true at 0.3) is the least confident, 0.35,
	// where max(p, 1−p) would have said 0.65
	last := r.Selective.Curve[len(r.Selective.Curve)-1]
	if last.Threshold != 0.35 {
		t.Errorf("last curve point %+v, want threshold 0.35", last)
	}
	if got := DecisionConfidence(q, obs[1].Answer, 0.3); got != 0.35 {
		t.Errorf("DecisionConfidence = %v", got)
	}
	// at 0.5 nothing changes: max(p, 1−p)
	r5 := Compute(q, obs, Options{Bootstrap: -1, NoiseFloorDraws: -1})
	if r5.Selective.ConfidenceName != "max(p,1-p)" || !closeTo(r5.MeanConfidence.Value, (0.6+0.65+0.9+0.8+0.6+0.9)/6, 1e-12) {
		t.Errorf("at 0.5: %q %v", r5.Selective.ConfidenceName, r5.MeanConfidence.Value)
	}
	// routing uses the same confidence
	cut := 0.5
	rt := Compute(q, obs, Options{Threshold: 0.3, Bootstrap: -1, NoiseFloorDraws: -1, MinConfidence: &cut}).Selective.Routing
	if rt.Routed != 2 {
		t.Errorf("routed %d, want 2 (p=0.4 and 0.35 decided true with confidence under 0.5)", rt.Routed)
	}
}

// The ECE floor comes from 1,000 draws by default, is stable across seeds
// to within a few thousandths, and the report says whether the ECE is
// within it (demo-triage refund_request: ECE 0.012 under a floor of ~0.02).
func TestECEFloorDefault1000(t *testing.T) {
	rec := loadRecording(t, "demo-triage", "recorded.jsonl")
	q := rec.question(t, "refund_request")
	r := Compute(q, rec.obs("refund_request"), Options{Seed: 1})
	if r.Noise.FloorDraws != 1000 || r.Conventions.NoiseFloorDraws != 1000 {
		t.Fatalf("floor draws %d", r.Noise.FloorDraws)
	}
	if !r.Noise.ECEWithinFloor || r.ECE.Value >= r.Noise.ECEFloorMean {
		t.Errorf("ECE %v floor mean %v p95 %v within %v", r.ECE.Value, r.Noise.ECEFloorMean, r.Noise.ECEFloorP95, r.Noise.ECEWithinFloor)
	}
	var means []float64
	for seed := uint64(1); seed <= 4; seed++ {
		x := Compute(q, rec.obs("refund_request"), Options{Seed: seed, Bootstrap: -1})
		means = append(means, x.Noise.ECEFloorMean)
	}
	for _, m := range means {
		if math.Abs(m-means[0]) > 0.004 {
			t.Errorf("floor means across seeds %v: not stable", means)
		}
	}
	// the floor of a 2-value confidence set is computable by hand: 8 items
	// at p=0.012ish and 2 at 0.99 — check the estimator against exact
	// enumeration on a tiny case instead: one item at p = 0.5 in its own
	// bin has ECE |x − 0.5| = 0.5 always.
	one := &Data{}
	*one = *Prepare(&provider.Question{Type: provider.Noul}, []Obs{{ItemID: "a", Answer: &provider.Answer{Type: provider.Noul, P: 0.5}, HasLabel: true}}, Options{})
	if m, p := one.ECEFloor(1000, 1); m != 0.5 || p != 0.5 {
		t.Errorf("single item floor %v %v", m, p)
	}
	// the same seed gives the same floor whatever the scheduling
	a, _ := Prepare(q, rec.obs("refund_request"), Options{}).ECEFloor(1000, 9)
	b, _ := Prepare(q, rec.obs("refund_request"), Options{}).ECEFloor(1000, 9)
	if a != b {
		t.Errorf("floor not reproducible: %v %v", a, b)
	}
}

// The cut-point is reached only when the held-out one-sided 97.5% lower
// bound reaches the target, not the point accuracy.
func TestCutpointReachedOnLowerBound(t *testing.T) {
	q := &provider.Question{Type: provider.Noul}
	var obs []Obs
	// 200 items, all p = 0.9 decided true; 194 true: held-out accuracy
	// ≈ 0.97 > 0.95, but its lower bound on ~100 items is under 0.95.
	for i := range 200 {
		y := 1
		if i%33 == 0 {
			y = 0
		}
		obs = append(obs, Obs{ItemID: string(rune(0x100 + i)), Answer: &provider.Answer{Type: provider.Noul, P: 0.9}, Label: y, HasLabel: true})
	}
	r := Compute(q, obs, Options{Seed: 3, Bootstrap: -1, NoiseFloorDraws: -1})
	c := r.Selective.Cutpoint
	if c == nil {
		t.Fatalf("no cut-point: %s", r.Selective.Refused)
	}
	if c.HoldoutAccuracy < c.Target || c.HoldoutAccuracyLo >= c.Target || c.Reached {
		t.Errorf("held out %v (lower %v) target %v reached %v: must not be reached on the point", c.HoldoutAccuracy, c.HoldoutAccuracyLo, c.Target, c.Reached)
	}
	if c.HoldoutAccuracyLoConfidence != 0.975 {
		t.Errorf("lower bound confidence %v", c.HoldoutAccuracyLoConfidence)
	}
	// scipy beta.ppf(0.025, 97, 4) = 0.914823947 (97/100): the bound is the
	// two-sided 95% Clopper–Pearson lower limit
	if got := ClopperPearsonLower(97, 100, 0.05); math.Abs(got-0.91482394702572) > 1e-9 {
		t.Errorf("CP lower 97/100 = %v", got)
	}
}

// No data is null, never 0: offline latency, per-question usage when the
// provider reports it per request.
func TestNoDataIsNull(t *testing.T) {
	q := &provider.Question{Type: provider.Noul}
	obs := []Obs{{ItemID: "a", Answer: &provider.Answer{Type: provider.Noul, P: 0.9}, Label: 1, HasLabel: true}}
	r := Compute(q, obs, Options{Bootstrap: -1, NoiseFloorDraws: -1, UsagePerRequest: true})
	b, _ := json.Marshal(r)
	for _, want := range []string{`"latency":{"n":0,"p50_ms":null,"p95_ms":null,"p99_ms":null,"mean_ms":null,"max_ms":null}`, `"tokens":null`, `"cost_usd":null`, `"usage_per_request":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	obs[0].LatencyMS, obs[0].InputTokens, obs[0].CostUSD = 120, 7, 0.001
	r = Compute(q, obs, Options{Bootstrap: -1, NoiseFloorDraws: -1})
	b, _ = json.Marshal(r)
	for _, want := range []string{`"p50_ms":120`, `"tokens":{"input":7,"output":0}`, `"cost_usd":0.001`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	var back QuestionReport
	if err := json.Unmarshal(b, &back); err != nil || back.Latency.P50 != 120 || back.Accuracy.Value != 1 {
		t.Errorf("round trip: %v %+v", err, back.Latency)
	}
}

// Macro-F1 of two runs over the union of their classes: B moves one answer
// into a class no label uses. Per run, B averages over 3 classes and A
// over 2; over the union both average over 3.
func TestMacroF1Union(t *testing.T) {
	q := &provider.Question{Type: provider.Choice, Options: []provider.Option{{Label: "x"}, {Label: "y"}, {Label: "z"}}}
	mk := func(decs []int) *Data {
		labels := []int{0, 0, 1, 1}
		var obs []Obs
		for i, d := range decs {
			p := []float64{0.1, 0.1, 0.1}
			p[d] = 0.8
			obs = append(obs, Obs{ItemID: string(rune('a' + i)), Answer: &provider.Answer{Type: provider.Choice, Choice: q.Options[d].Label, Probs: p}, Label: labels[i], HasLabel: true})
		}
		return Prepare(q, obs, Options{})
	}
	a, b := mk([]int{0, 0, 1, 0}), mk([]int{0, 0, 1, 2})
	// A alone: F1 x = 2·2/(3+2) = 0.8, y = 2·1/(1+2) = 2/3 → 0.7333
	// B alone: x = 1, y = 2/3, z = 0 → 0.5556; Δ = −0.178 from one answer
	check(t, "A alone", a.MacroF1(nil), (0.8+2.0/3)/2)
	check(t, "B alone", b.MacroF1(nil), (1+2.0/3+0)/3)
	a.EvalAll([]Metric{MMacroF1}, nil, make([]float64, 1))
	b.EvalAll([]Metric{MMacroF1}, nil, make([]float64, 1))
	fa, fb := MacroF1Union(a, b)
	check(t, "A over union", fa, (0.8+2.0/3+0)/3)
	check(t, "B over union", fb, (1+2.0/3+0)/3)
}

// The noise-floor sampler draws each tie group's count from its binomial:
// n items at one confidence p in one bin have floor E|X − np|/n, computed
// here exactly (X ~ Binomial(n, p)), for a group drawn by its CDF table
// (1000 at 0.3) and one drawn item by item (5 at 0.5: 30/32/5 = 0.1875).
func TestECEFloorBinomialExact(t *testing.T) {
	for _, c := range []struct {
		n   int
		p   float64
		tol float64
	}{{1000, 0.3, 0.001}, {5, 0.5, 0.01}} {
		q := &provider.Question{Type: provider.Noul}
		obs := make([]Obs, c.n)
		for i := range obs {
			obs[i] = Obs{ItemID: string(rune(0x100 + i)), Answer: &provider.Answer{Type: provider.Noul, P: c.p}, HasLabel: true}
		}
		var want float64
		lgN, _ := math.Lgamma(float64(c.n + 1))
		for k := 0; k <= c.n; k++ {
			lk, _ := math.Lgamma(float64(k + 1))
			lr, _ := math.Lgamma(float64(c.n - k + 1))
			pmf := math.Exp(lgN - lk - lr + float64(k)*math.Log(c.p) + float64(c.n-k)*math.Log1p(-c.p))
			want += pmf * math.Abs(float64(k)-float64(c.n)*c.p)
		}
		want /= float64(c.n)
		got, _ := Prepare(q, obs, Options{}).ECEFloor(4000, 2)
		if math.Abs(got-want) > c.tol {
			t.Errorf("n=%d p=%g: floor mean %v, exact %v", c.n, c.p, got, want)
		}
	}
}

// The gap of a 10/10 accuracy has no interval: its bootstrap inherits the
// accuracy's collapse (every resample is 10/10).
func TestOverconfidenceGapUnreliableOnFewErrors(t *testing.T) {
	rec := loadRecording(t, "demo-triage", "recorded.jsonl")
	r := Compute(rec.question(t, "refund_request"), rec.obs("refund_request"), Options{Seed: 1, NoiseFloorDraws: -1})
	if o := r.Overconfidence; o.HasInterval() || o.Method != IntervalUnreliable || !closeTo(o.Value, r.MeanConfidence.Value-1, 1e-12) {
		t.Errorf("gap %+v", o)
	}
}
