package workbench

import (
	"context"
	"fmt"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/store"
)

// Source is one side of a comparison across databases: a database and a
// run reference in it (an id, a unique prefix, latest or latest~N). A run
// bundle is read into a scratch database and named by its run id.
type Source struct {
	DB  *store.DB
	Ref string
	// Name is what messages call the side when Ref alone would not say
	// where the run came from (a bundle's file name); "" means Ref.
	Name string
}

// CompareAcross is CompareRuns with each run read from its own database,
// so a baseline kept as a run bundle compares against a run stored here.
// Both sides naming one run is refused only when they read one database:
// the same run id from two places (a bundle of the run beside the run) is
// a comparison that must find no change.
func CompareAcross(ctx context.Context, a, b Source, opt *CompareOptions) (*Compared, error) {
	var runs [2]*Run
	var data [2]compare.RunData
	for i, s := range []Source{a, b} {
		name := s.Name
		if name == "" {
			name = s.Ref
		}
		if s.DB == nil {
			return nil, fmt.Errorf("run %q: no database (choose one with --db or $JEVLAB_DB)", name)
		}
		r, err := s.DB.ResolveRun(ctx, s.Ref)
		if err != nil {
			return nil, &RefError{Ref: name, Err: err}
		}
		runs[i] = r
		if data[i], err = compare.LoadRun(ctx, s.DB, r); err != nil {
			return nil, err
		}
	}
	if a.DB == b.DB && runs[0].ID == runs[1].ID {
		return nil, &SameRunError{A: a.Ref, B: b.Ref, ID: runs[0].ID}
	}
	return compareData(runs[0], runs[1], data[0], data[1], opt)
}
