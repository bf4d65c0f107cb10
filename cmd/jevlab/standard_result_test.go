package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

// TestAskAsStandardAgents: ask --json --as standard-agents writes the
// recorded demo-triage answers as a Standard Agents DecisionResult — the
// noul as a boolean with its probability, the choice's distribution in
// option order, the score with its legend — and that output, read back by
// the answer check, gives exactly the answers of the System One output.
func TestAskAsStandardAgents(t *testing.T) {
	isolate(t)
	set := filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage", "questions.yaml")
	db := filepath.Join(t.TempDir(), "db")
	code, out, errOut := runJevlab(t, "ask", "--offline", "--json", "--as", "standard-agents", "--db", db, set)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`"model": "jev-1.13.0"`,
		`"refund_request": {
      "type": "boolean",
      "probability": 0.99
    }`,
		`"probabilities": {
        "billing": 1,
        "technical": 0,
        "other": 0,
        "unknown": 0
      },
      "confidence": 1`,
		`"legend": {
        "0": "No stated impact or time pressure; can wait indefinitely.",`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"noul"`) || strings.Contains(out, "requested_model") {
		t.Errorf("System One fields in the Standard Agents shape:\n%s", out)
	}
	var sa struct {
		Model   string                     `json:"model"`
		Answers map[string]json.RawMessage `json:"answers"`
		Usage   provider.Usage             `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &sa); err != nil {
		t.Fatal(err)
	}
	code, native, _ := runJevlab(t, "ask", "--offline", "--json", "--db", db, set)
	if code != 0 {
		t.Fatal(native)
	}
	var so struct {
		Answers []provider.Answer `json:"answers"`
	}
	if err := json.Unmarshal([]byte(native), &so); err != nil {
		t.Fatal(err)
	}
	s, err := questionset.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	req, err := workbench.Request(s, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	back, err := provider.Check(req, &provider.Response{Model: sa.Model, Answers: sa.Answers, Usage: sa.Usage})
	if err != nil {
		t.Fatalf("the Standard Agents output does not check: %v", err)
	}
	for i := range back {
		g, w := back[i], so.Answers[i]
		if g.ID != w.ID || g.Type != w.Type || g.P != w.P || g.Choice != w.Choice || g.Score != w.Score ||
			g.HasConfidence != w.HasConfidence || g.Confidence != w.Confidence || !reflect.DeepEqual(g.Probs, w.Probs) {
			t.Errorf("%s: read back %+v, System One %+v", g.ID, g, w)
		}
	}
	if code, _, errOut := runJevlab(t, "ask", "--offline", "--as", "standard-agents", "--db", db, set); code != 2 || !strings.Contains(errOut, "add --json") {
		t.Errorf("--as without --json: %d %s", code, errOut)
	}
	if code, _, errOut := runJevlab(t, "ask", "--offline", "--json", "--as", "openai", "--db", db, set); code != 2 || !strings.Contains(errOut, "want system-one or standard-agents") {
		t.Errorf("--as openai: %d %s", code, errOut)
	}
}
