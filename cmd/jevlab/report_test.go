package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/jevlab/jevlab/evals/questionset"
)

// TestEmitReportGates evaluates the shipped demo-triage set offline and
// checks its gates ("*": accuracy >= 0.8, ECE <= 0.25: all pass; urgency is
// 8/10) and a --min-accuracy 0.9 flag (urgency fails, exit 1).
func TestEmitReportGates(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	setPath := demoSet(t, readFixture(t, "recorded.jsonl"))
	evalOffline(t, db, setPath)
	set, err := questionset.Load(setPath)
	if err != nil {
		t.Fatal(err)
	}

	emit := func(args ...string) (error, string, string) {
		var out, errOut bytes.Buffer
		a := newApp(nil, &out, &errOut)
		a.dbPath = db
		defer a.close()
		var rf reportFlags
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		bindReportFlags(fs, &rf)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		d, err := a.db()
		if err != nil {
			t.Fatal(err)
		}
		run, err := d.ResolveRun(context.Background(), "latest")
		if err != nil {
			t.Fatal(err)
		}
		return a.emitReport(context.Background(), d, run, set, rf), out.String(), errOut.String()
	}

	junit, md := filepath.Join(dir, "gates.xml"), filepath.Join(dir, "report.md")
	err, _, _ = emit("--junit", junit, "--markdown", md)
	if err != nil {
		t.Fatalf("set gates: %v", err)
	}
	x, _ := os.ReadFile(junit)
	if n := strings.Count(string(x), "<testcase "); n != 6 || strings.Contains(string(x), "<failure") {
		t.Errorf("junit: %d cases\n%s", n, x)
	}
	m, _ := os.ReadFile(md)
	if !strings.Contains(string(m), "**Gates: all passed**") {
		t.Errorf("markdown:\n%s", m)
	}

	err, _, errOut := emit("--min-accuracy", "0.9", "--junit", junit)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFailed {
		t.Fatalf("flag gate: %v, want exit 1", err)
	}
	if !strings.Contains(errOut, "gate failed: question urgency min_accuracy: accuracy 0.8, needs >= 0.9") {
		t.Errorf("stderr: %s", errOut)
	}
	x, _ = os.ReadFile(junit)
	if strings.Count(string(x), "<failure") != 1 {
		t.Errorf("junit after the flag:\n%s", x)
	}
	err, _, _ = emit("--max-ece", "2")
	if !errors.As(err, &ee) || ee.code != exitUsage {
		t.Errorf("--max-ece 2: %v, want a usage error", err)
	}
	cp := filepath.Join(dir, "cut.json")
	err, _, errOut = emit("--cutpoints", cp)
	if b, _ := os.ReadFile(cp); err != nil || strings.TrimSpace(string(b)) != "[]" || !strings.Contains(errOut, "no cut-point for urgency: 10 labelled answers") {
		t.Errorf("cutpoints below 100 labels: %v %q %s", err, b, errOut)
	}
	err, out, _ := emit("--markdown", "-")
	if err != nil || !strings.Contains(out, "### jevlab run") {
		t.Errorf("markdown to stdout: %v\n%s", err, out)
	}
}

// TestEvalGatesEndToEnd runs eval with the report flags: the set's gates
// pass (exit 0, JUnit and Markdown written), a stricter flag fails one
// (exit 1), a bad flag is refused before anything runs (exit 2), and show
// --markdown prints the full report.
func TestEvalGatesEndToEnd(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	set := demoSet(t, readFixture(t, "recorded.jsonl"))
	junit, md := filepath.Join(dir, "g.xml"), filepath.Join(dir, "r.md")

	code, out, errOut := evalRun(t, "eval", "--offline", "--db", db, set, "--junit", junit, "--markdown", md)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	x, _ := os.ReadFile(junit)
	m, _ := os.ReadFile(md)
	if strings.Count(string(x), "<testcase ") != 6 || !strings.Contains(string(m), "**Gates: all passed**") {
		t.Errorf("junit:\n%s\nmarkdown:\n%s", x, m)
	}
	code, _, errOut = evalRun(t, "eval", "--offline", "--db", db, set, "--min-accuracy", "0.9")
	if code != 1 || !strings.Contains(errOut, "gate failed: question urgency min_accuracy") {
		t.Errorf("--min-accuracy 0.9: exit %d\n%s", code, errOut)
	}
	code, _, errOut = evalRun(t, "eval", "--offline", "--db", db, set, "--max-ece", "3")
	if code != 2 || !strings.Contains(errOut, "--max-ece 3") {
		t.Errorf("--max-ece 3: exit %d\n%s", code, errOut)
	}
	code, out, _ = evalRun(t, "runs", "--db", db, "--json")
	if code != 0 || strings.Count(out, `"id"`) != 2 {
		t.Errorf("a refused eval must not store a run: %s", out)
	}
	code, out, _ = evalRun(t, "show", "--db", db, "latest", "--markdown")
	if code != 0 || !strings.Contains(out, "### jevlab run") || !strings.Contains(out, "| `urgency` | score | 10 |") {
		t.Errorf("show --markdown: exit %d\n%s", code, out)
	}
	if code, _, _ := evalRun(t, "show", "--db", db, "latest", "--markdown", "--json"); code != 2 {
		t.Errorf("show --markdown --json: exit %d, want 2", code)
	}
}
