package workbench

import (
	"context"
	"fmt"
	"sync"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/store"
)

// CompareOptions tune a comparison (compare.Options).
type CompareOptions = compare.Options

// DefaultCompareOptions are the canonical comparison settings: seed
// CanonicalSeed, every other field at its documented default.
func DefaultCompareOptions() CompareOptions { return CompareOptions{Seed: CanonicalSeed} }

// Compared is a comparison with the two runs it read: A the baseline, B
// the candidate.
type Compared struct {
	A, B       *Run
	Comparison *Comparison
}

// CompareRuns compares run refB (the candidate) against refA (the
// baseline), paired by item id, with opt (nil: DefaultCompareOptions).
func CompareRuns(ctx context.Context, db *store.DB, refA, refB string, opt *CompareOptions) (*Compared, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	var runs [2]*Run
	var data [2]compare.RunData
	for i, ref := range []string{refA, refB} {
		r, err := db.ResolveRun(ctx, ref)
		if err != nil {
			return nil, &RefError{Ref: ref, Err: err}
		}
		runs[i] = r
		if data[i], err = compare.LoadRun(ctx, db, r); err != nil {
			return nil, err
		}
	}
	if runs[0].ID == runs[1].ID {
		return nil, &SameRunError{A: refA, B: refB, ID: runs[0].ID}
	}
	return compareData(runs[0], runs[1], data[0], data[1], opt)
}

// CompareStored compares two runs already resolved (b the candidate
// against a, the baseline), with opt (nil: DefaultCompareOptions);
// progress, when set, hears how many of the two runs' items have been
// read (Read of Total, the runs' item counts times the comparison's
// passes), every compareProgressEvery items and once when every read has
// ended (Read = Total; what remains is the last pass's paired
// resampling), one call at a time from the goroutines reading the runs.
// Cancel ctx to stop it.
func CompareStored(ctx context.Context, db *store.DB, a, b *Run, opt *CompareOptions, progress func(LoadProgress)) (*Compared, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	if a.ID == b.ID {
		return nil, &SameRunError{A: a.ID, B: b.ID, ID: a.ID}
	}
	var data [2]compare.RunData
	for i, r := range []*Run{a, b} {
		var err error
		if data[i], err = compare.LoadRun(ctx, db, r); err != nil {
			return nil, err
		}
	}
	if progress != nil {
		o := DefaultCompareOptions()
		if opt != nil {
			o = *opt
		}
		countItems(&data, compare.Passes(data[0], data[1], o), progress)
	}
	return compareData(a, b, data[0], data[1], opt)
}

// compareProgressEvery is how many items CompareStored reads between two
// progress reports.
const compareProgressEvery = 8192

// countItems makes both runs' item streams report progress over the
// comparison's passes (each reads both runs): the items read of both
// runs' counts times passes, and Read = Total once every read has ended.
func countItems(data *[2]compare.RunData, passes int, progress func(LoadProgress)) {
	var mu sync.Mutex
	read, ended, streams := 0, 0, 0
	for i := range data {
		if data[i].Stream != nil {
			streams += max(passes, 1)
		}
	}
	total := (max(data[0].ItemsHint, 0) + max(data[1].ItemsHint, 0)) * max(passes, 1)
	report := func(n int, end bool) {
		mu.Lock()
		defer mu.Unlock()
		read += n
		if end {
			ended++
		}
		switch {
		case ended == streams:
			total = max(total, read)
			progress(LoadProgress{Read: total, Total: total})
		default:
			// Never Read = Total before every read has ended: the hint may count
			// an item more than the streams hold.
			progress(LoadProgress{Read: min(read, max(total-1, 0)), Total: total})
		}
	}
	for i := range data {
		stream := data[i].Stream
		if stream == nil {
			continue
		}
		data[i].Stream = func(yield func(*compare.Item) error) error {
			n := 0
			err := stream(func(it *compare.Item) error {
				if n++; n == compareProgressEvery {
					report(n, false)
					n = 0
				}
				return yield(it)
			})
			report(n, true)
			return err
		}
	}
}

// ItemAnswers returns one item's first-repeat results in run by question
// id, with the labels the run stored: what a screen shows of an item it
// picked (a flip, a wrong answer) without loading the run.
func ItemAnswers(ctx context.Context, db *store.DB, run *Run, itemID string) (map[string]*ItemResult, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	as, err := db.ItemAnswers(ctx, run.ID, itemID)
	if err != nil {
		return nil, fmt.Errorf("run %s item %s: %w", run.ID, itemID, err)
	}
	out := map[string]*ItemResult{}
	for i := range as {
		a := &as[i]
		if a.Repeat != 0 {
			continue
		}
		out[a.QuestionID] = itemResultOf(a)
	}
	return out, nil
}

// compareData checks opt against the two runs (a --map or --allow-changed
// naming what neither run has is the caller's mistake) and compares them.
func compareData(a, b *Run, da, db compare.RunData, opt *CompareOptions) (*Compared, error) {
	o := DefaultCompareOptions()
	if opt != nil {
		o = *opt
	}
	if err := compare.CheckOptions(da, db, o); err != nil {
		return nil, &OptionsError{A: a.ID, B: b.ID, Err: err}
	}
	c, err := compare.CompareLoaded(da, db, o)
	if err != nil {
		return nil, err
	}
	return &Compared{A: a, B: b, Comparison: c}, nil
}

// RefError says a run reference matched no stored run.
type RefError struct {
	Ref string
	Err error
}

func (e *RefError) Error() string { return fmt.Sprintf("run %q: %v (see jevlab runs)", e.Ref, e.Err) }

// Unwrap returns the store's error.
func (e *RefError) Unwrap() error { return e.Err }

// OptionsError says comparison options do not fit the two runs.
type OptionsError struct {
	A, B string
	Err  error
}

func (e *OptionsError) Error() string { return fmt.Sprintf("runs %s and %s: %v", e.A, e.B, e.Err) }

// Unwrap returns the comparison's error.
func (e *OptionsError) Unwrap() error { return e.Err }

// CompareViews compares two run views already loaded (the workbench keeps
// them), exactly as CompareRuns would.
func CompareViews(a, b *RunView, opt *CompareOptions) (*Compared, error) {
	if a.Run.ID == b.Run.ID {
		return nil, &SameRunError{A: a.Run.ID, B: b.Run.ID, ID: a.Run.ID}
	}
	for _, v := range []*RunView{a, b} {
		if v.summarized || v.streamed {
			return nil, fmt.Errorf("run %s: loaded as a stored report only (ViewConfig.ReportOnly), without the answers a comparison pairs", v.Run.ID)
		}
	}
	return compareData(a.Run, b.Run, a.data, b.data, opt)
}

// SameRunError says both sides of a comparison are one run.
type SameRunError struct{ A, B, ID string }

func (e *SameRunError) Error() string {
	return fmt.Sprintf("%s and %s are the same run %s", e.A, e.B, e.ID)
}

// Paired counts the items paired across every question of c.
func Paired(c *Comparison) int {
	n := 0
	for _, q := range c.Questions {
		n += q.Paired
	}
	return n
}
