package htmlreport

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/store"
)

// recorded is one run of a shipped example (fixtures/<set>): the
// questions as recorded and each question's observations in dataset order.
type recorded struct {
	set string
	qs  provider.Questions
	obs map[string][]metrics.Obs
	// model is the resolved model of the answers.
	model string
}

// loadExample reads fixtures/<set>/dataset.jsonl and recorded.jsonl. With
// synthetic, the recorded requests are sent instead to an in-process
// stand-in that answers every question synthetically (model
// standin-synthetic-1): a genuinely different second run of the same items.
func loadExample(t testing.TB, set, file string, synthetic bool) recorded {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(t), "fixtures", set)
	labels := map[string]map[string]json.RawMessage{}
	var order []string
	testutil.EachLine(t, filepath.Join(dir, "dataset.jsonl"), func(line int, b []byte) bool {
		var it struct {
			ID     string                     `json:"id"`
			Labels map[string]json.RawMessage `json:"labels"`
		}
		if err := json.Unmarshal(b, &it); err != nil {
			t.Fatalf("%s/dataset.jsonl:%d: %v", dir, line, err)
		}
		labels[it.ID] = it.Labels
		order = append(order, it.ID)
		return true
	})
	var srv *standin.Server
	if synthetic {
		var err error
		if srv, err = standin.New(standin.Config{Synthetic: true, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
	}
	rec := recorded{set: set, obs: map[string][]metrics.Obs{}}
	answers := map[string]map[string]provider.Answer{}
	testutil.EachLine(t, filepath.Join(dir, file), func(line int, b []byte) bool {
		var ex provider.Exchange
		var req provider.Request
		var resp provider.Response
		if err := json.Unmarshal(b, &ex); err != nil {
			t.Fatalf("%s/%s:%d: %v", dir, file, line, err)
		}
		if err := json.Unmarshal(ex.Request, &req); err != nil {
			t.Fatalf("%s/%s:%d: request: %v", dir, file, line, err)
		}
		body := []byte(ex.Response)
		if srv != nil {
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/systemone", strings.NewReader(string(ex.Request))))
			if w.Code != 200 {
				t.Fatalf("stand-in: item %s: %d %s", ex.ID, w.Code, w.Body)
			}
			body = w.Body.Bytes()
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("%s/%s:%d: response: %v", dir, file, line, err)
		}
		ans, err := provider.Check(&req, &resp)
		if err != nil {
			t.Fatalf("%s/%s:%d: %v", dir, file, line, err)
		}
		if rec.qs == nil {
			rec.qs = req.Questions
			rec.model = resp.Model
		}
		m := map[string]provider.Answer{}
		for _, a := range ans {
			m[a.ID] = a
		}
		answers[ex.ID] = m
		return true
	})
	for _, e := range rec.qs {
		for _, id := range order {
			o := metrics.Obs{ItemID: id}
			if a, ok := answers[id][e.ID]; ok {
				o.Answer = &a
			} else {
				o.ErrKind = "missing"
			}
			if raw, ok := labels[id][e.ID]; ok {
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatalf("%s: item %s: label %s: %v", dir, id, e.ID, err)
				}
				switch x := v.(type) {
				case bool:
					o.Label, o.HasLabel = 0, true
					if x {
						o.Label = 1
					}
				case string:
					o.Label, o.HasLabel = e.Question.OptionIndex(x), true
				case float64:
					o.Label, o.HasLabel = int(x), true
				}
			}
			rec.obs[e.ID] = append(rec.obs[e.ID], o)
		}
	}
	return rec
}

// fixedStart is the start time of the test runs (goldens must not change).
var fixedStart = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// reportOf computes rec's run report with the seed and resamples show uses.
func reportOf(rec recorded, id string, started time.Time) *report.RunReport {
	n := 0
	for _, o := range rec.obs {
		n = max(n, len(o))
	}
	run := &store.Run{ID: id, SetName: rec.set, Model: "jev-latest", Models: []string{rec.model}, ProviderKind: "offline",
		Status: store.StatusDone, Done: n, Total: n, StartedAt: started, UpdatedAt: started, FinishedAt: started.Add(time.Minute)}
	set := &questionset.Set{Name: rec.set, Questions: rec.qs}
	return report.Build(run, set, rec.obs, metrics.Options{Seed: 1}, questionset.Gate{})
}

func runData(rec recorded, id string) compare.RunData {
	return compare.RunData{ID: id, Model: rec.model, Questions: rec.qs, Obs: rec.obs}
}

// b77Input is Banking77 as recorded from jev-1.13.0 (A) against a
// synthetic stand-in run of the same 500 items (B), with both as history.
func b77Input(t testing.TB) *Input {
	t.Helper()
	return memo(t, "banking77", b77Build)
}

func b77Build(t testing.TB) *Input {
	t.Helper()
	a, b := loadExample(t, "banking77", "recorded.jsonl", false), loadExample(t, "banking77", "recorded.jsonl", true)
	ra := reportOf(a, "r-20261201-090000-aaaaa", fixedStart)
	rb := reportOf(b, "r-20261202-090000-bbbbb", fixedStart.Add(24*time.Hour))
	da, db := runData(a, ra.Run.ID), runData(b, rb.Run.ID)
	c := compare.Compare(da, db, compare.Options{Seed: 1})
	return &Input{Runs: []*report.RunReport{ra, rb}, Comparison: c, Answer: AnswerLookup(da, db), History: []*report.RunReport{ra, rb}}
}

// entityInput is entity-merge's one recorded run (a noul and a choice).
func entityInput(t testing.TB) *Input {
	t.Helper()
	return memo(t, "entity-merge", entityBuild)
}

func entityBuild(t testing.TB) *Input {
	t.Helper()
	r := reportOf(loadExample(t, "entity-merge", "recorded.jsonl", false), "r-20261201-100000-eeeee", fixedStart)
	return &Input{Runs: []*report.RunReport{r}}
}

// demoInput is demo-triage (noul, choice, score) recorded against its
// second recording, for the score charts and small flips.
func demoInput(t testing.TB) *Input {
	t.Helper()
	a, b := loadExample(t, "demo-triage", "recorded.jsonl", false), loadExample(t, "demo-triage", "recorded-run2.jsonl", false)
	ra, rb := reportOf(a, "r-demo-a", fixedStart), reportOf(b, "r-demo-b", fixedStart.Add(time.Hour))
	da, db := runData(a, ra.Run.ID), runData(b, rb.Run.ID)
	return &Input{Runs: []*report.RunReport{ra, rb}, Comparison: compare.Compare(da, db, compare.Options{Seed: 1}), Answer: AnswerLookup(da, db)}
}

func render(t testing.TB, in *Input) string {
	t.Helper()
	var b strings.Builder
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// built caches the expensive inputs across the tests of one run; tests
// that change an input build their own.
var (
	builtMu sync.Mutex
	built   = map[string]*Input{}
)

func memo(t testing.TB, name string, build func(testing.TB) *Input) *Input {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if in, ok := built[name]; ok {
		return in
	}
	in := build(t)
	built[name] = in
	return in
}
