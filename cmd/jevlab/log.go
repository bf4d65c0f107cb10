package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/workbench"
)

func newLogCmd(a *app) *cobra.Command {
	var asJSON bool
	var stats statFlags
	cmd := &cobra.Command{
		Use:   "log FILE QUESTION",
		Short: "List a question's revisions, newest first, with diffs and the metrics of every run",
		Long: `log lists the revisions of one question of a question set: each distinct body
of the question (its id, wire question, caller-side settings and variants),
newest first, with the date it was first seen, a word-level diff from the
revision before it ([-removed-] {+added+}), options renamed in place
(old → new), and the metrics of every stored run that asked it: n,
accuracy with its interval, ECE, Brier, the model and the split.

Revisions are recorded when a run starts and when log reads the file (the
question as it is now is marked current); runs stored before the history
was kept are read from their snapshots.`,
		Example: `  jevlab log triage.yaml queue
  jevlab log triage.yaml queue --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.log(cmd.Context(), args[0], args[1], asJSON, stats)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the revisions as JSON")
	bindStatFlags(cmd.Flags(), &stats)
	return cmd
}

func (a *app) log(ctx context.Context, path, qid string, asJSON bool, stats statFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := a.loadSet(path)
	if err != nil {
		return usageErr(err)
	}
	if _, ok := set.Question(qid); !ok {
		return usageErr(fmt.Errorf("%s has no question %q (questions: %s)", path, qid, strings.Join(set.Questions.IDs(), ", ")))
	}
	db, err := a.db()
	if err != nil {
		return usageErr(fmt.Errorf("%w (choose another with --db or $JEVLAB_DB)", err))
	}
	opt := stats.options()
	revs, err := workbench.QuestionHistory(ctx, db, set, qid, &opt)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Set       string               `json:"question_set"`
			Question  string               `json:"question"`
			Revisions []workbench.Revision `json:"revisions"`
		}{set.Title(), qid, revs})
	}
	renderLog(a.stdout, set.Title(), qid, revs)
	return nil
}

// renderLog prints a question's revisions, newest first (the workbench's
// history pane shows the same text).
func renderLog(w io.Writer, setName, qid string, revs []workbench.Revision) {
	workbench.WriteHistory(w, setName, qid, revs)
}
