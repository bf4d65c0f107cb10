package workbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// RunTemplate is what every run starts from, whoever starts it: cmd fills
// it once from its flags and environment, and both `jevlab eval` and the
// workbench's evaluate screen build their runner configuration from it, so a
// run is recorded the same way (provider kind, base URL, version,
// concurrency, settings, the resolved dataset path) wherever it began.
type RunTemplate struct {
	// DB stores the runs.
	DB *store.DB
	// Provider answers the requests; ProviderKind is its mode (live,
	// cached, offline, stand-in) as recorded with the run.
	Provider     provider.Provider
	ProviderKind string
	// BaseURL is recorded with runs that call out ("" offline).
	BaseURL string
	// Version is jevlab's version string, recorded with the run.
	Version string
	// Build names the build for stored run summaries (ViewConfig.Build):
	// what `jevlab show` passes, so a screen reads the same summaries.
	Build string
	// Concurrency bounds the workers; RPS and Timeout are the client's
	// limits, recorded as settings.
	Concurrency int
	RPS         float64
	Timeout     time.Duration
	// Fresh and Offline are the cache flags, recorded as settings.
	Fresh, Offline bool
	// Repeat asks every item this many times (default 1).
	Repeat int
	// MaxCostUSD caps the run's cost (0 = none).
	MaxCostUSD float64
	// Settings are recorded with the run so a resume restores them (the
	// set and dataset files, the model override, fixtures, field mapping);
	// Config fills in RPS, Timeout, Fresh and Offline from the template,
	// and the runner Repeat, Concurrency and MaxCostUSD.
	Settings runner.Settings
}

// RunSpec is one run to start from a template.
type RunSpec struct {
	// Set is the question set as it is now.
	Set *questionset.Set
	// DatasetPath is the dataset file, resolved (absolute or relative to
	// the working directory); it is recorded with the run.
	DatasetPath string
	// Items are the dataset's items (labels already resolved against Set,
	// e.g. by ResolveLabels); Source streams them instead.
	Items  []dataset.Item
	Source func(fn func(dataset.Item) error) error
	// Name labels a new run; Resume names a stored run to continue.
	Name, Resume string
	// RetryErrors, with Resume, asks again the items that failed.
	RetryErrors bool
	// Variants are asked beside their questions in every request
	// (questionset.Set.SelectVariants).
	Variants []questionset.VariantRef
	// Split is the part of the dataset the items are (dev, test, "").
	Split string
}

// Config builds the runner configuration of spec from the template.
func (t *RunTemplate) Config(spec RunSpec) runner.Config {
	settings := t.Settings
	settings.RPS, settings.Timeout, settings.Fresh, settings.Offline = t.RPS, runner.Duration(t.Timeout), t.Fresh, t.Offline
	// A dataset file is recorded by its absolute path, so `jevlab runs`
	// shows where it lives whichever directory the run started from; a
	// name that is no file here (the shipped example's embedded dataset)
	// is kept as it is.
	path := spec.DatasetPath
	if path != "" && !filepath.IsAbs(path) {
		if _, err := os.Stat(path); err == nil {
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
		}
	}
	return runner.Config{
		Set: spec.Set, Variants: spec.Variants, Split: spec.Split, Items: spec.Items, Source: spec.Source, DatasetPath: path,
		Provider: t.Provider, DB: t.DB, Repeat: t.Repeat, Concurrency: t.Concurrency,
		MaxCostUSD: t.MaxCostUSD, Resume: spec.Resume, RetryErrors: spec.RetryErrors, Name: spec.Name,
		ProviderKind: t.ProviderKind, BaseURL: t.BaseURL, Version: t.Version, Settings: settings,
	}
}

// StartRun runs spec to the end (or until ctx is cancelled: the run is then
// interrupted and resumable), sending progress to progress (closed when the
// run ends). It returns the run id, also on failure once the run exists.
func (t *RunTemplate) StartRun(ctx context.Context, spec RunSpec, progress chan<- Progress) (string, error) {
	var err error
	switch {
	case t == nil || t.DB == nil:
		err = fmt.Errorf("no database to store the run in (choose one with --db or $JEVLAB_DB)")
	case t.Provider == nil:
		err = fmt.Errorf("no provider to answer the run")
	}
	if err != nil {
		if progress != nil {
			close(progress) // as runner.Run does on every return
		}
		return "", err
	}
	return runner.Run(ctx, t.Config(spec), progress)
}

// DryRun estimates spec's cost without asking anything.
func (t *RunTemplate) DryRun(ctx context.Context, spec RunSpec) (*CostEstimate, error) {
	return runner.DryRun(ctx, t.Config(spec))
}
