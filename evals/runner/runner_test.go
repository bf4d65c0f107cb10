package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
	"github.com/jevlab/jevlab/store"
)

const testSetYAML = `name: triage
model: jev-latest
questions:
  team:
    type: choice
    instructions: Which team should handle this ticket?
    criteria:
      billing: charges, refunds, invoices
      orders: delivery and order status
      account: login and profile
  urgent:
    type: noul
    instructions: Does this need attention today?
    threshold: 0.7
  anger:
    type: score
    instructions: How upset is the customer?
    criteria: [calm, annoyed, furious]
`

func testSet(t testing.TB) *questionset.Set {
	t.Helper()
	s, err := questionset.Parse("triage.yaml", []byte(testSetYAML))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wideSet has n choice questions (the throughput benchmark uses 8).
func wideSet(t testing.TB, n int) *questionset.Set {
	var b strings.Builder
	b.WriteString("name: wide\nquestions:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  q%d:\n    type: choice\n    instructions: Which area is message %d about?\n    criteria:\n      billing: charges and refunds\n      orders: delivery\n      account: login\n", i, i)
	}
	s, err := questionset.Parse("wide.yaml", []byte(b.String()))
	if err != nil {
		panic(err)
	}
	return s
}

// newLoopbackServer serves h on 127.0.0.1.
func newLoopbackServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

var words = []string{"charged", "twice", "refund", "delivery", "late", "login", "password", "invoice", "order", "angry", "today", "urgent"}

func genItems(n int) []dataset.Item {
	items := make([]dataset.Item, n)
	teams := []string{"billing", "orders", "account"}
	for i := range items {
		text := fmt.Sprintf("ticket %d: %s %s %s", i, words[i%len(words)], words[(i*7)%len(words)], words[(i*5+3)%len(words)])
		st, _ := json.Marshal(text)
		items[i] = dataset.Item{ID: fmt.Sprintf("item-%05d", i), State: st, Line: i + 1,
			Labels: map[string]dataset.Label{"team": {Index: i % 3, Text: teams[i%3]}}}
	}
	return items
}

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jevlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// standinClient starts an in-process stand-in and returns a client for it.
func standinClient(t testing.TB, f standin.Faults, cc systemone.Config) (*systemone.Client, *standin.Server) {
	t.Helper()
	srv, err := standin.New(standin.Config{Synthetic: true, APIKey: "test-key-not-real", Faults: f, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	cc.BaseURL = hs.URL
	cc.APIKey = "test-key-not-real"
	c, err := systemone.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

// answersByKey returns "item/question/repeat" → decided value or error kind.
func answersByKey(t testing.TB, db *store.DB, runID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := db.ForEachAnswer(context.Background(), runID, func(a *store.ItemAnswer) error {
		k := fmt.Sprintf("%s/%s/%d", a.ItemID, a.QuestionID, a.Repeat)
		if _, dup := out[k]; dup {
			t.Errorf("duplicate answer %s", k)
		}
		v := "err:" + a.ErrKind
		if a.Answer != nil {
			b, _ := json.Marshal(a.Answer.Probs)
			v = fmt.Sprintf("%s p=%g %s", a.Decided, a.Answer.P, b)
		}
		out[k] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRunAgainstStandIn(t *testing.T) {
	db := openDB(t)
	c, _ := standinClient(t, standin.Faults{}, systemone.Config{Concurrency: 8})
	items := genItems(300)
	progress := make(chan Progress, 64)
	var last Progress
	var events int
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() {
		defer pwg.Done()
		for p := range progress {
			last = p
			events++
		}
	}()
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: items, DatasetPath: "gen.jsonl", Provider: c, DB: db,
		Concurrency: 8, Name: "first", ProviderKind: "stand-in"}, progress)
	pwg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusDone || r.Done != 300 || r.Errors != 0 || r.Total != 300 || r.Name != "first" || r.DatasetPath != "gen.jsonl" {
		t.Errorf("run = %+v", r)
	}
	if len(r.Models) != 1 || !strings.HasPrefix(r.Models[0], "standin-") {
		t.Errorf("resolved models = %v, want one standin-*", r.Models)
	}
	if !last.Final || last.Done != 300 || last.Total != 300 || events < 1 {
		t.Errorf("last progress = %+v after %d events", last, events)
	}
	ans, err := db.RunAnswers(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ans) != 900 {
		t.Fatalf("answers = %d, want 900 (300 items × 3 questions)", len(ans))
	}
	labelled := 0
	for _, a := range ans {
		if a.Answer == nil {
			t.Fatalf("answer %s/%s failed: %s", a.ItemID, a.QuestionID, a.ErrMsg)
		}
		switch a.QuestionID {
		case "team":
			if a.Label == nil || a.Decided != a.Answer.Choice || len(a.Answer.Probs) != 3 {
				t.Errorf("team answer %+v", a)
			}
			labelled++
		case "urgent":
			want := "false"
			if a.Answer.P >= 0.7 {
				want = "true"
			}
			if a.Decided != want || a.Label != nil {
				t.Errorf("urgent p=%g decided %q, want %q at threshold 0.7", a.Answer.P, a.Decided, want)
			}
		case "anger":
			if len(a.Answer.Probs) != 3 || a.Decided == "" {
				t.Errorf("anger answer %+v", a)
			}
		}
	}
	if labelled != 300 {
		t.Errorf("labelled team answers = %d", labelled)
	}
	// The snapshots round-trip.
	snap, err := db.QuestionSetSnapshot(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	set2, err := ParseSnapshot("snapshot", snap.Body)
	if err != nil {
		t.Fatal(err)
	}
	if set2.Threshold("urgent") != 0.7 || len(set2.Questions) != 3 || string(SnapshotJSON(set2)) != string(snap.Body) {
		t.Errorf("snapshot did not round-trip:\n%s\n%s", snap.Body, SnapshotJSON(set2))
	}
	n := 0
	db.DatasetItems(context.Background(), id, func(it store.DatasetItem) error {
		if it.ID != items[n].ID || string(it.State) != string(items[n].State) {
			t.Errorf("dataset item %d = %+v", n, it)
		}
		l, _ := ParseLabels(it.Labels)
		if l["team"] != items[n].Labels["team"] {
			t.Errorf("labels %d = %v", n, l)
		}
		n++
		return nil
	})
	if n != 300 {
		t.Errorf("dataset items = %d", n)
	}
}

// fakeProvider answers every question synthetically in-process, with hooks.
type fakeProvider struct {
	calls     atomic.Int64
	fresh     atomic.Int64
	cost      float64
	delay     time.Duration
	fail      func(req *provider.Request) error
	inflight  atomic.Int64
	maxFlight atomic.Int64
}

func (f *fakeProvider) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	f.calls.Add(1)
	if provider.IsFresh(ctx) {
		f.fresh.Add(1)
	}
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, &provider.Error{Kind: provider.KindCanceled, Err: ctx.Err()}
		}
	}
	if f.fail != nil {
		if err := f.fail(req); err != nil {
			return nil, err
		}
	}
	res := &provider.Result{Model: "fake-1", Usage: provider.Usage{InputTokens: 100}, CostUSD: f.cost, Latency: time.Millisecond}
	h := len(req.State)
	for _, e := range req.Questions {
		a := provider.Answer{ID: e.ID, Type: e.Question.Type, Provenance: provider.Provenance{Source: provider.SourceLive, Model: "fake-1"}}
		switch e.Question.Type {
		case provider.Noul:
			a.P = float64(h%10) / 10
		default:
			k := e.Question.Size()
			a.Probs = make([]float64, k)
			a.Probs[h%k] = 1
			a.Confidence, a.HasConfidence = 0.9, true
			if e.Question.Type == provider.Choice {
				a.Choice = e.Question.Options[h%k].Label
			} else {
				a.Score = float64(h % k)
			}
		}
		res.Answers = append(res.Answers, a)
	}
	return res, nil
}

func TestRepeatAsksFreshAfterFirst(t *testing.T) {
	db := openDB(t)
	f := &fakeProvider{}
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: genItems(40), Provider: f, DB: db, Repeat: 3, Concurrency: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.calls.Load() != 120 || f.fresh.Load() != 80 {
		t.Errorf("calls = %d (want 120), fresh = %d (want 80: repeats 1 and 2)", f.calls.Load(), f.fresh.Load())
	}
	got := answersByKey(t, db, id)
	if len(got) != 40*3*3 {
		t.Errorf("answers = %d, want 360", len(got))
	}
	if _, ok := got["item-00007/team/2"]; !ok {
		t.Error("repeat 2 missing")
	}
	if f.maxFlight.Load() > 4 {
		t.Errorf("max in flight = %d, want <= 4", f.maxFlight.Load())
	}
}

// orderProvider wraps fakeProvider and notes every fresh asking (a repeat)
// of a state whose first asking had not yet finished: there a cache would
// answer the first asking with the repeat's answer.
type orderProvider struct {
	fakeProvider
	firstDelay time.Duration
	mu         sync.Mutex
	firstDone  map[string]bool
	early      []string
}

func (o *orderProvider) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	state := string(req.State)
	if provider.IsFresh(ctx) {
		o.mu.Lock()
		if !o.firstDone[state] {
			o.early = append(o.early, state)
		}
		o.mu.Unlock()
		return o.fakeProvider.Ask(ctx, req)
	}
	time.Sleep(o.firstDelay) // a slow cache lookup or first call
	res, err := o.fakeProvider.Ask(ctx, req)
	o.mu.Lock()
	o.firstDone[state] = true
	o.mu.Unlock()
	return res, err
}

func TestRepeatsWaitForTheFirstAsking(t *testing.T) {
	db := openDB(t)
	// With the repeats of an item spread over idle workers, each would
	// start while the slow first asking sleeps: 16 early ones.
	o := &orderProvider{firstDelay: 20 * time.Millisecond, firstDone: map[string]bool{}}
	if _, err := Run(context.Background(), Config{Set: testSet(t), Items: genItems(8), Provider: o, DB: db, Repeat: 3, Concurrency: 4}, nil); err != nil {
		t.Fatal(err)
	}
	if len(o.early) > 0 {
		t.Errorf("%d repeats were asked before their item's first asking finished (first: %s)", len(o.early), o.early[0])
	}
	if o.calls.Load() != 24 || o.fresh.Load() != 16 {
		t.Errorf("calls = %d (want 24), fresh = %d (want 16)", o.calls.Load(), o.fresh.Load())
	}
}

func TestErrorsRecordedNotCounted(t *testing.T) {
	db := openDB(t)
	f := &fakeProvider{fail: func(req *provider.Request) error {
		s := string(req.State)
		switch {
		case strings.Contains(s, "ticket 3:"):
			return &provider.Error{Kind: provider.KindRateLimited, Status: 429, Attempts: 5}
		case strings.Contains(s, "ticket 5:"):
			return &provider.CheckError{Problems: []error{errors.New("bad sum")}}
		case strings.Contains(s, "ticket 8:"):
			return errors.New("something odd")
		}
		return nil
	}}
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: genItems(10), Provider: f, DB: db}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := db.Run(context.Background(), id)
	if r.Status != store.StatusDone || r.Done != 10 || r.Errors != 3 {
		t.Errorf("run: status %s done %d errors %d; want done 10 errors 3", r.Status, r.Done, r.Errors)
	}
	got := answersByKey(t, db, id)
	for k, want := range map[string]string{"item-00003/team/0": "err:rate_limited", "item-00005/urgent/0": "err:malformed", "item-00008/anger/0": "err:error"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	var attempts int
	db.ForEachItemResult(context.Background(), id, func(it *store.ItemResult) error {
		if it.ItemID == "item-00003" {
			attempts = it.Attempts
		}
		return nil
	})
	if attempts != 5 {
		t.Errorf("attempts recorded = %d, want 5", attempts)
	}
}

func TestAuthErrorStopsRun(t *testing.T) {
	db := openDB(t)
	f := &fakeProvider{fail: func(*provider.Request) error {
		return &provider.Error{Kind: provider.KindAuth, Status: 401, Message: "invalid key"}
	}}
	id, err := Run(context.Background(), Config{Set: testSet(t), Items: genItems(500), Provider: f, DB: db, Concurrency: 2}, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid key") || errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	r, _ := db.Run(context.Background(), id)
	if r.Status != store.StatusFailed || !strings.Contains(r.Reason, "auth") || f.calls.Load() > 10 {
		t.Errorf("run %s reason %q after %d calls", r.Status, r.Reason, f.calls.Load())
	}
}

func TestCancelThenResume(t *testing.T) {
	set := testSet(t)
	items := genItems(1000)
	// Reference: an uninterrupted run.
	refDB := openDB(t)
	refID, err := Run(context.Background(), Config{Set: set, Items: items, Provider: &fakeProvider{}, DB: refDB}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := answersByKey(t, refDB, refID)

	db := openDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeProvider{delay: 2 * time.Millisecond}
	progress := make(chan Progress, 16)
	go func() {
		for p := range progress {
			if p.Done >= 200 {
				cancel()
			}
		}
	}()
	id, err := Run(ctx, Config{Set: set, Items: items, Provider: f, DB: db, Concurrency: 8, FlushEvery: 10 * time.Millisecond, Grace: 50 * time.Millisecond}, progress)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("canceled run err = %v, want ErrInterrupted", err)
	}
	r, _ := db.Run(context.Background(), id)
	if r.Status != store.StatusInterrupted || r.Done < 200 || r.Done >= 1000 {
		t.Fatalf("after cancel: %+v", r)
	}
	stored := r.Done
	f2 := &fakeProvider{}
	id2, err := Run(context.Background(), Config{Set: set, Items: items, Provider: f2, DB: db, Resume: id[:12]}, nil)
	if err != nil || id2 != id {
		t.Fatalf("resume = %s, %v", id2, err)
	}
	if int(f2.calls.Load()) != 1000-stored {
		t.Errorf("resume asked %d items, want %d (1000 - %d stored)", f2.calls.Load(), 1000-stored, stored)
	}
	r, _ = db.Run(context.Background(), id)
	if r.Status != store.StatusDone || r.Done != 1000 {
		t.Errorf("after resume: %+v", r)
	}
	got := answersByKey(t, db, id)
	if len(got) != len(want) {
		t.Fatalf("answers = %d, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("answer %s = %q, uninterrupted run has %q", k, got[k], v)
		}
	}
	// Resuming a finished run does nothing.
	f3 := &fakeProvider{}
	if _, err := Run(context.Background(), Config{Set: set, Items: items, Provider: f3, DB: db, Resume: id}, nil); err != nil || f3.calls.Load() != 0 {
		t.Errorf("resume of a done run: %v, %d calls", err, f3.calls.Load())
	}
}

func TestResumeRefusesChangedInputs(t *testing.T) {
	db := openDB(t)
	set := testSet(t)
	items := genItems(20)
	id, err := Run(context.Background(), Config{Set: set, Items: items, Provider: &fakeProvider{}, DB: db}, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.MarkRun(context.Background(), id, store.StatusInterrupted, "test")
	reworded, _ := questionset.Parse("triage.yaml", []byte(strings.Replace(testSetYAML, "attention today", "attention within the day", 1)))
	var inErr *InputError
	if _, err := Run(context.Background(), Config{Set: reworded, Items: items, Provider: &fakeProvider{}, DB: db, Resume: id}, nil); !errors.As(err, &inErr) || !strings.Contains(err.Error(), "question set changed") {
		t.Errorf("reworded set: %v", err)
	}
	changed := genItems(20)
	changed[4].State = json.RawMessage(`"something else"`)
	if _, err := Run(context.Background(), Config{Set: set, Items: changed, Provider: &fakeProvider{}, DB: db, Resume: id}, nil); err == nil || !strings.Contains(err.Error(), "dataset changed") {
		t.Errorf("changed dataset: %v", err)
	}
	if _, err := Run(context.Background(), Config{Set: set, Items: items, Provider: &fakeProvider{}, DB: db, Resume: "r-nope"}, nil); err == nil || !strings.Contains(err.Error(), "no run") {
		t.Errorf("unknown run: %v", err)
	}
	dup := genItems(3)
	dup[2].ID = dup[0].ID
	if _, err := Run(context.Background(), Config{Set: set, Items: dup, Provider: &fakeProvider{}, DB: db}, nil); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("duplicate ids: %v", err)
	}
}

func TestMaxCostStopsBeforeExceeding(t *testing.T) {
	db := openDB(t)
	set := testSet(t)
	items := genItems(100)
	// Each request costs $0.001; the estimate from size is far lower, so
	// the cap is enforced through the costliest request seen.
	f := &fakeProvider{cost: 0.001}
	id, err := Run(context.Background(), Config{Set: set, Items: items, Provider: f, DB: db, Concurrency: 4, MaxCostUSD: 0.0205}, nil)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want interrupted", err)
	}
	r, _ := db.Run(context.Background(), id)
	if r.CostUSD > 0.0205+1e-9 {
		t.Errorf("spent $%g above the $0.0205 cap", r.CostUSD)
	}
	// With 4 in flight before any cost is known, at most 4 calls run at the
	// size estimate; from then on each call holds $0.001.
	if r.Status != store.StatusInterrupted || !strings.Contains(r.Reason, "max-cost") || r.Done < 16 {
		t.Errorf("run: %s %q done %d cost %g", r.Status, r.Reason, r.Done, r.CostUSD)
	}
	if int(f.calls.Load()) != r.Done {
		t.Errorf("calls %d != stored %d", f.calls.Load(), r.Done)
	}
}

func TestDryRun(t *testing.T) {
	db := openDB(t)
	set := testSet(t)
	items := genItems(10)
	est, err := DryRun(context.Background(), Config{Set: set, Items: items, DB: db, Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	var bytes int64
	for _, it := range items {
		b, _ := set.Request(it.State).MarshalJSON()
		bytes += int64(len(b))
	}
	if est.Items != 10 || est.Requests != 20 || est.RequestBytes != bytes || est.InputTokens != bytes/4*2 || !strings.Contains(est.Basis, "request size") {
		t.Errorf("estimate = %+v (bytes %d)", est, bytes)
	}
	if want := float64(est.InputTokens) * 0.042 / 1e6; est.CostUSD != want {
		t.Errorf("cost = %g, want %g", est.CostUSD, want)
	}
	// After a run measured 100 tokens per item, the estimate uses that.
	if _, err := Run(context.Background(), Config{Set: set, Items: items, Provider: &fakeProvider{}, DB: db}, nil); err != nil {
		t.Fatal(err)
	}
	est, _ = DryRun(context.Background(), Config{Set: set, Items: items, DB: db, Repeat: 2})
	if est.InputTokens != 2000 || !strings.Contains(est.Basis, "measured") {
		t.Errorf("measured estimate = %+v, want 2000 tokens", est)
	}
}
