// Package metricstest loads the real recorded Jev answers under
// ../shared/testdata as metrics observations, for tests of the metrics,
// compare and report packages.
package metricstest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

// Run is one recording joined with its set's dataset labels.
type Run struct {
	Questions provider.Questions
	// Obs holds each question's observations in dataset order.
	Obs map[string][]metrics.Obs
}

// Load reads testdata/<set>/<file> (exchange JSONL) and
// testdata/<set>/dataset.jsonl, checking every answer with provider.Check.
// It skips the test when ../shared is absent.
func Load(t testing.TB, set, file string) Run {
	t.Helper()
	dir := testutil.Testdata(t, set)
	rd := Run{Obs: map[string][]metrics.Obs{}}
	labels := map[string]map[string]json.RawMessage{}
	var order []string
	eachLine(t, filepath.Join(dir, "dataset.jsonl"), func(b []byte) error {
		var it struct {
			ID     string                     `json:"id"`
			Labels map[string]json.RawMessage `json:"labels"`
		}
		if err := json.Unmarshal(b, &it); err != nil {
			return err
		}
		labels[it.ID] = it.Labels
		order = append(order, it.ID)
		return nil
	})
	type rec struct {
		answers map[string]provider.Answer
		latency float64
		usage   provider.Usage
	}
	recs := map[string]rec{}
	eachLine(t, filepath.Join(dir, file), func(b []byte) error {
		var ex provider.Exchange
		var req provider.Request
		var resp provider.Response
		if err := json.Unmarshal(b, &ex); err != nil {
			return err
		}
		if err := json.Unmarshal(ex.Request, &req); err != nil {
			return fmt.Errorf("request: %w", err)
		}
		if err := json.Unmarshal(ex.Response, &resp); err != nil {
			return fmt.Errorf("response: %w", err)
		}
		ans, err := provider.Check(&req, &resp)
		if err != nil {
			return err
		}
		if rd.Questions == nil {
			rd.Questions = req.Questions
		}
		m := map[string]provider.Answer{}
		for _, a := range ans {
			m[a.ID] = a
		}
		recs[ex.ID] = rec{m, ex.LatencyMS, resp.Usage}
		return nil
	})
	for _, e := range rd.Questions {
		for _, id := range order {
			r := recs[id]
			o := metrics.Obs{ItemID: id, LatencyMS: r.latency, InputTokens: r.usage.InputTokens, OutputTokens: r.usage.OutputTokens}
			if a, ok := r.answers[e.ID]; ok {
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
			rd.Obs[e.ID] = append(rd.Obs[e.ID], o)
		}
	}
	return rd
}

// eachLine calls fn with each line of the JSONL file at path (read by
// testutil.EachLine) and fails the test at path:line on the first error fn
// returns.
func eachLine(t testing.TB, path string, fn func([]byte) error) {
	t.Helper()
	testutil.EachLine(t, path, func(n int, b []byte) bool {
		if err := fn(b); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		return true
	})
}
