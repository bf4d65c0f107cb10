package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/store"
)

// The evaluate screen's use case: run a probe for the selected question,
// then load a stability line per kind for it, gates checked.
func TestRunProbeThenProbeLines(t *testing.T) {
	set, err := questionset.Parse("p.yaml", []byte(`name: wb-probe
questions:
  team:
    type: choice
    instructions: Which team handles it?
    criteria:
      billing: charges invoice refund
      orders: delivery order late parcel
      account: login password locked
  refund:
    type: noul
    instructions: Does the customer ask for a refund?
    negation: Does the customer not ask for a refund?
gates:
  team: {max_shuffle_flip_rate: 0.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"charges", "invoice", "delivery", "late", "login", "password", "today"}
	var items []dataset.Item
	for i := 0; i < 30; i++ {
		st, _ := json.Marshal(fmt.Sprintf("ticket %d %s", i, words[i%len(words)]))
		items = append(items, dataset.Item{ID: fmt.Sprintf("i%02d", i), State: st, Line: i + 1})
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "wb.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	si, err := StandIn(nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	tmpl := &RunTemplate{DB: db, Provider: si, ProviderKind: StandInMode, Concurrency: 2}
	spec := ProbeSpec{Run: RunSpec{Set: set, Items: items, DatasetPath: "wb.jsonl"}, Kind: "shuffle", Question: "team", Seed: 4}
	res, err := tmpl.RunProbe(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Questions) != 1 || res.Questions[0].Question != "team" || len(res.Gates) != 1 {
		t.Fatalf("result %+v", res)
	}
	lines, err := ProbeLines(context.Background(), db, set, res.BaseRun, "team")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Kind != "shuffle" || !strings.Contains(lines[0].Line, "flip_rate ") || lines[0].Gate == nil || lines[0].Gate.Gate != "max_shuffle_flip_rate" {
		t.Fatalf("lines %+v", lines)
	}
	// A second kind against the same base adds its own line; the other
	// question has no shuffle line (it is a noul).
	spec.Kind, spec.Question = "negation", ""
	if _, err := tmpl.RunProbe(context.Background(), spec, nil); err != nil {
		t.Fatal(err)
	}
	lines, err = ProbeLines(context.Background(), db, set, res.BaseRun, "refund")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Kind != "negation" || !strings.Contains(lines[0].Line, "negation_gap ") {
		t.Fatalf("refund lines %+v", lines)
	}
	t.Logf("team: %s", res.Questions[0].Line())
	t.Logf("refund: %s", lines[0].Line)
}

// The kinds offered for a question are the ones that can probe it alone.
func TestProbeKindsFor(t *testing.T) {
	set, err := questionset.Parse("p.yaml", []byte(`name: kinds
questions:
  team:
    type: choice
    instructions: Which team handles it?
    criteria: {billing: charges, orders: parcels}
  refund:
    type: noul
    instructions: Does the customer ask for a refund?
    negation: Does the customer not ask for a refund?
  plain:
    type: noul
    instructions: Is it polite?
  mood:
    type: score
    instructions: How upset?
    criteria: [calm, furious]
`))
	if err != nil {
		t.Fatal(err)
	}
	for qid, want := range map[string]string{
		"team":   "repeat shuffle distractor noul-vs-choice injection perturb",
		"refund": "repeat negation injection perturb",
		"plain":  "repeat injection perturb",
		"mood":   "repeat injection perturb",
		"nosuch": "",
	} {
		var got []string
		for _, k := range ProbeKindsFor(set, qid) {
			got = append(got, string(k))
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: kinds %q, want %q", qid, g, want)
		}
	}
}
