package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/store"
)

type compareOptions struct {
	asJSON, markdown, failOnRegression bool
	html                               string
	seed                               uint64
	bootstrap                          int
	exact                              bool
	alpha                              float64
	allowChanged                       []string
	maps                               []string
	flips                              int
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

A question that cannot be compared (options or levels differ, missing from
one run, no item answered in both) is named in the verdict, which is then
"not comparable", never "no significant change". --allow-changed QUESTION
accepts it as changed on purpose, so the comparable questions decide; an
option (or score level) renamed between the runs is mapped with
--map QUESTION:A_NAME=B_NAME.

Verdicts: improved, regressed, no significant change, within noise, not
comparable. --fail-on-regression exits 1 when any question regressed or a
question could not be compared (and was not allowed to change). Text and
Markdown list the first --flips flipped items per question; --json holds
every one. RUN is a run id, a unique prefix, latest or latest~N, or a run
bundle file (.jevrun, from 'jevlab runs export'), read directly: a CI job
compares against the main branch's baseline bundle without its database.`,
		Example: `  jevlab compare latest~1 latest
  jevlab compare r-20261202-1015 r-20261202-1120 --markdown > comment.md
  jevlab compare r-20261202-1015 latest --fail-on-regression --seed 7
  jevlab compare latest~1 latest --map queue:other=general --fail-on-regression
  jevlab compare latest~1 latest --allow-changed queue --fail-on-regression
  jevlab compare latest~1 latest --markdown > comment.md --html compare.html
  jevlab compare baseline.jevrun latest --markdown --fail-on-regression`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.asJSON && o.markdown {
				return usageErr(errors.New("--json and --markdown: pick one"))
			}
			if o.alpha <= 0 || o.alpha >= 1 {
				return usageErr(fmt.Errorf("--alpha %g: must be between 0 and 1", o.alpha))
			}
			if o.flips == 0 || o.flips < -1 {
				return usageErr(fmt.Errorf("--flips %d: must be at least 1, or -1 for all", o.flips))
			}
			return a.compare(cmd.Context(), args[0], args[1], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.asJSON, "json", false, "print the comparison as JSON")
	f.BoolVar(&o.markdown, "markdown", false, "print the comparison as Markdown (a PR comment)")
	f.StringVar(&o.html, "html", "", "also write the comparison as one self-contained HTML file to PATH (see jevlab report)")
	f.BoolVar(&o.failOnRegression, "fail-on-regression", false, "exit 1 when any question regressed significantly")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the paired bootstrap (printed in the report)")
	f.IntVar(&o.bootstrap, "bootstrap", 1000, "paired bootstrap resamples B (0 or less: no intervals)")
	f.BoolVar(&o.exact, "exact-bootstrap", false, exactBootstrapUsage)
	f.Float64Var(&o.alpha, "alpha", compare.DefaultAlpha, "family-wise error rate across questions (Holm)")
	f.StringSliceVar(&o.allowChanged, "allow-changed", nil, "accept QUESTION as changed on purpose: when it cannot be compared it does not fail --fail-on-regression (repeatable, or a comma list)")
	f.StringArrayVar(&o.maps, "map", nil, "map an option (or score level) renamed between the runs: QUESTION:A_NAME=B_NAME (repeatable)")
	f.IntVar(&o.flips, "flips", compare.DefaultShownFlips, "flipped items listed per question in text and Markdown (-1: all; --json lists all)")
	return cmd
}

// parseMaps reads --map QUESTION:A_NAME=B_NAME flags.
func parseMaps(flags []string) (map[string]map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]map[string]string{}
	for _, f := range flags {
		q, rest, ok := strings.Cut(f, ":")
		from, to, ok2 := strings.Cut(rest, "=")
		q, from, to = strings.TrimSpace(q), strings.TrimSpace(from), strings.TrimSpace(to)
		if !ok || !ok2 || q == "" || from == "" || to == "" {
			return nil, fmt.Errorf("--map %q: want QUESTION:A_NAME=B_NAME, e.g. --map queue:other=general", f)
		}
		if out[q] == nil {
			out[q] = map[string]string{}
		}
		if prev, dup := out[q][from]; dup && prev != to {
			return nil, fmt.Errorf("--map %q: %s:%s is already mapped to %s", f, q, from, prev)
		}
		out[q][from] = to
	}
	return out, nil
}

func (a *app) compare(ctx context.Context, refA, refB string, o compareOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	boot := o.bootstrap
	if boot <= 0 {
		boot = -1
	}
	maps, err := parseMaps(o.maps)
	if err != nil {
		return usageErr(err)
	}
	var allow []string
	for _, q := range o.allowChanged {
		if q = strings.TrimSpace(q); q != "" {
			allow = append(allow, q)
		}
	}
	copt := workbench.CompareOptions{Seed: o.seed, Bootstrap: boot, Alpha: o.alpha, AllowChanged: allow, Map: maps}
	copt.Metrics.ExactBootstrapMax = exactMax(o.exact)
	// A RUN that is a run bundle (.jevrun) is read from the file (bundle.go).
	var src [2]workbench.Source
	for i, ref := range []string{refA, refB} {
		if src[i], err = a.runSource(ctx, ref); err != nil {
			return err
		}
	}
	// The workbench's compare screen calls the same use case.
	cmp, err := workbench.CompareAcross(ctx, src[0], src[1], &copt)
	var refErr *workbench.RefError
	var sameErr *workbench.SameRunError
	var optErr *workbench.OptionsError
	if errors.As(err, &refErr) || errors.As(err, &sameErr) || errors.As(err, &optErr) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	c := cmp.Comparison
	runs := [2]*workbench.Run{cmp.A, cmp.B}
	wo := report.CompareOptions{Flips: o.flips}
	switch {
	case o.asJSON:
		err = report.WriteJSON(a.stdout, c)
	case o.markdown:
		err = report.WriteCompareMarkdownWith(a.stdout, c, wo)
	default:
		err = report.WriteCompareTextWith(a.stdout, c, wo)
	}
	if err != nil {
		return err
	}
	if o.html != "" { // reportcmd.go
		if err := a.compareHTML(ctx, [2]*store.DB{src[0].DB, src[1].DB}, runs, c, o); err != nil {
			return err
		}
	}
	paired := 0
	for _, q := range c.Questions {
		paired += q.Paired
	}
	if paired == 0 {
		return usageErr(fmt.Errorf("runs %s and %s share no answered item: compare runs over the same dataset", runs[0].ID, runs[1].ID))
	}
	if o.failOnRegression && c.Failed() {
		var why []string
		if len(c.Regressions) > 0 {
			why = append(why, "regression in "+strings.Join(c.Regressions, ", "))
		}
		for _, n := range c.Blocking() {
			why = append(why, fmt.Sprintf("not comparable: %s (accept it with --allow-changed %s, or map a renamed option with --map %s:A_NAME=B_NAME)", n, n.Question, n.Question))
		}
		return failErr(fmt.Errorf("%s (B %s against A %s)", strings.Join(why, "; "), runs[1].ID, runs[0].ID))
	}
	return nil
}
