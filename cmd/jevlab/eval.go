package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/bars"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// version is reported with every run; set at build time with
// -ldflags "-X main.version=…".
var version = "dev"

type evalOptions struct {
	data        string
	repeat      int
	resume      string
	retry       bool // --retry-errors
	name        string
	dryRun      bool
	maxCost     float64
	asJSON      bool
	idField     string
	stateField  string
	stateFields string
	labels      []string
	variants    []string    // --variants: all, Q or Q:v2,v3 (repeatable)
	split       string      // --split dev|test
	splitRatio  float64     // --split-ratio: the test share of a new split
	splitSeed   uint64      // --split-seed: the seed of a new split
	report      reportFlags // --junit, --markdown, gates (report.go)
}

func newEvalCmd(a *app) *cobra.Command {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval FILE",
		Short: "Evaluate a question set over a labelled dataset and store the run",
		Long: `eval asks every dataset item (all questions in one request) and stores each
answer in the database as it completes, then prints per question n, accuracy,
ECE, Brier and errors, and the run id. A question with min_confidence (a
caller-side setting, never sent) also reports the share of answers routed to
uncertain and the accuracy of the rest.

The dataset is --data, else the set's dataset: (relative to the set file).
Answers come from recorded fixtures and past runs where they match (--fresh
skips them; --offline never calls out). Ctrl-C stops sending, keeps what
finished and marks the run interrupted; --resume RUN continues it exactly
where it stopped (same set and dataset required), with every setting it
started with (--data, --model, --fixtures, --fresh, --offline, --repeat,
--max-cost, --concurrency, --rps, --timeout, the field mapping): give none
of them again. --concurrency, --rps, --timeout, --max-cost, --data and
--fixtures given again override (with a line saying so); the others cannot
change on a resume. FILE may be left out on a resume (the run's own set
file is used). --retry-errors asks again the items that failed. A run whose
process died reads as interrupted. --repeat N asks every item
N times, bypassing the cache after the first, to measure each question's own
noise. --dry-run estimates tokens and cost without calling out; --max-cost
stops before a request would take the run's total cost above the cap.

--variants asks the set's variants (a question's variants: {v2: {…}})
beside their questions in the same request, each under its derived id
(queue~v2), and reports each paired with its question on the same items:
accuracy, Brier and ECE deltas with paired bootstrap intervals, exact
McNemar (Holm across a question's variants), flips and the label-free
change. --variants alone (or all) asks every variant; --variants queue
asks queue's; --variants queue:v2,v3 names them (repeat the flag for more
questions). --dry-run says what the variants add to the cost.`,
		Example: `  jevlab eval --offline fixtures/banking77/questions.yaml
  jevlab eval triage.yaml --data tickets.jsonl --name baseline
  jevlab eval triage.yaml --dry-run
  jevlab eval triage.yaml --resume latest --max-cost 2.50
  jevlab eval --resume latest --retry-errors
  jevlab eval triage.yaml --variants
  jevlab eval triage.yaml --variants queue:v2,v3`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				file, err := variantsArgs(cmd, args, &o.variants)
				if err != nil {
					return usageErr(err)
				}
				args = []string{file}
			}
			if len(args) == 0 && o.resume == "" {
				return usageErr(errors.New("eval needs a question-set FILE (or --resume RUN to continue a stored run)"))
			}
			if o.retry && o.resume == "" {
				return usageErr(errors.New("--retry-errors asks again the failed items of a stored run: use it with --resume RUN"))
			}
			if o.repeat < 1 {
				return usageErr(fmt.Errorf("--repeat %d: must be at least 1", o.repeat))
			}
			if o.maxCost < 0 {
				return usageErr(fmt.Errorf("--max-cost %g: must not be negative", o.maxCost))
			}
			if err := o.report.validate(); err != nil {
				return usageErr(err)
			}
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			return a.eval(cmd.Context(), path, o, cmd.Flags().Changed)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "dataset (JSON Lines or CSV); default: the set's dataset:")
	f.IntVar(&o.repeat, "repeat", 1, "ask every item N times (fresh after the first) to measure noise")
	f.StringVar(&o.resume, "resume", "", "continue a stored run with the settings it started with: id, unique prefix, latest or latest~N")
	f.BoolVar(&o.retry, "retry-errors", false, "with --resume: ask again the items that failed")
	f.StringVar(&o.name, "name", "", "a name for the run (shown by jevlab runs)")
	f.BoolVar(&o.dryRun, "dry-run", false, "estimate tokens and cost without calling out")
	f.Float64Var(&o.maxCost, "max-cost", 0, "stop before the run's cost would exceed USD (0 = no cap)")
	f.BoolVar(&o.asJSON, "json", false, "print the run and its per-question metrics as JSON")
	bindReportFlags(f, &o.report)
	bindDataFlags(f, &o.idField, &o.stateField, &o.stateFields, &o.labels)
	bindVariantsFlag(f, &o.variants)
	f.StringVar(&o.split, "split", "", "evaluate only the dev or the test items of the set's hold-out split (written into the set on first use; test runs are counted in the ledger)")
	f.Float64Var(&o.splitRatio, "split-ratio", questionset.DefaultTestShare, "share of items held out for test when the set has no split yet")
	f.Uint64Var(&o.splitSeed, "split-seed", 1, "seed of the hash that splits the items when the set has no split yet")
	return cmd
}

// eval runs (or, with o.resume, continues) an evaluation. changed says
// which flags were given on the command line; a resume restores the
// others from the run.
func (a *app) eval(ctx context.Context, path string, o evalOptions, changed func(flag string) bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if changed == nil {
		changed = func(string) bool { return false }
	}
	var resumed *store.Run
	if o.resume != "" {
		db, err := a.db()
		if err != nil {
			return usageErr(fmt.Errorf("%w (choose another with --db or $JEVLAB_DB)", err))
		}
		run, stored, err := runner.LoadResume(ctx, db, o.resume)
		if err != nil {
			return usageErr(err)
		}
		if stored.Set == "" {
			stored.Set = run.SetPath // a run stored before settings were
		}
		if stored.Data == "" {
			stored.Data = absPath(run.DatasetPath)
		}
		merged, notes, err := stored.Merge(a.runSettings(path, o.data, o), changed)
		if err != nil {
			return usageErr(fmt.Errorf("resume %s: %w", run.ID, err))
		}
		for _, n := range notes {
			fmt.Fprintf(a.stderr, "jevlab: resume %s: %s\n", run.ID, n)
		}
		a.applySettings(merged, &o)
		if merged.Record != "" && !changed("record") {
			// Named, since the path comes from the database, not this
			// command line.
			fmt.Fprintf(a.stderr, "jevlab: resume %s: recording new answers to %s, as the run did (--record PATH to choose another)\n", run.ID, merged.Record)
		}
		if path == "" {
			if merged.Set == "" {
				return usageErr(fmt.Errorf("resume %s: the run does not record its question-set file; give it: jevlab eval FILE --resume %s", run.ID, run.ID))
			}
			path = merged.Set
		}
		if o.split == "" {
			o.split = stored.Split
		}
		if len(o.variants) == 0 {
			// The variants the run asked, unless --variants says otherwise
			// (the runner refuses a resume that asks others).
			for _, id := range stored.Variants {
				if q, n, ok := questionset.SplitVariantID(id); ok {
					o.variants = append(o.variants, q+":"+n)
				}
			}
		}
		o.resume, resumed = run.ID, run
	}
	set, err := a.loadSet(path)
	if err != nil {
		return usageErr(err)
	}
	withImages, err := a.evalJev114(set, path) // box.go
	if err != nil {
		return usageErr(err)
	}
	if err := a.ensureSplit(set, path, o, changed); err != nil {
		return err
	}
	if a.model != "" {
		set.Model = a.model
	}
	inSplit := func(it dataset.Item) bool { return o.split == "" || set.Split.Of(it.ID) == o.split }
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
		opt = opt.ForSet(set) // the set's dataset: mapping
	}
	// Read the whole file once up front so a bad row is an input error
	// (exit 2) before anything is sent. Labels are resolved against the
	// set as it is now, by text: a label that names no option any more (an
	// option renamed or deleted in the set) is named and excluded, the
	// same sentence lint and the workbench print.
	opt.KeepStale = true
	var stale []dataset.StaleLabel
	if err := dataset.Stream(dataPath, opt, set, func(it dataset.Item) error {
		if !inSplit(it) {
			return nil
		}
		_, s := dataset.ResolveLabels(set, []dataset.Item{it}, nil)
		stale = append(stale, s...)
		return nil
	}); err != nil {
		return usageErr(err)
	}
	if len(stale) > 0 {
		fmt.Fprintf(a.stderr, "jevlab: %s: %s\n", dataPath, workbench.StaleSummary(stale, 10))
	}
	source := func(fn func(dataset.Item) error) error {
		return dataset.Stream(dataPath, opt, set, func(it dataset.Item) error {
			if !inSplit(it) {
				return nil
			}
			items, _ := dataset.ResolveLabels(set, []dataset.Item{it}, nil)
			return fn(items[0])
		})
	}

	db, err := a.db()
	if err != nil {
		return usageErr(fmt.Errorf("%w (choose another with --db or $JEVLAB_DB)", err))
	}
	// The run template is the one the workbench's runs use too; the
	// settings it records are what a resume restores.
	tmpl := a.runTemplate(db, nil, "")
	tmpl.Repeat, tmpl.MaxCostUSD = o.repeat, o.maxCost
	tmpl.Settings = a.runSettings(path, dataPath, o)
	variants, err := set.SelectVariants(o.variants)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", path, err))
	}
	cfg := tmpl.Config(workbench.RunSpec{Set: set, Source: source, DatasetPath: dataPath, Name: o.name, Resume: o.resume, RetryErrors: o.retry, Variants: variants, Split: o.split})
	if withImages != nil {
		cfg.Transform = withImages
	}
	if o.dryRun {
		est, err := runner.DryRun(ctx, cfg)
		if err != nil {
			return usageErr(err)
		}
		return a.printEstimate(est, o)
	}

	p, mode, err := a.provider(ctx, set)
	if err != nil {
		return err
	}
	if mode == ModeOffline && cfg.Repeat > 1 {
		return usageErr(fmt.Errorf("--repeat %d asks System One again for fresh answers, which --offline (or a missing $%s) cannot; drop --repeat or go online", cfg.Repeat, a.keyEnv))
	}
	tmpl = a.runTemplate(db, p, mode)
	cfg.Provider, cfg.ProviderKind, cfg.BaseURL = tmpl.Provider, tmpl.ProviderKind, tmpl.BaseURL
	// The key goes only where the user points it (--base-url or
	// $TYPESAFE_BASE_URL), never to a URL read from the database; but a
	// resume must not silently ask another server than the run did.
	if resumed != nil && resumed.BaseURL != "" && cfg.BaseURL != "" && resumed.BaseURL != cfg.BaseURL {
		if !changed("base-url") {
			return usageErr(fmt.Errorf("resume %s: the run asked %s, and this resume would ask %s; pass --base-url %s to resume against the same server (or --base-url %s to switch on purpose)",
				resumed.ID, resumed.BaseURL, cfg.BaseURL, shellQuote(resumed.BaseURL), shellQuote(cfg.BaseURL)))
		}
		fmt.Fprintf(a.stderr, "jevlab: resume %s: --base-url %s overrides the run's %s\n", resumed.ID, cfg.BaseURL, resumed.BaseURL)
	}

	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	runDone := make(chan struct{})
	defer close(runDone)
	go func() {
		select {
		case <-ctx.Done():
			// A second Ctrl-C quits at once.
			stopSignals()
			fmt.Fprintln(a.stderr, "\njevlab: interrupted: keeping what finished, waiting briefly for requests in flight (Ctrl-C again to quit now)")
		case <-runDone:
		}
	}()

	progress := make(chan runner.Progress, 16)
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		a.showProgress(progress)
	}()
	runID, runErr := runner.Run(ctx, cfg, progress)
	<-shown

	var inputErr *runner.InputError
	if errors.As(runErr, &inputErr) {
		return usageErr(runErr)
	}
	if runID == "" {
		if runErr != nil {
			return failErr(runErr)
		}
		return nil
	}
	run, err := db.Run(context.WithoutCancel(ctx), runID)
	if err != nil {
		return err
	}
	// The metrics are computed once: the printed summary and the report
	// files (--junit, --markdown, --cutpoints, gates) share them.
	full, err := loadReport(context.WithoutCancel(ctx), db, run, set, o.report)
	if err != nil {
		return err
	}
	rep, err := summaryOf(context.WithoutCancel(ctx), db, full)
	if err != nil {
		return err
	}
	rep.Resume = a.resumeCommand(path, runID, changed)
	if o.asJSON {
		out := struct {
			Mode Mode `json:"mode"`
			*runReport
		}{mode, rep}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		renderRunReport(a.stdout, rep)
	}
	if runErr != nil {
		if errors.Is(runErr, runner.ErrInterrupted) {
			fmt.Fprintf(a.stderr, "jevlab: %v\n  resume with: %s\n", runErr, a.resumeCommand(path, runID, changed))
			return failErr(errors.New(""))
		}
		if provider.KindOf(runErr) == provider.KindAuth {
			return usageErr(fmt.Errorf("%w (check $%s)", runErr, a.keyEnv))
		}
		if provider.KindOf(runErr) == provider.KindLocal || store.IsCorrupt(runErr) || errors.As(runErr, new(*runner.LostError)) {
			fmt.Fprintf(a.stderr, "jevlab: %v\n  the run stopped (marked failed where the database still took it); fix the cause, then resume with: %s\n", runErr, a.resumeCommand(path, runID, changed))
			return failErr(errors.New(""))
		}
		return failErr(runErr)
	}
	if run.Done > 0 && run.Errors == run.Done {
		return failErr(fmt.Errorf("every item of run %s failed; see jevlab show %s", runID, runID))
	}
	if !o.asJSON {
		fmt.Fprintf(a.stdout, "\nrun %s stored in %s (jevlab show %s)\n", runID, db.Path(), runID)
	}
	return a.writeReport(full, o.report)
}

// runSettings are the settings a run records, from the flags: paths
// absolute, so a resume finds them from any directory.
func (a *app) runSettings(setPath, dataPath string, o evalOptions) runner.Settings {
	s := runner.Settings{
		Set: absPath(setPath), Data: absPath(dataPath), IDField: o.idField, StateField: o.stateField, StateFields: o.stateFields, Labels: o.labels,
		Model: a.model, Fresh: a.fresh, Offline: a.offline, RPS: a.rps, Timeout: runner.Duration(a.timeout),
		Repeat: o.repeat, Concurrency: a.concurrency, MaxCostUSD: o.maxCost,
	}
	for _, f := range a.fixtures {
		s.Fixtures = append(s.Fixtures, absPath(f))
	}
	for _, d := range a.allowPaths {
		s.AllowPaths = append(s.AllowPaths, absPath(d))
	}
	s.Record = absPath(a.record)
	return s
}

// applySettings puts a resumed run's settings back into the flags.
func (a *app) applySettings(s runner.Settings, o *evalOptions) {
	a.model, a.fresh, a.offline, a.rps, a.timeout = s.Model, s.Fresh, s.Offline, s.RPS, time.Duration(s.Timeout)
	a.fixtures, a.record, a.allowPaths = s.Fixtures, s.Record, s.AllowPaths
	if s.Concurrency > 0 {
		a.concurrency = s.Concurrency
	}
	if a.timeout <= 0 {
		a.timeout = 30 * time.Second
	}
	o.data, o.idField, o.stateField, o.stateFields, o.labels = s.Data, s.IDField, s.StateField, s.StateFields, s.Labels
	o.repeat, o.maxCost = max(s.Repeat, 1), s.MaxCostUSD
}

// resumeCommand is the command line that resumes runID: the set file as
// given, and the flags a resume cannot restore from the run (where the
// database is, which server and key to use: those the run must not choose).
func (a *app) resumeCommand(setPath, runID string, changed func(string) bool) string {
	parts := []string{"jevlab", "eval", shellQuote(setPath), "--resume", runID}
	if changed("db") {
		parts = append(parts, "--db", shellQuote(a.dbPath))
	}
	if changed("base-url") {
		parts = append(parts, "--base-url", shellQuote(a.baseURL))
	}
	if changed("key-env") {
		parts = append(parts, "--key-env", shellQuote(a.keyEnv))
	}
	return strings.Join(parts, " ")
}

// ensureSplit checks --split and, the first time a set is split, writes
// its split (seed, test share) into the set file, so it never moves.
func (a *app) ensureSplit(set *questionset.Set, path string, o evalOptions, changed func(string) bool) error {
	if o.split == "" {
		if changed("split-ratio") || changed("split-seed") {
			return usageErr(errors.New("--split-ratio and --split-seed shape a new split: use them with --split dev|test"))
		}
		return nil
	}
	if o.split != questionset.SplitDev && o.split != questionset.SplitTest {
		return usageErr(fmt.Errorf("--split %q: want dev or test", o.split))
	}
	sp := questionset.SplitSpec{Seed: o.splitSeed, Test: o.splitRatio}
	if set.Split != nil {
		if changed("split-ratio") || changed("split-seed") {
			if err := set.SetSplit(sp); err != nil {
				return usageErr(fmt.Errorf("%s: %w", path, err))
			}
		}
		return nil
	}
	if err := set.SetSplit(sp); err != nil {
		return usageErr(fmt.Errorf("--split-ratio: %w", err))
	}
	if err := set.Save(path); err != nil {
		return usageErr(fmt.Errorf("write the split into %s: %w", path, err))
	}
	fmt.Fprintf(a.stderr, "jevlab: %s: split the items into dev and test (%s) and wrote split: into the file; it never moves (each item goes by its id)\n", path, set.Split)
	return nil
}

// absPath makes p absolute ("" stays "").
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// printEstimate prints a dry run's estimate.
func (a *app) printEstimate(est *runner.Estimate, o evalOptions) error {
	if o.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			DryRun bool `json:"dry_run"`
			*runner.Estimate
			MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
		}{true, est, o.maxCost})
	}
	w := a.stdout
	fmt.Fprintf(w, "dry run (nothing sent): %d items × %d repeat = %d requests", est.Items, est.Repeat, est.Requests)
	if est.Stored > 0 {
		fmt.Fprintf(w, ", %d already stored", est.Stored)
	}
	fmt.Fprintf(w, "\n  request bodies  %s bytes\n", groupDigits(est.RequestBytes))
	fmt.Fprintf(w, "  input tokens    ~%s (approximate, from %s)\n", groupDigits(est.InputTokens), est.Basis)
	fmt.Fprintf(w, "  cost            ~$%.4f (approximate; cached answers cost nothing)\n", est.CostUSD)
	if est.Variants > 0 {
		fmt.Fprintf(w, "  of which %d variant(s): %s bytes, ~%s input tokens, ~$%.4f (asked in the same requests: no extra request)\n",
			est.Variants, groupDigits(est.VariantRequestBytes), groupDigits(est.VariantInputTokens), est.VariantCostUSD)
	}
	if o.maxCost > 0 {
		verdict := "within"
		if est.CostUSD > o.maxCost {
			verdict = "ABOVE"
		}
		fmt.Fprintf(w, "  --max-cost      $%.4f: the estimate is %s the cap\n", o.maxCost, verdict)
	}
	return nil
}

// showProgress draws progress on stderr: an updating bar on a terminal, a
// plain line every few seconds otherwise.
func (a *app) showProgress(ch <-chan runner.Progress) {
	f, ok := a.ttyErr.(*os.File)
	tty := ok && isatty.IsTerminal(f.Fd())
	var last runner.Progress
	var lastDraw time.Time
	period := 2 * time.Second
	if tty {
		period = 100 * time.Millisecond
	}
	for p := range ch {
		last = p
		if !p.Final && time.Since(lastDraw) < period {
			continue
		}
		lastDraw = time.Now()
		if tty {
			// The bar draws with \r and ESC [K itself; the line holds
			// only numbers and the run id, nothing from a file.
			fmt.Fprintf(a.ttyErr, "\r%s\x1b[K", progressLine(p, true))
		} else {
			fmt.Fprintln(a.stderr, progressLine(p, false))
		}
	}
	if tty && last.Total > 0 {
		fmt.Fprintln(a.stderr)
	}
}

// progressLine formats one progress event.
func progressLine(p runner.Progress, bar bool) string {
	frac := 0.0
	if p.Total > 0 {
		frac = float64(p.Done) / float64(p.Total)
	}
	var b strings.Builder
	if bar {
		b.WriteString("[" + bars.Bar(frac, 30) + "] ")
	} else {
		b.WriteString("eval " + p.RunID + ": ")
	}
	fmt.Fprintf(&b, "%d/%d items (%.1f%%)", p.Done, p.Total, 100*frac)
	if p.ItemsPerSec > 0 {
		fmt.Fprintf(&b, "  %.0f items/s", p.ItemsPerSec)
	}
	if p.ETA > 0 && !p.Final {
		fmt.Fprintf(&b, "  ETA %s", p.ETA.Round(time.Second))
	}
	fmt.Fprintf(&b, "  %d errors  %s tokens  $%.4f", p.Errors, groupDigits(p.Tokens), p.CostUSD)
	return b.String()
}

// groupDigits writes n with thousands separators.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// shellQuote quotes p for a copy-pasted command line when it needs it.
func shellQuote(p string) string {
	if p != "" && !strings.ContainsAny(p, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
