package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// TestImportJevPacks imports the citation-support and entity-merge packs
// as they are: the set lints clean and eval --offline gives exactly the
// accuracies of their READMEs, read from cases.jsonl as it is through the
// set's dataset: mapping, with no flags.
func TestImportJevPacks(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		pack string
		want []string
	}{
		{"citation-support", []string{"(398/400)", "(337/400)"}},
		{"entity-merge", []string{"(368/420)", "(352/420)"}},
	} {
		t.Run(c.pack, func(t *testing.T) {
			src := testutil.Testdata(t, c.pack)
			dir := filepath.Join(t.TempDir(), "out")
			code, _, errOut := runJevlab(t, "import", "--from", "jev-packs", src, "-o", dir)
			if code != 0 {
				t.Fatalf("import: exit %d\n%s", code, errOut)
			}
			for _, want := range []string{"jevlab: note: pack " + c.pack + " 0.4.0", "not imported (documentation): README.md", "jevlab: wrote "} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			cases, _ := os.ReadFile(filepath.Join(src, "cases.jsonl"))
			got, _ := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
			if string(got) != string(cases) {
				t.Error("cases.jsonl is not copied as it is")
			}
			set := filepath.Join(dir, "questions.yaml")
			if code, out, _ := runJevlab(t, "lint", set); code != 0 || !strings.Contains(out, "ok, no findings") {
				t.Errorf("lint: exit %d\n%s", code, out)
			}
			code, out, errOut := runJevlab(t, "eval", "--offline", "--db", filepath.Join(t.TempDir(), "e.db"), set)
			if code != 0 {
				t.Fatalf("eval: exit %d\n%s\n%s", code, out, errOut)
			}
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("eval lacks %s:\n%s", want, out)
				}
			}
			if !strings.Contains(out, " 0\n") || strings.Contains(out, "cache_miss") {
				t.Errorf("eval has errors:\n%s", out)
			}
			// The fixtures equal the shipped conversion of predictions.jsonl.
			a, b := jsonLinesOf(t, filepath.Join(dir, "recorded.jsonl")), jsonLinesOf(t, filepath.Join(src, "recorded.jsonl"))
			if len(a) != len(b) {
				t.Fatalf("%d fixture lines, want %d", len(a), len(b))
			}
			for i := range a {
				if !jsonEqual(a[i], b[i]) {
					t.Fatalf("fixture line %d differs from the shipped recording:\n%s\n%s", i+1, a[i], b[i])
				}
			}
		})
	}
}

// TestImportJevassertCompare imports demo-triage's three prediction files
// with their pack as three stored runs whose compare equals the one on the
// shipped recordings: 0 of 30 decisions flipped, 6 of 30 answers changed.
func TestImportJevassertCompare(t *testing.T) {
	isolate(t)
	src := testutil.Testdata(t, "demo-triage")
	db := filepath.Join(t.TempDir(), "i.db")
	dir := filepath.Join(t.TempDir(), "dt")
	code, _, errOut := runJevlab(t, "import", "--from", "jevassert", "--db", db, "-o", dir,
		filepath.Join(src, "predictions.jsonl"), filepath.Join(src, "predictions-run2.jsonl"), filepath.Join(src, "predictions-shuffled.jsonl"))
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	if strings.Count(errOut, "jevlab: stored run ") != 3 || !strings.Contains(errOut, "--shuffle-options: the seed and the option order sent are not recorded") {
		t.Errorf("stderr:\n%s", errOut)
	}
	imported := compareJSON(t, db, "latest~2", "latest~1")

	shipped := filepath.Join(t.TempDir(), "s.db")
	evalOffline(t, shipped, demoSet(t, readFixture(t, "recorded.jsonl")))
	evalOffline(t, shipped, demoSet(t, readFixture(t, "recorded-run2.jsonl")))
	want := compareJSON(t, shipped, "latest~1", "latest")
	if imported.flips != 0 || imported.changed != 6 || imported.verdict != want.verdict || imported.flips != want.flips || imported.changed != want.changed || imported.paired != want.paired {
		t.Errorf("imported compare %+v, shipped %+v", imported, want)
	}
	sh := compareJSON(t, db, "latest~2", "latest")
	if sh.flips != 0 || sh.changed != 7 || sh.paired != 30 {
		t.Errorf("base vs shuffled %+v, want 0 flips, 7 changed (README)", sh)
	}
	// The run's gates came from gates.yaml: eval --offline on the folder
	// passes them (28/30) and replays every answer.
	code, out, errOut := runJevlab(t, "eval", "--offline", "--db", db, filepath.Join(dir, "questions.yaml"))
	if code != 0 || !strings.Contains(out, "(8/10)") {
		t.Errorf("eval: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestImportJevassertRepeats stores F.jsonl and F-r2.jsonl as one run with
// two repeats; a repeat holding a case round 1 lacks fails with its line.
func TestImportJevassertRepeats(t *testing.T) {
	isolate(t)
	src := testutil.Testdata(t, "demo-triage")
	pack := t.TempDir()
	pack = filepath.Join(pack, "demo-triage")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"pack.yaml", "cases.jsonl", "gates.yaml"} {
		copyFile(t, filepath.Join(src, n), filepath.Join(pack, n))
	}
	copyFile(t, filepath.Join(src, "predictions.jsonl"), filepath.Join(pack, "p.jsonl"))
	copyFile(t, filepath.Join(src, "predictions-run2.jsonl"), filepath.Join(pack, "p-r2.jsonl"))
	db := filepath.Join(t.TempDir(), "r.db")
	code, _, errOut := runJevlab(t, "import", "--from", "jevassert", "--db", db, "-o", filepath.Join(t.TempDir(), "o"),
		filepath.Join(pack, "p.jsonl"), filepath.Join(pack, "p-r2.jsonl"))
	if code != 0 || !strings.Contains(errOut, "(p, 2 round(s))") {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	code, out, _ := runJevlab(t, "runs", "--db", db, "--json")
	var runs []struct {
		Repeat int `json:"repeat"`
		Done   int `json:"done"`
		Errors int `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil || len(runs) != 1 || runs[0].Repeat != 2 || runs[0].Done != 20 || runs[0].Errors != 0 {
		t.Errorf("runs: %v %s", err, out)
	}
	// A repeat with a case round 1 lacks.
	base, _ := os.ReadFile(filepath.Join(src, "predictions.jsonl"))
	lines := strings.SplitAfter(string(base), "\n")
	if err := os.WriteFile(filepath.Join(pack, "p.jsonl"), []byte(strings.Join(lines[1:], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runJevlab(t, "import", "--from", "jevassert", "--db", db, "-o", filepath.Join(t.TempDir(), "o"),
		filepath.Join(pack, "p.jsonl"), filepath.Join(pack, "p-r2.jsonl"))
	if code != 2 || !strings.Contains(errOut, "p-r2.jsonl:1: case dt-001 is not in round 1 (p.jsonl)") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}

// TestImportJevPacksRules: a pack that breaks its spec fails with
// file:line and nothing is written.
func TestImportJevPacksRules(t *testing.T) {
	isolate(t)
	src := testutil.Testdata(t, "demo-triage")
	pack := filepath.Join(t.TempDir(), "demo-triage")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(src, "pack.yaml"), filepath.Join(pack, "pack.yaml"))
	cases, _ := os.ReadFile(filepath.Join(src, "cases.jsonl"))
	broken := strings.Replace(string(cases), `"queue": "billing"`, `"queue": "biling"`, 1)
	if err := os.WriteFile(filepath.Join(pack, "cases.jsonl"), []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "o")
	code, _, errOut := runJevlab(t, "import", "--from", "jev-packs", pack, "-o", out)
	if code != 2 || !strings.Contains(errOut, `cases.jsonl:1: case dt-001: expect.queue: "biling" is not a label of the question (billing, technical, other, unknown)`) {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed import wrote its folder")
	}
	code, _, errOut = runJevlab(t, "import", "--from", "jev-packs", pack)
	if code != 2 || !strings.Contains(errOut, "name it with -o DIR") {
		t.Errorf("no -o: exit %d\n%s", code, errOut)
	}
}

type cmpSummary struct {
	verdict                string
	flips, changed, paired int
}

func compareJSON(t *testing.T, db, a, b string) cmpSummary {
	t.Helper()
	code, out, errOut := runJevlab(t, "compare", "--db", db, a, b, "--json")
	var c struct {
		Verdict   string
		Questions []struct {
			Paired int
			Drift  struct {
				ChangedDecisions int `json:"changed_decisions"`
				ChangedValues    int `json:"changed_values"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil {
		t.Fatalf("compare: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	s := cmpSummary{verdict: c.Verdict}
	for _, q := range c.Questions {
		s.flips += q.Drift.ChangedDecisions
		s.changed += q.Drift.ChangedValues
		s.paired += q.Paired
	}
	return s
}

func jsonLinesOf(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
