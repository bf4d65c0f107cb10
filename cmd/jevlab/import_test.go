package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
)

func dialectTestdata(t *testing.T, name string) string {
	return filepath.Join(testutil.RepoRoot(t), "evals", "dialects", "testdata", name)
}

func TestImportEachDialect(t *testing.T) {
	cases := []struct {
		dialect, source string
		questions       string // ids in order
		note            string // substring of stderr
	}{
		{"standard-agents", "standard-agents.json", "team,anger,refund", ""},
		{"assistant-runtime", "assistant-runtime.json", "intent,start,energy", `jevlab: note: assistant-runtime profile "robot"`},
		{"noetic", "noetic-routeswitch.json", "team,tier,refund", `jevlab: note: decide node "ask" has its own instructions`},
		{"playground", "playground/intent-routing.link", "intent,complexity", ""},
	}
	for _, c := range cases {
		t.Run(c.dialect, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "set.yaml")
			code, stdout, stderr := runWithStdin(t, "", "import", "--from", c.dialect, dialectTestdata(t, c.source), "-o", out)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, c.note) || !strings.Contains(stderr, "jevlab: wrote "+out) {
				t.Errorf("stderr %s", stderr)
			}
			set, err := questionset.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(set.Questions.IDs(), ","); got != c.questions {
				t.Errorf("questions %s, want %s", got, c.questions)
			}
			// The imported file lints without errors.
			if code, lo, le := runWithStdin(t, "", "lint", "--no-data", out); code != 0 {
				t.Errorf("lint of the imported file: exit %d\n%s%s", code, lo, le)
			}
		})
	}
}

func TestImportStdinLinkAndFailures(t *testing.T) {
	body, err := os.ReadFile(dialectTestdata(t, "assistant-runtime.json"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runWithStdin(t, string(body), "import", "--from", "assistant-runtime", "-")
	if code != 0 || !strings.HasPrefix(out, "# Imported by jevlab from stdin (assistant-runtime).\n") || !strings.Contains(out, "  energy:\n") {
		t.Fatalf("stdin: exit %d\n%s%s", code, out, errOut)
	}

	link, _ := os.ReadFile(dialectTestdata(t, "playground/intent-routing.link"))
	code, out, errOut = runWithStdin(t, "", "import", "--from", "playground", strings.TrimSpace(string(link)))
	if code != 0 || !strings.Contains(out, "order_status: Asking about an existing order") {
		t.Fatalf("link: exit %d\n%s%s", code, out, errOut)
	}

	// A bare payload, longer than a file name may be.
	payload := strings.TrimSpace(string(link))[strings.Index(string(link), "#share/")+7:]
	if len(payload) < 300 {
		t.Fatalf("payload only %d bytes", len(payload))
	}
	code, out, errOut = runWithStdin(t, "", "import", "--from", "playground", payload)
	if code != 0 || !strings.Contains(out, "order_status: Asking about an existing order") {
		t.Fatalf("bare payload: exit %d\n%s%s", code, out, errOut)
	}

	dir := t.TempDir()
	single := filepath.Join(dir, "single.json")
	os.WriteFile(single, []byte(`{"c":{"type":"choice","choices":["only"]}}`), 0o644)
	existing := filepath.Join(dir, "exists.yaml")
	os.WriteFile(existing, []byte("keep me"), 0o644)
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"import", "--from", "noetic", single}, single + `: noetic: c.choices: has a single value ("only")`},
		{[]string{"import", "--from", "langchain", single}, `--from: unknown dialect "langchain"`},
		{[]string{"import", single}, `required flag(s) "from" not set`},
		{[]string{"import", "--from", "noetic", filepath.Join(dir, "nope.json")}, "no such file"},
		{[]string{"import", "--from", "standard-agents", dialectTestdata(t, "standard-agents.json"), "-o", existing}, "already exists; use --force"},
		{[]string{"import", "--from", "standard-agents", dialectTestdata(t, "standard-agents.json"), "-o", filepath.Join(dir, "x.json")}, "import writes YAML"},
	}
	for _, c := range cases {
		code, out, errOut := runWithStdin(t, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.err) {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s\nwant stderr containing %s", c.args, code, out, errOut, c.err)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Error("an existing file was overwritten without --force")
	}
}

func TestExportPlayground(t *testing.T) {
	set := filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage", "questions.yaml")
	if _, err := os.Stat(set); err != nil {
		t.Skip("demo-triage example not present")
	}
	code, link, errOut := runWithStdin(t, "", "export", "--to", "playground", set)
	if code != 0 || !strings.HasPrefix(link, "https://console.typesafe.ai/playground#share/") {
		t.Fatalf("exit %d\n%s%s", code, link, errOut)
	}
	if !strings.Contains(errOut, "gates are jevlab's own") {
		t.Errorf("stderr does not name what the share leaves out: %s", errOut)
	}
	code, out, errOut := runWithStdin(t, "", "import", "--from", "playground", strings.TrimSpace(link))
	if code != 0 {
		t.Fatalf("re-import: exit %d\n%s", code, errOut)
	}
	back, err := questionset.Parse("back.yaml", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := questionset.Load(set)
	a, _ := back.Request(nil).MarshalJSON()
	b, _ := orig.Request(nil).MarshalJSON()
	if string(a) != string(b) {
		t.Errorf("export → import changed the request\n got %s\nwant %s", a, b)
	}

	code, _, errOut = runWithStdin(t, "", "--model", "jev-1.13.0", "export", "--to", "playground", set)
	if code != 0 {
		t.Fatal(errOut)
	}
	code, _, errOut = runWithStdin(t, "", "export", "--to", "pdf", set)
	if code != 2 || !strings.Contains(errOut, `--to "pdf": export targets are playground, jevl and jev-packs`) {
		t.Errorf("--to pdf: exit %d %s", code, errOut)
	}
}
