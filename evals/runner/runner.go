// Package runner evaluates a question set over a dataset: a bounded pool of
// workers asks every item (all questions in one request), the results are
// stored as they complete in batched transactions, and progress is reported
// on a channel. A run can be interrupted (context cancel, spend cap) and
// resumed exactly where it stopped.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// Config describes one run.
type Config struct {
	// Set is the question set asked of every item.
	Set *questionset.Set
	// Split names the part of the dataset the items are ("dev", "test"
	// or "" for all of it), recorded with the run's question revisions:
	// the hold-out ledger counts the revisions that saw "test".
	Split string
	// Variants are the set's variants asked beside their questions in
	// every request, each under its derived id (queue~v2), and stored
	// with the run; recorded in its settings as "variants".
	Variants []questionset.VariantRef
	// Items are the dataset items; Source streams them instead (it is
	// called up to three times and must yield the same items each time).
	Items  []dataset.Item
	Source func(fn func(dataset.Item) error) error
	// DatasetPath is recorded with the dataset snapshot.
	DatasetPath string
	// Provider answers the requests (live client, cache, stand-in).
	Provider provider.Provider
	// DB stores the run.
	DB *store.DB
	// Repeat asks every item this many times (default 1); repeats after
	// the first bypass the answer cache (provider.WithFresh).
	Repeat int
	// Concurrency bounds the workers (default 8). The provider may limit
	// further.
	Concurrency int
	// MaxCostUSD stops the run before a request would take its total cost
	// (earlier parts of a resumed run included) above it; 0 = no cap.
	MaxCostUSD float64
	// PricePerMillion prices input tokens for estimates (default
	// provider.CostPerMillionInputTokens).
	PricePerMillion float64
	// Resume names a stored run (id, prefix, latest) to continue. Repeat
	// is the run's; Concurrency and MaxCostUSD left zero are restored from
	// the run's settings, and given ones override them (recorded for later
	// resumes). See LoadResume for the settings a caller applies itself.
	Resume string
	// RetryErrors, on a resume, asks again the items stored as failed (a
	// retry replaces the failure; the spend of both attempts is kept).
	// Items that failed on our side (a local write error) are asked again
	// on every resume.
	RetryErrors bool
	// Name labels a new run.
	Name string
	// ProviderKind, BaseURL and Version are recorded with the run.
	ProviderKind string
	BaseURL      string
	Version      string
	// Settings are recorded with the run so a resume restores them (the
	// runner fills in Repeat, Concurrency and MaxCostUSD). On a resume,
	// zero Settings keep the stored ones; otherwise the settings a resume
	// may not change (model, repeat, fresh, offline, field mapping) must
	// match, and the rest replace the stored ones.
	Settings Settings
	// LeaseTTL is how long the run's lease lasts between heartbeats
	// (default store.DefaultLeaseTTL; renewed every third of it). A run
	// whose process dies reads as interrupted once it lapses, at once on
	// the same host.
	LeaseTTL time.Duration
	// Grace is how long in-flight calls may finish after a stop (default
	// 3s); later ones are abandoned and redone on resume.
	Grace time.Duration
	// BatchSize and FlushEvery shape the batched writes (defaults 256
	// items, 100ms).
	BatchSize  int
	FlushEvery time.Duration
	// Transform, when set, rewrites the request of one item × repeat
	// before it is asked (a probe permutes options or edits the state) and
	// may return a function that maps the result back to the set's
	// question order before it is stored. An error is stored as that
	// item's failure.
	Transform func(it dataset.Item, rep int, req *provider.Request) (*provider.Request, func(*provider.Result), error)
}

// Progress is one progress event.
type Progress struct {
	RunID string `json:"run_id"`
	// Done counts stored item × repeats (answered or failed), including
	// those stored before a resume.
	Done   int `json:"done"`
	Total  int `json:"total"`
	Errors int `json:"errors"`
	// ItemsPerSec is this session's rate.
	ItemsPerSec float64       `json:"items_per_sec"`
	ETA         time.Duration `json:"eta_ns"`
	// Tokens and CostUSD are all this run has spent, stored or not.
	Tokens  int64   `json:"input_tokens"`
	CostUSD float64 `json:"cost_usd"`
	// Unstored counts answers paid for but not stored (the database
	// failed under them); their spend is in Tokens and CostUSD.
	Unstored int `json:"unstored,omitempty"`
	// Final marks the last event of a run.
	Final bool `json:"final,omitempty"`
}

// ErrInterrupted is matched (errors.Is) by the error Run returns when a run
// stopped before every item was asked: canceled, or the spend cap reached.
// The run is stored as interrupted and can be resumed.
var ErrInterrupted = errors.New("run interrupted")

// InterruptedError says why a run stopped early.
type InterruptedError struct {
	RunID  string
	Reason string
}

// Error says which run stopped and why.
func (e *InterruptedError) Error() string {
	return fmt.Sprintf("run %s interrupted: %s", e.RunID, e.Reason)
}

// Is makes errors.Is(err, ErrInterrupted) true.
func (e *InterruptedError) Is(target error) bool { return target == ErrInterrupted }

// InputError is a problem with what the caller asked for (an unreadable
// dataset, a resume of an unknown or changed run) rather than with the
// provider or the database: fix the input and run again.
type InputError struct{ Err error }

// Error returns the underlying problem's message.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying problem.
func (e *InputError) Unwrap() error { return e.Err }

// errCostCap stops a run at its spend cap.
type errCostCap struct{ spent, cap float64 }

func (e *errCostCap) Error() string {
	return fmt.Sprintf("spend cap $%.4f reached ($%.4f spent or committed); raise --max-cost to continue", e.cap, e.spent)
}

// fatalError stops a run on an error every further request would repeat
// (a rejected key), or on a local failure that must stop the spending (a
// fixture file or database that cannot be written).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// job is one asking of one item: repeat rep of the item at seq.
type job struct {
	item dataset.Item
	seq  int
	rep  int
}

// task is the work one worker takes for an item: its repeats not yet
// stored, in order. One worker asks them one after another so repeat 0
// (which may be answered from the cache) is asked before the fresh
// repeats record their answers: were they asked side by side, a repeat
// could finish first and repeat 0 would then be answered from the cache
// with that very answer, so the run would hold the same answer twice and
// understate the noise --repeat measures (and ask one request fewer).
type task struct {
	item dataset.Item
	seq  int
	reps []int
}

func (c *Config) source() func(fn func(dataset.Item) error) error {
	if c.Source != nil {
		return c.Source
	}
	items := c.Items
	return func(fn func(dataset.Item) error) error {
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		return nil
	}
}

func (c *Config) defaults() error {
	if c.Set == nil || len(c.Set.Questions) == 0 {
		return errors.New("run: the question set has no questions")
	}
	if c.DB == nil {
		return errors.New("run: no database")
	}
	if c.Repeat <= 0 {
		c.Repeat = 1
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.PricePerMillion <= 0 {
		c.PricePerMillion = provider.CostPerMillionInputTokens
	}
	if c.Grace <= 0 {
		c.Grace = 3 * time.Second
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 256
	}
	if c.FlushEvery <= 0 {
		c.FlushEvery = 100 * time.Millisecond
	}
	if c.MaxCostUSD < 0 {
		return fmt.Errorf("run: max cost $%g is negative", c.MaxCostUSD)
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = store.DefaultLeaseTTL
	}
	return nil
}

// scan makes the first pass over the dataset: content hash, count, and a
// check that item ids are unique (a run is keyed by item id).
func scan(ctx context.Context, src func(fn func(dataset.Item) error) error) (hash string, n int, err error) {
	h := newDatasetHasher()
	// By hash, not by the ids themselves: a million-item dataset's ids
	// would otherwise all be held through the scan.
	seen := dataset.NewIDSet()
	err = src(func(it dataset.Item) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if it.ID == "" {
			return fmt.Errorf("item %d (line %d) has no id; every item needs one so a run can be resumed and compared", h.n+1, it.Line)
		}
		if prev, dup := seen.Add(it.ID, it.Line); dup {
			return fmt.Errorf("item id %q appears twice (lines %d and %d); ids must be unique", it.ID, prev, it.Line)
		}
		h.add(&it)
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	return h.sum(), h.n, nil
}

// Run evaluates cfg and returns the run id. progress (may be nil) receives
// events without ever blocking the run (events are dropped when it is
// full), and is closed when Run returns. An interrupted run returns an
// error matching ErrInterrupted along with its id.
func Run(ctx context.Context, cfg Config, progress chan<- Progress) (string, error) {
	if progress != nil {
		defer close(progress)
	}
	givenConcurrency, givenSettings := cfg.Concurrency > 0, !cfg.Settings.isZero()
	if err := cfg.defaults(); err != nil {
		return "", err
	}
	if cfg.Provider == nil {
		return "", errors.New("run: no provider")
	}
	db := cfg.DB
	dbCtx := context.WithoutCancel(ctx)
	src := cfg.source()
	dsHash, n, err := scan(ctx, src)
	if err != nil {
		return "", &InputError{fmt.Errorf("read dataset %s: %w", cfg.DatasetPath, err)}
	}
	if n == 0 {
		return "", &InputError{fmt.Errorf("dataset %s has no items", cfg.DatasetPath)}
	}
	setHash, err := db.SaveQuestionSet(ctx, cfg.Set.Title(), cfg.Set.Path, SnapshotJSON(cfg.Set))
	if err != nil {
		return "", err
	}
	err = db.SaveDataset(ctx, dsHash, cfg.DatasetPath, func(yield func(store.DatasetItem) error) error {
		seq := 0
		return src(func(it dataset.Item) error {
			err := yield(store.DatasetItem{Seq: seq, ID: it.ID, State: provider.Compact(it.State), Labels: labelsJSON(it.Labels)})
			seq++
			return err
		})
	})
	if err != nil {
		return "", err
	}

	var run *store.Run
	done := map[store.ItemKey]bool{}
	owner := store.NewLeaseOwner()
	if cfg.Resume != "" {
		run, err = db.ResolveRun(ctx, cfg.Resume)
		if err != nil {
			return "", &InputError{fmt.Errorf("resume: %w", err)}
		}
		if run.SetHash != setHash {
			return run.ID, &InputError{fmt.Errorf("resume %s: the question set changed since the run started (snapshot %.12s, now %.12s); restore the file as it was, or start a new run without --resume",
				run.ID, run.SetHash, setHash)}
		}
		if run.DatasetHash != dsHash {
			return run.ID, &InputError{fmt.Errorf("resume %s: the dataset changed since the run started (snapshot %.12s, now %.12s); use the same data, or start a new run without --resume",
				run.ID, run.DatasetHash, dsHash)}
		}
		if got, want := recordedVariants(run.Settings), variantIDs(cfg.Variants); strings.Join(got, ",") != strings.Join(want, ",") {
			return run.ID, &InputError{fmt.Errorf("resume %s: the run asked variants [%s], now [%s]; resume with the same --variants",
				run.ID, strings.Join(got, " "), strings.Join(want, " "))}
		}
		if run.Status == store.StatusDone && !(cfg.RetryErrors && run.Errors > 0) {
			return run.ID, nil
		}
		stored, err := ParseSettings(run)
		if err != nil {
			return run.ID, &InputError{err}
		}
		if cfg.Repeat > 1 && cfg.Repeat != run.Repeat {
			return run.ID, &InputError{fmt.Errorf("resume %s: the run asks every item %d times; --repeat cannot change on a resume", run.ID, run.Repeat)}
		}
		cfg.Repeat = run.Repeat
		if !givenConcurrency && stored.Concurrency > 0 {
			cfg.Concurrency = stored.Concurrency
		}
		if cfg.MaxCostUSD == 0 {
			cfg.MaxCostUSD = stored.MaxCostUSD
		}
		want := stored
		if givenSettings {
			want = cfg.Settings
			want.Repeat = cfg.Repeat
			// A caller that does not record the files (the workbench)
			// keeps those the run recorded.
			if want.Set == "" {
				want.Set = stored.Set
			}
			if want.Data == "" {
				want.Data = stored.Data
			}
			if d := stored.fixedDiff(want); d != "" {
				return run.ID, &InputError{fmt.Errorf("resume %s: the run was started with other settings (%s); resume it with the settings it started with", run.ID, d)}
			}
		}
		want.Repeat, want.Concurrency, want.MaxCostUSD = cfg.Repeat, cfg.Concurrency, cfg.MaxCostUSD
		cfg.Settings = want
		if run, err = db.AcquireRun(ctx, run.ID, owner, cfg.LeaseTTL); err != nil {
			if errors.Is(err, store.ErrRunBusy) {
				return cfg.Resume, &InputError{err}
			}
			return cfg.Resume, err
		}
		if !reflect.DeepEqual(want, stored) {
			sj, err := jsonMarshal(want)
			if err == nil {
				err = db.SetRunSettings(ctx, run.ID, sj)
			}
			if err != nil {
				_ = db.FinishLease(dbCtx, run.ID, owner, store.StatusInterrupted, "resume failed: "+err.Error())
				return run.ID, err
			}
		}
		// Answers a killed process paid for and recorded as exchanges, but
		// died before storing as items, are answered from those exchanges
		// now at no cost: their spend is added to the run here, so a
		// resumed run reports what was spent, no more and no less.
		if in, out, err := db.RunExchangeUsage(ctx, run.ID); err == nil && in > run.InputTokens {
			gapIn, gapOut := in-run.InputTokens, max(out-run.OutputTokens, 0)
			cost := float64(gapIn) * cfg.PricePerMillion / 1e6
			if err := db.AddRunSpend(ctx, run.ID, gapIn, gapOut, cost); err == nil {
				run.InputTokens, run.OutputTokens, run.CostUSD = run.InputTokens+gapIn, run.OutputTokens+gapOut, run.CostUSD+cost
			}
		}
		if done, err = db.DoneItems(ctx, run.ID); err == nil {
			var failed map[store.ItemKey]string
			if failed, err = db.FailedKeys(ctx, run.ID); err == nil {
				for k, kind := range failed {
					if cfg.RetryErrors || kind == string(provider.KindLocal) {
						delete(done, k)
					}
				}
			}
		}
		if err != nil {
			_ = db.FinishLease(dbCtx, run.ID, owner, store.StatusInterrupted, "resume failed: "+err.Error())
			return run.ID, err
		}
	} else {
		settings := cfg.Settings
		settings.Repeat, settings.Concurrency, settings.MaxCostUSD = cfg.Repeat, cfg.Concurrency, cfg.MaxCostUSD
		settings.Variants = variantIDs(cfg.Variants)
		settings.Split = cfg.Split
		cfg.Settings = settings
		sj, err := jsonMarshal(settings)
		if err != nil {
			return "", err
		}
		run, err = db.CreateRun(ctx, store.NewRun{
			Name: cfg.Name, SetHash: setHash, SetName: cfg.Set.Title(), SetPath: cfg.Set.Path,
			DatasetHash: dsHash, DatasetPath: cfg.DatasetPath, ProviderKind: cfg.ProviderKind, BaseURL: cfg.BaseURL,
			Model: cfg.Set.ModelName(), Repeat: cfg.Repeat, Total: n * cfg.Repeat, Version: cfg.Version, Settings: sj,
			LeaseOwner: owner, LeaseTTL: cfg.LeaseTTL,
		})
		if err != nil {
			return "", err
		}
		if err := db.RecordRevisions(ctx, run.ID, cfg.Split, run.StartedAt, Revisions(cfg.Set)); err != nil {
			return run.ID, err
		}
	}
	e := &engine{cfg: &cfg, run: run, owner: owner, done: done, total: n * cfg.Repeat, progress: progress,
		budget: budget{cap: cfg.MaxCostUSD, spent: run.CostUSD}}
	e.stored, e.errors, e.tokens, e.cost = run.Done, run.Errors, run.InputTokens, run.CostUSD
	return run.ID, e.execute(ctx, dbCtx, src)
}

type engine struct {
	cfg   *Config
	run   *store.Run
	owner string // the run's lease
	// lost counts answers the provider sent (and billed) that could not
	// be stored: their spend still counts against the cap and is reported.
	lostMu     sync.Mutex
	lost       int
	lostTokens int64
	lostCost   float64
	done       map[store.ItemKey]bool
	total      int
	progress   chan<- Progress
	budget     budget

	// Counters owned by the writer goroutine (read for the final event
	// after it exits).
	stored, errors int
	tokens         int64
	cost           float64
	sessionDone    int
	started        time.Time
}

func (e *engine) execute(ctx, dbCtx context.Context, src func(fn func(dataset.Item) error) error) error {
	cfg := e.cfg
	stopCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// Calls outlive a stop by Grace so finished work is kept.
	baseCtx, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	go func() {
		select {
		case <-stopCtx.Done():
			t := time.NewTimer(cfg.Grace)
			defer t.Stop()
			select {
			case <-t.C:
				cancelCalls()
			case <-baseCtx.Done():
			}
		case <-baseCtx.Done():
		}
	}()
	callCtx := store.WithRunID(baseCtx, e.run.ID)
	freshCtx := provider.WithFresh(callCtx)

	// Heartbeat: renew the run's lease while it runs, so a run whose
	// process died reads as interrupted rather than running forever.
	hbDone := make(chan struct{})
	defer close(hbDone)
	go func() {
		t := time.NewTicker(cfg.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-hbDone:
				return
			case <-t.C:
				err := cfg.DB.RenewLease(dbCtx, e.run.ID, e.owner, cfg.LeaseTTL)
				if errors.Is(err, store.ErrLeaseLost) || store.IsCorrupt(err) {
					stop(&fatalError{err})
				}
			}
		}
	}()

	tasks := make(chan task, cfg.Concurrency)
	results := make(chan store.ItemResult, cfg.Concurrency*2)
	e.started = time.Now()

	// Producer: stream items, skipping what is stored; an item's repeats
	// go to one worker (see task).
	prodErr := make(chan error, 1)
	go func() {
		defer close(tasks)
		seq := 0
		err := src(func(it dataset.Item) error {
			var reps []int
			for r := 0; r < cfg.Repeat; r++ {
				if !e.done[store.ItemKey{ItemID: it.ID, Repeat: r}] {
					reps = append(reps, r)
				}
			}
			if len(reps) > 0 {
				select {
				case tasks <- task{item: it, seq: seq, reps: reps}:
				case <-stopCtx.Done():
					return context.Cause(stopCtx)
				}
			}
			seq++
			return nil
		})
		if err != nil && stopCtx.Err() == nil {
			stop(fmt.Errorf("read dataset: %w", err))
		}
		prodErr <- err
	}()

	// Workers.
	var wg sync.WaitGroup
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tk := range tasks {
				for _, rep := range tk.reps {
					if stopCtx.Err() != nil {
						break // drain without asking
					}
					c := callCtx
					if rep > 0 {
						c = freshCtx
					}
					r, ok := e.ask(c, callCtx, stopCtx, job{item: tk.item, seq: tk.seq, rep: rep}, stop)
					if !ok {
						break // not stored: asked again on resume
					}
					results <- r
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	writeErr := e.write(dbCtx, results, stop)
	<-prodErr
	// Every item is stored: the write path's caches (recent answers,
	// deflaters) and the connections the workers' lookups opened would
	// only weigh on the report computed next.
	e.cfg.DB.ReleaseWriteCaches()
	e.cfg.DB.CloseIdle()
	cause := context.Cause(stopCtx)
	if ctx.Err() == nil && stopCtx.Err() == nil {
		cause = nil
	}
	db := e.cfg.DB
	finish := func(status store.Status, reason string) error {
		return db.FinishLease(dbCtx, e.run.ID, e.owner, status, reason)
	}
	var final error
	switch {
	case writeErr != nil:
		_ = finish(store.StatusFailed, writeErr.Error())
		final = fmt.Errorf("run %s stopped: %w", e.run.ID, writeErr)
	case cause == nil:
		if err := finish(store.StatusDone, ""); err != nil {
			final = err
		}
	default:
		var capErr *errCostCap
		var fatal *fatalError
		switch {
		case errors.As(cause, &capErr):
			_ = finish(store.StatusInterrupted, capErr.Error())
			final = &InterruptedError{RunID: e.run.ID, Reason: capErr.Error()}
		case errors.As(cause, &fatal):
			_ = finish(store.StatusFailed, fatal.Error())
			final = fmt.Errorf("run %s stopped: %w", e.run.ID, fatal.err)
		case ctx.Err() != nil:
			reason := "canceled"
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				reason = "deadline exceeded"
			}
			_ = finish(store.StatusInterrupted, reason)
			final = &InterruptedError{RunID: e.run.ID, Reason: reason}
		default:
			_ = finish(store.StatusFailed, cause.Error())
			final = fmt.Errorf("run %s: %w", e.run.ID, cause)
		}
	}
	if n, tokens, cost := e.lostSpend(); n > 0 {
		final = &LostError{RunID: e.run.ID, Answers: n, InputTokens: tokens, CostUSD: cost, Err: final}
	}
	e.emit(true)
	return final
}

// LostError wraps the error a run stopped with when some answers the
// provider sent (and billed) could not be stored: the database failed
// under them. Their spend is in the final Progress and here, but not in
// the stored run.
type LostError struct {
	RunID       string
	Answers     int
	InputTokens int64
	CostUSD     float64
	Err         error
}

// Error says what was spent and not stored, then why the run stopped.
func (e *LostError) Error() string {
	msg := fmt.Sprintf("run %s: %d answers the provider sent ($%.4f, %d input tokens) could not be stored and are not in the run's totals",
		e.RunID, e.Answers, e.CostUSD, e.InputTokens)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the error the run stopped with.
func (e *LostError) Unwrap() error { return e.Err }

// lose counts an answer that was paid for but not stored.
func (e *engine) lose(tokens int64, cost float64) {
	e.lostMu.Lock()
	defer e.lostMu.Unlock()
	e.lost++
	e.lostTokens += tokens
	e.lostCost += cost
}

func (e *engine) lostSpend() (int, int64, float64) {
	e.lostMu.Lock()
	defer e.lostMu.Unlock()
	return e.lost, e.lostTokens, e.lostCost
}

// ask asks one job under ctx and returns its stored form, or false when
// it is not to be stored (a stop, the spend cap, a rejected key): callCtx
// ends when calls are abandoned after a stop, stopCtx at the stop itself.
func (e *engine) ask(ctx, callCtx, stopCtx context.Context, j job, stop context.CancelCauseFunc) (store.ItemResult, bool) {
	cfg := e.cfg
	req := cfg.Set.RequestWith(j.item.State, cfg.Variants)
	var back func(*provider.Result)
	if cfg.Transform != nil {
		var terr error
		if req, back, terr = cfg.Transform(j.item, j.rep, req); terr != nil {
			return e.result(j, nil, fmt.Errorf("item %s: %w", j.item.ID, terr), 0), true
		}
	}
	est := 0.0
	if cfg.MaxCostUSD > 0 {
		est = estimateCost(req, cfg.PricePerMillion)
	}
	held, ok := e.budget.reserve(est)
	if !ok {
		stop(&errCostCap{spent: e.budget.committed(), cap: cfg.MaxCostUSD})
		return store.ItemResult{}, false
	}
	t0 := time.Now()
	res, err := cfg.Provider.Ask(ctx, req)
	// Whatever the provider billed counts, answered, failed or abandoned.
	actual := 0.0
	var tokens int64
	if res != nil {
		actual, tokens = res.CostUSD, res.Usage.InputTokens
	}
	e.budget.settle(held, actual)
	if err != nil && callCtx.Err() != nil {
		// Abandoned at a stop: not stored, asked again on resume.
		if actual > 0 || tokens > 0 {
			e.lose(tokens, actual)
		}
		return store.ItemResult{}, false
	}
	if err == nil && back != nil {
		back(res)
	}
	if err != nil {
		switch provider.KindOf(err) {
		case provider.KindAuth:
			stop(&fatalError{err})
			if actual > 0 || tokens > 0 {
				e.lose(tokens, actual)
			}
			return store.ItemResult{}, false
		case provider.KindLocal:
			// A fixture file or the database could not be written: stop
			// the spending. The item is stored as failed with what it
			// cost (if the database still takes it) and asked again on
			// resume, from the database's copy where it has one.
			stop(&fatalError{err})
		case provider.KindCanceled:
			if stopCtx.Err() != nil {
				if actual > 0 || tokens > 0 {
					e.lose(tokens, actual)
				}
				return store.ItemResult{}, false
			}
		}
	}
	return e.result(j, res, err, time.Since(t0)), true
}

// write batches results into the store and emits progress.
func (e *engine) write(ctx context.Context, results <-chan store.ItemResult, stop context.CancelCauseFunc) error {
	cfg := e.cfg
	batch := make([]store.ItemResult, 0, cfg.BatchSize)
	tick := time.NewTicker(cfg.FlushEvery)
	defer tick.Stop()
	var werr error
	retrying := e.cfg.RetryErrors || len(e.done) < e.run.Done
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if werr != nil {
			for i := range batch {
				e.lose(batch[i].Usage.InputTokens, batch[i].CostUSD)
			}
			batch = batch[:0]
			return
		}
		added, err := cfg.DB.SaveItems(ctx, e.run.ID, batch)
		if err != nil {
			werr = err
			stop(&fatalError{err})
			for i := range batch {
				e.lose(batch[i].Usage.InputTokens, batch[i].CostUSD)
			}
			batch = batch[:0]
			return
		}
		if added == len(batch) && !retrying {
			for i := range batch {
				e.count(&batch[i])
			}
		} else {
			// Some were stored already, or replaced stored failures (a
			// retry): recount exactly.
			if r, err := cfg.DB.Run(ctx, e.run.ID); err == nil {
				e.stored, e.errors, e.tokens, e.cost = r.Done, r.Errors, r.InputTokens, r.CostUSD
			}
			e.sessionDone += added
		}
		batch = batch[:0]
	}
	for {
		select {
		case r, ok := <-results:
			if !ok {
				flush()
				return werr
			}
			batch = append(batch, r)
			if len(batch) >= cfg.BatchSize {
				flush()
				e.emit(false)
			}
		case <-tick.C:
			flush()
			e.emit(false)
		}
	}
}

func (e *engine) count(r *store.ItemResult) {
	e.stored++
	e.sessionDone++
	if r.ErrKind != "" {
		e.errors++
	}
	e.tokens += r.Usage.InputTokens
	e.cost += r.CostUSD
}

func (e *engine) emit(final bool) {
	if e.progress == nil {
		return
	}
	n, lostTokens, lostCost := e.lostSpend()
	p := Progress{RunID: e.run.ID, Done: e.stored, Total: e.total, Errors: e.errors, Tokens: e.tokens + lostTokens, CostUSD: e.cost + lostCost,
		Unstored: n, Final: final}
	if el := time.Since(e.started).Seconds(); el > 0 && e.sessionDone > 0 {
		p.ItemsPerSec = float64(e.sessionDone) / el
		if rem := e.total - e.stored; rem > 0 {
			p.ETA = time.Duration(float64(rem) / p.ItemsPerSec * float64(time.Second))
		}
	}
	if final {
		select {
		case e.progress <- p:
		case <-time.After(time.Second):
		}
		return
	}
	select {
	case e.progress <- p:
	default:
	}
}

// result turns one call's outcome into the stored form.
func (e *engine) result(j job, res *provider.Result, err error, wall time.Duration) store.ItemResult {
	set := e.cfg.Set
	r := store.ItemResult{ItemID: j.item.ID, Seq: j.seq, Repeat: j.rep}
	r.Answers = make([]store.ItemAnswer, len(set.Questions), len(set.Questions)+len(e.cfg.Variants))
	for i := range set.Questions {
		id := set.Questions[i].ID
		a := &r.Answers[i]
		a.QuestionID = id
		if l, ok := j.item.Labels[id]; ok {
			idx := l.Index
			a.Label, a.LabelText = &idx, l.Text
		}
	}
	for _, v := range e.cfg.Variants {
		a := store.ItemAnswer{QuestionID: v.ID()}
		if l, ok := j.item.Labels[v.Question]; ok {
			if idx, ok := variantLabel(set, v, l); ok {
				a.Label, a.LabelText = &idx, l.Text
			}
		}
		r.Answers = append(r.Answers, a)
	}
	if err != nil {
		kind := string(provider.KindOf(err))
		if kind == "" {
			kind = "error"
		}
		r.ErrKind, r.ErrMsg = kind, err.Error()
		var pe *provider.Error
		if errors.As(err, &pe) {
			r.Attempts, r.RequestID = pe.Attempts, pe.RequestID
		}
		r.LatencyMS = ms(wall)
		if res != nil {
			// The provider billed for it even though it failed (an answer
			// that could not be recorded, say): the spend is kept.
			r.Usage, r.CostUSD = res.Usage, res.CostUSD
		}
		for i := range r.Answers {
			r.Answers[i].ErrKind, r.Answers[i].ErrMsg = kind, r.ErrMsg
		}
		return r
	}
	r.LatencyMS = ms(res.Latency)
	r.Usage, r.CostUSD, r.Model, r.RequestID, r.Attempts = res.Usage, res.CostUSD, res.Model, res.RequestID, res.Attempts
	for i := range r.Answers {
		a := &r.Answers[i]
		a.LatencyMS = r.LatencyMS
		an, ok := res.Answer(a.QuestionID)
		if !ok {
			a.ErrKind, a.ErrMsg = string(provider.KindMalformed), fmt.Sprintf("no answer for question %q", a.QuestionID)
			continue
		}
		a.Answer = an
		a.Decided = decided(an, set.Threshold(a.QuestionID))
	}
	return r
}

// variantLabel is an item's label of v's question as an index into the
// variant's own criteria: the same index unless the variant replaces the
// criteria, then the option of the same label (choice) or the level of the
// same index (score, when it still has one).
func variantLabel(set *questionset.Set, v questionset.VariantRef, l dataset.Label) (int, bool) {
	vv, ok := set.Variant(v.Question, v.Name)
	if !ok || l.Index < 0 {
		return 0, false
	}
	if !vv.HasCriteria() {
		return l.Index, true
	}
	q, _ := set.VariantQuestion(v)
	switch q.Type {
	case provider.Choice:
		i := q.OptionIndex(l.Text)
		return i, i >= 0
	case provider.Score:
		return l.Index, l.Index < len(q.Levels)
	}
	return l.Index, true
}

func variantIDs(vs []questionset.VariantRef) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID()
	}
	return out
}

// recordedVariants reads the derived ids a run recorded in its settings.
func recordedVariants(settings []byte) []string {
	var s struct {
		Variants []string `json:"variants"`
	}
	_ = json.Unmarshal(settings, &s)
	return s.Variants
}

// Revisions are the set's question revisions as the store records them:
// each question's QuestionBody under the set's title, hashed.
func Revisions(set *questionset.Set) []store.QuestionRevision {
	out := make([]store.QuestionRevision, 0, len(set.Questions))
	for _, e := range set.Questions {
		body := set.QuestionBody(e.ID)
		out = append(out, store.QuestionRevision{SetName: set.Title(), QuestionID: e.ID, Hash: store.HashBytes(body), Body: body})
	}
	return out
}

// RecordedVariants returns the variants a stored run asked (from its
// settings), in the order it asked them.
func RecordedVariants(run *store.Run) []questionset.VariantRef {
	var out []questionset.VariantRef
	for _, id := range recordedVariants(run.Settings) {
		if q, n, ok := questionset.SplitVariantID(id); ok {
			out = append(out, questionset.VariantRef{Question: q, Name: n})
		}
	}
	return out
}

// decided is the decided value as text: the chosen label, the most probable
// level's index, or a noul's true/false at the caller's threshold.
func decided(a *provider.Answer, threshold float64) string {
	switch a.Type {
	case provider.Choice:
		return a.Choice
	case provider.Score:
		return strconv.Itoa(a.Decision(threshold))
	case provider.Noul:
		if a.Decision(threshold) == 1 {
			return "true"
		}
		return "false"
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// budget accounts spend against a cap, counting in-flight requests at a
// conservative estimate until they settle.
type budget struct {
	mu       sync.Mutex
	cap      float64
	spent    float64
	reserved float64
	maxSeen  float64
}

// reserve holds the larger of est and the costliest request seen so far;
// it fails when that would take spent + in flight above the cap.
func (b *budget) reserve(est float64) (float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	hold := max(est, b.maxSeen)
	if b.cap > 0 && b.spent+b.reserved+hold > b.cap+1e-12 {
		return 0, false
	}
	b.reserved += hold
	return hold, true
}

func (b *budget) settle(held, actual float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved -= held
	b.spent += actual
	b.maxSeen = max(b.maxSeen, actual)
}

func (b *budget) committed() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent + b.reserved
}
