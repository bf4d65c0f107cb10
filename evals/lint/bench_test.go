package lint

import (
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// BenchmarkLintBanking77 lints the shipped Banking77 set (one 77-option
// choice) with its dataset streamed from disk.
func BenchmarkLintBanking77(b *testing.B) {
	p := filepath.Join(testutil.RepoRoot(b), "fixtures", "banking77", "questions.yaml")
	for b.Loop() {
		if _, err := LintFile(p, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLintSeeded lints the seeded file (every warning fires) with its
// small dataset: the cost of the rules themselves.
func BenchmarkLintSeeded(b *testing.B) {
	for b.Loop() {
		if _, err := LintFile("testdata/seeded/questions.yaml", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
