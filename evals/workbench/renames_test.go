package workbench

import (
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
)

// Undo restores the renames with the set; a fork's renames are its own;
// Relabel makes items read as the rewritten file does.
func TestRestoreForkRelabel(t *testing.T) {
	set := mustSet(t, triage)
	s := NewSession(set, DatasetSource{}, nil)
	before := s.Renames()
	if err := s.RenameOption("queue", "other", "general"); err != nil {
		t.Fatal(err)
	}
	f := s.Fork()
	s.RestoreRenames(before)
	if len(s.Renames()) != 0 {
		t.Fatalf("restored renames = %v", s.Renames())
	}
	if got := f.Renames()["queue"]["other"]; got != "general" {
		t.Fatalf("fork lost the rename: %v", f.Renames())
	}
	items := []Item{{ID: "a", Labels: map[string]dataset.Label{"queue": {Text: "other"}, "urgent": {Text: "true"}}},
		{ID: "b", Labels: map[string]dataset.Label{"queue": {Text: "billing"}}}}
	out := Relabel(items, f.Renames())
	if out[0].Labels["queue"].Text != "general" || out[0].Labels["urgent"].Text != "true" || out[1].Labels["queue"].Text != "billing" {
		t.Fatalf("relabelled: %+v", out)
	}
	if items[0].Labels["queue"].Text != "other" {
		t.Fatal("Relabel changed its input")
	}
	// Relabelled items resolve with no renames and no stale labels.
	g := NewSession(f.Set, DatasetSource{}, nil)
	if _, stale := g.Labelled(out); len(stale) != 0 {
		t.Fatalf("stale after relabel: %v", stale)
	}
	if _, stale := g.Labelled(items); len(stale) != 1 {
		t.Fatalf("want the old label stale without the renames, got %v", stale)
	}
}
