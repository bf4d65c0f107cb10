//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/internal/testutil"
)

// Issue 10 item 3 at the command line: a FIFO, /dev/zero and a directory
// as the set or the dataset end at once with a clear message (exit 2),
// and a set over --max-set-size is refused naming the flag. Each case
// runs in a child process bounded to 10 s and 200 MB resident; on the old
// build the FIFO hung and /dev/zero ran out of memory.
func TestAttackFilesEndAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "set.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("state: hi\nquestions:\n  q: {type: noul, instructions: \"Is it?\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("state: hi\nquestions:\n  q: {type: noul, instructions: \"Is it?\"}\n# "+strings.Repeat("x", 2<<20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"ask fifo", []string{"ask", "--offline", fifo}, "question set " + fifo + " is a FIFO (named pipe), not a regular file"},
		{"ask dev zero", []string{"ask", "--offline", "/dev/zero"}, "question set /dev/zero is a character device, not a regular file"},
		{"ask directory", []string{"ask", "--offline", dir}, "question set " + dir + " is a directory, not a regular file"},
		{"lint dev zero", []string{"lint", "/dev/zero"}, "question set /dev/zero is a character device"},
		{"lint fifo", []string{"lint", fifo}, "question set " + fifo + " is a FIFO (named pipe)"},
		{"eval data dev zero", []string{"eval", "--offline", "--data", "/dev/zero", good}, "dataset /dev/zero is a character device, not a regular file"},
		{"eval data fifo", []string{"eval", "--offline", "--data", fifo, good}, "dataset " + fifo + " is a FIFO (named pipe)"},
		{"lint data fifo", []string{"lint", "--data", fifo, good}, "dataset " + fifo + " is a FIFO (named pipe)"},
		{"set over the cap", []string{"ask", "--offline", "--max-set-size", "1MB", big}, "question set " + big + " is larger than 1MB, the limit (raise it with --max-set-size)"},
		{"import fifo", []string{"import", "--from", "standard-agents", fifo}, "file to import " + fifo + " is a FIFO"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			testutil.Bounded(t, 10*time.Second, 200<<20, func(t *testing.T) {
				isolate(t)
				code, out, errOut := runJevlab(t, append([]string{"--db", db}, c.args...)...)
				if code != 2 || !strings.Contains(out+errOut, c.want) {
					t.Fatalf("exit %d, want 2 with %q\nstdout: %s\nstderr: %s", code, c.want, out, errOut)
				}
			})
		})
	}
	// Raised, the same set loads.
	if code, _, errOut := runJevlab(t, "lint", "--max-set-size", "4MB", big); code != 0 {
		t.Fatalf("with --max-set-size 4MB: exit %d: %s", code, errOut)
	}
}
