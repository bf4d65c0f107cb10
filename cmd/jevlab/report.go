package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/store"
)

// reportFlags are the report files and gate overrides eval (and show)
// accept: --junit PATH, --markdown PATH, --min-accuracy, --max-ece.
type reportFlags struct {
	junit, markdown, cutpoints     string
	minAccuracy, maxECE, targetAcc float64
	stats                          statFlags
	fs                             *pflag.FlagSet
}

// statFlags are --seed, --bootstrap and --exact-bootstrap, as eval, show,
// log and compare take them.
type statFlags struct {
	seed      uint64
	bootstrap int
	exact     bool
}

// bindStatFlags declares --seed (default 1, the canonical seed),
// --bootstrap and --exact-bootstrap on f.
func bindStatFlags(f *pflag.FlagSet, o *statFlags) {
	f.Uint64Var(&o.seed, "seed", 1, "seed of the bootstrap, the cut-point split and the ECE noise floor (printed in the report)")
	f.IntVar(&o.bootstrap, "bootstrap", metrics.DefaultBootstrap, "bootstrap resamples B (0 or less: no intervals)")
	f.BoolVar(&o.exact, "exact-bootstrap", false, exactBootstrapUsage)
}

// exactBootstrapUsage is the help of --exact-bootstrap.
const exactBootstrapUsage = "resample every item B times even above 20,000 labelled items (default there: the bag of little bootstraps, about 30x faster at 100k)"

// exactMax is the metric option of --exact-bootstrap.
func exactMax(exact bool) int {
	if exact {
		return -1
	}
	return 0
}

// options returns the metric options of the flags.
func (o statFlags) options() metrics.Options {
	opt := defaultMetricOptions()
	opt.Seed = o.seed
	opt.Bootstrap = o.bootstrap
	opt.ExactBootstrapMax = exactMax(o.exact)
	if o.bootstrap <= 0 {
		opt.Bootstrap = -1
	}
	return opt
}

// bindReportFlags declares the report flags on f.
func bindReportFlags(f *pflag.FlagSet, o *reportFlags) {
	o.fs = f
	f.StringVar(&o.junit, "junit", "", "write the gates as JUnit XML to PATH (one test case per question × gate)")
	f.StringVar(&o.markdown, "markdown", "", "write the full report as Markdown (a PR comment) to PATH (- for stdout)")
	f.Float64Var(&o.minAccuracy, "min-accuracy", 0, "gate: every question's accuracy must be at least this (overrides the set's gates)")
	f.Float64Var(&o.maxECE, "max-ece", 0, "gate: every question's ECE must be at most this (overrides the set's gates)")
	f.Float64Var(&o.targetAcc, "target-accuracy", 0.95, "selective accuracy the confidence cut-point must reach (fitted on half the labels, checked on the other)")
	f.StringVar(&o.cutpoints, "cutpoints", "", "write the fitted confidence cut-points as JSON to PATH (an application can load them; an unreached one has cutpoint null and status \"not reached\")")
	bindStatFlags(f, &o.stats)
}

// validate checks the flags before any work is done.
func (o *reportFlags) validate() error {
	if _, err := o.gate(); err != nil {
		return err
	}
	if o.targetAcc <= 0 || o.targetAcc > 1 {
		return fmt.Errorf("--target-accuracy %g: must be in (0, 1]", o.targetAcc)
	}
	return nil
}

// gate returns the flag gates that were set.
func (o *reportFlags) gate() (questionset.Gate, error) {
	var g questionset.Gate
	if o.fs == nil {
		return g, nil
	}
	if o.fs.Changed("min-accuracy") {
		if o.minAccuracy < 0 || o.minAccuracy > 1 {
			return g, fmt.Errorf("--min-accuracy %g: must be between 0 and 1", o.minAccuracy)
		}
		g.MinAccuracy = &o.minAccuracy
	}
	if o.fs.Changed("max-ece") {
		if o.maxECE < 0 || o.maxECE > 1 {
			return g, fmt.Errorf("--max-ece %g: must be between 0 and 1", o.maxECE)
		}
		g.MaxECE = &o.maxECE
	}
	return g, nil
}

// emitReport computes run's full report (metrics, the gates of set — the
// question-set file the run was made from, nil for flag gates only — and
// the flag gates), writes the requested JUnit and Markdown files, prints
// each failed gate to stderr, and returns a failErr (exit 1) when a gate
// failed. Without gates it always passes.
func (a *app) emitReport(ctx context.Context, db *store.DB, run *store.Run, set *questionset.Set, o reportFlags) error {
	rep, err := loadReport(ctx, db, run, set, o)
	if err != nil {
		return err
	}
	return a.writeReport(rep, o)
}

// loadReport computes run's full report with the flags' metric options
// (--target-accuracy) and gates: once per command, shared by the printed
// summary and the report files.
func loadReport(ctx context.Context, db *store.DB, run *store.Run, set *questionset.Set, o reportFlags) (*report.RunReport, error) {
	g, err := o.gate()
	if err != nil {
		return nil, usageErr(err)
	}
	opt := o.stats.options()
	if o.fs == nil {
		opt = defaultMetricOptions()
	}
	if o.targetAcc <= 0 || o.targetAcc > 1 {
		return nil, usageErr(fmt.Errorf("--target-accuracy %g: must be in (0, 1]", o.targetAcc))
	}
	opt.TargetAccuracy = o.targetAcc
	return loadRunReportIn(ctx, db, run, opt, set, g, evalPassBytes)
}

// evalPassBytes is eval's pass bound (workbench.ViewConfig.PassBytes): a
// question a pass, so computing its report at the end of a large run holds
// one question's metric columns, not all of them (at 100,000 items of 8
// questions: 57 MB peak instead of 123).
const evalPassBytes = 1

// writeReport writes the report files o asks for, prints each failed gate
// to stderr and returns a failErr (exit 1) when a gate failed.
func (a *app) writeReport(rep *report.RunReport, o reportFlags) error {
	run := rep.Run
	if o.cutpoints != "" {
		var b bytes.Buffer
		cs := report.CutpointFile(rep)
		if err := report.WriteJSON(&b, report.CutpointFileAll(rep)); err != nil {
			return err
		}
		if err := writeReportFile(o.cutpoints, b.Bytes()); err != nil {
			return err
		}
		for _, q := range rep.Questions {
			if q.Selective.Refused != "" {
				fmt.Fprintf(a.stderr, "jevlab: no cut-point for %s: %s\n", q.ID, q.Selective.Refused)
			}
		}
		for _, c := range cs {
			if !c.Reached {
				fmt.Fprintf(a.stderr, "jevlab: cut-point for %s NOT REACHED (written with cutpoint null): %s\n", c.Question, c.Warning)
			}
		}
		for _, c := range report.CostCutpointFile(rep) {
			if c.Status != "checked" {
				fmt.Fprintf(a.stderr, "jevlab: cost thresholds for %s %s: %s\n", c.Question, strings.ToUpper(c.Status), c.Warning)
			}
		}
		for _, c := range report.ChoiceCostCutpointFile(rep) {
			if c.Status != "checked" {
				fmt.Fprintf(a.stderr, "jevlab: cost cut-point for %s %s: %s\n", c.Question, strings.ToUpper(c.Status), c.Warning)
			}
		}
	}
	if o.junit != "" {
		var b bytes.Buffer
		if err := report.WriteJUnit(&b, rep); err != nil {
			return err
		}
		if err := writeReportFile(o.junit, b.Bytes()); err != nil {
			return err
		}
	}
	if o.markdown != "" {
		var b bytes.Buffer
		if err := report.WriteMarkdown(&b, rep); err != nil {
			return err
		}
		if o.markdown == "-" {
			if _, err := a.stdout.Write(b.Bytes()); err != nil {
				return err
			}
		} else if err := writeReportFile(o.markdown, b.Bytes()); err != nil {
			return err
		}
	}
	failed := 0
	for _, gr := range rep.Gates {
		if !gr.Passed {
			failed++
			fmt.Fprintf(a.stderr, "jevlab: gate failed: question %s %s: %s (%s)\n", gr.Question, gr.Gate, gr.Msg, gr.Source)
		}
	}
	if failed > 0 {
		return failErr(fmt.Errorf("%d of %d gates failed for run %s", failed, len(rep.Gates), run.ID))
	}
	return nil
}

// writeReportFile writes b to path atomically (temp file + rename).
func writeReportFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".jevlab-report-*")
	if err != nil {
		return usageErr(fmt.Errorf("write report %s: %w", path, err))
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

// showMarkdown prints run's full report as Markdown (show --markdown).
// Stored snapshots carry no gates, so only metrics are shown.
func (a *app) showMarkdown(ctx context.Context, db *store.DB, run *store.Run, opt metrics.Options) error {
	rep, err := loadRunReport(ctx, db, run, opt, nil, questionset.Gate{})
	if err != nil {
		return err
	}
	return report.WriteMarkdown(a.stdout, rep)
}

// summaryBuild names this build for stored run summaries
// (workbench.ViewConfig.Build): its version and commit, or "" — no stored
// summaries — when the commit is unknown or the tree was modified, since
// then two builds with different metrics could share a name.
func summaryBuild() string {
	b := readBuildInfo()
	if b.Commit == "" || strings.Contains(b.Commit, "dirty") || strings.Contains(b.Version, "dirty") {
		return ""
	}
	return b.Version + " " + b.Commit
}

// loadRunReport computes a stored run's report through the workbench's
// run view — the same use case the evaluate screen calls — with opt and
// the gates of gates (nil: the snapshot's) plus flags.
func loadRunReport(ctx context.Context, db *store.DB, run *store.Run, opt metrics.Options, gates *questionset.Set, flags questionset.Gate) (*report.RunReport, error) {
	return loadRunReportIn(ctx, db, run, opt, gates, flags, 0)
}

// loadRunReportIn is loadRunReport with a pass bound (0: the default).
func loadRunReportIn(ctx context.Context, db *store.DB, run *store.Run, opt metrics.Options, gates *questionset.Set, flags questionset.Gate, passBytes int) (*report.RunReport, error) {
	v, err := workbench.LoadStoredRun(ctx, db, run, workbench.ViewConfig{Metrics: &opt, Gates: gates, Flags: flags, ReportOnly: true,
		Build: summaryBuild(), PassBytes: passBytes})
	if err != nil {
		return nil, err
	}
	return v.Report, nil
}
