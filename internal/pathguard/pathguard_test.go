package pathguard

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	top := t.TempDir()
	set := filepath.Join(top, "team", "sets")
	shared := filepath.Join(top, "team", "data")
	victim := filepath.Join(top, "victim")
	for _, d := range []string{set, shared, victim, filepath.Join(set, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(victim, "bashrc"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(set, "d.jsonl"), []byte("x"), 0o600)
	os.Symlink(filepath.Join(victim, "bashrc"), filepath.Join(set, "rc.jsonl"))          // points out
	os.Symlink(filepath.Join(set, "d.jsonl"), filepath.Join(set, "sub", "in.jsonl"))     // points in
	os.Symlink(victim, filepath.Join(set, "out"))                                        // a folder out
	os.Symlink(filepath.Join(victim, "new.jsonl"), filepath.Join(set, "dangling.jsonl")) // dangling, out

	cases := []struct {
		p      string
		roots  []string
		inside bool
		root   string
	}{
		{"d.jsonl", nil, true, ""},
		{"./sub/../d.jsonl", nil, true, ""},
		{"sub/in.jsonl", nil, true, ""},
		{"new.jsonl", nil, true, ""}, // not created yet, inside
		{filepath.Join(set, "d.jsonl"), nil, true, ""},
		{"../../victim/bashrc", nil, false, ""},
		{filepath.Join(victim, "bashrc"), nil, false, ""},
		{"rc.jsonl", nil, false, ""},
		{"out/bashrc", nil, false, ""},
		{"out/new.jsonl", nil, false, ""},
		{"dangling.jsonl", nil, false, ""},
		{"/etc/passwd", nil, false, ""},
		{"../data/d.jsonl", []string{shared}, false, shared},
		{"../data/d.jsonl", []string{victim}, false, ""},
		{"../setsX/d.jsonl", nil, false, ""}, // a sibling sharing the prefix
	}
	for _, c := range cases {
		r, err := Resolve(set, c.p, c.roots)
		if err != nil {
			t.Fatalf("%s: %v", c.p, err)
		}
		if r.Inside != c.inside || r.Root != c.root || r.Allowed() != (c.inside || c.root != "") {
			t.Errorf("%s (roots %v): inside %v root %q (real %s), want inside %v root %q", c.p, c.roots, r.Inside, r.Root, r.Real, c.inside, c.root)
		}
	}
}
