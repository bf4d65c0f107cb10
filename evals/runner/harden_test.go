package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/store"
)

// failingStore is the database as the answer cache sees it, failing every
// SaveExchange after the first ok ones with "no space left on device"
// while fail is set.
type failingStore struct {
	*store.DB
	ok    int64
	saves atomic.Int64
	fail  atomic.Bool
}

func (f *failingStore) SaveExchange(ctx context.Context, ex provider.Exchange) error {
	if f.fail.Load() && f.saves.Add(1) > f.ok {
		return fmt.Errorf("write exchange: %w", syscall.ENOSPC)
	}
	return f.DB.SaveExchange(ctx, ex)
}

// TestLocalWriteFailureStopsTheSpending: when the answers cannot be
// recorded (a full disk), the run stops at the first failure and is marked
// failed, and every answer the provider sent is counted in its spend. The
// old runner went on through every item, counting none of their cost.
func TestLocalWriteFailureStopsTheSpending(t *testing.T) {
	db := openDB(t)
	fs := &failingStore{DB: db, ok: 20}
	fs.fail.Store(true)
	const price = 0.001
	up := &fakeProvider{cost: price, delay: time.Millisecond}
	cache, err := fixtures.NewCache(fixtures.CacheConfig{Store: fs, Upstream: up})
	if err != nil {
		t.Fatal(err)
	}
	items := genItems(500)
	progress := make(chan Progress, 1024)
	var last Progress
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range progress {
			last = p
		}
	}()
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: items, Provider: cache, DB: db, Concurrency: 4}, progress)
	<-done
	if err == nil || provider.KindOf(err) != provider.KindLocal || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Run = %v; want a local write error (ENOSPC)", err)
	}
	calls := up.calls.Load()
	if calls > 20+1+2*4 {
		t.Errorf("the provider was asked %d times; the run must stop at the first failed write (20 ok + the 4 in flight)", calls)
	}
	r, _ := db.Run(context.Background(), id)
	if r.Status != store.StatusFailed || r.Reason == "" {
		t.Errorf("run status %s (%q), want failed with the reason", r.Status, r.Reason)
	}
	want := float64(calls) * price
	if math.Abs(r.CostUSD-want) > 1e-9 || math.Abs(last.CostUSD-want) > 1e-9 || r.InputTokens != 100*calls {
		t.Errorf("spend: run $%g (%d tokens), progress $%g; the provider billed %d answers = $%g", r.CostUSD, r.InputTokens, last.CostUSD, calls, want)
	}
	if r.Errors == 0 || r.Done != int(calls) {
		t.Errorf("stored %d items (%d failed) for %d calls", r.Done, r.Errors, calls)
	}

	// The disk has room again: a resume asks again the items that failed
	// on our side (without --retry-errors) and ends with every item.
	fs.fail.Store(false)
	if _, err := Run(context.Background(), Config{Set: testSet(t), Items: items, Provider: cache, DB: db, Resume: id}, nil); err != nil {
		t.Fatal(err)
	}
	r, _ = db.Run(context.Background(), id)
	if r.Status != store.StatusDone || r.Done != 500 || r.Errors != 0 {
		t.Errorf("after resume: %s done %d errors %d", r.Status, r.Done, r.Errors)
	}
	if want := float64(up.calls.Load()) * price; math.Abs(r.CostUSD-want) > 1e-9 {
		t.Errorf("after resume the run reports $%g; the provider billed $%g", r.CostUSD, want)
	}
}

// TestRecordFileThatCannotBeOpenedCostsNothing: a fixture file that cannot
// be opened stops the run before the first request.
func TestRecordFileThatCannotBeOpenedCostsNothing(t *testing.T) {
	db := openDB(t)
	up := &fakeProvider{cost: 0.001}
	cache, err := fixtures.NewCache(fixtures.CacheConfig{Store: db, Upstream: up, RecordTo: t.TempDir() + "/no/such/dir/r.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: genItems(50), Provider: cache, DB: db, Concurrency: 4}, nil)
	if provider.KindOf(err) != provider.KindLocal {
		t.Fatalf("Run = %v; want a local write error", err)
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("%d requests were sent before the fixture file failed to open", n)
	}
	if r, _ := db.Run(context.Background(), id); r.Status != store.StatusFailed {
		t.Errorf("status %s", r.Status)
	}
}

// TestRetryErrorsAsksTheFailedItemsAgain: --retry-errors on a resume asks
// the failed items again; the run ends with every item answered, the same
// done count, and the spend of both attempts.
func TestRetryErrorsAsksTheFailedItemsAgain(t *testing.T) {
	db := openDB(t)
	var first atomic.Bool
	first.Store(true)
	up := &fakeProvider{cost: 0.001, fail: func(req *provider.Request) error {
		if first.Load() && len(req.State)%3 == 0 {
			return &provider.Error{Kind: provider.KindUnavailable, Status: 503, Message: "overloaded"}
		}
		return nil
	}}
	items := genItems(120)
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: items, Provider: up, DB: db, Concurrency: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := db.Run(context.Background(), id)
	failed := r.Errors
	if failed == 0 || failed == 120 {
		t.Fatalf("first pass: %d of 120 failed; the test needs some", failed)
	}
	// Without --retry-errors a done run is left as it is.
	first.Store(false)
	callsBefore := up.calls.Load()
	if _, err := Run(context.Background(), Config{Set: testSet(t), Items: items, Provider: up, DB: db, Resume: id}, nil); err != nil {
		t.Fatal(err)
	}
	if up.calls.Load() != callsBefore {
		t.Fatal("a plain resume of a done run asked again")
	}
	if _, err := Run(context.Background(), Config{Set: testSet(t), Items: items, Provider: up, DB: db, Resume: id, RetryErrors: true}, nil); err != nil {
		t.Fatal(err)
	}
	if asked := up.calls.Load() - callsBefore; asked != int64(failed) {
		t.Errorf("--retry-errors asked %d items, want the %d that failed", asked, failed)
	}
	r, _ = db.Run(context.Background(), id)
	if r.Status != store.StatusDone || r.Done != 120 || r.Errors != 0 {
		t.Errorf("after retry: %s done %d errors %d", r.Status, r.Done, r.Errors)
	}
	// The failed attempts (billed nothing here, as the fake bills only
	// answers) plus every answer.
	if math.Abs(r.CostUSD-float64(120)*0.001) > 1e-9 {
		t.Errorf("cost $%g", r.CostUSD)
	}
	if got := answersByKey(t, db, id); len(got) != 360 {
		t.Errorf("%d answers, want 360", len(got))
	}
}

// TestResumeRestoresTheRunsSettings: a resume given nothing but the run
// restores its concurrency, spend cap and recorded settings; one given a
// setting that changes what the run measures is refused.
func TestResumeRestoresTheRunsSettings(t *testing.T) {
	db := openDB(t)
	up := &fakeProvider{cost: 0.0001, delay: 2 * time.Millisecond}
	items := genItems(300)
	started := Settings{Data: "/data/tickets.jsonl", Set: "/sets/triage.yaml", Fresh: true, RPS: 40, Timeout: Duration(7 * time.Second), Model: "jev-1.13.0"}
	ctx, cancel := context.WithCancel(context.Background())
	progress := make(chan Progress, 64)
	go func() {
		for p := range progress {
			if p.Done >= 60 {
				cancel()
			}
		}
	}()
	id, err := Run(ctx, Config{Set: testSet(t), Items: items, Provider: up, DB: db, Concurrency: 2, MaxCostUSD: 1.5, Settings: started, Grace: time.Second}, progress)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first run: %v", err)
	}
	r, _ := db.Run(context.Background(), id)
	stored, err := ParseSettings(r)
	if err != nil {
		t.Fatal(err)
	}
	want := started
	want.Repeat, want.Concurrency, want.MaxCostUSD = 1, 2, 1.5
	if fmt.Sprint(stored) != fmt.Sprint(want) {
		t.Fatalf("stored settings %+v, want %+v", stored, want)
	}

	// Refused: the resume would ask with other settings than the run's.
	other := started
	other.Fresh = false
	var ie *InputError
	if _, err := Run(context.Background(), Config{Set: testSet(t), Items: items, Provider: up, DB: db, Resume: id, Settings: other}, nil); !errors.As(err, &ie) {
		t.Fatalf("resume with --fresh dropped: %v, want an input error", err)
	}

	up.maxFlight.Store(0)
	if _, err := Run(context.Background(), Config{Set: testSet(t), Items: items, Provider: up, DB: db, Resume: id}, nil); err != nil {
		t.Fatal(err)
	}
	if m := up.maxFlight.Load(); m > 2 {
		t.Errorf("the resume ran %d requests at once; the run's concurrency is 2", m)
	}
	r, _ = db.Run(context.Background(), id)
	after, _ := ParseSettings(r)
	if fmt.Sprint(after) != fmt.Sprint(want) || r.Status != store.StatusDone || r.Done != 300 {
		t.Errorf("after resume: %s done %d settings %+v", r.Status, r.Done, after)
	}
}

// TestMergeOverridesAndRefuses: what a user gives again on a resume.
func TestMergeOverridesAndRefuses(t *testing.T) {
	s := Settings{Data: "/d.jsonl", Concurrency: 8, RPS: 15, Timeout: Duration(30 * time.Second), MaxCostUSD: 2, Repeat: 1}
	given := s
	given.Concurrency, given.MaxCostUSD = 4, 5
	changed := func(names ...string) func(string) bool {
		return func(f string) bool {
			for _, n := range names {
				if n == f {
					return true
				}
			}
			return false
		}
	}
	m, notes, err := s.Merge(given, changed(FlagConcurrency, FlagMaxCost, FlagRPS))
	if err != nil || m.Concurrency != 4 || m.MaxCostUSD != 5 || m.RPS != 15 || len(notes) != 2 {
		t.Fatalf("Merge = %+v %q %v", m, notes, err)
	}
	if notes[0] != "--concurrency 4 overrides the run's 8 (kept for later resumes)" || notes[1] != "--max-cost $5 overrides the run's $2 (kept for later resumes)" {
		t.Errorf("notes %q", notes)
	}
	// A flag left at its default is not an override.
	if m, notes, _ := s.Merge(Settings{}, changed()); fmt.Sprint(m) != fmt.Sprint(s) || len(notes) != 0 {
		t.Errorf("nothing given: %+v %q", m, notes)
	}
	for _, tc := range []struct {
		flag string
		edit func(*Settings)
	}{
		{FlagRepeat, func(g *Settings) { g.Repeat = 3 }},
		{FlagFresh, func(g *Settings) { g.Fresh = true }},
		{FlagModel, func(g *Settings) { g.Model = "jev-1.14.0" }},
		{FlagOffline, func(g *Settings) { g.Offline = true }},
		{FlagMaxCost, func(g *Settings) { g.MaxCostUSD = 0 }},
	} {
		g := s
		tc.edit(&g)
		if _, _, err := s.Merge(g, changed(tc.flag)); err == nil {
			t.Errorf("--%s changed on a resume was accepted", tc.flag)
		}
	}
}

// TestDatabaseFullReportsTheUnstoredSpend puts the database on a small
// tmpfs (root only; skipped elsewhere) so that storing items fails
// partway: the run stops, and the spend of the answers that could not be
// stored is reported (LostError, the final progress) instead of vanishing.
func TestDatabaseFullReportsTheUnstoredSpend(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	db, err := store.Open(filepath.Join(mnt, "jevlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const price = 0.001
	up := &fakeProvider{cost: price}
	progress := make(chan Progress, 4096)
	var last Progress
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range progress {
			last = p
		}
	}()
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: genItems(3000), Provider: up, DB: db, Concurrency: 4, BatchSize: 32}, progress)
	<-done
	var lost *LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("Run = %v; want a LostError over a full database", err)
	}
	calls := up.calls.Load()
	if calls >= 3000 {
		t.Fatalf("the run went on through every item (%d calls)", calls)
	}
	var storedCost float64
	if r, err := db.Run(context.Background(), id); err == nil {
		storedCost = r.CostUSD
	}
	want := float64(calls) * price
	if math.Abs(last.CostUSD-want) > 1e-9 || last.Unstored != lost.Answers || math.Abs(storedCost+lost.CostUSD-want) > 1e-9 {
		t.Errorf("billed $%g for %d calls; progress says $%g (%d unstored), stored $%g + lost $%g (%d answers)",
			want, calls, last.CostUSD, last.Unstored, storedCost, lost.CostUSD, lost.Answers)
	}
	t.Logf("%d calls: stored $%.3f, lost %d answers $%.3f: %v", calls, storedCost, lost.Answers, lost.CostUSD, err)
}
