package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dialects"
)

func newExportCmd(a *app) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "export --to playground FILE",
		Short: "Write a TypeSafe Playground share link for a question set",
		Long: `export writes a share link that opens the question set in the TypeSafe
Playground: the working state as the document (JSON text for a structured
state), the questions as JSON, and the set's model (or --model). Caller-side
settings (threshold, min_confidence, gates, dataset) have no place in a share;
they are named on stderr.`,
		Example: `  jevlab export --to playground fixtures/demo-triage/questions.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to != "playground" {
				return usageErr(fmt.Errorf("--to %q: the only export target is playground", to))
			}
			set, err := a.loadSet(args[0])
			if err != nil {
				return usageErr(err)
			}
			if a.model != "" {
				set.Model = a.model
			}
			sh, notes, err := dialects.ShareFor(set)
			if err != nil {
				return usageErr(fmt.Errorf("export %s: %w", args[0], err))
			}
			for _, n := range notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "jevlab: note:", n)
			}
			fmt.Fprintln(cmd.OutOrStdout(), sh.Link())
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "export target: playground")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}
