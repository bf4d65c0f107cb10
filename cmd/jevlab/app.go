package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/bundle"
	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// app holds what every command shares: the global flags, the standard
// streams, and resources opened lazily (the database, providers) that must
// be closed on exit.
type app struct {
	stdin *os.File
	// stdout and stderr escape every control character written through
	// them (termsafe): names, ids, labels, models and messages come from
	// files and servers and must never drive the terminal. Only the
	// workbench and eval's progress bar, which draw with escape sequences
	// of their own, use ttyOut and ttyErr, the streams as given.
	stdout, stderr io.Writer
	ttyOut, ttyErr io.Writer

	dbPath      string
	baseURL     string
	model       string
	fixtures    []string
	offline     bool
	fresh       bool
	concurrency int
	rps         float64
	timeout     time.Duration
	keyEnv      string
	api         string // --api (hosts.go)
	// dangerZone is --images and --long-context (box.go).
	dangerZone provider.DangerZone
	// maxFixtureLine is --max-fixture-line: the longest fixture line read.
	maxFixtureLine int

	// Paths a set names stay in its folder unless allowed (issue 10).
	allowPaths []string
	record     string

	// Input bounds (issue 10): files from strangers cannot exhaust memory.
	maxSetSize      inputfile.Size
	maxLineSize     inputfile.Size
	maxDecompressed inputfile.Size
	maxBundleSize   inputfile.Size // --max-bundle-size: a run bundle file (bundle.go)

	closers []func() error

	// database is opened lazily by a.db() (providers.go) and closed on exit.
	database *store.DB
}

func newApp(stdin *os.File, stdout, stderr io.Writer) *app {
	out, errw := termsafe.NewWriter(stdout), termsafe.NewWriter(stderr)
	a := &app{stdin: stdin, stdout: out, stderr: errw, ttyOut: stdout, ttyErr: stderr}
	a.onClose(func() error { out.Flush(); return errw.Flush() })
	return a
}

// bindGlobalFlags declares the shared flags of design.md on root.
func (a *app) bindGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.dbPath, "db", "", "SQLite database (default $JEVLAB_DB or $XDG_DATA_HOME/jevlab/jevlab.db)")
	f.StringVar(&a.baseURL, "base-url", "", "System One server (default $TYPESAFE_BASE_URL or https://api.typesafe.ai)")
	f.StringVar(&a.model, "model", "", "model to request (default: the question set's, else jev-latest)")
	f.StringArrayVar(&a.fixtures, "fixtures", nil, "recorded exchanges (JSON Lines) to answer from; repeatable")
	f.BoolVar(&a.offline, "offline", false, "never call out: answer only from fixtures and stored runs")
	f.BoolVar(&a.fresh, "fresh", false, "skip the answer cache (still records new answers)")
	f.IntVar(&a.concurrency, "concurrency", 8, "requests in flight at once")
	f.Float64Var(&a.rps, "rps", 15, "requests per second at most (TypeSafe allows 1,200/min)")
	f.DurationVar(&a.timeout, "timeout", 30*time.Second, "per-attempt timeout")
	f.StringVar(&a.keyEnv, "key-env", defaultKeyEnv, "environment variable holding the API key (with --api openrouter: OPENROUTER_API_KEY, cloudflare: CLOUDFLARE_API_TOKEN)")
	f.BoolVar(&a.dangerZone.Images, "images", false, "opt in to Jev 1.14's experimental images and box questions (sends TypeSafe-Danger-Zone-Images: true on requests that carry them)")
	f.BoolVar(&a.dangerZone.LongContext, "long-context", false, "opt in to long context: lifts the 64k/32k token limits to 262k, slower and less accurate (sends TypeSafe-Danger-Zone-Long-Context: true)")
	f.StringVar(&a.api, "api", "", "the host's shape of the call: typesafe (POST /v1/systemone), openrouter (POST /api/alpha/decisions) or cloudflare (Workers AI /ai/run); default: detected from the base URL")
	f.IntVar(&a.maxFixtureLine, "max-fixture-line", 64<<20, "longest fixture line read, in bytes; longer lines are skipped with a warning")
	a.maxSetSize = questionset.DefaultMaxFileBytes
	a.maxLineSize = dataset.DefaultMaxLineBytes
	a.maxDecompressed = dataset.DefaultMaxDecompressedBytes
	f.StringArrayVar(&a.allowPaths, "allow-path", nil, "a folder a question set's dataset: and fixtures: may name besides the set's own; repeatable")
	f.StringVar(&a.record, "record", "", "append new answers to this fixture file (default: the first --fixtures, else the first of the set's fixtures: inside its folder)")
	f.Var(&a.maxSetSize, "max-set-size", "largest question-set file read")
	f.Var(&a.maxLineSize, "max-line-size", "longest dataset line (or CSV record) read")
	f.Var(&a.maxDecompressed, "max-decompressed", "most a .gz dataset (or a run bundle) may decompress to")
	a.maxBundleSize = bundle.DefaultMaxFileBytes
	f.Var(&a.maxBundleSize, "max-bundle-size", "largest run bundle (.jevrun) file read")
}

// setLimits are the bounds on reading a question-set file.
func (a *app) setLimits() questionset.Limits {
	return questionset.Limits{MaxFileBytes: int64(a.maxSetSize)}
}

// loadSet reads and validates the question set at path within the
// limits the flags set.
func (a *app) loadSet(path string) (*questionset.Set, error) {
	return questionset.LoadLimited(path, a.setLimits())
}

// dataOptions are the dataset mapping o with the limits the flags set.
func (a *app) dataOptions(o dataset.Options) dataset.Options {
	o.MaxLineBytes = int64(a.maxLineSize)
	o.MaxDecompressedBytes = int64(a.maxDecompressed)
	return o
}

// onClose registers fn to run when the command finishes.
func (a *app) onClose(fn func() error) { a.closers = append(a.closers, fn) }

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		if err := a.closers[i](); err != nil {
			fmt.Fprintln(a.stderr, "jevlab: close:", err)
		}
	}
	a.closers = nil
}

// runWorkbench opens the TUI; wired by the tui package's command file.
func (a *app) runWorkbench(cmd *cobra.Command, args []string) error {
	return a.workbench(cmd, args)
}
