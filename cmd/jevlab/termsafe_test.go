package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider/standin"
)

// hostileTitle retitles the terminal (OSC 0), clears the screen and moves
// the cursor home: what a set's name did to whoever ran ask on it.
const hostileTitle = "\x1b]0;pwned\x07\x1b[2J\x1b[H"

// noControls fails when s holds any control character other than newline
// and tab, or a C1 control.
func noControls(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("%s carries control character %U:\n%q", what, r, s)
		}
	}
}

// TestHostileNameDoesNotDriveTheTerminal reproduces issue 10 item 4: a
// set whose name (and a label, and an unknown field) carry escape
// sequences. ask prints them escaped, on stdout and in errors.
func TestHostileNameDoesNotDriveTheTerminal(t *testing.T) {
	isolate(t)
	si, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	srv := httptest.NewServer(si)
	defer srv.Close()

	dir := t.TempDir()
	set := filepath.Join(dir, "evil.yaml")
	body := "name: \"\\e]0;pwned\\a\\e[2J\\e[H\"\nstate: hello\nquestions:\n  \"spam\\e[31m\":\n    type: noul\n    instructions: Is this spam?\n"
	if err := os.WriteFile(set, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runJevlab(t, "ask", "--db", filepath.Join(dir, "db"), "--base-url", srv.URL, set)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	noControls(t, "ask output", out)
	noControls(t, "ask stderr", errOut)
	for _, want := range []string{`\u001b]0;pwned\u0007\u001b[2J\u001b[H`, `spam\u001b[31m (noul)`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks the escaped %q:\n%s", want, out)
		}
	}

	// The same bytes in an error message (an unknown field) are escaped
	// on stderr too.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("\"x\\e]0;pwned\\a\": 1\nquestions: {q: {type: noul, instructions: x}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runJevlab(t, "lint", bad)
	if code != 2 {
		t.Fatalf("lint exit %d\n%s\n%s", code, out, errOut)
	}
	noControls(t, "lint output", out)
	noControls(t, "lint stderr", errOut)
	if !strings.Contains(out+errOut, `\u001b]0;pwned\u0007`) {
		t.Errorf("lint does not show the field escaped:\n%s\n%s", out, errOut)
	}
	code, out, errOut = runJevlab(t, "ask", "--offline", "--db", filepath.Join(dir, "db"), bad)
	if code != 2 {
		t.Fatalf("ask exit %d\n%s\n%s", code, out, errOut)
	}
	noControls(t, "ask stderr", errOut)
}
