// Package testutil locates the repository and the shared test data for
// tests. It is imported only by _test files.
package testutil

import (
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
