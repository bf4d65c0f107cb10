package costs

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
)

var actionOptions = []string{"merge", "keep_separate", "curator", "unknown"}

// entityMergeAction reads entity-merge's recorded action answers (decision
// the argmax option, confidence its probability) joined with the labels,
// split into dev and test by {seed 1, test 0.3}.
func entityMergeAction(t *testing.T) (dev, test []ChoicePoint) {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(t), "fixtures", "entity-merge")
	index := map[string]int{}
	for i, o := range actionOptions {
		index[o] = i
	}
	labels := map[string]int{}
	read := func(name string, f func([]byte)) {
		r, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f(sc.Bytes())
		}
	}
	read("dataset.jsonl", func(b []byte) {
		var row struct {
			ID     string                     `json:"id"`
			Labels map[string]json.RawMessage `json:"labels"`
		}
		if err := json.Unmarshal(b, &row); err != nil {
			t.Fatal(err)
		}
		var s string
		if json.Unmarshal(row.Labels["action"], &s) == nil {
			if l, ok := index[s]; ok {
				labels[row.ID] = l
			}
		}
	})
	sp := questionset.SplitSpec{Seed: 1, Test: 0.3}
	read("recorded.jsonl", func(b []byte) {
		var ex struct {
			ID       string `json:"id"`
			Response struct {
				Answers map[string]struct {
					Probs map[string]float64 `json:"probabilities"`
				} `json:"answers"`
			} `json:"response"`
		}
		if err := json.Unmarshal(b, &ex); err != nil {
			t.Fatal(err)
		}
		a, ok := ex.Response.Answers["action"]
		l, labelled := labels[ex.ID]
		if !ok || len(a.Probs) == 0 || !labelled {
			return
		}
		dec, conf := 0, math.Inf(-1)
		for i, o := range actionOptions {
			if a.Probs[o] > conf {
				dec, conf = i, a.Probs[o]
			}
		}
		p := ChoicePoint{Conf: conf, Decision: dec, Label: l}
		if sp.Of(ex.ID) == questionset.SplitTest {
			test = append(test, p)
		} else {
			dev = append(dev, p)
		}
	})
	if len(dev) < 100 || len(test) < 50 {
		t.Fatalf("dev %d, test %d points", len(dev), len(test))
	}
	return dev, test
}

// bruteChoice evaluates every candidate cut-point from scratch.
func bruteChoice(pts []ChoicePoint, c ChoiceCosts) ChoiceOutcome {
	var best ChoiceOutcome
	found := false
	for _, cut := range ChoiceCandidates(pts) {
		if c.Abstain == nil && found {
			break // never abstains: only the lowest cut-point
		}
		o := EvaluateChoice(pts, cut, c)
		if !found || BetterChoice(o, best) {
			best, found = o, true
		}
	}
	return best
}

func sameChoice(a, b ChoiceOutcome) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return a.Cutpoint == b.Cutpoint && string(ja) == string(jb)
}

// The cost-optimal confidence cut-point on entity-merge's action equals a
// brute-force search over every cut-point on the same (dev) split, for
// several stated matrices.
func TestFitChoiceEqualsBruteForceOnEntityMerge(t *testing.T) {
	dev, test := entityMergeAction(t)
	one, half, five := 1.0, 0.5, 5.0
	uniform := func(v float64) [][]float64 {
		m := make([][]float64, 4)
		for i := range m {
			m[i] = make([]float64, 4)
			for j := range m[i] {
				if i != j {
					m[i][j] = v
				}
			}
		}
		return m
	}
	merging := uniform(1)
	merging[1][0] = 20 // merging two different entities is the costly mistake
	for _, c := range []ChoiceCosts{
		{Options: actionOptions, Matrix: uniform(1), Abstain: &half},
		{Options: actionOptions, Matrix: uniform(1)},
		{Options: actionOptions, Matrix: merging, Abstain: &one},
		{Options: actionOptions, Matrix: merging, Abstain: &five},
		{Options: actionOptions, Matrix: uniform(10), Abstain: &one},
	} {
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		got, want := FitChoice(dev, c), bruteChoice(dev, c)
		if !sameChoice(got, want) {
			t.Errorf("costs %v:\n fit   %+v\n brute %+v", c.Matrix, got, want)
		}
		chk := EvaluateChoice(test, got.Cutpoint, c)
		t.Logf("dev n=%d cut %.3g cost/1000 %.1f (errors %d abstain %d); test n=%d cost/1000 %.1f coverage %.3f",
			got.N, got.Cutpoint, got.PerThousand, got.Errors, got.Abstain, chk.N, chk.PerThousand, chk.Coverage)
	}
}

func TestEvaluateChoiceByHand(t *testing.T) {
	opts := []string{"a", "b"}
	half := 0.5
	c := ChoiceCosts{Options: opts, Matrix: [][]float64{{0, 3}, {1, 0}}, Abstain: &half}
	pts := []ChoicePoint{{0.9, 0, 0}, {0.8, 1, 0}, {0.6, 0, 1}, {0.55, 1, 1}, {0.5, 0, 0}}
	o := EvaluateChoice(pts, 0.6, c)
	// 0.9 right; 0.8 a→b costs 3; 0.6 b→a costs 1; 0.55 and 0.5 abstain 2×0.5.
	if o.Correct != 1 || o.Errors != 2 || o.Abstain != 2 || o.Cost != 5 || o.PerThousand != 1000 || o.Coverage != 0.6 ||
		o.Confusion[0][1] != 1 || o.Confusion[1][0] != 1 || o.Abstained[0] != 1 || o.Abstained[1] != 1 {
		t.Fatalf("%+v", o)
	}
	// Best: cut 0.9 keeps the right one and abstains on 4 (cost 2) — below
	// it the 0.8 error costs 3 against an abstention at 0.5.
	if f := FitChoice(pts, c); f.Cutpoint != 0.9 || f.Cost != 2 {
		t.Fatalf("fit %+v", f)
	}
	if err := (ChoiceCosts{Options: opts, Matrix: [][]float64{{1, 0}, {0, 0}}}).Validate(); err == nil {
		t.Fatal("a cost on the diagonal accepted")
	}
}
