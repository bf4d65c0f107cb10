package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/htmlreport"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// maxHistoryRuns bounds the stored runs of a set drawn over time.
const maxHistoryRuns = 30

type reportCmdOptions struct {
	html         string
	seed         uint64
	bootstrap    int
	exact        bool
	alpha        float64
	allowChanged []string
	maps         []string
}

func newReportCmd(a *app) *cobra.Command {
	var o reportCmdOptions
	cmd := &cobra.Command{
		Use:   "report RUN [RUN…] --html PATH",
		Short: "Write stored runs' report as one self-contained HTML file",
		Long: `report writes one HTML file (inline SVG and CSS, no script, nothing fetched
from the network; light, dark and print styles) with, per question: the
metrics table with 95% intervals; reliability diagrams in equal-width and
equal-mass bins with every run drawn over the others; accuracy–coverage
curves with the fitted cut-point; the confusion matrix as a heat map; for
score questions the distribution of |error| in levels; and accuracy and ECE
of every stored run of the same question set over time. With exactly two
runs, B (the second) is compared with baseline A as jevlab compare does:
paired deltas with their tests, the verdict, and every flipped item, the
largest shifts with both distributions drawn side by side.

The numbers are those of show --json and compare --json with the same seed
and resamples. RUN is a run id, a unique prefix, latest or latest~N.`,
		Example: `  jevlab report latest --html report.html
  jevlab report latest~1 latest --html compare.html
  jevlab report r-20261202-1015 r-20261203-0900 r-20261204-1130 --html trend.html`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.completeRuns(1 << 30),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.html == "" {
				return usageErr(errors.New("--html PATH is required: the file to write"))
			}
			if o.alpha <= 0 || o.alpha >= 1 {
				return usageErr(fmt.Errorf("--alpha %g: must be between 0 and 1", o.alpha))
			}
			return a.reportHTML(cmd.Context(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.html, "html", "", "write the report as one self-contained HTML file to PATH")
	f.Uint64Var(&o.seed, "seed", 1, "seed of every bootstrap (printed in the report)")
	f.IntVar(&o.bootstrap, "bootstrap", 1000, "bootstrap resamples B (0 or less: no intervals)")
	f.BoolVar(&o.exact, "exact-bootstrap", false, exactBootstrapUsage)
	f.Float64Var(&o.alpha, "alpha", compare.DefaultAlpha, "family-wise error rate across questions (Holm), with two runs")
	f.StringSliceVar(&o.allowChanged, "allow-changed", nil, "with two runs: accept QUESTION as changed on purpose (as compare does)")
	f.StringArrayVar(&o.maps, "map", nil, "with two runs: map a renamed option or level, QUESTION:A_NAME=B_NAME (as compare does)")
	return cmd
}

func (a *app) reportHTML(ctx context.Context, refs []string, o reportCmdOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	db, err := a.db()
	if err != nil {
		return usageErr(err)
	}
	var runs []*store.Run
	seen := map[string]string{}
	for _, ref := range refs {
		r, err := db.ResolveRun(ctx, ref)
		if err != nil {
			return usageErr(fmt.Errorf("run %q: %w (see jevlab runs)", ref, err))
		}
		if prev, dup := seen[r.ID]; dup {
			return usageErr(fmt.Errorf("%s and %s are the same run %s", prev, ref, r.ID))
		}
		seen[r.ID] = ref
		runs = append(runs, r)
	}
	boot := o.bootstrap
	if boot <= 0 {
		boot = -1
	}
	mopt := metrics.Options{Seed: o.seed, Bootstrap: boot, ExactBootstrapMax: exactMax(o.exact)}
	views := make([]*workbench.RunView, len(runs))
	in := &htmlreport.Input{Generated: time.Now()}
	for i, r := range runs {
		// the run view of show and the evaluate screen, with its answers
		if views[i], err = workbench.LoadStoredRun(ctx, db, r, workbench.ViewConfig{Metrics: &mopt}); err != nil {
			return err
		}
		in.Runs = append(in.Runs, views[i].Report)
	}
	if len(views) != 2 && (len(o.allowChanged) > 0 || len(o.maps) > 0) {
		return usageErr(errors.New("--allow-changed and --map tune a comparison: give exactly two runs"))
	}
	if len(views) == 2 {
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
		cmp, err := workbench.CompareViews(views[0], views[1], &workbench.CompareOptions{Seed: o.seed, Bootstrap: boot, Alpha: o.alpha, AllowChanged: allow, Map: maps})
		if err != nil {
			return usageErr(err)
		}
		in.Comparison = cmp.Comparison
		in.Answer = answersOf(views)
	}
	return a.writeHTML(ctx, db, in, o.html)
}

// answersOf returns an htmlreport.Input.Answer over run views: each
// view's first-repeat answer of a question to an item.
func answersOf(views []*workbench.RunView) func(r int, q, item string) *provider.Answer {
	return func(r int, q, item string) *provider.Answer {
		if r < 0 || r >= len(views) || views[r] == nil {
			return nil
		}
		if res := views[r].Items[item][q]; res != nil {
			return res.Answer
		}
		return nil
	}
}

// writeHTML adds the history of the runs' question set to in and writes
// the HTML report to path (atomically), saying so on stderr.
func (a *app) writeHTML(ctx context.Context, db *store.DB, in *htmlreport.Input, path string) error {
	hist, err := historyOf(ctx, db, in.Runs)
	if err != nil {
		return err
	}
	in.History = hist
	var b bytes.Buffer
	if err := htmlreport.Write(&b, in); err != nil {
		return err
	}
	if err := writeReportFile(path, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "jevlab: wrote HTML report %s (%d KB)\n", path, (b.Len()+1023)/1024)
	return nil
}

// historyOf returns reports of the stored runs of the first run's question
// set (by name, newest maxHistoryRuns), reusing the reports at hand and
// computing the others' point values only (no bootstrap, no noise floor).
func historyOf(ctx context.Context, db *store.DB, reps []*report.RunReport) ([]*report.RunReport, error) {
	if len(reps) == 0 || reps[0].Run == nil || reps[0].Run.SetName == "" {
		return nil, nil
	}
	runs, err := db.Runs(ctx, store.RunFilter{SetName: reps[0].Run.SetName, Limit: maxHistoryRuns})
	if err != nil {
		return nil, err
	}
	have := map[string]*report.RunReport{}
	for _, r := range reps {
		if r.Run != nil {
			have[r.Run.ID] = r
		}
	}
	var out []*report.RunReport
	for _, r := range runs {
		if rep, ok := have[r.ID]; ok {
			out = append(out, rep)
			delete(have, r.ID)
			continue
		}
		if r.Done == 0 {
			continue
		}
		rep, err := loadRunReport(ctx, db, r, metrics.Options{Seed: workbench.CanonicalSeed, Bootstrap: -1, NoiseFloorDraws: -1}, nil, questionset.Gate{})
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		out = append(out, rep)
	}
	for _, rep := range have { // a report's own run beyond the newest maxHistoryRuns
		out = append(out, rep)
	}
	return out, nil
}

// compareHTML writes compare --html: both runs' reports (with compare's
// seed and resamples) and the comparison c already computed and printed.
func (a *app) compareHTML(ctx context.Context, dbs [2]*store.DB, runs [2]*workbench.Run, c *compare.Comparison, o compareOptions) error {
	boot := o.bootstrap
	if boot <= 0 {
		boot = -1
	}
	mopt := metrics.Options{Seed: o.seed, Bootstrap: boot, ExactBootstrapMax: exactMax(o.exact)}
	in := &htmlreport.Input{Comparison: c, Generated: time.Now()}
	views := make([]*workbench.RunView, 2)
	for i, r := range runs {
		v, err := workbench.LoadStoredRun(ctx, dbs[i], r, workbench.ViewConfig{Metrics: &mopt})
		if err != nil {
			return err
		}
		views[i] = v
		in.Runs = append(in.Runs, v.Report)
	}
	in.Answer = answersOf(views)
	return a.writeHTML(ctx, dbs[1], in, o.html) // history: the candidate's database
}
