package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

func nouls(ps []float64, ys []int) []Obs {
	out := make([]Obs, len(ps))
	for i, p := range ps {
		out[i] = Obs{ItemID: fmt.Sprintf("i%03d", i), Answer: &provider.Answer{ID: "q", Type: provider.Noul, P: p}, Label: ys[i], HasLabel: true}
	}
	return out
}

var (
	qNoul   = &provider.Question{Type: provider.Noul}
	qChoice = &provider.Question{Type: provider.Choice, Options: []provider.Option{{Label: "a"}, {Label: "b"}, {Label: "c"}, {Label: "d"}}}
	qScore3 = &provider.Question{Type: provider.Score, Levels: []json.RawMessage{[]byte(`"lo"`), []byte(`"mid"`), []byte(`"hi"`)}}
)

func choices(probs [][]float64, dec, ys []int) []Obs {
	out := make([]Obs, len(probs))
	for i, p := range probs {
		out[i] = Obs{ItemID: fmt.Sprintf("i%03d", i), Answer: &provider.Answer{ID: "q", Type: provider.Choice, Choice: qChoice.Options[dec[i]].Label, Probs: p}, Label: ys[i], HasLabel: true}
	}
	return out
}

// TestNoulHandComputed checks noul metrics against values worked out by hand
// (the working is in the comments).
func TestNoulHandComputed(t *testing.T) {
	// p 0.9 y1 ✓, 0.8 y0 ✗, 0.3 y0 ✓, 0.6 y1 ✓
	r := Compute(qNoul, nouls([]float64{0.9, 0.8, 0.3, 0.6}, []int{1, 0, 0, 1}), noBoot)
	check(t, "accuracy", r.Accuracy.Value, 0.75)
	check(t, "brier", r.Brier.Value, (0.01+0.64+0.09+0.16)/4)
	check(t, "log_loss", r.LogLoss.Value, -(math.Log(0.9)+math.Log(0.2)+math.Log(0.7)+math.Log(0.6))/4)
	// one item per bin: (|1-.9| + |0-.8| + |0-.3| + |1-.6|)/4
	check(t, "ece", r.ECE.Value, 0.4)
	// pairs (pos,neg): (.9,.8) (.9,.3) (.6,.3) won, (.6,.8) lost
	check(t, "auroc", r.Noul.AUROC.Value, 0.75)
	// .9+ P=1 R=.5; .8- ; .6+ P=2/3 R=1 → .5·1 + .5·2/3
	check(t, "auprc", r.Noul.AUPRC.Value, 0.5+0.5*2.0/3)
	if r.Noul.Positives != 2 || r.Noul.Negatives != 2 {
		t.Errorf("positives/negatives %d/%d", r.Noul.Positives, r.Noul.Negatives)
	}

	// ties count one half
	r = Compute(qNoul, nouls([]float64{0.5, 0.5}, []int{1, 0}), noBoot)
	check(t, "auroc tie", r.Noul.AUROC.Value, 0.5)
	// one class only: undefined, written as null
	r = Compute(qNoul, nouls([]float64{0.5, 0.7}, []int{1, 1}), noBoot)
	if r.Noul.AUROC.Defined() {
		t.Errorf("auroc with one class = %v, want undefined", r.Noul.AUROC.Value)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal with NaN: %v", err)
	}
	if !strings.Contains(string(b), `"auroc":{"value":null}`) {
		t.Errorf("undefined auroc not null: %s", b)
	}
}

func TestLogLossClip(t *testing.T) {
	r := Compute(qNoul, nouls([]float64{0, 1}, []int{1, 1}), noBoot)
	// -ln(1e-15) for the rounded zero, -ln(1-1e-15) ≈ 1e-15 for the one
	check(t, "log_loss", r.LogLoss.Value, (34.538776394910684+1e-15)/2)
	if r.NClipped != 1 {
		t.Errorf("clipped %d, want 1", r.NClipped)
	}
	r = Compute(qNoul, nouls([]float64{0}, []int{1}), Options{Bootstrap: -1, EpsilonLogLoss: 0.005})
	check(t, "log_loss eps .005", r.LogLoss.Value, -math.Log(0.005))
	if r.Conventions.EpsilonLogLoss != 0.005 {
		t.Errorf("conventions epsilon %v", r.Conventions.EpsilonLogLoss)
	}
}

func TestMurphyDecomposition(t *testing.T) {
	// bin (0.8,0.9]: n=2 p̄=.9 ō=.5; bin [0,0.1]: n=2 p̄=.1 ō=0; ō=.25
	r := Compute(qNoul, nouls([]float64{0.9, 0.9, 0.1, 0.1}, []int{1, 0, 0, 0}), noBoot)
	check(t, "rel", r.Noul.Reliability, (2*0.16+2*0.01)/4)
	check(t, "res", r.Noul.Resolution, (2*0.0625+2*0.0625)/4)
	check(t, "unc", r.Noul.Uncertainty, 0.1875)
	check(t, "brier", r.Brier.Value, 0.21)
	check(t, "identity", r.Noul.Reliability-r.Noul.Resolution+r.Noul.Uncertainty, r.Brier.Value)
	check(t, "skill", r.Noul.Skill.Value, 1-0.21/0.1875)
}

func TestAtPrecision(t *testing.T) {
	// p≥.9: P=1; ≥.8: P=1 R=2/3; ≥.7: P=2/3; ≥.6: P=3/4
	r := Compute(qNoul, nouls([]float64{0.9, 0.8, 0.7, 0.6}, []int{1, 1, 0, 1}), noBoot)
	pp := r.Noul.AtPrecision
	if !pp.Found || pp.Threshold != 0.8 || pp.Precision != 1 || !closeTo(pp.Recall, 2.0/3, 1e-12) {
		t.Errorf("at precision .9: %+v", pp)
	}
}

func TestChoiceHandComputed(t *testing.T) {
	probs := [][]float64{{0.6, 0.3, 0.1, 0}, {0.2, 0.7, 0.1, 0}, {0, 1, 0, 0}, {0.1, 0.5, 0.4, 0}}
	// y = a a b c, decisions a b b b
	r := Compute(qChoice, choices(probs, []int{0, 1, 1, 1}, []int{0, 0, 1, 2}), noBoot)
	check(t, "accuracy", r.Accuracy.Value, 0.5)
	// a: tp1 pred1 sup2 → 2/3; b: tp1 pred3 sup1 → 1/2; c: tp0 → 0; d absent → left out
	check(t, "macro_f1", r.Choice.MacroF1.Value, (2.0/3+0.5+0)/3)
	// Brier per item: .16+.09+.01 ; .04+.49+.01+... (y=a): (.2-1)²+.49+.01 ; 0 ; .01+.25+.36
	want := ((0.16 + 0.09 + 0.01) + (0.64 + 0.49 + 0.01) + 0 + (0.01 + 0.25 + 0.36)) / 4
	check(t, "brier", r.Brier.Value, want)
	wantConf := [][]int{{1, 1, 0, 0}, {0, 1, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 0}}
	for i := range wantConf {
		for j := range wantConf[i] {
			if r.Choice.Confusion[i][j] != wantConf[i][j] {
				t.Fatalf("confusion %v, want %v", r.Choice.Confusion, wantConf)
			}
		}
	}
	if pc := r.Choice.PerClass[1]; pc.Precision != 1.0/3 || pc.Recall != 1 || pc.F1 != 0.5 {
		t.Errorf("class b %+v", pc)
	}
	// the provider's choice counts even when it is not the argmax
	r = Compute(qChoice, choices([][]float64{{0.34, 0.33, 0.33, 0}}, []int{1}, []int{1}), noBoot)
	if r.Accuracy.Value != 1 || r.Choice.ArgmaxDisagree != 1 {
		t.Errorf("choice field decision: accuracy %v disagree %d", r.Accuracy.Value, r.Choice.ArgmaxDisagree)
	}
	// multiclass Brier spans 0..2
	r = Compute(qChoice, choices([][]float64{{0, 1, 0, 0}}, []int{1}, []int{0}), noBoot)
	check(t, "brier max", r.Brier.Value, 2)
}

func TestEqualMassTiesNotSplit(t *testing.T) {
	// 6 items, 3 bins; quantile edges .5, .5, .5+.333·.4, .9: the four 0.5s
	// share the first bin, the middle bin is empty, the 0.9s fill the last.
	probs := [][]float64{{.5, .5, 0, 0}, {.5, .5, 0, 0}, {.5, .5, 0, 0}, {.5, .5, 0, 0}, {.9, .1, 0, 0}, {.9, .1, 0, 0}}
	r := Compute(qChoice, choices(probs, []int{0, 0, 0, 0, 0, 0}, []int{0, 0, 1, 1, 0, 0}), Options{Bootstrap: -1, Bins: 3, MinBinCount: 1})
	if r.EffectiveBinsMass != 2 || len(r.ReliabilityMass) != 2 || r.ReliabilityMass[0].N != 4 || r.ReliabilityMass[1].N != 2 {
		t.Fatalf("equal-mass bins %+v (effective %d)", r.ReliabilityMass, r.EffectiveBinsMass)
	}
	// |.5-.5|·4/6 + |1-.9|·2/6
	check(t, "ece_mass", r.ECEMass.Value, 0.1*2/6)
	check(t, "mce_mass", r.MCEMass.Value, 0.1)
	// MCE ignores bins under the minimum count
	r = Compute(qChoice, choices(probs, []int{0, 0, 0, 0, 0, 0}, []int{0, 0, 1, 1, 0, 0}), Options{Bootstrap: -1, Bins: 3, MinBinCount: 3})
	check(t, "mce_mass min 3", r.MCEMass.Value, 0)
}

func TestScoreHandComputed(t *testing.T) {
	mk := func(p []float64, y int) Obs {
		s := 0.0
		for l, v := range p {
			s += float64(l) * v
		}
		return Obs{ItemID: fmt.Sprint(p), Answer: &provider.Answer{Type: provider.Score, Score: s, Probs: p, Confidence: 0.5, HasConfidence: true}, Label: y, HasLabel: true}
	}
	// score 1.1, argmax 1, nearest 1, label 2; Q=(.2,.7) O=(0,0) → RPS (.04+.49)/2
	r := Compute(qScore3, []Obs{mk([]float64{0.2, 0.5, 0.3}, 2)}, noBoot)
	s := r.Score
	check(t, "exact", s.ExactArgmax.Value, 0)
	check(t, "within", s.WithinOneArgmax.Value, 1)
	check(t, "rps", s.RPS.Value, 0.265)
	check(t, "mae", s.MAE.Value, 0.9)
	// perfect agreement: QWK 1; exact reversal over the ends: −1
	r = Compute(qScore3, []Obs{mk([]float64{1, 0, 0}, 0), mk([]float64{0, 1, 0}, 1), mk([]float64{0, 0, 1}, 2)}, noBoot)
	check(t, "qwk perfect", r.Score.QWK.Value, 1)
	check(t, "spearman perfect", r.Score.Spearman.Value, 1)
	r = Compute(qScore3, []Obs{mk([]float64{0, 0, 1}, 0), mk([]float64{1, 0, 0}, 2)}, noBoot)
	check(t, "qwk reversed", r.Score.QWK.Value, -1)
	// the two rules disagree: argmax 0 (0.45) but expected score 0.9 → nearest 1
	r = Compute(qScore3, []Obs{mk([]float64{0.45, 0.2, 0.35}, 1)}, noBoot)
	if r.Score.Disagreement != 1 || r.Score.ExactArgmax.Value != 0 || r.Score.ExactNearest.Value != 1 || r.Score.WithinOneNearest.Value != 1 {
		t.Errorf("rules: %+v", r.Score)
	}
	if r.Selective.ConfidenceName != "provider confidence" {
		t.Errorf("score confidence %q", r.Selective.ConfidenceName)
	}
}

func TestSelectiveAURC(t *testing.T) {
	// conf .9 ✓, .8 ✗, .7 ✓, .6 ✗ : risks 0, 1/2, 1/3, 2/4
	probs := [][]float64{{.9, .1, 0, 0}, {.8, .2, 0, 0}, {.7, .3, 0, 0}, {.6, .4, 0, 0}}
	r := Compute(qChoice, choices(probs, []int{0, 0, 0, 0}, []int{0, 1, 0, 1}), noBoot)
	check(t, "aurc", r.Selective.AURC.Value, (0+0.5+1.0/3+0.5)/4)
	// oracle: 0, 0, 1/3, 2/4
	check(t, "e-aurc", r.Selective.EAURC, (0+0.5+1.0/3+0.5)/4-(1.0/3+0.5)/4)
	if len(r.Selective.Curve) != 4 || r.Selective.Curve[1].Coverage != 0.5 || r.Selective.Curve[1].Accuracy != 0.5 {
		t.Errorf("curve %+v", r.Selective.Curve)
	}
	if r.Selective.ConfidenceName != "max prob" {
		t.Errorf("confidence %q", r.Selective.ConfidenceName)
	}
	// a tie spreads its errors: order of tied items does not matter
	for _, ys := range [][]int{{0, 1}, {1, 0}} {
		r = Compute(qChoice, choices([][]float64{{.8, .2, 0, 0}, {.8, .2, 0, 0}}, []int{0, 0}, ys), noBoot)
		check(t, "aurc tie", r.Selective.AURC.Value, 0.5)
	}
	rn := Compute(qNoul, nouls([]float64{0.1, 0.8}, []int{0, 1}), noBoot)
	if rn.Selective.ConfidenceName != "max(p,1-p)" || rn.Selective.Curve[0].Threshold != 0.9 {
		t.Errorf("noul selective %+v", rn.Selective)
	}
}

func TestCutpoint(t *testing.T) {
	ps := make([]float64, 60)
	ys := make([]int, 60)
	r := Compute(qNoul, nouls(ps, ys), noBoot)
	if r.Selective.Cutpoint != nil || !strings.Contains(r.Selective.Refused, "at least 100") {
		t.Errorf("60 labels: cutpoint %+v refused %q", r.Selective.Cutpoint, r.Selective.Refused)
	}
	// 150 confident right answers (conf .95), 50 unsure wrong (conf .55)
	ps, ys = nil, nil
	for i := range 200 {
		if i%4 == 3 {
			ps, ys = append(ps, 0.55), append(ys, 0)
		} else {
			ps, ys = append(ps, 0.95), append(ys, 1)
		}
	}
	r = Compute(qNoul, nouls(ps, ys), Options{Bootstrap: -1, Seed: 7, Model: "jev-x"})
	c := r.Selective.Cutpoint
	if c == nil {
		t.Fatalf("no cutpoint: %s", r.Selective.Refused)
	}
	if c.Cutpoint != 0.95 || c.FitN != 100 || c.HoldoutN != 100 || c.HoldoutAccuracy != 1 || !c.Reached || c.Seed != 7 || c.Model != "jev-x" {
		t.Errorf("cutpoint %+v", c)
	}
	if c.HoldoutCoverage < 0.6 || c.HoldoutCoverage > 0.9 {
		t.Errorf("holdout coverage %v, want near .75", c.HoldoutCoverage)
	}
	b, _ := json.Marshal(c)
	for _, k := range []string{`"question"`, `"model"`, `"cutpoint"`, `"target"`, `"fit_n"`, `"holdout_n"`, `"holdout_accuracy"`, `"holdout_coverage"`, `"seed"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("artifact lacks %s: %s", k, b)
		}
	}
}

func TestNearestRank(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(i + 1)
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 50}, {0.95, 95}, {0.99, 99}, {1, 100}, {0.001, 1}} {
		if got := NearestRank(v, c.q); got != c.want {
			t.Errorf("q%.3g = %v, want %v", c.q, got, c.want)
		}
	}
	if got := NearestRank(v[:10], 0.95); got != 10 {
		t.Errorf("p95 of 1..10 = %v, want 10", got)
	}
}

func TestAccountingAndErrors(t *testing.T) {
	obs := nouls([]float64{0.9, 0.2}, []int{1, 0})
	obs[0].LatencyMS, obs[1].LatencyMS = 100, 300
	obs[0].InputTokens, obs[1].InputTokens = 10, 12
	obs[0].CostUSD = 0.5
	obs = append(obs, Obs{ItemID: "e1", ErrKind: "timeout", LatencyMS: 200}, Obs{ItemID: "e2", ErrKind: "timeout"}, Obs{ItemID: "e3", ErrKind: "malformed"})
	r := Compute(qNoul, obs, noBoot)
	if r.N != 5 || r.Answered != 2 || r.Labelled != 2 || r.Errors["timeout"] != 2 || r.Errors["malformed"] != 1 {
		t.Errorf("counts n=%d answered=%d labelled=%d errors=%v", r.N, r.Answered, r.Labelled, r.Errors)
	}
	if r.Latency.N != 3 || r.Latency.P50 != 200 || r.Latency.P99 != 300 || r.Tokens.Input != 22 || r.CostUSD != 0.5 {
		t.Errorf("latency %+v tokens %+v cost %v", r.Latency, r.Tokens, r.CostUSD)
	}
	// no labels at all: every label metric undefined, still marshals
	r = Compute(qNoul, []Obs{{ItemID: "x", Answer: &provider.Answer{Type: provider.Noul, P: 0.3}}}, Options{})
	if r.Accuracy.Defined() || r.Labelled != 0 {
		t.Errorf("unlabelled accuracy %v", r.Accuracy)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

func TestRepeatsNoise(t *testing.T) {
	obs := nouls([]float64{0.6, 0.9}, []int{1, 1})
	rep := nouls([]float64{0.4, 0.8}, []int{1, 1})
	for i := range rep {
		rep[i].Repeat = 1
	}
	// repeat 1 listed first: the headline still uses repeat 0
	r := Compute(qNoul, append(rep, obs...), noBoot)
	if r.N != 2 || r.Accuracy.Value != 1 {
		t.Errorf("headline n=%d accuracy=%v, want first repeats", r.N, r.Accuracy.Value)
	}
	nz := r.Noise
	if nz.Repeats != 2 || nz.Items != 2 || nz.Flipped != 1 || nz.FlipRate != 0.5 || !closeTo(nz.MeanDelta, 0.15, 1e-12) {
		t.Errorf("noise %+v", nz)
	}
}

func TestECEFloor(t *testing.T) {
	// confidence 1 is always right: the floor is exactly 0
	probs := [][]float64{{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}}
	r := Compute(qChoice, choices(probs, []int{0, 0, 0}, []int{0, 0, 0}), Options{Bootstrap: -1})
	if r.Noise.ECEFloorMean != 0 || r.Noise.FloorDraws != DefaultNoiseFloorDraws {
		t.Errorf("floor %+v", r.Noise)
	}
	// p=.5 over 20 items: the plug-in ECE of calibrated outcomes is |k/20-.5|,
	// E ≈ 0.088 (binomial mean absolute deviation / 20 = 0.0881)
	ps := make([]float64, 20)
	ys := make([]int, 20)
	for i := range ps {
		ps[i] = 0.5
	}
	a := Compute(qNoul, nouls(ps, ys), Options{Bootstrap: -1, Seed: 3, NoiseFloorDraws: 2000})
	if a.Noise.ECEFloorMean < 0.075 || a.Noise.ECEFloorMean > 0.1 || a.Noise.ECEFloorP95 < a.Noise.ECEFloorMean {
		t.Errorf("floor at p=.5 n=20: %+v", a.Noise)
	}
	b := Compute(qNoul, nouls(ps, ys), Options{Bootstrap: -1, Seed: 3, NoiseFloorDraws: 2000})
	if a.Noise != b.Noise {
		t.Errorf("floor not reproducible: %+v vs %+v", a.Noise, b.Noise)
	}
}

func TestBootstrapReproducible(t *testing.T) {
	ps := []float64{0.9, 0.8, 0.3, 0.6, 0.55, 0.2, 0.7, 0.1, 0.45, 0.95, 0.35, 0.65}
	ys := []int{1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0}
	a := Compute(qNoul, nouls(ps, ys), Options{Seed: 42, Bootstrap: 500})
	b := Compute(qNoul, nouls(ps, ys), Options{Seed: 42, Bootstrap: 500})
	c := Compute(qNoul, nouls(ps, ys), Options{Seed: 43, Bootstrap: 500})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	jc, _ := json.Marshal(c)
	if string(ja) != string(jb) {
		t.Fatal("same seed, different reports")
	}
	if string(ja) == string(jc) {
		t.Error("different seeds, identical intervals")
	}
	for name, e := range map[string]Estimate{"accuracy": a.Accuracy, "brier": a.Brier, "ece": a.ECE, "auroc": a.Noul.AUROC, "aurc": a.Selective.AURC} {
		if !e.HasInterval() || e.Lo > e.Value || e.Hi < e.Value || e.Lo == e.Hi {
			t.Errorf("%s interval %+v", name, e)
		}
	}
	if a.Conventions.Seed != 42 || a.Conventions.Bootstrap != 500 {
		t.Errorf("conventions %+v", a.Conventions)
	}
}

func TestResamplerCountsSumToN(t *testing.T) {
	rs := NewResampler(1, 37)
	for range 10 {
		if s := wsum(rs.Next()); s != 37 {
			t.Fatalf("weights sum %v", s)
		}
	}
}

func TestPercentileLinear(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {0.025, 1.1}, {0.975, 4.9}, {1, 5}} {
		if got := Percentile(v, c.q); !closeTo(got, c.want, 1e-12) {
			t.Errorf("percentile %v = %v, want %v", c.q, got, c.want)
		}
	}
}

// TestResamplesIndependentOfWorkers: resample k is the same whether one or
// several goroutines draw them.
func TestResamplesIndependentOfWorkers(t *testing.T) {
	const n, b = 40, 170
	draw := func(workers int) [][]float64 {
		out := make([][]float64, b)
		Resamples(n, b, 99, workers, func(_, k int, w []float64) {
			out[k] = append([]float64(nil), w...)
		})
		return out
	}
	one, four := draw(1), draw(4)
	for k := range b {
		if wsum(one[k]) != n {
			t.Fatalf("resample %d sums to %v", k, wsum(one[k]))
		}
		for i := range one[k] {
			if one[k][i] != four[k][i] {
				t.Fatalf("resample %d differs between 1 and 4 workers", k)
			}
		}
	}
	if fmt.Sprint(one[0]) == fmt.Sprint(one[1]) || fmt.Sprint(one[0]) == fmt.Sprint(one[chunk]) {
		t.Error("resamples repeat across draws or chunks")
	}
}

func TestClopperPearsonLower(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{
		{10, 10, math.Pow(0.025, 0.1)}, // all successes: (α/2)^(1/n)
		{0, 10, 0},
		{5, 10, 0.187086028},   // scipy.stats.beta.ppf(0.025, 5, 6)
		{95, 100, 0.887165089}, // beta.ppf(0.025, 95, 6)
	} {
		if got := ClopperPearsonLower(c.k, c.n, 0.05); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("k=%d n=%d: %.9f, want %.9f", c.k, c.n, got, c.want)
		}
	}
}
