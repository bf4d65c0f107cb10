package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/store"
)

func newRunsCmd(a *app) *cobra.Command {
	var asJSON bool
	var f store.RunFilter
	var status string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs, newest first",
		Long: `runs lists the runs in the database (--db, $JEVLAB_DB or the default path):
id, name, when, question set, dataset, resolved model, items stored, status
and cost. --model NAME keeps the runs that requested or resolved NAME. Use an id (or a unique prefix, latest, latest~1) with show,
compare and eval --resume.`,
		Example: `  jevlab runs
  jevlab runs --set banking77 --limit 5
  jevlab runs --model jev-1.13.0
  jevlab runs --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			f.Status = store.Status(status)
			f.Model = a.model
			db, err := a.dbReadOnly()
			if errors.Is(err, store.ErrNoDatabase) {
				if asJSON {
					fmt.Fprintln(a.stdout, "[]")
					return nil
				}
				path := a.dbPath
				if path == "" {
					path = store.DefaultPath()
				}
				fmt.Fprintf(a.stdout, "no runs in %s yet (jevlab eval FILE stores one)\n", path)
				return nil
			}
			if err != nil {
				return usageErr(err)
			}
			runs, err := db.Runs(ctx, f)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(runs)
			}
			if len(runs) == 0 {
				fmt.Fprintf(a.stdout, "no runs in %s yet (jevlab eval FILE stores one)\n", db.Path())
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tWHEN\tQUESTION SET\tDATASET\tMODEL\tN\tSTATUS\tCOST")
			for _, r := range runs {
				model := r.Model
				if len(r.Models) > 0 {
					model = strings.Join(r.Models, "+")
				}
				n := fmt.Sprint(r.Done)
				if r.Done != r.Total {
					n = fmt.Sprintf("%d/%d", r.Done, r.Total)
				}
				if r.Errors > 0 {
					n += fmt.Sprintf(" (%d err)", r.Errors)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t$%.4f\n", esc(r.ID), esc(orDash(runLabel(r))), r.StartedAt.Local().Format("2006-01-02 15:04"),
					esc(r.SetName), esc(shortPath(r.DatasetPath)), esc(model), n, shortStatus(r), r.CostUSD)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as JSON")
	cmd.Flags().StringVar(&f.SetName, "set", "", "only runs of this question set name")
	cmd.Flags().StringVar(&status, "status", "", "only runs with this status: running, done, interrupted, failed")
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "show at most N runs")
	cmd.AddCommand(newRunsExportCmd(a), newRunsImportCmd(a)) // bundle.go
	return cmd
}

// shortStatus is the status column. A run whose process died reads as
// interrupted already (the store checks its lease).
func shortStatus(r *store.Run) string { return string(r.Status) }
