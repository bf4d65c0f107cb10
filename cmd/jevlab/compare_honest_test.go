package main

import (
	"encoding/json"
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
