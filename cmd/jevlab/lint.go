package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/lint"
)

type lintOptions struct {
	data        string
	noData      bool
	asJSON      bool
	strict      bool
	idField     string
	stateField  string
	stateFields string
	labels      []string
}

func newLintCmd(a *app) *cobra.Command {
	var o lintOptions
	cmd := &cobra.Command{
		Use:   "lint FILE",
		Short: "Check a question set and its dataset before asking anything",
		Long: `lint checks a question set without calling out: the file's schema and the API's
limits, the dataset's consistency with the questions (every label checked), and
warnings grounded in Jev's documented failure modes, each with an id, a
file:line:col location and a one-line fix:

  no-catch-all           a choice has no none/other/unknown option
  non-ordinal-level      a score level like "unknown" or "n/a" inside the ladder
  unresolved-path        a backticked state path resolves in no state
  duplicate-description  two options (or levels) read the same
  negated-true           a noul's true reads as a negation
  token-budget           approximately (bytes/4) over 64k tokens per request,
                         or 32k for state + the longest question
  double-negative        instructions with a double negative
  numeric-task           instructions that ask Jev to count or compute

The dataset is --data, else the set's dataset: (relative to the set file).
Exit status: 2 when there are errors; 0 with warnings only, or 1 with
--strict.`,
		Example: `  jevlab lint fixtures/demo-triage/questions.yaml
  jevlab lint triage.yaml --data tickets.csv --label team=gold_team --strict
  jevlab lint triage.yaml --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.lint(cmd, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "dataset to check (JSON Lines or CSV); default: the set's dataset:")
	f.BoolVar(&o.noData, "no-data", false, "skip the dataset even when the set names one")
	f.BoolVar(&o.asJSON, "json", false, "print findings as JSON")
	f.BoolVar(&o.strict, "strict", false, "exit 1 when there are warnings")
	bindDataFlags(f, &o.idField, &o.stateField, &o.stateFields, &o.labels)
	return cmd
}

func (a *app) lint(cmd *cobra.Command, path string, o lintOptions) error {
	opts := lint.Options{Data: o.data, NoData: o.noData, SetLimits: a.setLimits(), AllowPaths: a.allowPaths}
	dopt, err := flagDataOptions(o.idField, o.stateField, o.stateFields, o.labels)
	if err != nil {
		return usageErr(err)
	}
	opts.DataOptions = a.dataOptions(dopt)
	findings, err := lint.LintFile(path, opts)
	if err != nil {
		return usageErr(err)
	}
	out := cmd.OutOrStdout()
	errs, warns := lint.Count(findings)
	if o.asJSON {
		b, err := lint.MarshalFindings(findings)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
	} else {
		for _, f := range findings {
			fmt.Fprintln(out, f)
		}
		switch {
		case errs == 0 && warns == 0:
			fmt.Fprintf(out, "%s: ok, no findings\n", path)
		default:
			fmt.Fprintf(out, "%s: %s, %s\n", path, lintPlural(errs, "error"), lintPlural(warns, "warning"))
		}
	}
	switch {
	case errs > 0:
		return usageErr(fmt.Errorf("lint %s: %s", path, lintPlural(errs, "error")))
	case warns > 0 && o.strict:
		return failErr(fmt.Errorf("lint %s: %s (--strict)", path, lintPlural(warns, "warning")))
	}
	return nil
}

func lintPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
