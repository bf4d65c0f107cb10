package costs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
)

// entityMerge reads entity-merge's recorded same_entity answers joined
// with the dataset's labels, split into dev and test by the set split
// {seed 1, test 0.3}.
func entityMerge(t *testing.T) (dev, test []Point) {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(t), "fixtures", "entity-merge")
	labels := map[string]bool{}
	f, err := os.Open(filepath.Join(dir, "dataset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			ID     string                     `json:"id"`
			Labels map[string]json.RawMessage `json:"labels"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if l, ok := row.Labels["same_entity"]; ok {
			labels[row.ID] = string(l) == "true"
		}
	}
	r, err := os.Open(filepath.Join(dir, "recorded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sp := questionset.SplitSpec{Seed: 1, Test: 0.3}
	sc = bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ex struct {
			ID       string `json:"id"`
			Response struct {
				Answers map[string]struct {
					Noul *float64 `json:"noul"`
				} `json:"answers"`
			} `json:"response"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			t.Fatal(err)
		}
		a, ok := ex.Response.Answers["same_entity"]
		l, labelled := labels[ex.ID]
		if !ok || a.Noul == nil || !labelled {
			continue
		}
		p := Point{P: *a.Noul, Label: l}
		if sp.Of(ex.ID) == questionset.SplitTest {
			test = append(test, p)
		} else {
			dev = append(dev, p)
		}
	}
	if len(dev) < 100 || len(test) < 50 {
		t.Fatalf("dev %d, test %d points", len(dev), len(test))
	}
	return dev, test
}

// brute tries every pair of candidate thresholds and evaluates each from
// scratch.
func brute(pts []Point, c Costs) Outcome {
	cands := Candidates(pts)
	var best Outcome
	found := false
	for li, lo := range cands {
		for _, hi := range cands[li:] {
			if c.Abstain == nil && hi != lo {
				continue
			}
			o := Evaluate(pts, lo, hi, c)
			if !found || Better(o, best) {
				best, found = o, true
			}
		}
	}
	return best
}

// The cost-optimal thresholds on entity-merge's same_entity equal a
// brute-force search over all thresholds on the same (dev) split, for
// several stated cost matrices; the test split is then evaluated at them.
func TestFitEqualsBruteForceOnEntityMerge(t *testing.T) {
	dev, test := entityMerge(t)
	half, two := 0.5, 2.0
	for _, c := range []Costs{
		{FalsePositive: 5, FalseNegative: 1, Abstain: &half},
		{FalsePositive: 5, FalseNegative: 1},
		{FalsePositive: 1, FalseNegative: 1},
		{FalsePositive: 1, FalseNegative: 10, Abstain: &two},
		{FalsePositive: 20, FalseNegative: 3, Abstain: &half},
	} {
		got, want := Fit(dev, c), brute(dev, c)
		if got != want {
			t.Errorf("costs %+v (abstain %v):\n fit   %+v\n brute %+v", c, c.Abstain, got, want)
		}
		check := Evaluate(test, got.Lo, got.Hi, c)
		abst := "none"
		if c.Abstain != nil {
			abst = fmt.Sprint(*c.Abstain)
		}
		t.Logf("costs fp %g fn %g abstain %s: dev n=%d lo %.3g hi %.3g cost/1000 %.1f (FP %d FN %d abstain %d); test n=%d cost/1000 %.1f",
			c.FalsePositive, c.FalseNegative, abst, got.N, got.Lo, got.Hi, got.PerThousand, got.FP, got.FN, got.Abstain, check.N, check.PerThousand)
		if c.Abstain == nil && got.Lo != got.Hi {
			t.Errorf("abstained without an abstention cost")
		}
	}
}

func TestEvaluateByHand(t *testing.T) {
	pts := []Point{{0.1, false}, {0.4, true}, {0.5, false}, {0.9, true}, {0.95, false}}
	half := 0.5
	o := Evaluate(pts, 0.3, 0.6, Costs{FalsePositive: 5, FalseNegative: 1, Abstain: &half})
	// 0.1 → no (TN); 0.4, 0.5 → abstain; 0.9 → TP; 0.95 → FP.
	if o.TN != 1 || o.Abstain != 2 || o.TP != 1 || o.FP != 1 || o.FN != 0 || o.Cost != 6 || o.PerThousand != 1200 || o.Coverage != 0.6 {
		t.Fatalf("%+v", o)
	}
	if o := Evaluate(pts, math.Inf(1), math.Inf(1), Costs{FalsePositive: 5, FalseNegative: 1}); o.FN != 2 || o.TN != 3 || o.Cost != 2 {
		t.Fatalf("never yes: %+v", o)
	}
	if err := (Costs{FalsePositive: -1}).Validate(); err == nil {
		t.Fatal("negative cost accepted")
	}
}
