package workbench

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// routeProvider answers every choice from the instructions: a question
// whose instructions say "Route" always picks technical (a bad rewording),
// any other picks billing when the state mentions a charge or refund and
// technical otherwise. Nouls and scores get fixed answers.
type routeProvider struct{ requests atomic.Int64 } // the runner asks from several workers

func (p *routeProvider) Ask(_ context.Context, req *provider.Request) (*provider.Result, error) {
	p.requests.Add(1)
	res := &provider.Result{Model: "jev-1.13.0"}
	st := strings.ToLower(string(req.State))
	for _, e := range req.Questions {
		q := e.Question
		a := provider.Answer{ID: e.ID, Type: q.Type}
		switch q.Type {
		case provider.Noul:
			a.P = 0.7
		case provider.Score:
			a.Probs = make([]float64, len(q.Levels))
			a.Probs[1] = 1
			a.Score = 1
			a.Confidence = 1
		case provider.Choice:
			pick := "technical"
			if !strings.Contains(provider.Text(q.Instructions), "Route") && (strings.Contains(st, "charge") || strings.Contains(st, "refund")) {
				pick = "billing"
			}
			a.Probs = make([]float64, len(q.Options))
			a.Probs[q.OptionIndex(pick)] = 1
			a.Choice, a.Confidence = pick, 1
		}
		res.Answers = append(res.Answers, a)
	}
	return res, nil
}

func TestVariantPairsAndPromote(t *testing.T) {
	root := testutil.RepoRoot(t)
	set, err := questionset.Load(filepath.Join(root, "fixtures", "demo-triage", "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.AddVariant("queue", questionset.Variant{Name: "v2", Instructions: provider.String("Route the message to one team.")}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := &routeProvider{}
	ds, err := DatasetFor(set, "", dataset.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(set, ds, &RunTemplate{DB: db, Provider: p, ProviderKind: "offline", Concurrency: 2})
	s.AskVariants = true
	items, err := LoadItems(context.Background(), set, s.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartRun(context.Background(), items, "v", "", nil); err != nil {
		t.Fatal(err)
	}
	if p.requests.Load() != int64(len(items)) {
		t.Fatalf("%d requests for %d items", p.requests.Load(), len(items))
	}
	v, err := LoadRun(context.Background(), db, "latest", ViewConfig{})
	if err != nil {
		t.Fatal(err)
	}
	pairs := v.VariantPairs()
	if len(pairs) != 1 || pairs[0].Ref.ID() != "queue~v2" || pairs[0].Comparison == nil {
		t.Fatalf("pairs %+v", pairs)
	}
	// Hand count: the base is right exactly on the billing and technical
	// items it routes correctly; the variant says technical everywhere.
	var baseRight, varRight, broken, fixed int
	for _, it := range items {
		l, ok := it.Labels["queue"]
		if !ok {
			continue
		}
		st := strings.ToLower(string(it.State))
		base := "technical"
		if strings.Contains(st, "charge") || strings.Contains(st, "refund") {
			base = "billing"
		}
		br, vr := base == l.Text, l.Text == "technical"
		if br {
			baseRight++
		}
		if vr {
			varRight++
		}
		if br && !vr {
			broken++
		}
		if !br && vr {
			fixed++
		}
	}
	c := pairs[0].Comparison.Comparison
	if c.Flips.Broken != broken || c.Flips.Fixed != fixed || c.McNemar.ARightBWrong != broken || c.PairedLabelled != len(items) {
		t.Fatalf("flips %+v mcnemar %+v; want broken %d fixed %d", c.Flips, c.McNemar, broken, fixed)
	}
	acc := c.Deltas[0]
	if acc.Metric != "accuracy" || acc.A.Value != float64(baseRight)/10 || acc.B.Value != float64(varRight)/10 {
		t.Fatalf("accuracy %+v, want %d/10 → %d/10", acc, baseRight, varRight)
	}
	av, _ := v.VariantAnswer(v.ItemIDs[0], pairs[0].Ref)
	if av.Decision != "technical" {
		t.Fatalf("variant decision %q", av.Decision)
	}
	// Promote: v2's wording becomes queue's, the old one a variant.
	old := provider.Text(s.Set.Questions[1].Question.Instructions)
	kept, err := s.PromoteVariant("queue", "v2", "")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := s.Set.Question("queue")
	if provider.Text(q.Instructions) != "Route the message to one team." {
		t.Fatalf("promoted: %s", q.Instructions)
	}
	back, ok := s.Set.VariantQuestion(questionset.VariantRef{Question: "queue", Name: kept})
	if !ok || provider.Text(back.Instructions) != old {
		t.Fatalf("old wording kept as %q: %+v", kept, back)
	}
	if _, err := s.PromoteVariant("queue", "v9", ""); err == nil || !strings.Contains(err.Error(), "queue~v9") {
		t.Fatalf("unknown variant: %v", err)
	}
}
