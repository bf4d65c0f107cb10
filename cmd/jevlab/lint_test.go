package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

func TestLintShippedExamplesExitZero(t *testing.T) {
	sets, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "fixtures", "*", "questions.yaml"))
	if len(sets) == 0 {
		t.Fatal("no shipped examples")
	}
	for _, p := range sets {
		code, out, errOut := runWithStdin(t, "", "lint", p)
		if code != 0 {
			t.Errorf("lint %s: exit %d\n%s%s", p, code, out, errOut)
		}
	}
}

func TestLintExitCodes(t *testing.T) {
	dir := t.TempDir()
	warn := filepath.Join(dir, "warn.yaml")
	os.WriteFile(warn, []byte("state: x\nquestions:\n  team: {type: choice, criteria: {a: null, b: null}}\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("state: x\nquestions:\n  team: {type: choice, criteria: {a: null}}\n"), 0o644)
	clean := filepath.Join(dir, "clean.yaml")
	os.WriteFile(clean, []byte("state: x\nquestions:\n  team: {type: choice, criteria: {a: null, other: null}}\n"), 0o644)

	cases := []struct {
		args []string
		code int
		out  string // substring of stdout
		err  string // substring of stderr
	}{
		{[]string{"lint", clean}, 0, clean + ": ok, no findings", ""},
		{[]string{"lint", warn}, 0, warn + ":3:24: warning[no-catch-all]: question \"team\": no catch-all option among its 2 options", ""},
		{[]string{"lint", "--strict", warn}, 1, "0 errors, 1 warning", "lint " + warn + ": 1 warning (--strict)"},
		{[]string{"lint", bad}, 2, bad + ":3:24: error[schema]: question \"team\": criteria: ", "1 error"},
		{[]string{"lint", filepath.Join(dir, "missing.yaml")}, 2, "", "no such file"},
		{[]string{"lint", "--label", "nonsense", clean}, 2, "", "want QUESTION=FIELD"},
	}
	for _, c := range cases {
		code, out, errOut := runWithStdin(t, "", c.args...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.err) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", c.args, code, c.code, out, errOut)
		}
	}

	// Dataset mapping flags reach the reader: a CSV whose columns are named
	// differently lints clean only with the mapping.
	csv := filepath.Join(dir, "tickets.csv")
	os.WriteFile(csv, []byte("ticket_id,text,gold\nt1,charged twice,a\nt2,where is it,other\n"), 0o644)
	code, out, errOut := runWithStdin(t, "", "lint", "--data", csv, "--id-field", "ticket_id", "--state-field", "text", "--label", "team=gold", clean)
	if code != 0 || !strings.Contains(out, "ok, no findings") {
		t.Errorf("mapped CSV: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runWithStdin(t, "", "lint", "--data", csv, clean)
	if code != 2 || !strings.Contains(out, "error[dataset]") || !strings.Contains(out, csv) {
		t.Errorf("unmapped CSV: exit %d\n%s", code, out)
	}

	code, out, _ = runWithStdin(t, "", "lint", "--json", warn)
	var doc struct {
		Errors, Warnings int
		Findings         []struct {
			ID, Severity, File, Question, Message, Fix string
			Line, Col                                  int
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if doc.Warnings != 1 || len(doc.Findings) != 1 || doc.Findings[0].ID != "no-catch-all" || doc.Findings[0].Line != 3 || doc.Findings[0].Fix == "" {
		t.Errorf("--json: %+v", doc)
	}
}
