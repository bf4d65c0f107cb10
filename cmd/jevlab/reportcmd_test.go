package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/headless"
	"github.com/jevlab/jevlab/internal/htmlcheck"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider/standin"
)

// copyExample copies a shipped example (its question set, dataset and
// recordings) into a temp dir, so a run that records new exchanges
// appends to the copy, never to fixtures/.
func copyExample(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", name)
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "questions.yaml")
}

func jevlabOK(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := runJevlab(t, args...)
	if code != 0 {
		t.Fatalf("jevlab %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out, errOut
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return v
}

func readHTML(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// inBrowser renders a report in headless Chromium (when installed) and
// fails on any console message or network request.
func inBrowser(t *testing.T, path string) {
	t.Helper()
	bin, err := headless.Find()
	if err != nil {
		t.Logf("SKIPPED browser check of %s: %v", filepath.Base(path), err)
		return
	}
	res, err := headless.Render(context.Background(), bin, path, 1280, 1600)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Console {
		t.Errorf("%s: console: %s", filepath.Base(path), c)
	}
	for _, r := range headless.PageRequests(res.Requests) {
		t.Errorf("%s: network request %s", filepath.Base(path), r)
	}
}

// TestReportBanking77TwoRuns stores Banking77 as recorded (jev-1.13.0)
// and a second run of the same 500 items answered by the stand-in's
// synthetic model, then writes jevlab report A B --html, show --html and
// compare --html: every number the documents tag equals show --json and
// compare --json, the history of the set is drawn, and the pages load in
// a real browser with no console message and no network request.
func TestReportBanking77TwoRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("two 500-item Banking77 runs")
	}
	isolate(t)
	t.Setenv("TYPESAFE_API_KEY", "fake-key-for-tests")
	_, url := startStandin(t, standin.Config{Synthetic: true, APIKey: "fake-key-for-tests", Seed: 1})
	set := copyExample(t, "banking77")
	dir := t.TempDir()
	db := filepath.Join(dir, "b.db")
	jevlabOK(t, "eval", "--offline", "--db", db, set)
	jevlabOK(t, "eval", "--fresh", "--base-url", url, "--rps", "0", "--db", db, set)

	showA, _ := jevlabOK(t, "show", "--db", db, "latest~1", "--json")
	showB, _ := jevlabOK(t, "show", "--db", db, "latest", "--json")
	cmpOut, _ := jevlabOK(t, "compare", "--db", db, "latest~1", "latest", "--json")
	runs := []any{decodeJSON(t, showA), decodeJSON(t, showB)}
	cmp := decodeJSON(t, cmpOut)
	if v, _ := cmp.(map[string]any)["verdict"].(string); v != "regressed" {
		t.Errorf("verdict %q: the stand-in's lexical model should lose to Jev", v)
	}

	out := filepath.Join(dir, "report.html")
	_, errOut := jevlabOK(t, "report", "--db", db, "latest~1", "latest", "--html", out)
	if !strings.Contains(errOut, "wrote HTML report "+out) {
		t.Errorf("stderr %q", errOut)
	}
	h := readHTML(t, out)
	for _, e := range htmlcheck.Check(h, runs, cmp) {
		t.Error("report:", e)
	}
	if n := strings.Count(h, `data-hist=`); n != 4 {
		t.Errorf("%d history cells, want accuracy and ECE of both runs", n)
	}
	for _, want := range []string{"Over time", "Flipped items", "Confusion matrix, A ", "Confusion matrix, B ", "standin-synthetic-1", "jev-1.13.0"} {
		if !strings.Contains(h, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	inBrowser(t, out)

	// compare --html writes the same comparison next to its usual output
	cmpHTML := filepath.Join(dir, "compare.html")
	md, _ := jevlabOK(t, "compare", "--db", db, "latest~1", "latest", "--markdown", "--html", cmpHTML)
	if !strings.Contains(md, "### jevlab compare") {
		t.Errorf("compare --markdown --html lost the Markdown:\n%s", md)
	}
	for _, e := range htmlcheck.Check(readHTML(t, cmpHTML), runs, cmp) {
		t.Error("compare --html:", e)
	}

	// show --html: one run, the history still drawn
	showHTML := filepath.Join(dir, "show.html")
	txt, _ := jevlabOK(t, "show", "--db", db, "latest~1", "--html", showHTML)
	if !strings.Contains(txt, "intent") {
		t.Errorf("show --html lost the text report:\n%s", txt)
	}
	hs := readHTML(t, showHTML)
	for _, e := range htmlcheck.Check(hs, runs[:1], nil) {
		t.Error("show --html:", e)
	}
	if !strings.Contains(hs, "Over time") || strings.Contains(hs, "Flipped items") {
		t.Error("show --html: want the history and no comparison")
	}
}

// TestReportEntityMerge: the entity-merge example (a noul and a 4-way
// choice, 420 real answers) as one run.
func TestReportEntityMerge(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	jevlabOK(t, "eval", "--offline", "--db", db, copyExample(t, "entity-merge"))
	show, _ := jevlabOK(t, "show", "--db", db, "latest", "--json")
	out := filepath.Join(dir, "em.html")
	jevlabOK(t, "report", "--db", db, "latest", "--html", out)
	h := readHTML(t, out)
	for _, e := range htmlcheck.Check(h, []any{decodeJSON(t, show)}, nil) {
		t.Error(e)
	}
	for _, want := range []string{"same_entity", "action", "observed rate of true", "Accuracy–coverage", "Confusion matrix"} {
		if !strings.Contains(h, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(h, "Over time") {
		t.Error("one stored run drew a history")
	}
	if !testing.Short() {
		inBrowser(t, out)
	}
}

// TestReportCommandErrors: what a user gets wrong is said plainly, exit 2.
func TestReportCommandErrors(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	jevlabOK(t, "eval", "--offline", "--db", db, demoSet(t, readFixture(t, "recorded.jsonl")))
	jevlabOK(t, "eval", "--offline", "--db", db, demoSet(t, readFixture(t, "recorded-run2.jsonl")))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--db", db, "latest"}, "--html PATH is required"},
		{[]string{"report", "--db", db, "--html", filepath.Join(dir, "x.html")}, "requires at least 1 arg"},
		{[]string{"report", "--db", db, "nope", "--html", filepath.Join(dir, "x.html")}, `run "nope"`},
		{[]string{"report", "--db", db, "latest", "latest", "--html", filepath.Join(dir, "x.html")}, "are the same run"},
		{[]string{"report", "--db", db, "latest", "--html", filepath.Join(dir, "no", "such", "dir", "x.html")}, "write report"},
		{[]string{"report", "--db", db, "latest", "--html", filepath.Join(dir, "x.html"), "--alpha", "2"}, "--alpha 2"},
		{[]string{"report", "--db", db, "latest", "--html", filepath.Join(dir, "x.html"), "--allow-changed", "queue"}, "give exactly two runs"},
		{[]string{"report", "--db", db, "latest~1", "latest", "--html", filepath.Join(dir, "x.html"), "--map", "nope:a=b"}, `mapped question "nope"`},
		{[]string{"report", "--db", db, "latest~1", "latest", "--html", filepath.Join(dir, "x.html"), "--map", "queue"}, "want QUESTION:A_NAME=B_NAME"},
	} {
		code, _, errOut := runJevlab(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("jevlab %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); !os.IsNotExist(err) {
		t.Error("a failed report left a file behind")
	}
}
