package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/metrics/metricstest"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/store"
)

func f(v float64) *float64 { return &v }

// demo builds the demo-triage base run's report with gates: every question
// needs accuracy >= 0.9 ("*"), urgency also ECE <= 0.5, and the flag asks
// macro-F1 >= 0.5 (choice only). urgency's accuracy is 8/10 (testdata
// README), so exactly that gate fails.
func demo(t *testing.T) *RunReport {
	t.Helper()
	r := metricstest.Load(t, "demo-triage", "recorded.jsonl")
	set := &questionset.Set{Name: "demo-triage", Questions: r.Questions, Gates: map[string]questionset.Gate{
		"*":       {MinAccuracy: f(0.9)},
		"urgency": {MaxECE: f(0.5)},
	}}
	run := &store.Run{ID: "r-test", SetName: "demo-triage", Model: "jev-latest", Models: []string{"jev-1.13.0"}, Status: "done", Done: 10, Total: 10}
	return Build(run, set, r.Obs, metrics.Options{Seed: 5, Bootstrap: 200}, questionset.Gate{MinMacroF1: f(0.5)})
}

func TestGates(t *testing.T) {
	rep := demo(t)
	type key struct{ q, g string }
	got := map[key]GateResult{}
	for _, g := range rep.Gates {
		got[key{g.Question, g.Gate}] = g
	}
	want := map[key]bool{
		{"refund_request", "min_accuracy"}: true,
		{"queue", "min_accuracy"}:          true,
		{"queue", "min_macro_f1"}:          true,
		{"urgency", "min_accuracy"}:        false,
		{"urgency", "max_ece"}:             true,
	}
	if len(got) != len(want) {
		t.Fatalf("gates %+v", rep.Gates)
	}
	for k, pass := range want {
		g, ok := got[k]
		if !ok || g.Passed != pass {
			t.Errorf("%v: %+v, want passed=%v", k, g, pass)
		}
	}
	if g := got[key{"urgency", "min_accuracy"}]; g.Value.Value != 0.8 || !strings.Contains(g.Msg, "needs >= 0.9") || g.Source != "question set" {
		t.Errorf("urgency accuracy gate %+v", g)
	}
	if got[key{"queue", "min_macro_f1"}].Source != "flag" {
		t.Error("flag gate not marked as a flag")
	}
	if rep.Passed {
		t.Error("report passed with a failed gate")
	}
	// a gate on a metric that cannot be computed fails
	rs := EvaluateGates(nil, questionset.Gate{MinAccuracy: f(0.5)}, []*metrics.QuestionReport{{ID: "x", Accuracy: metrics.Point(nan())}})
	if len(rs) != 1 || rs[0].Passed || !strings.Contains(rs[0].Msg, "could not be computed") {
		t.Errorf("undefined metric gate %+v", rs)
	}
}

func nan() float64 { var z float64; return z / z }

func TestWriters(t *testing.T) {
	rep := demo(t)
	var txt, md, js, ju bytes.Buffer
	if err := WriteText(&txt, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"run r-test", "question urgency (score)", "FAIL  urgency", "seed 5", "B=200", "QWK", "confusion", "GATES FAILED", "ε=1e-15", "max(p,1-p)"} {
		if !strings.Contains(txt.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, txt.String())
		}
	}
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"### jevlab run `r-test`", "| `urgency` | score | 10 |", "❌", "<details>"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md.String())
		}
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Passed    bool
		Questions []struct {
			Question string
			Accuracy struct{ Value, Lo, Hi *float64 }
		}
		Gates []GateResult
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("json: %v", err)
	}
	if back.Passed || len(back.Questions) != 3 || *back.Questions[2].Accuracy.Value != 0.8 || back.Questions[2].Accuracy.Lo == nil || len(back.Gates) != 5 {
		t.Errorf("json round trip: %+v", back)
	}
	if err := WriteJUnit(&ju, rep); err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suite    []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(ju.Bytes(), &suites); err != nil {
		t.Fatalf("junit: %v\n%s", err, ju.String())
	}
	if suites.Tests != 5 || suites.Failures != 1 || len(suites.Suite[0].Cases) != 5 {
		t.Fatalf("junit counts %+v", suites)
	}
	for _, c := range suites.Suite[0].Cases {
		if (c.Failure != nil) != (c.Name == "urgency min_accuracy 0.9") {
			t.Errorf("case %q failure %v", c.Name, c.Failure)
		}
	}
}

func TestCompareWriters(t *testing.T) {
	a := metricstest.Load(t, "demo-triage", "recorded.jsonl")
	b := metricstest.Load(t, "demo-triage", "recorded-run2.jsonl")
	c := compare.Compare(compare.RunData{ID: "A", Questions: a.Questions, Obs: a.Obs}, compare.RunData{ID: "B", Questions: b.Questions, Obs: b.Obs}, compare.Options{Seed: 3})
	var txt, md bytes.Buffer
	if err := WriteCompareText(&txt, c); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"verdict: NO SIGNIFICANT CHANGE", "seed 3", "question urgency (score)", "0 of 10 decisions changed", "4 answers changed at all"} {
		if !strings.Contains(txt.String(), s) {
			t.Errorf("compare text lacks %q:\n%s", s, txt.String())
		}
	}
	if err := WriteCompareMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| `queue` | ➖ no significant change | 10 |") {
		t.Errorf("compare markdown:\n%s", md.String())
	}
	if Regressed(c) {
		t.Error("regressed")
	}
}

// TestCutpointArtifact fits the cut-point on the 420 real entity-merge
// answers: above 100 labels, so it is fitted on 210 and held out on 210.
func TestCutpointArtifact(t *testing.T) {
	r := metricstest.Load(t, "entity-merge", "recorded.jsonl")
	set := &questionset.Set{Name: "entity-merge", Questions: r.Questions}
	rep := Build(&store.Run{ID: "r-em", SetName: "entity-merge"}, set, r.Obs, metrics.Options{Seed: 2, Bootstrap: -1, TargetAccuracy: 0.9, Model: "jev-1.13.0"}, questionset.Gate{})
	cs := Cutpoints(rep)
	if len(cs) == 0 {
		t.Fatalf("no cut-points: %q / %q", rep.Questions[0].Selective.Refused, rep.Questions[1].Selective.Refused)
	}
	for _, c := range cs {
		if c.FitN != 210 || c.HoldoutN != 210 || c.Target != 0.9 || c.Seed != 2 || c.Model != "jev-1.13.0" || c.Question == "" || c.FitAccuracy < 0.9 {
			t.Errorf("cut-point %+v", c)
		}
		t.Logf("%s: confidence >= %.2f → fit acc %.3f cov %.3f; holdout acc %.3f cov %.3f", c.Question, c.Cutpoint, c.FitAccuracy, c.FitCoverage, c.HoldoutAccuracy, c.HoldoutCoverage)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, cs); err != nil {
		t.Fatal(err)
	}
	var back []metrics.Cutpoint
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back) != len(cs) || back[0] != cs[0] {
		t.Errorf("artifact round trip: %v %+v", err, back)
	}
}
