package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/report"
)

type compareOptions struct {
	asJSON, markdown, failOnRegression bool
	seed                               uint64
	bootstrap                          int
	alpha                              float64
}

func newCompareCmd(a *app) *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Compare two stored runs item by item (B against baseline A)",
		Long: `compare pairs two runs by dataset item id and, per question, reports the
change B − A of every metric with a paired bootstrap 95% interval, the exact
McNemar test on correctness (Holm-corrected across questions), the flipped
items (fixed / broken / changed but still wrong) ranked by the shift in the
true label's probability, and label-free drift (share of changed decisions,
mean total-variation distance), so two model versions can be compared even
without labels. Where either run has repeats (eval --repeat), a change no
larger than the runs' own repeat noise is reported as "within noise".

Verdicts: improved, regressed, no significant change, within noise.
--fail-on-regression exits 1 when any question regressed. RUN is a run id, a
unique prefix, latest or latest~N.`,
		Example: `  jevlab compare latest~1 latest
  jevlab compare r-20261202-1015 r-20261202-1120 --markdown > comment.md
  jevlab compare r-20261202-1015 latest --fail-on-regression --seed 7`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.asJSON && o.markdown {
				return usageErr(errors.New("--json and --markdown: pick one"))
			}
			if o.alpha <= 0 || o.alpha >= 1 {
				return usageErr(fmt.Errorf("--alpha %g: must be between 0 and 1", o.alpha))
			}
			return a.compare(cmd.Context(), args[0], args[1], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.asJSON, "json", false, "print the comparison as JSON")
	f.BoolVar(&o.markdown, "markdown", false, "print the comparison as Markdown (a PR comment)")
	f.BoolVar(&o.failOnRegression, "fail-on-regression", false, "exit 1 when any question regressed significantly")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the paired bootstrap (printed in the report)")
	f.IntVar(&o.bootstrap, "bootstrap", 1000, "paired bootstrap resamples B (0 or less: no intervals)")
	f.Float64Var(&o.alpha, "alpha", compare.DefaultAlpha, "family-wise error rate across questions (Holm)")
	return cmd
}

func (a *app) compare(ctx context.Context, refA, refB string, o compareOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	db, err := a.db()
	if err != nil {
		return usageErr(err)
	}
	var runs [2]compare.RunData
	for i, ref := range []string{refA, refB} {
		r, err := db.ResolveRun(ctx, ref)
		if err != nil {
			return usageErr(fmt.Errorf("run %q: %w (see jevlab runs)", ref, err))
		}
		if runs[i], err = compare.LoadRun(ctx, db, r); err != nil {
			return err
		}
	}
	if runs[0].ID == runs[1].ID {
		return usageErr(fmt.Errorf("%s and %s are the same run %s", refA, refB, runs[0].ID))
	}
	boot := o.bootstrap
	if boot <= 0 {
		boot = -1
	}
	c := compare.Compare(runs[0], runs[1], compare.Options{Seed: o.seed, Bootstrap: boot, Alpha: o.alpha})
	switch {
	case o.asJSON:
		err = report.WriteJSON(a.stdout, c)
	case o.markdown:
		err = report.WriteCompareMarkdown(a.stdout, c)
	default:
		err = report.WriteCompareText(a.stdout, c)
	}
	if err != nil {
		return err
	}
	paired := 0
	for _, q := range c.Questions {
		paired += q.Paired
	}
	if paired == 0 {
		return usageErr(fmt.Errorf("runs %s and %s share no answered item: compare runs over the same dataset", runs[0].ID, runs[1].ID))
	}
	if o.failOnRegression && report.Regressed(c) {
		return failErr(fmt.Errorf("regression in %v (B %s against A %s)", c.Regressions, runs[1].ID, runs[0].ID))
	}
	return nil
}
