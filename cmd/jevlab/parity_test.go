package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
	"github.com/jevlab/jevlab/tui"
)

// hashProvider answers every question from a hash of the state and the
// question id: a deterministic second opinion, so run B differs from the
// recordings.
type hashProvider struct{}

func (hashProvider) Ask(_ context.Context, req *provider.Request) (*provider.Result, error) {
	res := &provider.Result{Model: "hash-1"}
	for _, e := range req.Questions {
		n := e.Question.Size()
		ps := make([]float64, n)
		sum, best := 0.0, 0
		for i := range ps {
			h := fnv.New64a()
			h.Write(req.State)
			h.Write([]byte(e.ID))
			h.Write([]byte{byte(i)})
			ps[i] = math.Pow(float64(h.Sum64()%1000)/1000+0.01, 4)
			sum += ps[i]
		}
		for i := range ps {
			ps[i] /= sum
			if ps[i] > ps[best] {
				best = i
			}
		}
		a := provider.Answer{ID: e.ID, Type: e.Question.Type, Provenance: provider.Provenance{Source: provider.SourceStandIn, Model: "hash-1"}}
		switch e.Question.Type {
		case provider.Noul:
			a.P = ps[0]
		case provider.Choice:
			a.Probs, a.Choice, a.Confidence, a.HasConfidence = ps, e.Question.Options[best].Label, ps[best], true
		case provider.Score:
			for i, p := range ps {
				a.Score += float64(i) * p
			}
			a.Probs, a.Confidence, a.HasConfidence = ps, ps[best], true
		}
		res.Answers = append(res.Answers, a)
	}
	return res, nil
}

func parityEst(e metrics.Estimate) string {
	if math.IsNaN(e.Value) {
		return "—"
	}
	if math.IsNaN(e.Lo) || math.IsNaN(e.Hi) {
		return fmt.Sprintf("%.3f", e.Value)
	}
	return fmt.Sprintf("%.3f [%.3f,%.3f]", e.Value, e.Lo, e.Hi)
}

func parityDelta(e metrics.Estimate) string {
	return fmt.Sprintf("%+.3f [%+.3f,%+.3f]", e.Value, e.Lo, e.Hi)
}

// screenOf drives the workbench over db: keys, then waits for want and
// returns the last frame.
func screenOf(t *testing.T, set *questionset.Set, ds workbench.DatasetSource, db *store.DB, keys []string, want string) string {
	t.Helper()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	m, err := tui.New(context.Background(), tui.Options{
		Session:  workbench.NewSession(set, ds, &workbench.RunTemplate{DB: db}),
		Provider: hashProvider{}, Mode: "offline", Renderer: r, PollEvery: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(230, 90))
	var seen []byte
	wait := func(s string) {
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			seen = append(seen, b...)
			return bytes.Contains(seen, []byte(s))
		}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	tm.Type("4")
	wait("Runs 2 of 2")
	for _, k := range keys {
		if k == "enter" {
			tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
			continue
		}
		tm.Type(k)
	}
	wait(want)
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*tui.Model).View()
}

// rowOf is the screen line that starts (after markers) with the question id.
func rowOf(t *testing.T, view, id string) string {
	t.Helper()
	for _, l := range strings.Split(view, "\n") {
		f := strings.Fields(strings.TrimLeft(l, " ›▶"))
		if len(f) > 1 && f[0] == id {
			return l
		}
	}
	t.Fatalf("no row for %s in:\n%s", id, view)
	return ""
}

// TestScreensMatchCommands: the evaluate screen shows every headline figure
// and interval of `jevlab show --json` for the same stored run, and the
// compare screen every delta, verdict and flip count of `jevlab compare
// --json` — Banking77 and demo-triage, each a recorded run A and a second
// opinion B.
func TestScreensMatchCommands(t *testing.T) {
	isolate(t)
	for _, name := range []string{"demo-triage", "banking77"} {
		t.Run(name, func(t *testing.T) {
			setPath := filepath.Join(testutil.RepoRoot(t), "fixtures", name, "questions.yaml")
			dbPath := filepath.Join(t.TempDir(), "runs.db")
			if code, _, errs := runJevlab(t, "eval", "--offline", "--db", dbPath, "--name", "recorded", setPath); code != 0 {
				t.Fatalf("eval: exit %d: %s", code, errs)
			}
			db, err := store.Open(dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			set, err := questionset.Load(setPath)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := workbench.DatasetFor(set, "", dataset.Options{}.ForSet(set), nil)
			if err != nil {
				t.Fatal(err)
			}
			items, err := workbench.LoadItems(context.Background(), set, ds)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(1100 * time.Millisecond) // B starts in a later second: runs list newest first
			s := workbench.NewSession(set, ds, &workbench.RunTemplate{DB: db, Provider: hashProvider{}, ProviderKind: "stand-in", Concurrency: 2})
			if _, err := s.StartRun(context.Background(), items, "hash", "", nil); err != nil {
				t.Fatal(err)
			}

			// show --json of run A (latest~1) against the evaluate screen.
			code, out, errs := runJevlab(t, "show", "--db", dbPath, "--json", "latest~1")
			if code != 0 {
				t.Fatalf("show: exit %d: %s", code, errs)
			}
			var shown struct {
				Run       store.Run                `json:"run"`
				Questions []metrics.QuestionReport `json:"questions"`
			}
			if err := json.Unmarshal([]byte(out), &shown); err != nil {
				t.Fatalf("show --json: %v\n%s", err, out)
			}
			view := screenOf(t, set, ds, db, []string{"j", "enter"}, "Metrics · run "+shown.Run.ID)
			if len(shown.Questions) == 0 {
				t.Fatal("show lists no question")
			}
			for _, q := range shown.Questions {
				row := rowOf(t, view, q.ID)
				for metric, e := range map[string]metrics.Estimate{"accuracy": q.Accuracy, "mean confidence (top prob)": q.MeanConfidence,
					"ECE": q.ECE, "Brier": q.Brier, "log loss": q.LogLoss} {
					if want := parityEst(e); !strings.Contains(row, want) {
						t.Errorf("%s %s: show says %s; the evaluate screen's row:\n%s", q.ID, metric, want, row)
					}
				}
				if want := fmt.Sprintf(" %d ", q.Labelled); !strings.Contains(row, want) {
					t.Errorf("%s: n %d not on the row:\n%s", q.ID, q.Labelled, row)
				}
			}

			// compare --json A B against the compare screen (A picked first).
			code, out, errs = runJevlab(t, "compare", "--db", dbPath, "--json", "latest~1", "latest")
			if code != 0 {
				t.Fatalf("compare: exit %d: %s", code, errs)
			}
			var cmp compare.Comparison
			if err := json.Unmarshal([]byte(out), &cmp); err != nil {
				t.Fatalf("compare --json: %v", err)
			}
			view = screenOf(t, set, ds, db, []string{"j", " ", "k", " "}, "verdict: ")
			if !strings.Contains(view, "A (baseline) "+cmp.A.ID) || !strings.Contains(view, "verdict: "+cmp.Verdict) {
				t.Errorf("compare says A %s, verdict %q; the screen:\n%s", cmp.A.ID, cmp.Verdict, view)
			}
			flips := 0
			for _, q := range cmp.Questions {
				row := rowOf(t, view, q.ID)
				if !strings.Contains(row, q.Verdict) {
					t.Errorf("%s: verdict %q not on the row:\n%s", q.ID, q.Verdict, row)
				}
				for _, d := range q.Deltas {
					if d.Metric != "accuracy" && d.Metric != "brier" {
						continue
					}
					if want := parityDelta(d.Delta); !strings.Contains(row, want) {
						t.Errorf("%s Δ%s: compare says %s; the screen's row:\n%s", q.ID, d.Metric, want, row)
					}
				}
				if want := fmt.Sprintf("%d/%d", q.Flips.Fixed, q.Flips.Broken); !strings.Contains(row, want) {
					t.Errorf("%s: fixed/broken %s not on the row:\n%s", q.ID, want, row)
				}
				if n := q.Flips.Fixed + q.Flips.Broken + q.Flips.Changed; len(q.Flips.Items) != n {
					t.Errorf("%s: compare --json lists %d of %d flips", q.ID, len(q.Flips.Items), n)
				}
				flips += len(q.Flips.Items)
			}
			if want := fmt.Sprintf("Flipped items (%d)", flips); !strings.Contains(view, want) {
				t.Errorf("the screen lacks %q:\n%s", want, view)
			}
		})
	}
}
