package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

// recording is one recorded exchange file checked through provider.Check,
// joined with a dataset's labels.
type recording struct {
	Questions provider.Questions
	Items     []string                              // dataset order
	Answers   map[string]map[string]provider.Answer // item → question → answer
	Labels    map[string]map[string]int             // item → question → label index
	Latency   map[string]float64
	Usage     map[string]provider.Usage
}

// loadRecording reads testdata/<set>/<file> and <set>/dataset.jsonl.
func loadRecording(t testing.TB, set, file string) *recording {
	t.Helper()
	return loadRecordingAt(t, testutil.Testdata(t, set), file)
}

// loadFixture reads the shipped fixtures/<set>/<file> and its dataset.jsonl.
func loadFixture(t testing.TB, set, file string) *recording {
	t.Helper()
	return loadRecordingAt(t, filepath.Join(testutil.RepoRoot(t), "fixtures", set), file)
}

func loadRecordingAt(t testing.TB, dir, file string) *recording {
	t.Helper()
	rec := &recording{
		Answers: map[string]map[string]provider.Answer{},
		Labels:  map[string]map[string]int{},
		Latency: map[string]float64{},
		Usage:   map[string]provider.Usage{},
	}
	eachLine(t, filepath.Join(dir, file), func(line []byte) error {
		var ex provider.Exchange
		if err := json.Unmarshal(line, &ex); err != nil {
			return err
		}
		var req provider.Request
		if err := json.Unmarshal(ex.Request, &req); err != nil {
			return err
		}
		var resp provider.Response
		if err := json.Unmarshal(ex.Response, &resp); err != nil {
			return err
		}
		ans, err := provider.Check(&req, &resp)
		if err != nil {
			return err
		}
		if rec.Questions == nil {
			rec.Questions = req.Questions
		}
		m := map[string]provider.Answer{}
		for _, a := range ans {
			m[a.ID] = a
		}
		rec.Answers[ex.ID] = m
		rec.Latency[ex.ID] = ex.LatencyMS
		rec.Usage[ex.ID] = resp.Usage
		return nil
	})
	eachLine(t, filepath.Join(dir, "dataset.jsonl"), func(line []byte) error {
		var it struct {
			ID     string                     `json:"id"`
			Labels map[string]json.RawMessage `json:"labels"`
		}
		if err := json.Unmarshal(line, &it); err != nil {
			return err
		}
		rec.Items = append(rec.Items, it.ID)
		lm := map[string]int{}
		for qid, raw := range it.Labels {
			q, ok := rec.Questions.Get(qid)
			if !ok {
				return fmt.Errorf("label for unknown question %q", qid)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			switch x := v.(type) {
			case bool:
				lm[qid] = map[bool]int{false: 0, true: 1}[x]
			case string:
				lm[qid] = q.OptionIndex(x)
			case float64:
				lm[qid] = int(x)
			}
		}
		rec.Labels[it.ID] = lm
		return nil
	})
	return rec
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

// obs returns the observations of question qid in dataset order.
func (r *recording) obs(qid string) []Obs {
	var out []Obs
	for _, id := range r.Items {
		o := Obs{ItemID: id, LatencyMS: r.Latency[id], InputTokens: r.Usage[id].InputTokens, OutputTokens: r.Usage[id].OutputTokens}
		if a, ok := r.Answers[id][qid]; ok {
			o.Answer = &a
		} else {
			o.ErrKind = "missing"
		}
		if l, ok := r.Labels[id][qid]; ok {
			o.Label, o.HasLabel = l, true
		}
		out = append(out, o)
	}
	return out
}

func (r *recording) question(t testing.TB, qid string) *provider.Question {
	t.Helper()
	q, ok := r.Questions.Get(qid)
	if !ok {
		t.Fatalf("no question %q", qid)
	}
	return q
}

// closeTo compares with a relative-or-absolute tolerance.
func closeTo(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func check(t *testing.T, name string, got, want float64) {
	t.Helper()
	if !closeTo(got, want, 1e-9) {
		t.Errorf("%s = %.12g, want %.12g", name, got, want)
	}
}
