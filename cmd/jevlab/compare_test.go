package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// demoSet writes a copy of the shipped demo-triage set into a temp dir
// whose only fixture is rec (a recording's content), with the dataset.
func demoSet(t *testing.T, rec []byte) string {
	t.Helper()
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage")
	dir := t.TempDir()
	y, err := os.ReadFile(filepath.Join(src, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(y)
	i := strings.Index(s, "fixtures:\n")
	j := strings.Index(s, "gates:")
	if i < 0 || j < i {
		t.Fatalf("unexpected demo-triage questions.yaml layout")
	}
	s = s[:i] + "fixtures:\n  - rec.jsonl\n" + s[j:]
	data, err := os.ReadFile(filepath.Join(src, "dataset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"questions.yaml": []byte(s), "dataset.jsonl": data, "rec.jsonl": rec} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "questions.yaml")
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// evalOffline stores one offline run of set in db.
func evalOffline(t *testing.T, db, set string) {
	t.Helper()
	if code, out, errOut := evalRun(t, "eval", "--offline", "--db", db, set); code != 0 {
		t.Fatalf("eval: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestCompareDemoTriage stores the base and the repeat recording as two
// runs: 0 of 30 decisions flipped, 6 of 30 answers changed (README), no
// regression, exit 0 even with --fail-on-regression.
func TestCompareDemoTriage(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "c.db")
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded.jsonl")))
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded-run2.jsonl")))

	code, out, errOut := evalRun(t, "compare", "--db", db, "latest~1", "latest", "--fail-on-regression", "--seed", "7", "--bootstrap", "300")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"verdict: NO SIGNIFICANT CHANGE", "seed 7", "B=300", "question urgency (score)", "0 of 10 decisions changed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = evalRun(t, "compare", "--db", db, "latest~1", "latest", "--json")
	var c struct {
		Verdict   string
		Seed      uint64
		Questions []struct {
			Question string
			Paired   int
			Drift    struct {
				ChangedDecisions int `json:"changed_decisions"`
				ChangedValues    int `json:"changed_values"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil {
		t.Fatalf("--json: exit %d %v\n%s", code, err, out)
	}
	flips, changed := 0, 0
	for _, q := range c.Questions {
		flips += q.Drift.ChangedDecisions
		changed += q.Drift.ChangedValues
	}
	if c.Verdict != "no significant change" || c.Seed != 1 || flips != 0 || changed != 6 || len(c.Questions) != 3 {
		t.Errorf("json %+v (flips %d changed %d)", c, flips, changed)
	}
	code, out, _ = evalRun(t, "compare", "--db", db, "latest~1", "latest", "--markdown")
	if code != 0 || !strings.Contains(out, "### jevlab compare") || !strings.Contains(out, "| `urgency` |") {
		t.Errorf("--markdown: exit %d\n%s", code, out)
	}
}

// TestCompareFailOnRegression breaks refund_request (p → 1−p on every
// item): 10 right→wrong, exact McNemar p = 2/1024, Holm ×3 < 0.05.
func TestCompareFailOnRegression(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "c.db")
	base := readFixture(t, "recorded.jsonl")
	evalOffline(t, db, demoSet(t, base))
	re := regexp.MustCompile(`"noul": ([0-9.]+)`)
	broken := re.ReplaceAllFunc(base, func(m []byte) []byte {
		v, err := strconv.ParseFloat(string(re.FindSubmatch(m)[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Appendf(nil, `"noul": %.2f`, 1-v)
	})
	// the set's own gates (accuracy >= 0.8) already fail the broken run
	if code, _, errOut := evalRun(t, "eval", "--offline", "--db", db, demoSet(t, broken)); code != 1 || !strings.Contains(errOut, "gate failed: question refund_request min_accuracy") {
		t.Fatalf("broken eval: exit %d\n%s", code, errOut)
	}

	code, out, errOut := evalRun(t, "compare", "--db", db, "latest~1", "latest", "--fail-on-regression")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "verdict: REGRESSED (refund_request)") || !strings.Contains(out, "10 right→wrong, 0 wrong→right") || !strings.Contains(errOut, "regression") {
		t.Errorf("output:\n%s\n%s", out, errOut)
	}
	// without the flag the same comparison exits 0
	if code, _, _ := evalRun(t, "compare", "--db", db, "latest~1", "latest"); code != 0 {
		t.Errorf("without --fail-on-regression: exit %d", code)
	}
	// reversed, it is an improvement
	code, out, _ = evalRun(t, "compare", "--db", db, "latest", "latest~1", "--fail-on-regression")
	if code != 0 || !strings.Contains(out, "verdict: IMPROVED") {
		t.Errorf("reversed: exit %d\n%s", code, out)
	}
}

func TestCompareUsageErrors(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "c.db")
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded.jsonl")))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--db", db, "latest"}, "accepts 2 arg"},
		{[]string{"compare", "--db", db, "latest", "latest"}, "same run"},
		{[]string{"compare", "--db", db, "latest", "nosuchrun"}, "nosuchrun"},
		{[]string{"compare", "--db", db, "latest", "latest", "--json", "--markdown"}, "pick one"},
	} {
		code, out, errOut := evalRun(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q (want %q)\n%s", c.args, code, errOut, c.want, out)
		}
	}
}
