package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	examples "github.com/jevlab/jevlab/fixtures"
	"github.com/jevlab/jevlab/provider"
	pfix "github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/tui"
)

// workbench opens the TUI on FILE, or with no FILE on the shipped Banking77
// example answered offline from its embedded recordings (no key, no
// network). The provider stack is built in the background so the first
// frame does not wait for answer caches to load.
func (a *app) workbench(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	opt := tui.Options{}
	var ds workbench.DatasetSource
	if len(args) == 1 {
		set, err := a.loadSet(args[0])
		if err != nil {
			return usageErr(err)
		}
		opt.Set = set
		opt.Connect = func(ctx context.Context) (provider.Provider, string, string, error) {
			// The provider stack reports warnings on stderr; the screen is
			// ours now, so they become the status line's note.
			var buf bytes.Buffer
			saved := a.stderr
			a.stderr = &buf
			p, mode, err := a.provider(ctx, set)
			a.stderr = saved
			return p, string(mode), strings.TrimSpace(strings.TrimPrefix(buf.String(), "jevlab: ")), err
		}
		dsrc, err := workbench.DatasetFor(set, "", a.dataOptions(dataset.Options{}).ForSet(set), a.allowPaths)
		if err != nil {
			return usageErr(err)
		}
		ds = dsrc
		opt.RunOnStart = true // answers come from the cache first; a miss is asked live only with a key
	} else {
		set, err := examples.DefaultSet()
		if err != nil {
			return fmt.Errorf("open the shipped example: %w", err)
		}
		opt.Set = set
		opt.Mode = string(ModeOffline)
		fixtures, err := examples.FixturePaths(examples.DefaultSetName)
		if err != nil {
			return fmt.Errorf("open the shipped example: %w", err)
		}
		opt.Connect = func(ctx context.Context) (provider.Provider, string, string, error) {
			readers := map[string]func() (io.ReadCloser, error){}
			for _, f := range fixtures {
				readers["fixtures/"+f] = func() (io.ReadCloser, error) { return examples.FS.Open(f) }
			}
			c, err := pfix.NewCache(pfix.CacheConfig{Readers: readers, MissHint: "open a copy of this example with a key set to ask edited questions"})
			if err != nil {
				return nil, "", "", err
			}
			if err := c.Load(ctx); err != nil {
				return nil, "", "", err
			}
			return c, string(ModeOffline), "shipped example, answered offline from recorded Jev answers", nil
		}
		if set.Dataset != "" {
			name := path.Join(examples.Dir(examples.DefaultSetName), set.Dataset)
			ds = workbench.DatasetSource{Path: "fixtures/" + name, Options: dataset.Options{}.ForSet(set), Open: func() (io.ReadCloser, error) {
				f, err := examples.FS.Open(name)
				if err != nil {
					return nil, fmt.Errorf("shipped dataset: %w", err)
				}
				return f, nil
			}}
		}
		opt.RunOnStart = true
		// Saving the example extracts it, with its data and recordings,
		// into a new directory, so the saved set lints and replays.
		example := examples.Dir(examples.DefaultSetName)
		opt.SaveNewDir = "./" + example + "/"
		opt.SaveNewDesc = "a copy of the example with its dataset and recordings"
		opt.SaveNew = func(dir string, data []byte) (string, workbench.DatasetSource, error) {
			path, err := examples.Extract(example, dir)
			if err != nil {
				return "", workbench.DatasetSource{}, err
			}
			if err := questionset.WriteFileAtomic(path, data, 0o644); err != nil {
				return "", workbench.DatasetSource{}, fmt.Errorf("save %s: %w", path, err)
			}
			saved := workbench.DatasetSource{}
			if set.Dataset != "" {
				saved = workbench.DatasetSource{Path: filepath.Join(filepath.Dir(path), set.Dataset), Options: dataset.Options{}.ForSet(set)}
			}
			return path, saved, nil
		}
	}
	// One key on an offline miss starts the in-process stand-in for this
	// session: synthetic answers for what has no recording, never Jev's,
	// never written to a fixture file.
	opt.StandIn = func(primary provider.Provider) (provider.Provider, error) {
		return workbench.StandIn(primary, version)
	}
	if a.model != "" {
		opt.Model = a.model
	}
	// The session's run template is the one `jevlab eval` builds, so a run
	// started on the evaluate screen is recorded as eval records it. The
	// provider is connected in the background: the workbench puts it and
	// its mode into the template when a run starts, and drops the base URL
	// when that mode is offline (as eval records no base URL offline).
	var tmpl *workbench.RunTemplate
	if db, err := a.db(); err == nil {
		tmpl = a.runTemplate(db, nil, "")
		if base, _, err := a.resolveHost(); err == nil {
			tmpl.BaseURL = base
		}
	}
	opt.Session = workbench.NewSession(opt.Set, ds, tmpl)
	opt.Mouse = true
	opt.Input = a.stdin
	if f, ok := a.ttyOut.(*os.File); ok {
		opt.Output = f
	}
	if err := tui.Run(ctx, opt); err != nil {
		return failErr(err)
	}
	return nil
}
