package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/evals/workbench"
	examples "github.com/jevlab/jevlab/fixtures"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
	"github.com/jevlab/jevlab/store"
)

// asciiRenderer draws without colour so golden files are stable.
func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return r
}

// fakeProvider answers deterministically from a hash of model, state and
// each question, so an edited question gets a different distribution. It
// counts calls.
type fakeProvider struct {
	mu    sync.Mutex
	calls int
	block chan struct{} // when set, Ask waits for it or ctx
}

func (f *fakeProvider) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	f.mu.Lock()
	f.calls++
	block := f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, &provider.Error{Kind: provider.KindCanceled, Err: ctx.Err()}
		}
	}
	res := &provider.Result{Model: "standin-fake", Usage: provider.Usage{InputTokens: 100 * int64(len(req.Questions))}}
	for _, qe := range req.Questions {
		body, _ := qe.Question.MarshalJSON()
		n := qe.Question.Size()
		ps := make([]float64, n)
		sum := 0.0
		for i := range ps {
			h := fnv.New64a()
			h.Write(req.State)
			h.Write(body)
			h.Write([]byte{byte(i)})
			ps[i] = math.Pow(float64(h.Sum64()%1000)/1000+0.01, 3)
			sum += ps[i]
		}
		a := provider.Answer{ID: qe.ID, Type: qe.Question.Type, Provenance: provider.Provenance{Source: provider.SourceStandIn, Model: "standin-fake"}}
		best := 0
		for i := range ps {
			ps[i] /= sum
			if ps[i] > ps[best] {
				best = i
			}
		}
		switch qe.Question.Type {
		case provider.Noul:
			a.P = ps[0]
		case provider.Choice:
			a.Probs, a.Choice, a.Confidence, a.HasConfidence = ps, qe.Question.Options[best].Label, ps[best], true
		case provider.Score:
			for i, p := range ps {
				a.Score += float64(i) * p
			}
			a.Probs, a.Confidence, a.HasConfidence = ps, ps[best], true
		}
		res.Answers = append(res.Answers, a)
	}
	res.CostUSD = provider.Cost(res.Usage, provider.CostPerMillionInputTokens)
	return res, nil
}

const triageYAML = `name: support-triage
model: jev-latest
state:
  message: "I was charged twice: refund the charges on my invoice for order A-104"
questions:
  team:
    type: choice
    instructions: Which team should handle this ticket?
    criteria:
      billing: {what: "charges, refunds, invoices", not_for: "delivery"}
      orders: null
      shipping: Parcels, couriers and delivery times.
  urgent:
    type: noul
    instructions: Does this need attention today?
    threshold: 0.7
  anger:
    type: score
    instructions: How upset is the customer?
    criteria: [calm, annoyed, furious]
`

// triageSet writes the triage set to a temp dir and loads it.
func triageSet(t testing.TB) *questionset.Set {
	t.Helper()
	path := filepath.Join(t.TempDir(), "triage.yaml")
	if err := os.WriteFile(path, []byte(triageYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := questionset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bankingSet builds the Banking77 set with the first recorded line's state,
// and a cache replaying that one line offline.
func bankingSet(t testing.TB) (*questionset.Set, provider.Provider) {
	t.Helper()
	dir := testutil.Testdata(t, "banking77")
	f, err := os.Open(filepath.Join(dir, "recorded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	if !sc.Scan() {
		t.Fatal("empty recorded.jsonl")
	}
	line := append([]byte(nil), sc.Bytes()...)
	var ex struct {
		Request struct {
			State     json.RawMessage `json:"state"`
			Questions json.RawMessage `json:"questions"`
		} `json:"request"`
	}
	if err := json.Unmarshal(line, &ex); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	fx := filepath.Join(tmp, "recorded.jsonl")
	if err := os.WriteFile(fx, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `{"name":"banking77","model":"jev-latest","state":` + string(ex.Request.State) + `,"questions":` + string(ex.Request.Questions) + `}`
	path := filepath.Join(tmp, "banking77.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := questionset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fixtures.NewCache(fixtures.CacheConfig{Files: []string{fx}})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// drive feeds msgs to m, running every command synchronously (ticks and
// batches included, to a bounded depth) — for unit tests that need no
// program.
func drive(m *Model, msgs ...tea.Msg) {
	for _, msg := range msgs {
		runMsg(m, msg, 0)
	}
}

func runMsg(m *Model, msg tea.Msg, depth int) {
	if depth > 8 || msg == nil {
		return
	}
	_, cmd := m.Update(msg)
	runCmd(m, cmd, depth)
}

func runCmd(m *Model, cmd tea.Cmd, depth int) {
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(m, c, depth+1)
		}
	case tea.QuitMsg:
	default:
		if strings.HasPrefix(typeName(msg), "spinner.") {
			return // ticks would loop
		}
		runMsg(m, msg, depth+1)
	}
}

func typeName(v any) string {
	if v == nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimPrefix(fmtType(v), "*"), "")
}

func keys(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return out
}

func press(t tea.KeyType) tea.Msg { return tea.KeyMsg{Type: t} }

// demoTriage opens the shipped demo-triage example the way `jevlab` opens
// the default one: embedded set, dataset and recordings, offline.
func demoTriage(t testing.TB) Options {
	t.Helper()
	set, err := examples.LoadSet(examples.DemoTriageSet)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := examples.FixturePaths(examples.DemoTriageSet)
	if err != nil {
		t.Fatal(err)
	}
	readers := map[string]func() (io.ReadCloser, error){}
	for _, p := range paths {
		readers[p] = func() (io.ReadCloser, error) { return examples.FS.Open(p) }
	}
	c, err := fixtures.NewCache(fixtures.CacheConfig{Readers: readers})
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions(set, c, "offline")
	name := path.Join(examples.Dir(examples.DemoTriageSet), set.Dataset)
	opt.Session = workbench.NewSession(set, workbench.DatasetSource{Path: name, Open: func() (io.ReadCloser, error) { return examples.FS.Open(name) }}, nil)
	return opt
}

// withDB gives opt's session a run template storing runs in db (one
// worker, so runs are reproducible).
func withDB(opt *Options, db *store.DB) *store.DB {
	opt.Session.Template = &workbench.RunTemplate{DB: db, Concurrency: 1, Version: "test"}
	return db
}

// seedRuns stores two evaluations of opt's set over its dataset: A from
// opt's provider (the recordings), B from the fake provider, so they
// differ. It returns the run ids.
func seedRuns(t testing.TB, opt Options, db *store.DB) (string, string) {
	t.Helper()
	ctx := context.Background()
	raw, err := workbench.LoadItems(ctx, opt.Session.Set, opt.Session.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := opt.Session.Labelled(raw)
	a, err := runner.Run(ctx, runner.Config{Set: opt.Set, Items: items, Provider: opt.Provider, DB: db, Name: "recorded", Concurrency: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := runner.Run(ctx, runner.Config{Set: opt.Set, Items: items, Provider: &fakeProvider{}, DB: db, Name: "synthetic", Concurrency: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func lipglossWidth(s string) int { return lipgloss.Width(s) }

// standinClient returns the live client pointed at an in-process stand-in
// (synthetic answers) on loopback.
func standinClient(t testing.TB) provider.Provider {
	t.Helper()
	srv, err := standin.New(standin.Config{Synthetic: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := systemone.New(systemone.Config{BaseURL: ts.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// countingProvider counts calls.
type countingProvider struct {
	mu    sync.Mutex
	calls int
	p     provider.Provider
}

func (c *countingProvider) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.p.Ask(ctx, req)
}

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

// sizes every screen is tested at.
var sizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"160x48", 160, 48}}

var fixedNow = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func testOptions(set *questionset.Set, p provider.Provider, mode string) Options {
	return Options{Set: set, Provider: p, Mode: mode, Renderer: asciiRenderer(), Now: func() time.Time { return fixedNow }, PollEvery: -1}
}

// startTM starts a teatest program on m at w×h.
func startTM(t *testing.T, m *Model, w, h int) *teatest.TestModel {
	t.Helper()
	return teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
}

// waitFor waits until the program's output contains every one of texts.
func waitFor(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	var seen []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen = append(seen, b...)
		for _, s := range texts {
			if !bytes.Contains(seen, []byte(s)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// finish quits the program and returns the final model's frame.
func finish(t *testing.T, tm *teatest.TestModel) (*Model, string) {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	return fm, fm.View()
}

func typeKeys(tm *teatest.TestModel, msgs ...tea.Msg) {
	for _, m := range msgs {
		tm.Send(m)
	}
}

// newTriage opens the triage set against H2's stand-in, in process: the
// real HTTP client talking to the stand-in handler on loopback, answering
// synthetically. The counter counts requests the stand-in received.
func newTriage(t *testing.T) (*Model, *questionset.Set, *countingProvider) {
	t.Helper()
	set := triageSet(t)
	p := &countingProvider{p: standinClient(t)}
	m, err := New(context.Background(), testOptions(set, p, "stand-in"))
	if err != nil {
		t.Fatal(err)
	}
	return m, set, p
}

// startTriage starts a teatest program on the triage set (newTriage) at
// w×h and waits for the design screen's first frame.
func startTriage(t *testing.T, w, h int) (*teatest.TestModel, *questionset.Set, *countingProvider) {
	t.Helper()
	m, set, p := newTriage(t)
	tm := startTM(t, m, w, h)
	waitFor(t, tm, "Questions (3)")
	return tm, set, p
}

// startDataset starts a teatest program on the workbench for opt at w×h,
// switches to the dataset screen and waits for the demo set's 10 items to
// load.
func startDataset(t *testing.T, opt Options, w, h int) *teatest.TestModel {
	t.Helper()
	tm := startTM(t, newModel(t, opt), w, h)
	tm.Type("2")
	waitFor(t, tm, "Items 10 of 10")
	return tm
}
