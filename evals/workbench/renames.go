package workbench

import (
	"maps"
	"slices"

	"github.com/jevlab/jevlab/evals/dataset"
)

// RestoreRenames replaces the session's remembered option renames with r
// (a copy of what Renames returned earlier): the editor's undo takes the
// set and the renames back together, so undoing a rename also stops old
// labels counting as the new option.
func (s *Session) RestoreRenames(r map[string]map[string]string) {
	s.renames = dataset.Renames{}
	for q, m := range r {
		if len(m) > 0 {
			s.renames[q] = maps.Clone(m)
		}
	}
}

// Fork is a copy of the session for a tea.Cmd to work on while the
// original stays in Update's hands: the same dataset and template, a clone
// of the set, and the renames as they are now. SaveRenames on the fork
// rewrites the dataset file without touching the original's state.
func (s *Session) Fork() *Session {
	f := NewSession(s.Set.Clone(), s.Dataset, s.Template)
	f.RestoreRenames(s.Renames())
	f.shifts = slices.Clone(s.shifts)
	return f
}

// Relabel returns items with their label texts carried through renames
// (old label → new, per question), as a dataset rewritten by SaveRenames
// now reads: the items in memory and the file on disk say the same. The
// input is not changed.
func Relabel(items []Item, renames map[string]map[string]string) []Item {
	out := make([]Item, len(items))
	for i, it := range items {
		out[i] = it
		changed := false
		for q, l := range it.Labels {
			if _, ok := renames[q][l.Text]; ok {
				changed = true
				break
			}
		}
		if !changed {
			continue
		}
		labels := make(map[string]dataset.Label, len(it.Labels))
		for q, l := range it.Labels {
			if to, ok := renames[q][l.Text]; ok {
				l.Text = to
			}
			labels[q] = l
		}
		out[i].Labels = labels
	}
	return out
}
