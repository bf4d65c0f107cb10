package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workbenchIO gives jevlab a pipe for stdin (the terminal reader needs a
// pollable file; it stays open, as a terminal would) and files for
// stdout and stderr.
type workbenchIO struct {
	in, keys, out, err *os.File
}

func newWorkbenchIO(t *testing.T) *workbenchIO {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mk := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	io := &workbenchIO{in: r, keys: w, out: mk("out"), err: mk("err")}
	t.Cleanup(func() { r.Close(); w.Close(); io.out.Close(); io.err.Close() })
	return io
}

func (io *workbenchIO) screen() string {
	b, _ := os.ReadFile(io.out.Name())
	return string(b)
}

// TestWorkbenchDefaultExample: `jevlab` with no FILE opens the shipped
// Banking77 example and answers it offline from the embedded recordings —
// no key, no network — and q quits.
func TestWorkbenchDefaultExample(t *testing.T) {
	t.Setenv("TYPESAFE_API_KEY", "")
	t.Setenv("TYPESAFE_BASE_URL", "http://127.0.0.1:1") // nothing listens: any call would fail
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("JEVLAB_DB", "")
	io := newWorkbenchIO(t)
	done := make(chan int, 1)
	go func() { done <- run(nil, io.in, io.out, io.err) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(io.screen(), "card_arrival") {
		if time.Now().After(deadline) {
			t.Fatalf("no recorded answer drawn; screen so far:\n%s", io.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := io.keys.WriteString("q"); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			errb, _ := os.ReadFile(io.err.Name())
			t.Fatalf("exit %d, stderr %s", code, errb)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit")
	}
	for _, want := range []string{"banking77", "offline", "jev-1.13.0", "▶ card_arrival"} {
		if !strings.Contains(io.screen(), want) {
			t.Errorf("screen lacks %q", want)
		}
	}
}

// TestWorkbenchMissingFile: a FILE that does not exist is a usage error
// naming it.
func TestWorkbenchMissingFile(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	io := newWorkbenchIO(t)
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	code := run([]string{missing}, io.in, io.out, io.err)
	errb, _ := os.ReadFile(io.err.Name())
	if code != exitUsage || !strings.Contains(string(errb), "nope.yaml") {
		t.Errorf("exit %d, stderr %q; want 2 naming the file", code, errb)
	}
}
