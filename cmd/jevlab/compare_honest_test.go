package main

import (
	"encoding/json"
	"github.com/jevlab/jevlab/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renamedDemoSet is demoSet with queue's option other renamed to general
// everywhere (set, dataset labels, recorded requests and answers), as a
// second version of the question set would be.
func renamedDemoSet(t *testing.T) string {
	t.Helper()
	set := demoSet(t, readFixture(t, "recorded.jsonl"))
	dir := filepath.Dir(set)
	for _, name := range []string{"questions.yaml", "dataset.jsonl", "rec.jsonl"} {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), `"other"`, `"general"`)
		s = strings.ReplaceAll(s, "      other:", "      general:")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return set
}

// issue 9: an option renamed between two runs made queue "not comparable",
// the verdict read NO SIGNIFICANT CHANGE and --fail-on-regression exited 0.
// Now the verdict names it and the gate fails; --allow-changed and --map
// let the comparable questions decide.
func TestCompareNotComparableFailsTheGate(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "c.db")
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded.jsonl")))
	evalOffline(t, db, renamedDemoSet(t))

	code, out, errOut := evalRun(t, "compare", "--db", db, "latest~1", "latest", "--fail-on-regression", "--bootstrap", "200")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"verdict: NOT COMPARABLE (queue — option other of A is not in B)", "question queue (choice): NOT COMPARABLE — option other of A is not in B"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "NO SIGNIFICANT CHANGE") && strings.Contains(out, "verdict: NO SIGNIFICANT CHANGE") {
		t.Errorf("overall verdict reads no significant change:\n%s", out)
	}
	if !strings.Contains(errOut, "not comparable: queue — option other of A is not in B (accept it with --allow-changed queue, or map a renamed option with --map queue:A_NAME=B_NAME)") {
		t.Errorf("stderr: %s", errOut)
	}
	// without the gate flag the report is still written and exits 0
	if code, _, _ := evalRun(t, "compare", "--db", db, "latest~1", "latest", "--bootstrap", "200"); code != 0 {
		t.Errorf("without --fail-on-regression: exit %d", code)
	}

	// accepted as changed on purpose: the other two questions decide (no change)
	code, out, errOut = evalRun(t, "compare", "--db", db, "latest~1", "latest", "--fail-on-regression", "--allow-changed", "queue", "--bootstrap", "200")
	if code != 0 || !strings.Contains(out, "verdict: NO SIGNIFICANT CHANGE (changed on purpose (allowed): queue — option other of A is not in B)") {
		t.Errorf("--allow-changed: exit %d\n%s\n%s", code, out, errOut)
	}
	// comma list form
	if code, _, errOut := evalRun(t, "compare", "--db", db, "latest~1", "latest", "--fail-on-regression", "--allow-changed", "urgency,queue", "--bootstrap", "200"); code != 0 {
		t.Errorf("--allow-changed a,b: exit %d\n%s", code, errOut)
	}

	// mapped: queue is compared item by item (10 paired, nothing moved)
	code, out, errOut = evalRun(t, "compare", "--db", db, "latest~1", "latest", "--fail-on-regression", "--map", "queue:other=general", "--json", "--bootstrap", "200")
	var c struct {
		Verdict   string
		Questions []struct {
			Question string
			Reason   string
			Paired   int
			Mapped   map[string]string
		}
		NotComparable []any `json:"not_comparable"`
	}
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil {
		t.Fatalf("--map: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	q := c.Questions[1]
	if c.Verdict != "no significant change" || q.Question != "queue" || q.Reason != "" || q.Paired != 10 || q.Mapped["other"] != "general" || len(c.NotComparable) != 0 {
		t.Errorf("--map: %+v", c)
	}

	// bad flags are usage errors naming the problem
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--map", "queue=general"}, "want QUESTION:A_NAME=B_NAME"},
		{[]string{"--map", "queue:nope=general"}, `"nope" is not an option of A`},
		{[]string{"--map", "queue:other=nope"}, `"nope" is not an option of B`},
		{[]string{"--allow-changed", "nope"}, `allowed question "nope" is in neither run`},
		{[]string{"--flips", "0"}, "--flips 0"},
	} {
		args := append([]string{"compare", "--db", db, "latest~1", "latest"}, bad.args...)
		code, _, errOut := evalRun(t, args...)
		if code != 2 || !strings.Contains(errOut, bad.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", bad.args, code, errOut, bad.want)
		}
	}
}

// eval and show take --seed and --bootstrap as compare does and print the
// seed; the default seed stays 1.
func TestEvalShowSeedAndBootstrap(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "s.db")
	set := demoSet(t, readFixture(t, "recorded.jsonl"))
	code, out, errOut := evalRun(t, "eval", "--offline", "--db", db, set, "--seed", "7", "--bootstrap", "300")
	if code != 0 || !strings.Contains(out, "95% intervals: bootstrap percentile (B=300, seed 7)") {
		t.Fatalf("eval --seed 7: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = evalRun(t, "show", "--db", db, "latest")
	if code != 0 || !strings.Contains(out, "(B=1000, seed 1)") {
		t.Errorf("show default seed:\n%s", out)
	}
	code, out, _ = evalRun(t, "show", "--db", db, "latest", "--seed", "9", "--bootstrap", "200", "--json")
	var rep struct {
		Questions []struct {
			Conventions struct {
				Seed      uint64 `json:"seed"`
				Bootstrap int    `json:"bootstrap"`
			} `json:"conventions"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Questions[0].Conventions.Seed != 9 || rep.Questions[0].Conventions.Bootstrap != 200 {
		t.Errorf("show --seed 9 --json: exit %d %v %+v", code, err, rep)
	}
	// a different seed moves a bootstrap interval (urgency's ECE), the
	// same seed reproduces it
	_, a1, _ := evalRun(t, "show", "--db", db, "latest", "--seed", "2")
	_, a2, _ := evalRun(t, "show", "--db", db, "latest", "--seed", "2")
	_, b1, _ := evalRun(t, "show", "--db", db, "latest", "--seed", "3")
	if a1 != a2 || a1 == b1 {
		t.Errorf("seeded show not reproducible or seed ignored")
	}
	code, out, _ = evalRun(t, "show", "--db", db, "latest", "--markdown", "--seed", "4")
	if code != 0 || !strings.Contains(out, "seed 4") {
		t.Errorf("show --markdown --seed 4:\n%s", out)
	}
	code, out, _ = evalRun(t, "show", "--db", db, "latest", "--bootstrap", "0")
	if code != 0 || !strings.Contains(out, "no intervals (--bootstrap 0; seed 1)") || strings.Contains(out, "Wilson") {
		t.Errorf("show --bootstrap 0:\n%s", out)
	}
}

// Banking77 at --target-accuracy 0.9: the fitted cut-point's held-out
// accuracy 0.87 (lower bound 0.81) misses the target; the line says NOT
// REACHED and --cutpoints writes the entry with cutpoint null.
func TestCutpointsFileMarksUnreached(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	cp := filepath.Join(dir, "cut.json")
	set := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "questions.yaml")
	code, out, errOut := evalRun(t, "eval", "--offline", "--db", filepath.Join(dir, "b.db"), set, "--target-accuracy", "0.9", "--cutpoints", cp)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "intent cut-point NOT REACHED: target accuracy 0.9 not shown on held-out items (do not load this cut-point)") || !strings.Contains(out, "one-sided 97.5% lower bound") {
		t.Errorf("summary:\n%s", out)
	}
	if !strings.Contains(errOut, "cut-point for intent NOT REACHED (written with cutpoint null)") {
		t.Errorf("stderr: %s", errOut)
	}
	b, err := os.ReadFile(cp)
	var entries []map[string]any
	if err != nil || json.Unmarshal(b, &entries) != nil || len(entries) != 1 {
		t.Fatalf("cutpoints file %v\n%s", err, b)
	}
	e := entries[0]
	if e["cutpoint"] != nil || e["status"] != "not reached" || e["reached"] != false || e["holdout_accuracy_lo_confidence"] != 0.975 || e["fitted_cutpoint"] == nil {
		t.Errorf("entry %v", e)
	}
}

// banking77Copy copies the shipped Banking77 set into a temp dir with rec as
// its recording.
func banking77Copy(t *testing.T, rec []byte) string {
	t.Helper()
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77")
	dir := t.TempDir()
	for _, name := range []string{"questions.yaml", "dataset.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "recorded.jsonl"), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "questions.yaml")
}

// flipIntents moves the first n answers with one top option to their
// least probable option (swapping the two probabilities), leaving the
// requests untouched so the recording still matches.
func flipIntents(t *testing.T, rec []byte, n int) []byte {
	t.Helper()
	var out []byte
	done := 0
	for _, line := range strings.SplitAfter(string(rec), "\n") {
		if strings.TrimSpace(line) == "" || done == n {
			out = append(out, line...)
			continue
		}
		var ex map[string]json.RawMessage
		var resp map[string]json.RawMessage
		var answers map[string]json.RawMessage
		var intent struct {
			Type          string             `json:"type"`
			Choice        string             `json:"choice"`
			Confidence    float64            `json:"confidence"`
			Probabilities map[string]float64 `json:"probabilities"`
		}
		if json.Unmarshal([]byte(line), &ex) != nil || json.Unmarshal(ex["response"], &resp) != nil ||
			json.Unmarshal(resp["answers"], &answers) != nil || json.Unmarshal(answers["intent"], &intent) != nil {
			t.Fatalf("recording line: %.80s", line)
		}
		top, low, ties := "", "", 0
		for k, p := range intent.Probabilities {
			if top == "" || p > intent.Probabilities[top] || p == intent.Probabilities[top] && k < top {
				top = k
			}
			if low == "" || p < intent.Probabilities[low] || p == intent.Probabilities[low] && k < low {
				low = k
			}
		}
		for _, p := range intent.Probabilities {
			if p == intent.Probabilities[top] {
				ties++
			}
		}
		if ties > 1 || intent.Choice != top {
			out = append(out, line...)
			continue
		}
		intent.Probabilities[top], intent.Probabilities[low] = intent.Probabilities[low], intent.Probabilities[top]
		intent.Choice = low
		var err error
		if answers["intent"], err = json.Marshal(intent); err != nil {
			t.Fatal(err)
		}
		resp["answers"], _ = json.Marshal(answers)
		ex["response"], _ = json.Marshal(resp)
		b, _ := json.Marshal(ex)
		out = append(append(out, b...), '\n')
		done++
	}
	if done != n {
		t.Fatalf("flipped %d of %d", done, n)
	}
	return out
}

// issue 9: a Banking77 comparison with 289 flips listed 50 in --json and
// said "… 40 more in --json" in text. Now --json holds all 289 and the text
// shows the first 10 and how to see them all.
func TestCompare289FlipsAllInJSON(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "b.db")
	rec, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "recorded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	evalOffline(t, db, banking77Copy(t, rec))
	evalOffline(t, db, banking77Copy(t, flipIntents(t, rec, 289)))
	code, out, errOut := evalRun(t, "compare", "--db", db, "latest~1", "latest", "--json", "--bootstrap", "100")
	var c struct {
		A, B      struct{ ID string }
		Questions []struct {
			Flips struct {
				Fixed, Broken, Changed int
				Items                  []struct {
					Item    string  `json:"item"`
					PLabelA float64 `json:"p_label_a"`
				} `json:"items"`
			} `json:"flips"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil {
		t.Fatalf("exit %d %v\n%s", code, err, errOut)
	}
	f := c.Questions[0].Flips
	if n := f.Fixed + f.Broken + f.Changed; n != 289 || len(f.Items) != 289 {
		t.Fatalf("flips counted %d, listed %d; want 289 and 289", n, len(f.Items))
	}
	code, out, _ = evalRun(t, "compare", "--db", db, "latest~1", "latest", "--bootstrap", "100")
	want := "… 279 more (289 flips in all): see every one with jevlab compare " + c.A.ID + " " + c.B.ID + " --json (or --flips -1)"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "p(label)") {
		t.Errorf("text lacks %q:\n%s", want, out)
	}
	code, out, _ = evalRun(t, "compare", "--db", db, "latest~1", "latest", "--bootstrap", "100", "--flips", "-1")
	if code != 0 || strings.Count(out, "  p(label) ") != 289 {
		t.Errorf("--flips -1 lists %d", strings.Count(out, "  p(label) "))
	}
}
