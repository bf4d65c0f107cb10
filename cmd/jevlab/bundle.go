package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/bundle"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/store"
)

func newRunsExportCmd(a *app) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export RUN -o FILE",
		Short: "Write one stored run as a portable run bundle (.jevrun)",
		Long: `runs export writes RUN as one portable, versioned, gzip-compressed file: the
question-set and dataset snapshots, the run's header and every item result
with its answers and their provenance — everything show and compare need.
'jevlab runs import FILE' loads it into any database; 'jevlab compare
FILE RUN' reads it directly. A run exported from any database that holds it
has the same content hash, printed here. The file is written with mode
0600 (it holds the dataset). RUN is a run id, a unique prefix, latest or
latest~N.`,
		Example: `  jevlab runs export latest -o baseline.jevrun
  jevlab compare baseline.jevrun latest --markdown`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(errors.New("runs export: name the file with -o FILE (e.g. -o baseline.jevrun)"))
			}
			ctx := cmdContext(cmd)
			db, err := a.db()
			if err != nil {
				return usageErr(err)
			}
			run, err := db.ResolveRun(ctx, args[0])
			if err != nil {
				return usageErr(err)
			}
			if run.Status == store.StatusRunning {
				fmt.Fprintf(a.stderr, "jevlab: run %s is still running: the bundle holds the %d of %d items stored so far\n", run.ID, run.Done, run.Total)
			}
			sum, err := writeBundle(ctx, db, run.ID, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "wrote %s: run %s, %d items, %d results, %d answers (content sha256 %s)\n",
				out, sum.Run, sum.Items, sum.Results, sum.Answers, sum.SHA256)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the bundle file to write (conventionally NAME.jevrun)")
	cmd.ValidArgsFunction = a.completeRuns(1)
	return cmd
}

// writeBundle writes run's bundle to path through a temporary file in the
// same directory, renamed into place when complete: a failed export never
// leaves half a bundle under the name.
func writeBundle(ctx context.Context, db *store.DB, runID, path string) (*bundle.Summary, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".jevlab-bundle-*")
	if err != nil {
		return nil, usageErr(fmt.Errorf("write bundle %s: %w", path, err))
	}
	defer os.Remove(f.Name())
	sum, err := bundle.Export(ctx, db, runID, versionString(), f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write bundle %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write bundle %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, fmt.Errorf("write bundle %s: %w", path, err)
	}
	return sum, nil
}

func newRunsImportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Load run bundles (.jevrun) into the database",
		Long: `runs import loads each run bundle (written by 'jevlab runs export') into the
database (--db, $JEVLAB_DB or the default path) with its snapshots,
answers and provenance, keeping the run's id. Importing a run the database
already holds with the same content does nothing and says so; a different
run under the same id is refused. A bundle is checked before anything is
stored: regular files only, at most --max-bundle-size compressed and
--max-decompressed decompressed, lines at most --max-line-size, every hash
it claims recomputed, and a format version newer than this jevlab refused.
Nothing in a bundle is used as a path.`,
		Example: `  jevlab runs import baseline.jevrun
  jevlab --db ci.db runs import artifacts/*.jevrun`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmdContext(cmd)
			db, err := a.db()
			if err != nil {
				return usageErr(err)
			}
			for _, path := range args {
				b, err := bundle.Read(path, a.bundleLimits())
				if err != nil {
					return usageErr(err)
				}
				sum, err := bundle.Import(ctx, db, b)
				if err != nil {
					return usageErr(fmt.Errorf("%s: %w", path, err))
				}
				if sum.Imported {
					fmt.Fprintf(a.stdout, "imported run %s from %s: %d results, %d answers (written by jevlab %s)\n", sum.Run, path, sum.Results, sum.Answers, sum.Jevlab)
				} else {
					fmt.Fprintf(a.stdout, "run %s from %s is already in %s, unchanged (content sha256 %s)\n", sum.Run, path, db.Path(), sum.SHA256)
				}
			}
			return nil
		},
	}
	return cmd
}

// bundleLimits are the bounds on reading a run bundle the flags set.
func (a *app) bundleLimits() bundle.Limits {
	line := max(int64(a.maxLineSize), int64(a.maxSetSize)+1<<20)
	return bundle.Limits{MaxFileBytes: int64(a.maxBundleSize), MaxDecompressedBytes: int64(a.maxDecompressed), MaxLineBytes: line}
}

// isBundleArg says whether a RUN argument names a run bundle: a path
// ending in .jevrun, or an existing regular file that opens as a bundle.
func isBundleArg(ref string) bool {
	if strings.HasSuffix(ref, bundle.Ext) {
		return true
	}
	st, err := os.Stat(ref)
	return err == nil && st.Mode().IsRegular() && bundle.Sniff(ref)
}

// runSource resolves a RUN argument of compare: a run bundle is read,
// checked and loaded into a scratch database of its own (removed on exit,
// the user's database untouched); anything else names a run in the
// database, opened only then.
func (a *app) runSource(ctx context.Context, ref string) (workbench.Source, error) {
	if !isBundleArg(ref) {
		// Reading runs only: the database is opened read-only.
		db, err := a.dbReadOnly()
		if err != nil {
			return workbench.Source{}, usageErr(err)
		}
		return workbench.Source{DB: db, Ref: ref}, nil
	}
	b, err := bundle.Read(ref, a.bundleLimits())
	if err != nil {
		var nr *inputfile.NotRegularError
		if errors.Is(err, os.ErrNotExist) && !errors.As(err, &nr) {
			return workbench.Source{}, usageErr(fmt.Errorf("run bundle %s: no such file (RUN is a run id, latest, latest~N, or a .jevrun file)", ref))
		}
		return workbench.Source{}, usageErr(err)
	}
	dir, err := os.MkdirTemp("", "jevlab-bundle-*")
	if err != nil {
		return workbench.Source{}, err
	}
	scratch, err := store.Open(filepath.Join(dir, "bundle.db"))
	if err != nil {
		os.RemoveAll(dir)
		return workbench.Source{}, err
	}
	a.onClose(func() error {
		err := scratch.Close()
		os.RemoveAll(dir)
		return err
	})
	if _, err := bundle.Import(ctx, scratch, b); err != nil {
		return workbench.Source{}, usageErr(fmt.Errorf("%s: %w", ref, err))
	}
	return workbench.Source{DB: scratch, Ref: b.Run.ID, Name: ref}, nil
}

// cmdContext is cmd's context, never nil.
func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
