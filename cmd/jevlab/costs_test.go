package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/costs"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/internal/testutil"
)

// TestEvalCostOptimalThresholds: a noul's declared costs give, in eval's
// report, the thresholds fitted on the dev half (seeded split when the set
// has none) and checked on test — the same as fitting by hand on those
// items, and the same as trying every threshold pair.
func TestEvalCostOptimalThresholds(t *testing.T) {
	isolate(t)
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "entity-merge")
	dir := t.TempDir()
	for _, f := range []string{"questions.yaml", "dataset.jsonl", "recorded.jsonl"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		if f == "questions.yaml" {
			b = []byte(strings.Replace(string(b), "    instructions: Do `a` and `b` refer to the same real-world entity?\n",
				"    instructions: Do `a` and `b` refer to the same real-world entity?\n    costs: {false_positive: 5, false_negative: 1, abstain: 0.5}\n", 1))
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o600)
	}
	set := filepath.Join(dir, "questions.yaml")
	db := filepath.Join(dir, "runs.db")
	cp := filepath.Join(dir, "cut.json")
	code, out, errOut := runJevlab(t, "eval", "--offline", "--db", db, set, "--json", "--cutpoints", cp)
	if code != 0 && code != 1 {
		t.Fatalf("eval: exit %d\n%s", code, errOut)
	}
	var rep struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
		Costs []report.CostFit `json:"costs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Costs) != 1 || rep.Costs[0].Question != "same_entity" || rep.Costs[0].Check == nil {
		t.Fatalf("costs: %+v", rep.Costs)
	}
	// By hand: the recorded answers, split by the canonical seeded half.
	sp := questionset.SplitSpec{Seed: 1, Test: 0.5}
	var dev, test []costs.Point
	data, _ := os.ReadFile(filepath.Join(dir, "recorded.jsonl"))
	labels := map[string]bool{}
	ds, _ := os.ReadFile(filepath.Join(dir, "dataset.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(ds)), "\n") {
		var row struct {
			ID     string                     `json:"id"`
			Labels map[string]json.RawMessage `json:"labels"`
		}
		json.Unmarshal([]byte(line), &row)
		if l, ok := row.Labels["same_entity"]; ok {
			labels[row.ID] = string(l) == "true"
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ex struct {
			ID       string `json:"id"`
			Response struct {
				Answers map[string]struct {
					Noul *float64 `json:"noul"`
				} `json:"answers"`
			} `json:"response"`
		}
		json.Unmarshal([]byte(line), &ex)
		a := ex.Response.Answers["same_entity"]
		l, ok := labels[ex.ID]
		if a.Noul == nil || !ok {
			continue
		}
		if sp.Of(ex.ID) == questionset.SplitTest {
			test = append(test, costs.Point{P: *a.Noul, Label: l})
		} else {
			dev = append(dev, costs.Point{P: *a.Noul, Label: l})
		}
	}
	half := 0.5
	c := costs.Costs{FalsePositive: 5, FalseNegative: 1, Abstain: &half}
	want := costs.Fit(dev, c)
	if rep.Costs[0].Fit != want || *rep.Costs[0].Check != costs.Evaluate(test, want.Lo, want.Hi, c) {
		t.Fatalf("report fit %+v check %+v\nby hand %+v", rep.Costs[0].Fit, rep.Costs[0].Check, want)
	}
	// --cutpoints: the accuracy entries, then the cost entry with the same
	// thresholds, its check on test and the costs used.
	b, err := os.ReadFile(cp)
	var entries []map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &entries) != nil {
		t.Fatalf("cutpoints file %v\n%s", err, b)
	}
	var costEntries []report.CostCutpointEntry
	for _, e := range entries {
		switch string(e["kind"]) {
		case `"accuracy"`:
		case `"cost"`:
			raw, _ := json.Marshal(e)
			var ce report.CostCutpointEntry
			if err := json.Unmarshal(raw, &ce); err != nil {
				t.Fatal(err)
			}
			costEntries = append(costEntries, ce)
		default:
			t.Errorf("entry without a known kind: %s", e["kind"])
		}
	}
	if len(costEntries) != 1 {
		t.Fatalf("cost entries %+v\n%s", costEntries, b)
	}
	ce := costEntries[0]
	if ce.Question != "same_entity" || ce.Status != "checked" || ce.Thresholds == nil || ce.Thresholds.YesAt == nil || *ce.Thresholds.YesAt != want.Hi ||
		ce.Thresholds.NoBelow == nil || *ce.Thresholds.NoBelow != want.Lo || ce.Fit != want || ce.Check == nil || *ce.Check != *rep.Costs[0].Check ||
		ce.Costs.FalsePositive != 5 || ce.Costs.Abstain == nil || *ce.Costs.Abstain != 0.5 || ce.FitOn != "dev" || ce.CheckOn != "test" {
		t.Errorf("cost entry %+v\n%s", ce, b)
	}
	code, out, _ = runJevlab(t, "show", rep.Run.ID, "--db", db)
	if !strings.Contains(out, "same_entity cost-optimal thresholds (false positive 5, false negative 1, abstain 0.5)") || !strings.Contains(out, "cost per 1,000 items") {
		t.Fatalf("show:\n%s", out)
	}
}

// TestEvalChoiceCostCutpoint: a choice's cost matrix gives, in eval's
// report and --cutpoints file, the confidence cut-point fitted on dev and
// checked on test — the same as fitting by hand on those items and as a
// brute-force search over every cut-point.
func TestEvalChoiceCostCutpoint(t *testing.T) {
	isolate(t)
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "entity-merge")
	dir := t.TempDir()
	const decl = "    instructions: What should the entity resolution pipeline do with this pair?\n"
	for _, f := range []string{"questions.yaml", "dataset.jsonl", "recorded.jsonl"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		if f == "questions.yaml" {
			if !strings.Contains(string(b), decl) {
				t.Fatal("entity-merge's action changed")
			}
			b = []byte(strings.Replace(string(b), decl, decl+"    costs: {matrix: {keep_separate: {merge: 20}}, other: 1, abstain: 0.6}\n", 1))
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o600)
	}
	set := filepath.Join(dir, "questions.yaml")
	cp := filepath.Join(dir, "cut.json")
	code, out, errOut := runJevlab(t, "eval", "--offline", "--db", filepath.Join(dir, "runs.db"), set, "--json", "--cutpoints", cp)
	if code != 0 && code != 1 {
		t.Fatalf("eval: exit %d\n%s", code, errOut)
	}
	var rep struct {
		ChoiceCosts []report.ChoiceCostFit `json:"choice_costs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.ChoiceCosts) != 1 || rep.ChoiceCosts[0].Question != "action" || rep.ChoiceCosts[0].Check == nil || rep.ChoiceCosts[0].Cutpoint == nil {
		t.Fatalf("choice costs: %+v", rep.ChoiceCosts)
	}
	got := rep.ChoiceCosts[0]
	opts := got.Costs.Options
	idx := map[string]int{}
	for i, o := range opts {
		idx[o] = i
	}
	if m := got.Costs.Matrix; m[idx["keep_separate"]][idx["merge"]] != 20 || m[idx["merge"]][idx["curator"]] != 1 || m[idx["merge"]][idx["merge"]] != 0 {
		t.Fatalf("matrix %v over %v", m, opts)
	}
	labels := map[string]int{}
	ds, _ := os.ReadFile(filepath.Join(dir, "dataset.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(ds)), "\n") {
		var row struct {
			ID     string                     `json:"id"`
			Labels map[string]json.RawMessage `json:"labels"`
		}
		json.Unmarshal([]byte(line), &row)
		var s string
		if json.Unmarshal(row.Labels["action"], &s) == nil {
			if i, ok := idx[s]; ok {
				labels[row.ID] = i
			}
		}
	}
	sp := questionset.SplitSpec{Seed: 1, Test: 0.5}
	var dev, test []costs.ChoicePoint
	data, _ := os.ReadFile(filepath.Join(dir, "recorded.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ex struct {
			ID       string `json:"id"`
			Response struct {
				Answers map[string]struct {
					Choice string             `json:"choice"`
					Probs  map[string]float64 `json:"probabilities"`
				} `json:"answers"`
			} `json:"response"`
		}
		json.Unmarshal([]byte(line), &ex)
		a := ex.Response.Answers["action"]
		l, ok := labels[ex.ID]
		d, valid := idx[a.Choice]
		if !ok || !valid || len(a.Probs) == 0 {
			continue
		}
		top := 0.0
		for _, v := range a.Probs {
			top = max(top, v)
		}
		p := costs.ChoicePoint{Conf: top, Decision: d, Label: l}
		if sp.Of(ex.ID) == questionset.SplitTest {
			test = append(test, p)
		} else {
			dev = append(dev, p)
		}
	}
	c := got.Costs
	want := costs.FitChoice(dev, c)
	// Brute force: every cut-point, evaluated from scratch.
	brute := costs.EvaluateChoice(dev, math.Inf(1), c)
	for _, cut := range costs.ChoiceCandidates(dev) {
		if o := costs.EvaluateChoice(dev, cut, c); costs.BetterChoice(o, brute) {
			brute = o
		}
	}
	if want.Cutpoint != brute.Cutpoint || want.Cost != brute.Cost {
		t.Fatalf("fit %+v, brute force %+v", want, brute)
	}
	chk := costs.EvaluateChoice(test, want.Cutpoint, c)
	if *got.Cutpoint != want.Cutpoint || got.Fit.Cost != want.Cost || got.Fit.N != want.N || got.Fit.Abstain != want.Abstain ||
		got.Check.N != chk.N || got.Check.Cost != chk.Cost || got.Check.Abstain != chk.Abstain || got.Check.Errors != chk.Errors {
		t.Fatalf("report %+v check %+v\nby hand %+v check %+v", got.Fit, got.Check, want, chk)
	}
	t.Logf("action: cut %.3g; dev n %d cost/1000 %.1f coverage %.3f; test n %d cost/1000 %.1f coverage %.3f",
		want.Cutpoint, want.N, want.PerThousand, want.Coverage, chk.N, chk.PerThousand, chk.Coverage)
	b, _ := os.ReadFile(cp)
	var entries []map[string]any
	if json.Unmarshal(b, &entries) != nil {
		t.Fatalf("cutpoints file\n%s", b)
	}
	found := false
	for _, e := range entries {
		if e["kind"] == "choice_cost" {
			found = true
			if e["question"] != "action" || e["status"] != "checked" || e["cutpoint"] != want.Cutpoint || e["check"] == nil {
				t.Errorf("entry %v", e)
			}
		}
	}
	if !found {
		t.Errorf("no choice_cost entry:\n%s", b)
	}
	_, out, _ = runJevlab(t, "eval", "--offline", "--db", filepath.Join(dir, "runs2.db"), set)
	if !strings.Contains(out, "action cost-optimal cut-point (costs: a wrong decision 1 except keep_separate→merge 20; abstain 0.6)") || !strings.Contains(out, "keep_separate→merge 20") {
		t.Errorf("text report:\n%s", out)
	}
}
