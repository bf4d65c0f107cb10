package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codePath = regexp.MustCompile("`((?:\\.\\./|[a-z_]+/)[A-Za-z0-9_./-]*\\.md)`")
)

// TestReadmeLinks checks that every relative link in README.md, and every
// code-spanned path to a Markdown file, resolves inside the repository
// (anchors and web links aside).
func TestReadmeLinks(t *testing.T) {
	root := testutil.RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var targets []string
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		targets = append(targets, m[1])
	}
	for _, m := range codePath.FindAllStringSubmatch(text, -1) {
		targets = append(targets, m[1])
	}
	if len(targets) == 0 {
		t.Fatal("README.md has no links at all; the pattern is broken")
	}
	for _, target := range targets {
		if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		p, _, _ := strings.Cut(target, "#")
		abs := filepath.Clean(filepath.Join(root, p))
		if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("README.md links to %s, outside the repository", target)
			continue
		}
		if _, err := os.Stat(abs); err != nil {
			t.Errorf("README.md links to %s, which does not exist", target)
		}
	}
}

// TestReadmeLinkCheckFails proves the check can fail: the old pointer to
// reference/dialects.md does not resolve.
func TestReadmeLinkCheckFails(t *testing.T) {
	m := codePath.FindStringSubmatch("see (`reference/dialects.md`)")
	if m == nil || m[1] != "reference/dialects.md" {
		t.Fatalf("pattern missed the path: %v", m)
	}
	if _, err := os.Stat(filepath.Join(testutil.RepoRoot(t), m[1])); err == nil {
		t.Error("reference/dialects.md exists in the repository; pick another missing path")
	}
}
