package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/metrics/metricstest"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// outputs writes rep as text, Markdown, JSON and JUnit.
func outputs(t *testing.T, rep *RunReport) (txt, md, js, junit string) {
	t.Helper()
	var a, b, c, d bytes.Buffer
	for _, err := range []error{WriteText(&a, rep), WriteMarkdown(&b, rep), WriteJSON(&c, rep), WriteJUnit(&d, rep)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := xml.Unmarshal(d.Bytes(), new(junitSuites)); err != nil {
		t.Fatalf("junit: %v", err)
	}
	return a.String(), b.String(), c.String(), d.String()
}

// demoPlain is the demo-triage base run as an offline eval stores it: no
// round trip (latency 0), usage per request only.
func demoPlain(t *testing.T) *RunReport {
	t.Helper()
	r := metricstest.Load(t, "demo-triage", "recorded.jsonl")
	for _, obs := range r.Obs {
		for i := range obs {
			obs[i].LatencyMS, obs[i].InputTokens, obs[i].OutputTokens = 0, 0, 0
		}
	}
	set := &questionset.Set{Name: "demo-triage", Questions: r.Questions}
	run := &store.Run{ID: "r-test", SetName: "demo-triage", Model: "jev-latest", Models: []string{"jev-1.13.0"}, Status: "done", Done: 10, Total: 10, InputTokens: 1234, CostUSD: 0.0123}
	return Build(run, set, r.Obs, metrics.Options{Seed: 1}, questionset.Gate{})
}

// demo-triage refund_request: 10/10 and AUROC from 2 positives read
// "1 [1, 1]" in every output; now Wilson and Newcombe, named.
func TestOutputsNameTheInterval(t *testing.T) {
	txt, md, js, junit := outputs(t, demoPlain(t))
	for name, out := range map[string]string{"text": txt, "markdown": md, "junit": junit} {
		for _, want := range []string{"1 [0.7225, 1] Wilson (10/10)", "0.8 [0.4902, 0.9433] Wilson (8/10)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
		if strings.Contains(out, "1 [1, 1]") {
			t.Errorf("%s still has a degenerate [1, 1]", name)
		}
	}
	for name, out := range map[string]string{"text": txt, "markdown": md} {
		if !strings.Contains(out, "AUROC 1 [0.532, 1] Newcombe") && !strings.Contains(out, "AUROC                1 [0.532, 1] Newcombe") {
			t.Errorf("%s lacks the Newcombe AUROC", name)
		}
	}
	if !strings.Contains(js, `"interval": "wilson"`) || !strings.Contains(js, `"interval": "newcombe"`) || !strings.Contains(js, `"intervals": "bootstrap percentile 95% by default;`) {
		t.Errorf("JSON does not say which interval")
	}
}

// The ECE noise floor is in every output, from 1,000 draws, with the
// verdict (refund_request's 0.012 is within its floor of ~0.02).
func TestOutputsShowTheECEFloor(t *testing.T) {
	rep := demoPlain(t)
	q := rep.Questions[0]
	if q.Noise.FloorDraws != 1000 || !q.Noise.ECEWithinFloor {
		t.Fatalf("floor %+v", q.Noise)
	}
	txt, md, js, junit := outputs(t, rep)
	floor := fmt.Sprintf("noise floor %.3g (p95 %.3g, 1000 draws): within it, indistinguishable from perfect calibration at this n", q.Noise.ECEFloorMean, q.Noise.ECEFloorP95)
	if !strings.Contains(txt, floor) {
		t.Errorf("text lacks %q:\n%s", floor, txt)
	}
	if !strings.Contains(md, fmt.Sprintf("0.012 [0.01, 0.015] (floor %.3g, within it)", q.Noise.ECEFloorMean)) {
		t.Errorf("markdown table lacks the floor:\n%s", md)
	}
	if !strings.Contains(junit, "floor ") || !strings.Contains(js, `"ece_within_floor": true`) || !strings.Contains(js, `"ece_floor_draws": 1000`) {
		t.Errorf("junit/json lack the floor")
	}
}

// Mean confidence stands beside accuracy in every output.
func TestOutputsShowMeanConfidence(t *testing.T) {
	rep := demoPlain(t)
	txt, md, js, junit := outputs(t, rep)
	want := "top prob " + est(rep.Questions[2].MeanConfidence)
	for name, out := range map[string]string{"text": txt, "junit": junit} {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
	if !strings.Contains(md, "| accuracy | top prob |") || !strings.Contains(md, "Wilson (8/10) | "+est(rep.Questions[2].MeanConfidence)+" |") {
		t.Errorf("markdown table lacks mean confidence:\n%s", md)
	}
	if !strings.Contains(js, `"mean_confidence": {`) || !strings.Contains(js, `"overconfidence": {`) {
		t.Error("JSON lacks mean confidence")
	}
}

// Offline latency and per-request usage read "—" / null, never 0; the
// usage note is said once.
func TestOutputsNoDataIsDash(t *testing.T) {
	txt, md, js, junit := outputs(t, demoPlain(t))
	if !strings.Contains(txt, "latency              — (n 0") || strings.Contains(txt, "p50 0 ms") {
		t.Errorf("text latency:\n%s", txt)
	}
	if strings.Count(txt, "tokens and cost are reported per request") != 1 || !strings.Contains(txt, "tokens / cost        — (per request only)") || !strings.Contains(txt, "1234 in · 0 out · $0.0123") {
		t.Errorf("text usage:\n%s", txt)
	}
	if strings.Count(md, "tokens and cost are reported per request") != 1 {
		t.Errorf("markdown usage note")
	}
	for _, want := range []string{`"p50_ms": null`, `"tokens": null`, `"cost_usd": null`, `"usage_per_request": true`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	if !strings.Contains(junit, "tokens and cost are reported per request") {
		t.Error("junit lacks the usage note")
	}
}

// The Markdown footer explains Brier per question type, not one line
// taken from the first question (a noul's "binary, range 0–1" for all).
func TestMarkdownFooterBrierPerType(t *testing.T) {
	_, md, _, _ := outputs(t, demoPlain(t))
	i := strings.LastIndex(md, "<sub>95% intervals")
	if i < 0 {
		t.Fatalf("no footer:\n%s", md)
	}
	foot := md[i:]
	for _, want := range []string{"binary (p−y)² for nouls, range 0–1 (refund_request)", "summed over the K options or levels for choice and score, range 0–2 (queue, urgency)"} {
		if !strings.Contains(foot, want) {
			t.Errorf("footer lacks %q:\n%s", want, foot)
		}
	}
}

// The cut-point line says plainly when the target was not reached, the
// bound labelled one-sided 97.5%; the --cutpoints entries of unreached
// cut-points have no loadable value.
func TestCutpointNotReached(t *testing.T) {
	q := provider.Question{Type: provider.Noul}
	var obs []metrics.Obs
	for i := range 200 {
		y := 1
		if i%33 == 0 {
			y = 0
		}
		obs = append(obs, metrics.Obs{ItemID: fmt.Sprintf("i%03d", i), Answer: &provider.Answer{Type: provider.Noul, P: 0.9}, Label: y, HasLabel: true})
	}
	set := &questionset.Set{Name: "s", Questions: provider.Questions{{ID: "q", Question: q}}}
	rep := Build(&store.Run{ID: "r"}, set, map[string][]metrics.Obs{"q": obs}, metrics.Options{Seed: 3, Bootstrap: 100}, questionset.Gate{})
	c := rep.Questions[0].Selective.Cutpoint
	if c == nil || c.Reached {
		t.Fatalf("cut-point %+v", c)
	}
	txt, md, _, junit := outputs(t, rep)
	want := "NOT REACHED: target accuracy 0.95 not shown on held-out items (do not load this cut-point)"
	for name, out := range map[string]string{"text": txt, "markdown": md, "junit": junit} {
		if !strings.Contains(out, want) || !strings.Contains(out, "one-sided 97.5% lower bound") {
			t.Errorf("%s lacks the not-reached line:\n%s", name, out)
		}
	}
	entries := CutpointFile(rep)
	b, _ := json.Marshal(entries)
	if len(entries) != 1 || entries[0].Cutpoint != nil || entries[0].Status != "not reached" || !strings.Contains(string(b), `"cutpoint":null`) || entries[0].FittedCutpoint != 0.9 {
		t.Errorf("cut-point file %s", b)
	}
}

// Compare's text and Markdown say p(label), list the first flips with how
// to see all, and never print a p-value of 0.
func TestCompareWritersHonest(t *testing.T) {
	n := 300
	mk := func(id string, flip int) compare.RunData {
		rd := compare.RunData{ID: id, Questions: provider.Questions{{ID: "q", Question: provider.Question{Type: provider.Noul}}}, Obs: map[string][]metrics.Obs{}}
		for i := range n {
			p := 0.2 // label false, right
			if i < flip {
				p = 0.7
			}
			rd.Obs["q"] = append(rd.Obs["q"], metrics.Obs{ItemID: fmt.Sprintf("it%03d", i), Answer: &provider.Answer{Type: provider.Noul, P: p}, Label: 0, HasLabel: true})
		}
		return rd
	}
	c := compare.Compare(mk("A", 0), mk("B", 289), compare.Options{Seed: 1, Bootstrap: 200})
	if len(c.Questions[0].Flips.Items) != 289 {
		t.Fatalf("flips %d", len(c.Questions[0].Flips.Items))
	}
	var txt, md bytes.Buffer
	if err := WriteCompareText(&txt, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": txt.String(), "markdown": md.String()} {
		if strings.Contains(out, "p(true)") || !strings.Contains(out, "p(label)") {
			t.Errorf("%s: p(true) instead of p(label)", name)
		}
		if !strings.Contains(out, "… 279 more (289 flips in all)") || !strings.Contains(out, "jevlab compare A B --json") {
			t.Errorf("%s does not say how to see all flips:\n%s", name, out)
		}
		if strings.Contains(out, "p=0 ") || strings.Contains(out, "p=0;") || strings.Contains(out, "p=0\n") {
			t.Errorf("%s has a p-value of 0:\n%s", name, out)
		}
	}
	// label false, A p=0.2 (p(label) 0.80), B p=0.7 (0.30)
	if !strings.Contains(txt.String(), "p(label) 0.80 → 0.30") {
		t.Errorf("text flip line:\n%s", txt.String())
	}
	if !strings.Contains(txt.String(), "p=<0.005") {
		t.Errorf("text lacks the bounded p-value:\n%s", txt.String())
	}
	var all bytes.Buffer
	if err := WriteCompareTextWith(&all, c, CompareOptions{Flips: -1}); err != nil || strings.Count(all.String(), "    broken ") != 289 {
		t.Errorf("--flips -1 lists %d", strings.Count(all.String(), "    broken "))
	}
}
