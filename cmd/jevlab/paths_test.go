package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider/standin"
)

// standinURL serves synthetic answers on loopback for the test. With
// asJev they are reported under a Jev model name, so they are recorded
// (stand-in answers never go into a fixture file).
func standinURL(t *testing.T, asJev bool) string {
	t.Helper()
	si, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { si.Close() })
	var h http.Handler = si
	if asJev {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			si.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			body := bytes.ReplaceAll(rec.Body.Bytes(), []byte(standin.SyntheticModel), []byte("jev-1.14.0"))
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(rec.Code)
			w.Write(body)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// victimTree lays out top/team/sets (the set's folder) and top/victim
// with a shell rc file, and returns the set folder and the rc file.
func victimTree(t *testing.T) (setDir, rc string) {
	t.Helper()
	top := t.TempDir()
	setDir = filepath.Join(top, "team", "sets")
	victim := filepath.Join(top, "victim")
	for _, d := range []string{setDir, victim} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	rc = filepath.Join(victim, "bashrc")
	if err := os.WriteFile(rc, []byte("export PATH=$HOME/bin:$PATH\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return setDir, rc
}

func writeFile(t *testing.T, p, body string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const pathSetHead = "name: triage\nstate: \"I was charged twice\"\nquestions:\n  refund:\n    type: noul\n    instructions: Does the customer ask for a refund?\n"

// TestFixturesCannotAppendOutsideTheSetFolder reproduces issue 10 item 1:
// `fixtures: [../../victim/bashrc]` made `ask --fresh` append a JSON line
// to a shell rc file. Now the path (spelled with .., absolute, or through
// a symlink in the folder) is refused with a located error naming
// --allow-path, and the rc file is untouched.
func TestFixturesCannotAppendOutsideTheSetFolder(t *testing.T) {
	isolate(t)
	url := standinURL(t, true)
	setDir, rc := victimTree(t)
	if err := os.Symlink(rc, filepath.Join(setDir, "recorded.jsonl")); err != nil {
		t.Fatal(err)
	}
	for name, fixtures := range map[string]string{
		"dotdot":   "fixtures: [../../victim/bashrc]\n",
		"absolute": "fixtures: [" + rc + "]\n",
		"symlink":  "fixtures: recorded.jsonl\n",
	} {
		t.Run(name, func(t *testing.T) {
			set := writeFile(t, filepath.Join(setDir, name+".yaml"), pathSetHead+fixtures)
			code, out, errOut := runJevlab(t, "ask", "--fresh", "--db", filepath.Join(t.TempDir(), "db"), "--base-url", url, set)
			if code != 2 {
				t.Fatalf("exit %d, want 2\n%s\n%s", code, out, errOut)
			}
			for _, want := range []string{set + ":7:", "fixtures: ", "outside the question set's folder", "--allow-path"} {
				if !strings.Contains(errOut, want) && !strings.Contains(errOut, strings.Replace(want, "outside", "out of", 1)) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if b, _ := os.ReadFile(rc); string(b) != "export PATH=$HOME/bin:$PATH\n" {
				t.Fatalf("the rc file was written:\n%s", b)
			}
			// lint flags it too, at the same place.
			code, out, _ = runJevlab(t, "lint", set)
			if code != 2 || !strings.Contains(out, set+":7:") || !strings.Contains(out, "error[path]") {
				t.Errorf("lint: exit %d\n%s", code, out)
			}
		})
	}
}

// TestAllowPathReadsButRecordsOnlyWhereTold: with --allow-path the set's
// shared fixture is read, but new answers go only to a file the user
// chose (--record), never to the allowed file.
func TestAllowPathReadsButRecordsOnlyWhereTold(t *testing.T) {
	isolate(t)
	url := standinURL(t, true)
	setDir, _ := victimTree(t)
	shared := filepath.Join(filepath.Dir(setDir), "data")
	if err := os.MkdirAll(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	sharedRec := writeFile(t, filepath.Join(shared, "shared.jsonl"), "")
	set := writeFile(t, filepath.Join(setDir, "s.yaml"), pathSetHead+"fixtures: [../data/shared.jsonl]\n")
	db := filepath.Join(t.TempDir(), "db")

	code, _, errOut := runJevlab(t, "ask", "--allow-path", shared, "--db", db, "--base-url", url, set)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "new answers are not appended to "+filepath.Join(setDir, "../data/shared.jsonl")) {
		t.Errorf("no note that the allowed file is read-only:\n%s", errOut)
	}
	if b, _ := os.ReadFile(sharedRec); len(b) != 0 {
		t.Fatalf("the allowed shared file was appended to:\n%s", b)
	}
	mine := filepath.Join(t.TempDir(), "mine.jsonl")
	code, _, errOut = runJevlab(t, "ask", "--fresh", "--allow-path", shared, "--record", mine, "--db", db, "--base-url", url, set)
	if code != 0 {
		t.Fatalf("--record: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(mine); !strings.Contains(string(b), `"request"`) {
		t.Fatalf("--record file holds %q", b)
	}
	if b, _ := os.ReadFile(sharedRec); len(b) != 0 {
		t.Fatalf("the allowed shared file was appended to:\n%s", b)
	}

	// A fixture inside the set's folder is the default record target.
	inside := writeFile(t, filepath.Join(setDir, "in.yaml"), pathSetHead+"fixtures: [rec/in.jsonl]\n")
	if err := os.Mkdir(filepath.Join(setDir, "rec"), 0o700); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runJevlab(t, "ask", "--fresh", "--db", db, "--base-url", url, inside); code != 0 {
		t.Fatalf("inside: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(setDir, "rec", "in.jsonl")); !strings.Contains(string(b), `"request"`) {
		t.Fatalf("inside fixture holds %q", b)
	}
}

// TestDatasetCannotLeaveNorEcho: `dataset: ../../.env` printed the
// .env's first line (a secret) as "columns". Now the path is refused
// (eval and lint, located, naming --allow-path), and read through
// --allow-path or --data the file is not quoted in any message.
func TestDatasetCannotLeaveNorEcho(t *testing.T) {
	isolate(t)
	setDir, _ := victimTree(t)
	top := filepath.Dir(filepath.Dir(setDir))
	const secret = "OPENAI_API_KEY=sk-live-0123456789abcdef"
	env := writeFile(t, filepath.Join(top, ".env"), secret+"\nDB_PASSWORD=hunter2\n")
	set := writeFile(t, filepath.Join(setDir, "s.yaml"), pathSetHead+"dataset: ../../.env\n")
	db := filepath.Join(t.TempDir(), "db")

	code, out, errOut := runJevlab(t, "eval", "--offline", "--db", db, set)
	if code != 2 || !strings.Contains(errOut, set+":7:") || !strings.Contains(errOut, "--allow-path") {
		t.Fatalf("eval: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runJevlab(t, "lint", set)
	if code != 2 || !strings.Contains(out, "error[path]") {
		t.Fatalf("lint: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"eval", "--offline", "--db", db, "--allow-path", top, set},
		{"eval", "--offline", "--db", db, "--data", env, set},
		{"lint", "--allow-path", top, set},
		{"lint", "--data", env, set},
		{"lint", "--data", writeFile(t, filepath.Join(top, "env.jsonl"), secret+"\n"), set},
		{"lint", "--data", writeFile(t, filepath.Join(top, "env.csv"), secret+",x\nsk-live-0123456789abcdef,\"x\n"), set},
	} {
		code, out, errOut := runJevlab(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		for _, leak := range []string{"sk-live", "OPENAI", "hunter2", "DB_PASSWORD"} {
			if strings.Contains(out+errOut, leak) {
				t.Errorf("%v quotes the file (%q):\n%s\n%s", args, leak, out, errOut)
			}
		}
	}
}
