package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// triageRun is a run of two questions: queue (a choice over opts) and a
// noul "refund" that never changes. queue answers decide dec[i] for item i
// labelled labels[i] (indices into opts).
func triageRun(id string, opts []string, dec, labels []int) RunData {
	var os []provider.Option
	for _, o := range opts {
		os = append(os, provider.Option{Label: o})
	}
	rd := RunData{ID: id, Questions: provider.Questions{
		{ID: "queue", Question: provider.Question{Type: provider.Choice, Options: os}},
		{ID: "refund", Question: provider.Question{Type: provider.Noul}},
	}, Obs: map[string][]metrics.Obs{}}
	for i := range dec {
		p := make([]float64, len(opts))
		for j := range p {
			p[j] = 0.1 / float64(len(opts)-1)
		}
		p[dec[i]] = 0.9
		item := fmt.Sprintf("it%02d", i)
		rd.Obs["queue"] = append(rd.Obs["queue"], metrics.Obs{ItemID: item, Answer: &provider.Answer{Type: provider.Choice, Choice: opts[dec[i]], Probs: p}, Label: labels[i], HasLabel: true})
		rd.Obs["refund"] = append(rd.Obs["refund"], metrics.Obs{ItemID: item, Answer: &provider.Answer{Type: provider.Noul, P: 0.9}, Label: 1, HasLabel: true})
	}
	return rd
}

// The case: other renamed to general between the runs, and
// queue's accuracy moving from 0.1 to 1.0. Before, the verdict read "no
// significant change" and a CI gate let it through.
func TestNotComparableNamedAndBlocking(t *testing.T) {
	n := 10
	labels, decA, decB := make([]int, n), make([]int, n), make([]int, n)
	for i := range n {
		labels[i] = 2 // other / general
		decA[i] = 0   // A wrong on 9 of 10
		decB[i] = 2
	}
	decA[0] = 2
	a := triageRun("A", []string{"billing", "technical", "other"}, decA, labels)
	b := triageRun("B", []string{"billing", "technical", "general"}, decB, labels)
	opt := Options{Seed: 1, Bootstrap: 200}

	c := Compare(a, b, opt)
	q := c.Questions[0]
	if q.Verdict != NotComparable || q.Reason != "option other of A is not in B" {
		t.Fatalf("queue: %s (%s)", q.Verdict, q.Reason)
	}
	if c.Verdict == NoChange || c.Verdict != NotComparable || !c.Failed() {
		t.Errorf("overall %q failed %v: a question that cannot be compared must block", c.Verdict, c.Failed())
	}
	if len(c.NotComparable) != 1 || c.NotComparable[0].String() != "queue — option other of A is not in B" || c.NotComparable[0].Allowed {
		t.Errorf("not comparable %+v", c.NotComparable)
	}

	// accepted as changed on purpose: the comparable question decides
	opt.AllowChanged = []string{"queue"}
	c = Compare(a, b, opt)
	if c.Verdict != NoChange || c.Failed() || !c.Questions[0].Allowed || len(c.Blocking()) != 0 {
		t.Errorf("allowed: verdict %q failed %v %+v", c.Verdict, c.Failed(), c.NotComparable)
	}

	// mapped: other of A is general of B; queue is compared and improved
	opt = Options{Seed: 1, Bootstrap: 200, Map: map[string]map[string]string{"queue": {"other": "general"}}}
	if err := CheckOptions(a, b, opt); err != nil {
		t.Fatal(err)
	}
	c = Compare(a, b, opt)
	q = c.Questions[0]
	if q.Reason != "" || q.McNemar.AWrongBRight != 9 || q.Verdict != Improved || c.Verdict != Improved || c.Failed() {
		t.Errorf("mapped: %s %q mcnemar %+v overall %s", q.Verdict, q.Reason, q.McNemar, c.Verdict)
	}
	if q.Deltas[0].A.Value != 0.1 || q.Deltas[0].B.Value != 1 || q.Mapped["other"] != "general" {
		t.Errorf("mapped accuracy %v → %v, mapped %v", q.Deltas[0].A.Value, q.Deltas[0].B.Value, q.Mapped)
	}
	// reversed roles with the map the other way round: a regression, failing
	c = Compare(b, a, Options{Seed: 1, Bootstrap: 200, Map: map[string]map[string]string{"queue": {"general": "other"}}})
	if c.Verdict != Regressed || !c.Failed() {
		t.Errorf("reverse mapped: %s", c.Verdict)
	}
}

func TestNotComparableReasons(t *testing.T) {
	labels := []int{0, 1}
	a := triageRun("A", []string{"x", "y"}, []int{0, 1}, labels)
	for _, c := range []struct {
		b    RunData
		want string
	}{
		{triageRun("B", []string{"x", "y", "z"}, []int{0, 1}, labels), "option z of B is not in A"},
		{triageRun("B", []string{"x", "w"}, []int{0, 1}, labels), "option y of A is not in B"},
	} {
		got := Compare(a, c.b, Options{Bootstrap: -1})
		if got.Questions[0].Reason != c.want || got.Verdict != NotComparable {
			t.Errorf("reason %q (verdict %s), want %q", got.Questions[0].Reason, got.Verdict, c.want)
		}
	}
	// score levels that differ (same count) are not comparable either
	lv := func(s ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, x := range s {
			b, _ := json.Marshal(x)
			out = append(out, b)
		}
		return out
	}
	mk := func(levels []json.RawMessage) RunData {
		return RunData{Questions: provider.Questions{{ID: "u", Question: provider.Question{Type: provider.Score, Levels: levels}}},
			Obs: map[string][]metrics.Obs{"u": {{ItemID: "1", Answer: &provider.Answer{Type: provider.Score, Probs: []float64{0.2, 0.8}, Score: 0.8}, Label: 1, HasLabel: true}}}}
	}
	sa, sb := mk(lv("low", "high")), mk(lv("low", "urgent"))
	got := Compare(sa, sb, Options{Bootstrap: -1})
	if r := got.Questions[0].Reason; r != `level 1 is "high" in A, "urgent" in B` {
		t.Errorf("levels: %q", r)
	}
	opt := Options{Bootstrap: -1, Map: map[string]map[string]string{"u": {"high": "urgent"}}}
	if err := CheckOptions(sa, sb, opt); err != nil {
		t.Fatal(err)
	}
	if got := Compare(sa, sb, opt); got.Questions[0].Reason != "" {
		t.Errorf("mapped levels: %q", got.Questions[0].Reason)
	}
	// no item answered in both runs: named too
	nb := mk(lv("low", "high"))
	nb.Obs["u"][0].ItemID = "2"
	if got := Compare(sa, nb, Options{Bootstrap: -1}); got.Questions[0].Reason != "no item answered in both runs" || got.Verdict != NotComparable {
		t.Errorf("no shared items: %q %s", got.Questions[0].Reason, got.Verdict)
	}
}

func TestCheckOptionsErrors(t *testing.T) {
	labels := []int{0, 1}
	a := triageRun("A", []string{"x", "y"}, []int{0, 1}, labels)
	b := triageRun("B", []string{"x", "w"}, []int{0, 1}, labels)
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{AllowChanged: []string{"nope"}}, `allowed question "nope" is in neither run (questions: queue, refund)`},
		{Options{Map: map[string]map[string]string{"nope": {"y": "w"}}}, `mapped question "nope" must be in both runs`},
		{Options{Map: map[string]map[string]string{"queue": {"q": "w"}}}, `"q" is not an option of A (A has "x", "y")`},
		{Options{Map: map[string]map[string]string{"queue": {"y": "v"}}}, `"v" is not an option of B (B has "x", "w")`},
		{Options{Map: map[string]map[string]string{"refund": {"a": "b"}}}, `only the options of a choice or the levels of a score can be mapped`},
	} {
		err := CheckOptions(a, b, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
}

// Every flip is kept: 289 flips list 289 (they stopped at 50 before).
func TestEveryFlipKept(t *testing.T) {
	n := 400
	pa, pb, ys := make([]float64, n), make([]float64, n), make([]int, n)
	for i := range n {
		ys[i] = i % 2
		pa[i] = 0.2 + 0.6*float64(ys[i])
		pb[i] = pa[i]
		if i < 289 {
			pb[i] = 1 - pa[i]
		}
	}
	c := Compare(synthetic("A", pa, ys), synthetic("B", pb, ys), Options{Seed: 1, Bootstrap: 100})
	f := c.Questions[0].Flips
	if f.Broken != 289 || len(f.Items) != 289 {
		t.Fatalf("broken %d, listed %d", f.Broken, len(f.Items))
	}
	b, _ := json.Marshal(c)
	var back struct {
		Questions []struct {
			Flips struct {
				Items []json.RawMessage `json:"items"`
			} `json:"flips"`
		} `json:"questions"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Questions[0].Flips.Items) != 289 {
		t.Errorf("JSON lists %d flips (%v)", len(back.Questions[0].Flips.Items), err)
	}
	// a caller may still bound the list; counts stay complete
	c = Compare(synthetic("A", pa, ys), synthetic("B", pb, ys), Options{Seed: 1, Bootstrap: 100, MaxFlips: 5})
	if f := c.Questions[0].Flips; len(f.Items) != 5 || f.Broken != 289 {
		t.Errorf("bounded: %d listed, %d broken", len(f.Items), f.Broken)
	}
}

// A bootstrap p-value never reads 0: with every resample's ΔBrier above 0
// it is reported as below 1/B.
func TestBootstrapPNeverZero(t *testing.T) {
	n := 60
	pa, pb, ys := make([]float64, n), make([]float64, n), make([]int, n)
	for i := range n {
		ys[i] = 1
		pa[i], pb[i] = 0.9, 0.6
	}
	c := Compare(synthetic("A", pa, ys), synthetic("B", pb, ys), Options{Seed: 1, Bootstrap: 200})
	q := c.Questions[0]
	var br Delta
	for _, d := range q.Deltas {
		if d.Metric == "brier" {
			br = d
		}
	}
	if br.P == 0 || !br.PBelow || br.P != 1.0/200 || q.BrierP != 1.0/200 || !q.BrierPBelow {
		t.Fatalf("brier delta %+v, question p %v below %v", br, q.BrierP, q.BrierPBelow)
	}
	if got := FormatP(br.P, br.PBelow); got != "<0.005" {
		t.Errorf("FormatP = %q", got)
	}
	if !strings.Contains(q.Why, "p=≤0.005") || strings.Contains(q.Why, "p=0 ") {
		t.Errorf("why %q", q.Why)
	}
	b, _ := json.Marshal(br)
	if !strings.Contains(string(b), `"p":0.005,"p_below":true`) {
		t.Errorf("JSON %s", b)
	}
	if p, below := bootP([]float64{-1, 1, 2, 3}); p != 0.5 || below {
		t.Errorf("bootP two-sided = %v %v", p, below)
	}
}

// Flips carry the probability of the item's label: for a noul labelled
// false, 1 − p (it read as "p(true)" before, backwards).
func TestFlipPLabel(t *testing.T) {
	c := Compare(synthetic("A", []float64{0.2}, []int{0}), synthetic("B", []float64{0.7}, []int{0}), Options{Bootstrap: -1})
	f := c.Questions[0].Flips.Items[0]
	if f.Kind != "broken" || math.Abs(f.PLabelA-0.8) > 1e-12 || math.Abs(f.PLabelB-0.3) > 1e-12 || math.Abs(f.Shift+0.5) > 1e-12 {
		t.Errorf("flip %+v", f)
	}
	b, _ := json.Marshal(f)
	if !strings.Contains(string(b), `"p_label_a":0.8`) || strings.Contains(string(b), "p_true") {
		t.Errorf("JSON %s", b)
	}
}

// Macro-F1 deltas are over the union of classes: B moves one answer into
// z, which no label uses. Per run the delta is −0.178; over the union
// (x, y, z for both) it is the honest +0.089.
func TestMacroF1DeltaOverUnion(t *testing.T) {
	labels := []int{0, 0, 1, 1}
	a := triageRun("A", []string{"x", "y", "z"}, []int{0, 0, 1, 0}, labels)
	b := triageRun("B", []string{"x", "y", "z"}, []int{0, 0, 1, 2}, labels)
	c := Compare(a, b, Options{Seed: 1, Bootstrap: 200})
	var mf Delta
	for _, d := range c.Questions[0].Deltas {
		if d.Metric == "macro_f1" {
			mf = d
		}
	}
	wantA, wantB := (0.8+2.0/3)/3, (1+2.0/3)/3
	if math.Abs(mf.A.Value-wantA) > 1e-12 || math.Abs(mf.B.Value-wantB) > 1e-12 || math.Abs(mf.Delta.Value-(wantB-wantA)) > 1e-12 {
		t.Errorf("macro-F1 %v → %v (Δ %v), want %v → %v", mf.A.Value, mf.B.Value, mf.Delta.Value, wantA, wantB)
	}
}
