package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/probe"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/store"
)

type probeOptions struct {
	kinds       string
	data        string
	base        string
	resume      string
	dryRun      bool
	maxCost     float64
	seed        uint64
	repeats     int
	questions   []string
	params      probe.Params
	keep        string
	junit       string
	asJSON      bool
	idField     string
	stateField  string
	stateFields string
	labels      []string
}

func newProbeCmd(a *app) *cobra.Command {
	var o probeOptions
	cmd := &cobra.Command{
		Use:   "probe FILE --kind K[,K…]",
		Short: "Measure how robust a question set is: option order, repeats, distractors, negation, injection, harmless edits",
		Long: `probe asks the set's dataset (or --data) again in a changed way and measures how
the answers move against a base run (--base RUN, else the newest finished run of
this set and dataset, else one is asked first). Every probe is a stored run whose
settings record the kind, the base run and the seed, so runs, show and compare see it.

Kinds (--kind, comma-separated):
  shuffle         choice options in a seeded order per item (score levels never);
                  share of decisions that change, mean |Δp| per option, position lift
  repeat          the same request again, fresh (--repeats N); offline, several
                  recordings given with --fixtures, one repeat each (pairwise figures)
  distractor      an extra option that fits no item (--distractor-label, --distractor-text)
  negation        a noul's negation: wording; P(X) + P(¬X) against 1
  noul-vs-choice  one noul per option of a choice (--noul-template)
  injection       the state carries an instruction to answer otherwise (--injection)
  perturb         harmless state edits (space, case, field order, --sentence);
                  --keep PATH writes each flip's smallest edit as a dataset row

Shares carry Wilson 95% intervals, means a bootstrap over items (seed 1). Gates in
the set (gates: {QUESTION: {max_shuffle_flip_rate: 0.05, max_negation_gap: 0.1}})
are checked; a failing gate exits 1 and is a failure in --junit. --dry-run prints
the cost and sends nothing; --max-cost caps the spend of every run the probe
starts; --resume RUN continues an interrupted probe run.`,
		Example: `  jevlab probe triage.yaml --kind shuffle,negation
  jevlab probe fixtures/demo-triage/questions.yaml --kind repeat --offline \
      --fixtures recorded.jsonl --fixtures recorded-run2.jsonl --fixtures recorded-shuffled.jsonl
  jevlab probe triage.yaml --kind perturb --sentence "Thanks!" --keep regressions.jsonl
  jevlab probe triage.yaml --kind injection --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.maxCost < 0 {
				return usageErr(fmt.Errorf("--max-cost %g: must not be negative", o.maxCost))
			}
			if o.repeats < 2 {
				return usageErr(fmt.Errorf("--repeats %d: the repeat probe needs at least 2", o.repeats))
			}
			return a.probe(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kinds, "kind", "", "probe kinds, comma-separated: shuffle, repeat, distractor, negation, noul-vs-choice, injection, perturb")
	f.StringVar(&o.data, "data", "", "dataset (JSON Lines or CSV); default: the set's dataset:")
	f.StringVar(&o.base, "base", "", "the run to measure against: id, prefix, latest (default: newest finished run of this set and dataset)")
	f.StringVar(&o.resume, "resume", "", "continue an interrupted probe run (one --kind)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what the probe would cost without calling out")
	f.Float64Var(&o.maxCost, "max-cost", 0, "stop before the probe's cost would exceed USD (0 = no cap)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the shuffle's option orders (recorded with the run)")
	f.IntVar(&o.repeats, "repeats", 2, "fresh repeats the online repeat probe asks")
	f.StringArrayVar(&o.questions, "question", nil, "probe only this question id; repeatable")
	f.StringVar(&o.params.DistractorLabel, "distractor-label", "", "label of the distractor option (default "+probe.DefaultDistractorLabel+")")
	f.StringVar(&o.params.DistractorText, "distractor-text", "", "description of the distractor option")
	f.StringVar(&o.params.InjectionTemplate, "injection", "", `injected sentence; {answer} is the answer it asks for (default `+probe.DefaultInjectionTemplate+`)`)
	f.StringVar(&o.params.NoulTemplate, "noul-template", "", "noul-vs-choice wording; {instructions}, {option}, {text} (default "+probe.DefaultNoulTemplate+")")
	f.StringVar(&o.params.Sentence, "sentence", "", "perturb: a trailing sentence that should not matter")
	f.StringVar(&o.keep, "keep", "", "perturb: write each flip's smallest edit as a dataset row (JSON Lines) to PATH")
	f.StringVar(&o.junit, "junit", "", "write the probe gates as JUnit XML to PATH")
	f.BoolVar(&o.asJSON, "json", false, "print the results as JSON")
	bindDataFlags(f, &o.idField, &o.stateField, &o.stateFields, &o.labels)
	return cmd
}

func (a *app) probe(ctx context.Context, path string, o probeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	kinds, err := probe.ParseKinds(o.kinds)
	if err != nil {
		return usageErr(err)
	}
	if o.resume != "" && len(kinds) != 1 {
		return usageErr(errors.New("--resume continues one probe run: give the one --kind it was"))
	}
	set, err := a.loadSet(path)
	if err != nil {
		return usageErr(err)
	}
	if a.model != "" {
		set.Model = a.model
	}
	dataPath := o.data
	if dataPath == "" {
		if set.Dataset == "" {
			return usageErr(fmt.Errorf("%s names no dataset: pass --data PATH or add dataset: to the file", path))
		}
		np, err := set.DatasetPath(a.allowPaths)
		if err != nil {
			return usageErr(err)
		}
		dataPath = np.Path
	}
	opt, err := flagDataOptions(o.idField, o.stateField, o.stateFields, o.labels)
	if err != nil {
		return usageErr(err)
	}
	opt = a.dataOptions(opt)
	if o.data == "" {
		opt = opt.ForSet(set)
	}
	opt.KeepStale = true
	items, err := dataset.Load(dataPath, opt, set)
	if err != nil {
		return usageErr(err)
	}
	items, stale := dataset.ResolveLabels(set, items, nil)
	if len(stale) > 0 {
		fmt.Fprintf(a.stderr, "jevlab: %s: %s\n", dataPath, workbench.StaleSummary(stale, 10))
	}
	db, err := a.db()
	if err != nil {
		return usageErr(fmt.Errorf("%w (choose another with --db or $JEVLAB_DB)", err))
	}
	tmpl := a.runTemplate(db, nil, "")
	tmpl.MaxCostUSD = o.maxCost
	base := tmpl.Config(workbench.RunSpec{Set: set, Items: items, DatasetPath: dataPath})
	cfgFor := func(k probe.Kind) probe.Config {
		return probe.Config{Set: set, Kind: k, Run: base, Base: o.base, Resume: o.resume, Seed: o.seed,
			Questions: o.questions, Params: o.params, Repeats: o.repeats}
	}
	offlineRepeat := a.offline && len(a.fixtures) >= 2

	if o.dryRun {
		total := 0.0
		for _, k := range kinds {
			c := cfgFor(k)
			if k == probe.Repeat && offlineRepeat {
				c.Recordings = make([]probe.Recording, len(a.fixtures))
			}
			est, err := probe.DryRun(ctx, c)
			if err != nil {
				return usageErr(err)
			}
			total += est.CostUSD
			a.printProbeEstimate(est)
		}
		fmt.Fprintf(a.stdout, "total ~$%.4f (approximate; cached answers cost nothing)\n", total)
		if o.maxCost > 0 && total > o.maxCost {
			fmt.Fprintf(a.stdout, "  --max-cost $%.4f: the estimate is ABOVE the cap; the probe would stop there\n", o.maxCost)
		}
		return nil
	}

	p, mode, err := a.provider(ctx, set)
	if err != nil {
		return err
	}
	tmpl = a.runTemplate(db, p, mode)
	base.Provider, base.ProviderKind, base.BaseURL = tmpl.Provider, tmpl.ProviderKind, tmpl.BaseURL
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	var results []*probe.Result
	var gates []report.GateResult
	var lastRun string
	for _, k := range kinds {
		c := cfgFor(k)
		c.Run = base
		if k == probe.Repeat {
			if offlineRepeat {
				if c.Recordings, err = a.recordings(); err != nil {
					return err
				}
			} else if mode == ModeOffline {
				return usageErr(fmt.Errorf("probe repeat asks System One again for fresh answers, which --offline cannot; offline, give two or more recordings of the same requests with --fixtures (each file one repeat)"))
			}
		}
		progress := make(chan runner.Progress, 1)
		shown := make(chan struct{})
		go func() { defer close(shown); a.showProgress(progress) }()
		c.Progress = func(pr runner.Progress) {
			select {
			case progress <- pr:
			default:
			}
		}
		res, err := probe.Run(ctx, c)
		close(progress)
		<-shown
		if err != nil {
			var inputErr *runner.InputError
			if errors.As(err, &inputErr) {
				return usageErr(err)
			}
			if errors.Is(err, runner.ErrInterrupted) {
				fmt.Fprintf(a.stderr, "jevlab: probe %s: %v\n  resume with: jevlab probe %s --kind %s --resume latest\n", k, err, shellQuote(path), k)
				return failErr(errors.New(""))
			}
			return failErr(fmt.Errorf("probe %s: %w", k, err))
		}
		results = append(results, res)
		gates = append(gates, res.Gates...)
		lastRun = res.Runs[len(res.Runs)-1]
		if k == probe.Perturb && o.keep != "" {
			if err := writeKept(o.keep, res.Kept); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "jevlab: wrote %d regression row(s) to %s (lint them with: jevlab lint %s --data %s)\n", len(res.Kept), o.keep, shellQuote(path), shellQuote(o.keep))
		}
	}
	if o.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			renderProbe(a.stdout, r)
		}
	}
	if o.junit != "" {
		run, err := db.Run(context.WithoutCancel(ctx), lastRun)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := report.WriteJUnit(&b, &report.RunReport{Run: run, Gates: gates}); err != nil {
			return err
		}
		if err := writeReportFile(o.junit, b.Bytes()); err != nil {
			return err
		}
	}
	failed := 0
	for _, g := range gates {
		if !g.Passed {
			failed++
			fmt.Fprintf(a.stderr, "jevlab: gate failed: question %s %s: %s\n", g.Question, g.Gate, g.Msg)
		}
	}
	if failed > 0 {
		return failErr(fmt.Errorf("%d of %d probe gates failed", failed, len(gates)))
	}
	return nil
}

// recordings opens each --fixtures file as its own offline answerer: one
// repeat each.
func (a *app) recordings() ([]probe.Recording, error) {
	var out []probe.Recording
	for _, f := range a.fixtures {
		c, err := fixtures.NewCache(fixtures.CacheConfig{Files: []string{f}, MaxLineBytes: a.maxFixtureLine})
		if err != nil {
			return nil, usageErr(err)
		}
		if err := c.Load(context.Background()); err != nil {
			c.Close()
			return nil, usageErr(err)
		}
		for _, w := range c.Warnings() {
			fmt.Fprintln(a.stderr, "jevlab: warning:", w)
		}
		a.onClose(c.Close)
		out = append(out, probe.Recording{Name: f, Provider: c})
	}
	return out, nil
}

func (a *app) printProbeEstimate(e *probe.Estimate) {
	w := a.stdout
	fmt.Fprintf(w, "probe %s (dry run, nothing sent):", e.Kind)
	if e.BaseRun != "" {
		fmt.Fprintf(w, " base run %s", e.BaseRun)
	} else if e.BaseCost != nil {
		fmt.Fprintf(w, " no base run yet: %d requests first (~$%.4f)", e.BaseCost.Requests, e.BaseCost.CostUSD)
	}
	if pe := e.Probe; pe != nil {
		fmt.Fprintf(w, "; probe %d requests, ~%s input tokens (%s), ~$%.4f\n", pe.Requests, groupDigits(pe.InputTokens), pe.Basis, pe.CostUSD)
	} else {
		fmt.Fprintln(w)
	}
}

// renderProbe prints one probe's result: a stability line per question.
func renderProbe(w interface{ Write([]byte) (int, error) }, r *probe.Result) {
	fmt.Fprintf(w, "probe %s  runs %s", r.Kind, strings.Join(r.Runs, ", "))
	if r.BaseRun != "" && r.BaseRun != r.Runs[0] {
		fmt.Fprintf(w, "  base %s", r.BaseRun)
	}
	if r.Kind == probe.Shuffle {
		fmt.Fprintf(w, "  seed %d", r.Seed)
	}
	fmt.Fprintln(w)
	for i := range r.Questions {
		q := &r.Questions[i]
		fmt.Fprintf(w, "  %-16s %s\n", esc(q.Question), q.Line())
		for _, pc := range q.Pairs {
			fmt.Fprintf(w, "      %s vs %s: %d of %d decisions, %d of %d answers changed\n", esc(pc.A), esc(pc.B), pc.Decisions, pc.N, pc.Answers, pc.N)
		}
		for _, wi := range q.Worst {
			fmt.Fprintf(w, "      worst %s  %.3f  %s\n", esc(wi.Item), wi.Value, esc(wi.Note))
		}
	}
	for _, g := range r.Gates {
		mark := "PASS"
		if !g.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  gate %s %s %s: %s\n", mark, esc(g.Question), g.Gate, esc(g.Msg))
	}
}

// writeKept writes the kept perturbations as JSON Lines.
func writeKept(path string, rows []probe.Row) error {
	var b bytes.Buffer
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return writeReportFile(path, b.Bytes())
}

// runLabel is a run's name with its probe kind, for runs and show.
func runLabel(r *store.Run) string {
	l, ok := probe.LinkOf(r)
	if !ok {
		return r.Name
	}
	if r.Name == "" || strings.HasPrefix(r.Name, "probe ") {
		return l.Label()
	}
	return r.Name + " [" + l.Label() + "]"
}
