package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleCompareAcrossDatabases is issue 14's must-show: a run exported
// from one database and compared, from the file, against the same run in
// another — replayed there from the same recordings, or imported under its
// own id — finds no change and exits 0, even with --fail-on-regression;
// the user's database is not touched by reading the bundle.
func TestBundleCompareAcrossDatabases(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	main, ci := filepath.Join(dir, "main.db"), filepath.Join(dir, "ci.db")
	set := demoSet(t, readFixture(t, "recorded.jsonl"))
	evalOffline(t, main, set)
	evalOffline(t, ci, set)

	bundle := filepath.Join(dir, "baseline.jevrun")
	code, out, errOut := evalRun(t, "--db", main, "runs", "export", "latest", "-o", bundle)
	if code != 0 || !strings.Contains(out, "wrote "+bundle) || !strings.Contains(out, "30 answers") {
		t.Fatalf("export: exit %d\n%s\n%s", code, out, errOut)
	}
	if st, err := os.Stat(bundle); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("bundle file: %v %v", st, err)
	}
	runsBefore := runIDs(t, ci)

	// CI: the baseline bundle against the run replayed here.
	code, out, errOut = evalRun(t, "--db", ci, "compare", bundle, "latest", "--fail-on-regression")
	if code != 0 {
		t.Fatalf("compare bundle latest: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"verdict: NO SIGNIFICANT CHANGE", "0 of 10 decisions changed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if after := runIDs(t, ci); strings.Join(after, ",") != strings.Join(runsBefore, ",") {
		t.Errorf("reading a bundle changed the database's runs: %v → %v", runsBefore, after)
	}
	// JSON: every decision and value the same.
	code, out, _ = evalRun(t, "--db", ci, "compare", bundle, "latest", "--json")
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
		t.Fatalf("--json: exit %d %v\n%s", code, err, out)
	}
	paired := 0
	for _, q := range c.Questions {
		paired += q.Paired
		if q.Drift.ChangedDecisions != 0 || q.Drift.ChangedValues != 0 {
			t.Errorf("changes against the same recordings: %+v", q)
		}
	}
	if c.Verdict != "no significant change" || paired != 30 {
		t.Errorf("verdict %q, %d paired", c.Verdict, paired)
	}

	// Import into a third database: twice, one run; then the bundle against
	// that very run (same id, another database) is no change too.
	third := filepath.Join(dir, "third.db")
	for i, want := range []string{"imported run ", "already in"} {
		code, out, errOut = evalRun(t, "--db", third, "runs", "import", bundle)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("import %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
	}
	if ids := runIDs(t, third); len(ids) != 1 {
		t.Fatalf("runs after two imports: %v", ids)
	}
	code, out, errOut = evalRun(t, "--db", third, "compare", bundle, "latest", "--fail-on-regression")
	if code != 0 || !strings.Contains(out, "verdict: NO SIGNIFICANT CHANGE") {
		t.Fatalf("bundle vs its imported run: exit %d\n%s\n%s", code, out, errOut)
	}
	// show reads the imported run like any other.
	code, out, _ = evalRun(t, "--db", third, "show", "latest")
	if code != 0 || !strings.Contains(out, "demo-triage") {
		t.Errorf("show imported: exit %d\n%s", code, out)
	}
	// A bundle on both sides needs no database at all.
	b2 := filepath.Join(dir, "b2.jevrun")
	if code, out, errOut := evalRun(t, "--db", ci, "runs", "export", "latest", "-o", b2); code != 0 {
		t.Fatalf("export 2: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = evalRun(t, "--db", filepath.Join(dir, "never.db"), "compare", bundle, b2)
	if code != 0 || !strings.Contains(out, "NO SIGNIFICANT CHANGE") {
		t.Fatalf("bundle vs bundle: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "never.db")); err == nil {
		t.Error("comparing two bundles created the database")
	}
}

// TestBundleRefusals: a future format version, a missing .jevrun, a file
// that is not a bundle, and export without -o are usage errors that say
// what to do.
func TestBundleRefusals(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded.jsonl")))
	bundle := filepath.Join(dir, "b.jevrun")
	if code, out, errOut := evalRun(t, "--db", db, "runs", "export", "latest", "-o", bundle); code != 0 {
		t.Fatalf("export: %d\n%s\n%s", code, out, errOut)
	}
	// Rewrite the header as a future jevlab would.
	raw, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(raw))
	plain, _ := io.ReadAll(zr)
	first, rest, _ := bytes.Cut(plain, []byte("\n"))
	var hd map[string]any
	json.Unmarshal(first, &hd)
	hd["version"], hd["jevlab"] = 7, "v3.0.0"
	nf, _ := json.Marshal(hd)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(append(append(nf, '\n'), rest...))
	zw.Close()
	future := filepath.Join(dir, "future.jevrun")
	os.WriteFile(future, out.Bytes(), 0o600)
	notBundle := filepath.Join(dir, "notes.jevrun")
	os.WriteFile(notBundle, []byte("hello\n"), 0o600)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "compare", future, "latest"}, "run bundle format version 7 (written by jevlab v3.0.0) is newer than this jevlab reads (version 1): upgrade jevlab"},
		{[]string{"--db", db, "runs", "import", future}, "is newer than this jevlab reads"},
		{[]string{"--db", db, "compare", filepath.Join(dir, "missing.jevrun"), "latest"}, "no such file"},
		{[]string{"--db", db, "compare", notBundle, "latest"}, "is not a jevlab run bundle"},
		{[]string{"--db", db, "runs", "export", "latest"}, "-o FILE"},
		{[]string{"--db", db, "runs", "import", dir}, "not a regular file"},
	} {
		code, stdout, errOut := evalRun(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q (want %q)\n%s", c.args, code, errOut, c.want, stdout)
		}
	}
	// A run id that is not a file still names a run.
	if code, _, errOut := evalRun(t, "--db", db, "compare", "latest", "nosuchrun"); code != 2 || !strings.Contains(errOut, "nosuchrun") {
		t.Errorf("plain ref: %d %s", code, errOut)
	}
}

// runIDs lists the run ids in db.
func runIDs(t *testing.T, db string) []string {
	t.Helper()
	code, out, errOut := evalRun(t, "--db", db, "runs", "--json")
	if code != 0 {
		t.Fatalf("runs: %d %s", code, errOut)
	}
	var runs []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}
