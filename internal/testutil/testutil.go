// Package testutil locates the repository and the shared test data for
// tests. It is imported only by _test files.
package testutil

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the directory holding go.mod, walking up from the
// current directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil: go.mod not found above the test directory")
		}
		dir = parent
	}
}

// SharedDir returns ../shared beside the repository (or $JEVLAB_SHARED),
// skipping the test when it is absent.
func SharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("JEVLAB_SHARED"); d != "" {
		return d
	}
	d := filepath.Join(RepoRoot(t), "..", "shared")
	if _, err := os.Stat(filepath.Join(d, "testdata")); err != nil {
		t.Skipf("shared test data not found at %s", d)
	}
	return d
}

// Testdata returns the path of name under ../shared/testdata.
func Testdata(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(SharedDir(t), "testdata", name)
}

// RecordedFiles returns every ../shared/testdata/*/recorded*.jsonl (real
// recorded Jev exchanges), skipping the test when there are none.
func RecordedFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(SharedDir(t), "testdata", "*", "recorded*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no recorded exchanges under the shared test data")
	}
	return files
}

// EachLine calls fn with each line of the JSONL file at path and its
// 1-based number, until fn returns false. Lines may be up to 16 MB. A file
// that cannot be opened or read fails the test.
func EachLine(t testing.TB, path string, fn func(line int, data []byte) bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if !fn(line, sc.Bytes()) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
}
