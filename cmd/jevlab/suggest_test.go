package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/testutil"
)

// TestSuggestFindsWrongAnswersOnBanking77 is the must-show: with
// Banking77's labels hidden, the 50 items suggest ranks first hold more of
// the model's wrong answers (from its 500 recorded answers) than 50 drawn
// at random with a fixed seed.
func TestSuggestFindsWrongAnswersOnBanking77(t *testing.T) {
	isolate(t)
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77")
	dir := t.TempDir()
	for _, f := range []string{"questions.yaml", "dataset.jsonl", "recorded.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o600)
	}
	set := filepath.Join(dir, "questions.yaml")
	db := filepath.Join(dir, "runs.db")
	if code, out, errOut := runJevlab(t, "eval", "--offline", "--db", db, set); code != 0 {
		t.Fatalf("eval: exit %d\n%s\n%s", code, out, errOut)
	}
	// The labels, hidden in a copy of the dataset.
	truth := map[string]string{}
	var hidden strings.Builder
	data, _ := os.ReadFile(filepath.Join(dir, "dataset.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var row struct {
			ID     string            `json:"id"`
			State  json.RawMessage   `json:"state"`
			Labels map[string]string `json:"labels"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		truth[row.ID] = row.Labels["intent"]
		b, _ := json.Marshal(struct {
			ID    string          `json:"id"`
			State json.RawMessage `json:"state"`
		}{row.ID, row.State})
		hidden.Write(b)
		hidden.WriteByte('\n')
	}
	nolabels := filepath.Join(dir, "nolabels.jsonl")
	os.WriteFile(nolabels, []byte(hidden.String()), 0o600)

	out := filepath.Join(dir, "to-label.jsonl")
	code, js, errOut := runJevlab(t, "suggest", set, "--data", nolabels, "--n", "0", "--db", db, "--json")
	if code != 0 {
		t.Fatalf("suggest: exit %d\n%s", code, errOut)
	}
	var all struct {
		Suggestions []workbench.Suggestion `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(js), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Suggestions) != 500 {
		t.Fatalf("%d ranked, want 500", len(all.Suggestions))
	}
	wrong := func(s workbench.Suggestion) bool { return s.Decisions["intent"] != truth[s.ItemID] }
	top, random, total := 0, 0, 0
	for i, s := range all.Suggestions {
		if wrong(s) {
			total++
			if i < 50 {
				top++
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	for _, i := range r.Perm(500)[:50] {
		if wrong(all.Suggestions[i]) {
			random++
		}
	}
	t.Logf("wrong answers: %d of the first 50 suggested, %d of 50 random (seed 1), %d of 500 in all", top, random, total)
	if total != 111 {
		t.Errorf("%d wrong answers in all, want 111 (accuracy 389/500)", total)
	}
	if top <= random {
		t.Fatalf("suggested first 50 hold %d wrong answers, 50 random hold %d", top, random)
	}
	// -o writes rows ready to label: the dataset reader takes them, with
	// no labels yet, in rank order.
	code, txt, errOut := runJevlab(t, "suggest", set, "--data", nolabels, "--n", "20", "--db", db, "-o", out)
	if code != 0 || !strings.Contains(txt, "wrote 20 row(s) ready to label") {
		t.Fatalf("suggest -o: exit %d\n%s\n%s", code, txt, errOut)
	}
	rows, err := dataset.Load(out, dataset.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 20 || rows[0].ID != all.Suggestions[0].ItemID || len(rows[0].Labels) != 0 {
		t.Fatalf("rows: %d, first %s (want %s)", len(rows), rows[0].ID, all.Suggestions[0].ItemID)
	}
	// Labelled items are not suggested.
	code, js, _ = runJevlab(t, "suggest", set, "--n", "0", "--db", db, "--json")
	if code != 0 || !strings.Contains(js, `"suggestions": null`) && !strings.Contains(js, `"suggestions": []`) {
		t.Fatalf("labelled dataset suggested items:\n%.300s", js)
	}
}
