package workbench

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// WriteHistory writes a question's revisions (QuestionHistory), newest
// first, as `jevlab log FILE QUESTION` prints them and the workbench's
// history pane shows them: each revision's hash and first-seen date, the
// options renamed in place, the word diff from the revision before (the
// whole text for the first), and every run that asked it with n,
// accuracy, ECE, Brier, the model and the split. Text from the file is
// escaped for the terminal.
func WriteHistory(w io.Writer, setName, qid string, revs []Revision) {
	esc := termsafe.String
	fmt.Fprintf(w, "%s · question %s · %d revision(s), newest first\n", esc(setName), esc(qid), len(revs))
	for _, r := range revs {
		cur := ""
		if r.Current {
			cur = "  (current)"
		}
		fmt.Fprintf(w, "\nrevision %.12s  first seen %s%s\n", r.Hash, r.FirstSeen.UTC().Format("2006-01-02 15:04:05 UTC"), cur)
		if len(r.Renames) > 0 {
			var parts []string
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range r.Renames {
					if !yield(k) {
						return
					}
				}
			}) {
				parts = append(parts, k+" → "+r.Renames[k])
			}
			fmt.Fprintf(w, "  renamed option(s): %s\n", esc(strings.Join(parts, ", ")))
		}
		text, label := r.DiffText, "diff from the revision before"
		if r.Diff == nil {
			text, label = r.Text, "first revision"
		}
		fmt.Fprintf(w, "  %s:\n", label)
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(w, "    %s\n", esc(line))
		}
		if len(r.Runs) == 0 {
			fmt.Fprintln(w, "  runs: none")
			continue
		}
		fmt.Fprintln(w, "  runs:")
		for _, u := range r.Runs {
			name := ""
			if u.Name != "" {
				name = " (" + esc(u.Name) + ")"
			}
			split := ""
			if u.Split != "" {
				split = "  split " + u.Split
			}
			fmt.Fprintf(w, "    %s%s  n %d  accuracy %s  ECE %s  Brier %s  model %s%s\n", u.RunID, name, u.N,
				FormatEstimate(u.Accuracy), FormatEstimate(u.ECE), FormatEstimate(u.Brier), esc(u.Model), split)
		}
	}
}

// FormatEstimate writes an estimate as the text reports do: "0.850
// [0.640, 0.950]" with its interval's tag, "—" when undefined.
func FormatEstimate(e Estimate) string {
	if !e.Defined() {
		return "—"
	}
	s := fmt.Sprintf("%.3f", e.Value)
	if e.HasInterval() {
		s += fmt.Sprintf(" [%.3f, %.3f]", e.Lo, e.Hi)
	}
	return s + report.IntervalTag(e)
}
