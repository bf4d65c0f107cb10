// Package pathguard keeps the paths a shared file names inside that
// file's folder.
//
// A question set names its dataset and fixture files; a set from someone
// else must not make jevlab read (and quote) a file elsewhere, nor append
// to one (a shell rc file that then runs what was written). A path stays
// inside when, relative to the folder and with every symlink on the way
// followed, it ends up in the folder or below — whatever its spelling
// (absolute, with "..", through a symlink). The person running jevlab may
// allow more roots (--allow-path), for a monorepo whose sets share a data
// folder.
package pathguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Result is where a named path resolves.
type Result struct {
	// Path is the path to open: p joined to the folder (as written, not
	// symlink-resolved, so messages show what the file says).
	Path string
	// Real is Path with every symlink resolved (as far as it exists).
	Real string
	// Inside says Real is inside the folder itself.
	Inside bool
	// Root is the allowed root Real is inside, "" when none (or when
	// Inside).
	Root string
}

// Allowed reports whether the path may be used: inside the folder or an
// allowed root.
func (r Result) Allowed() bool { return r.Inside || r.Root != "" }

// Resolve resolves p, written in a file in folder dir, and says whether
// it stays inside dir or one of roots. Symlinks are followed as far as
// the path exists, so a file not created yet (a fixture to record to) is
// judged by its folder.
func Resolve(dir, p string, roots []string) (Result, error) {
	joined := p
	if !filepath.IsAbs(p) {
		joined = filepath.Join(dir, p)
	}
	res := Result{Path: joined}
	real, err := realPath(joined)
	if err != nil {
		return res, err
	}
	res.Real = real
	base, err := realPath(dir)
	if err != nil {
		return res, err
	}
	if within(base, real) {
		res.Inside = true
		return res, nil
	}
	for _, root := range roots {
		r, err := realPath(root)
		if err != nil {
			continue
		}
		if within(r, real) {
			res.Root = root
			return res, nil
		}
	}
	return res, nil
}

// realPath is p absolute with symlinks resolved; for a path whose tail
// does not exist, the existing head is resolved and the rest appended.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	cur := abs
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// A dangling symlink names its target: resolve that instead.
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, rerr := os.Readlink(cur)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return realPath(filepath.Join(append([]string{target}, rest...)...))
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}
