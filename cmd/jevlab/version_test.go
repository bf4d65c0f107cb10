package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestVersion: --version and the version command print the same line,
// with the Go version; a stored run records it instead of "dev" alone.
func TestVersion(t *testing.T) {
	isolate(t)
	code, out, _ := runJevlab(t, "--version")
	want := "jevlab " + versionString() + "\n"
	if code != 0 || out != want || !strings.Contains(out, runtime.Version()) || !regexp.MustCompile(`^jevlab \S+ \(commit \S+, go`).MatchString(out) {
		t.Errorf("--version: exit %d %q, want %q", code, out, want)
	}
	code, out, _ = runJevlab(t, "version")
	if code != 0 || !strings.HasPrefix(out, want) || !strings.Contains(out, "platform "+runtime.GOOS) {
		t.Errorf("version: exit %d %q", code, out)
	}
	code, out, _ = runJevlab(t, "version", "--json")
	if code != 0 || !strings.Contains(out, `"go": "`+runtime.Version()+`"`) {
		t.Errorf("version --json: exit %d %s", code, out)
	}
	db := filepath.Join(t.TempDir(), "v.db")
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded.jsonl")))
	_, out, _ = runJevlab(t, "runs", "--db", db, "--json")
	if !strings.Contains(out, `"jevlab_version": "`+strings.ReplaceAll(versionString(), `"`, `\"`)+`"`) {
		t.Errorf("the run does not record %q:\n%s", versionString(), out)
	}
}

// TestUnknownWord: a word that is neither a command nor a file says so and
// lists the commands, with a suggestion when one is close.
func TestUnknownWord(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, _, errOut := runJevlab(t, "evall")
	if code != 2 || !strings.Contains(errOut, `"evall" is neither a command nor a file; did you mean eval?`) {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	// Every command is listed, in order (the list grows with the tool).
	var names []string
	for _, c := range newRootCmd(newApp(nil, io.Discard, io.Discard)).Commands() {
		if !c.Hidden && c.Name() != "help" && c.Name() != "completion" {
			names = append(names, c.Name())
		}
	}
	names = append(names, "completion") // cobra adds it when the command runs
	sort.Strings(names)
	if !strings.Contains(errOut, "commands: "+strings.Join(names, ", ")) {
		t.Errorf("the commands are not listed as %v:\n%s", names, errOut)
	}
}

// TestCompleteShowRunIDs: jevlab show <TAB> lists the stored run ids (with
// latest), filtered by the prefix typed; with no database it offers none
// and creates none.
func TestCompleteShowRunIDs(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "c.db")
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded.jsonl")))
	evalOffline(t, db, demoSet(t, readFixture(t, "recorded-run2.jsonl")))
	_, out, _ := runJevlab(t, "runs", "--db", db)
	ids := regexp.MustCompile(`(?m)^(r-\S+)`).FindAllString(out, -1)
	if len(ids) != 2 {
		t.Fatalf("runs:\n%s", out)
	}

	a := newApp(nil, os.Stdout, os.Stderr)
	a.dbPath = db
	defer a.close()
	got, dir := a.completeRuns(1)(&cobra.Command{}, nil, "")
	if dir != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("directive %v", dir)
	}
	var names []string
	for _, g := range got {
		n, _, _ := strings.Cut(g, "\t")
		names = append(names, n)
	}
	if strings.Join(names, " ") != ids[0]+" "+ids[1]+" latest latest~1" {
		t.Errorf("completions %q, want %v then latest", got, ids)
	}
	if got, _ := a.completeRuns(1)(&cobra.Command{}, nil, ids[1][:len(ids[1])-2]); len(got) != 1 || !strings.HasPrefix(got[0], ids[1]+"\t") {
		t.Errorf("prefix completions %q", got)
	}
	if got, _ := a.completeRuns(1)(&cobra.Command{}, []string{ids[0]}, ""); len(got) != 0 {
		t.Errorf("a second argument completed: %q", got)
	}
	// Through the shell protocol: cobra's __complete for `show `.
	code, out, _ := runJevlab(t, "__complete", "show", "--db", db, "")
	if code != 0 || !strings.Contains(out, ids[0]) || !strings.Contains(out, ids[1]) || !strings.Contains(out, ":4") {
		t.Errorf("__complete show: exit %d\n%s", code, out)
	}
	b := newApp(nil, os.Stdout, os.Stderr)
	b.dbPath = filepath.Join(t.TempDir(), "none.db")
	if got := b.runIDs(nil, ""); len(got) != 0 {
		t.Errorf("completions without a database: %q", got)
	}
	if _, err := os.Stat(b.dbPath); err == nil {
		t.Error("completion created a database")
	}
	// --label completes the set's question ids.
	set := demoSet(t, readFixture(t, "recorded.jsonl"))
	code, out, _ = runJevlab(t, "__complete", "eval", set, "--label", "")
	if code != 0 || !strings.Contains(out, "refund_request=\nqueue=\nurgency=\n") {
		t.Errorf("__complete --label: exit %d\n%s", code, out)
	}
}

// TestMan writes one man page per command.
func TestMan(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	code, _, errOut := runJevlab(t, "man", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, n := range []string{"jevlab.1", "jevlab-eval.1", "jevlab-import.1", "jevlab-version.1"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || !strings.Contains(string(b), ".TH \"JEVLAB\"") {
			t.Errorf("%s: %v\n%.200s", n, err, b)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "jevlab-eval.1"))
	if !strings.Contains(string(b), "state-fields") {
		t.Error("jevlab-eval.1 lacks the eval flags")
	}
}
