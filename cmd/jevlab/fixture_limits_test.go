package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFixtureFilesFromStrangersAreBounded: a FIFO named as fixtures is
// refused at once by serve and ask (never a hang); a file of many bad
// lines prints the first 20 warnings and a count; a line over
// --max-fixture-line is skipped with a warning naming the flag, and
// raising the flag reads it.
func TestFixtureFilesFromStrangersAreBounded(t *testing.T) {
	clearEnv(t)
	work := t.TempDir()
	set := filepath.Join(work, "canary.yaml")
	if err := os.WriteFile(set, []byte(canarySet), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(work, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	start := time.Now()
	code, _, errOut := runJevlab(t, "serve", "--addr", "127.0.0.1:0", "--fixtures", fifo)
	if code != 2 || !strings.Contains(errOut, "is a FIFO (named pipe), not a regular file") {
		t.Fatalf("serve --fixtures FIFO: exit %d: %s", code, errOut)
	}
	code, _, errOut = runJevlab(t, "ask", "--offline", "--db", filepath.Join(work, "db"), "--fixtures", fifo, set)
	if code != 2 || !strings.Contains(errOut, "not a regular file") {
		t.Fatalf("ask --fixtures FIFO: exit %d: %s", code, errOut)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("refusing a FIFO took %v", took)
	}

	bad := filepath.Join(work, "bad.jsonl")
	long := `{"request":{"model":"jev-latest","state":"` + strings.Repeat("x", 300) + `","questions":{"q":{"type":"noul"}}},"response":{"model":"m","answers":{"q":{"type":"noul","noul":0.5}}}}`
	if err := os.WriteFile(bad, []byte(strings.Repeat("not json\n", 1000)+long+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, errOut = runJevlab(t, "ask", "--offline", "--db", filepath.Join(work, "db"), "--fixtures", bad, "--max-fixture-line", "100", set)
	if n := strings.Count(errOut, "jevlab: warning:"); n != 21 {
		t.Errorf("%d warning lines for 1001 bad lines, want 20 and a count:\n%s", n, errOut)
	}
	if !strings.Contains(errOut, "981 more problem lines skipped and not listed (the first 20 are shown)") {
		t.Errorf("no count of the rest:\n%s", errOut)
	}
	one := filepath.Join(work, "long.jsonl")
	if err := os.WriteFile(one, []byte(long+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, errOut = runJevlab(t, "ask", "--offline", "--db", filepath.Join(work, "db"), "--fixtures", one, "--max-fixture-line", "100", set)
	if !strings.Contains(errOut, "longer than the fixture line limit of 100 bytes (raise it with --max-fixture-line BYTES") {
		t.Errorf("over-long line warning does not name the limit and the flag:\n%s", errOut)
	}
	_, _, errOut = runJevlab(t, "ask", "--offline", "--db", filepath.Join(work, "db"), "--fixtures", one, "--max-fixture-line", "100000", set)
	if strings.Contains(errOut, "fixture line limit") {
		t.Errorf("a raised limit still skips the line:\n%s", errOut)
	}
}
