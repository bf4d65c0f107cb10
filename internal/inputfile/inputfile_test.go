package inputfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn takes longer than d (a hang is the bug).
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs or /dev/zero")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "set.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero.jsonl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{
		{fifo, "a FIFO (named pipe)"},
		{"/dev/zero", "a character device"},
		{link, "a character device"},
		{dir, "a directory"},
	} {
		within(t, 10*time.Second, func() {
			_, err := ReadFile(c.path, "question set", 1<<20, "--max-set-size")
			var nr *NotRegularError
			if !errors.As(err, &nr) || nr.Kind != c.kind {
				t.Fatalf("%s: err %v, want NotRegularError %q", c.path, err, c.kind)
			}
			want := "question set " + c.path + " is " + c.kind + ", not a regular file"
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q, want prefix %q", err, want)
			}
		})
	}
}

func TestReadFileCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 2048)), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, "question set", 2048, "--max-set-size"); err != nil || len(b) != 2048 {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
	_, err := ReadFile(p, "question set", 2047, "--max-set-size")
	want := "question set " + p + " is larger than 2KB, the limit (raise it with --max-set-size)"
	if err == nil || err.Error() != want {
		t.Fatalf("over the limit: %v, want %q", err, want)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none"), "question set", 10, ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestCapReader(t *testing.T) {
	stop := errors.New("over")
	b, err := io.ReadAll(CapReader(strings.NewReader("abcdef"), 6, stop))
	if err != nil || string(b) != "abcdef" {
		t.Fatalf("exactly at cap: %q %v", b, err)
	}
	b, err = io.ReadAll(CapReader(strings.NewReader("abcdefg"), 6, stop))
	if !errors.Is(err, stop) || string(b) != "abcdef" {
		t.Fatalf("over cap: %q %v", b, err)
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"16MB": 16 << 20, "1.5GB": 3 << 29, "64kib": 64 << 10, "100": 100, "2g": 2 << 30, "10B": 10} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1MB", "0", "lots", "1e30TB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	for n, want := range map[int64]string{16 << 20: "16MB", 1536: "1.5KB", 100: "100B", 4 << 30: "4GB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
	var s Size
	if err := s.Set("8MB"); err != nil || s.String() != "8MB" || s.Type() != "size" {
		t.Errorf("Size flag: %v %q", err, s.String())
	}
}
