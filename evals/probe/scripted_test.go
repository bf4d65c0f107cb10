package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// scripted answers with a known truth: the choice "team" always
// [0.6, 0.3, 0.1] (decision billing); its nouls team=X P(X) =
// [0.8, 0.5, 0.2], reversed ([0.2, 0.5, 0.8]: most probable account, rank
// correlation −1) for the items whose number is below disagree. calls
// counts requests; cost is each request's price.
type scripted struct {
	disagree int
	calls    atomic.Int64
	cost     float64
}

func (s *scripted) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.calls.Add(1)
	var state string
	_ = json.Unmarshal(req.State, &state)
	var n int
	fmt.Sscanf(state, "ticket %d", &n)
	noul := map[string]float64{"billing": 0.8, "orders": 0.5, "account": 0.2}
	if n < s.disagree {
		noul = map[string]float64{"billing": 0.2, "orders": 0.5, "account": 0.8}
	}
	res := &provider.Result{Model: "scripted", CostUSD: s.cost, Usage: provider.Usage{InputTokens: 10}}
	for _, e := range req.Questions {
		switch {
		case e.ID == "team":
			res.Answers = append(res.Answers, provider.Answer{ID: e.ID, Type: provider.Choice, Choice: "billing", Probs: []float64{0.6, 0.3, 0.1}})
		case strings.HasPrefix(e.ID, "team="):
			res.Answers = append(res.Answers, provider.Answer{ID: e.ID, Type: provider.Noul, P: noul[strings.TrimPrefix(e.ID, "team=")]})
		default:
			return nil, fmt.Errorf("scripted: unexpected question %s", e.ID)
		}
	}
	return res, nil
}

func scriptedSet(t *testing.T) *questionset.Set {
	t.Helper()
	s, err := questionset.Parse("s.yaml", []byte(`name: scripted
questions:
  team:
    type: choice
    instructions: Which team handles it?
    criteria: {billing: charges, orders: parcels, account: logins}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func scriptedItems(n int) []dataset.Item {
	items := make([]dataset.Item, n)
	for i := range items {
		st, _ := json.Marshal(fmt.Sprintf("ticket %d", i))
		items[i] = dataset.Item{ID: fmt.Sprintf("s%03d", i), State: st, Line: i + 1}
	}
	return items
}

// noul-vs-choice against answers whose disagreement is known: agreement
// is exactly (n − k)/n, the mean rank correlation (n − 2k)/n (each item's
// is +1 or −1), the nouls' sum 1.5; with no disagreement agreement is n/n
// and the correlation 1.
func TestNoulVsChoiceMeasuresKnownDisagreement(t *testing.T) {
	const n = 40
	for _, k := range []int{0, 10, 20} {
		t.Run(fmt.Sprintf("disagree=%d", k), func(t *testing.T) {
			p := &scripted{disagree: k}
			cfg := Config{Set: scriptedSet(t), Kind: NoulVsChoice, Seed: 1,
				Run: runner.Config{Items: scriptedItems(n), DatasetPath: "/tmp/s.jsonl", DB: openDB(t), Provider: p, Concurrency: 2}}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ag := measure(t, res, "team", MAgreement)
			if ag.K != n-k || ag.N != n {
				t.Errorf("agreement %d/%d, want %d/%d", ag.K, ag.N, n-k, n)
			}
			covers(t, "agreement", ag, float64(n-k)/n)
			rho := measure(t, res, "team", MSpearman)
			if want := float64(n-2*k) / n; math.Abs(rho.Estimate.Value-want) > 1e-9 {
				t.Errorf("spearman %.4f, want %.4f", rho.Estimate.Value, want)
			}
			if s := measure(t, res, "team", MNoulSum); math.Abs(s.Estimate.Value-1.5) > 1e-9 {
				t.Errorf("noul sum %.4f, want 1.5", s.Estimate.Value)
			}
			q, _ := res.Question("team")
			if k == 0 && len(q.Worst) != 0 {
				t.Errorf("no disagreement, yet worst items %+v", q.Worst)
			}
			if k > 0 && (len(q.Worst) == 0 || !strings.Contains(q.Worst[0].Note, "most probable noul account")) {
				t.Errorf("worst items %+v", q.Worst)
			}
		})
	}
}

// A probe stopped by its spend cap (--max-cost) is interrupted, keeps what
// it stored, and --resume with the cap raised continues it: the resumed probe asks only the items left
// and measures what an uninterrupted probe measures.
func TestProbeMaxCostThenResume(t *testing.T) {
	const n = 30
	set := scriptedSet(t)
	db := openDB(t)
	p := &scripted{disagree: 6, cost: 0.01}
	base := runner.Config{Items: scriptedItems(n), DatasetPath: "/tmp/s.jsonl", DB: db, Provider: p, Concurrency: 1}
	// The base run first (30 requests, $0.30), uncapped.
	bc := base
	bc.Set = set
	if _, err := runner.Run(context.Background(), bc, nil); err != nil {
		t.Fatal(err)
	}
	capped := base
	capped.MaxCostUSD = 0.105 // ten requests at $0.01 fit, the eleventh would pass it
	before := p.calls.Load()
	_, err := Run(context.Background(), Config{Set: set, Kind: NoulVsChoice, Run: capped, Seed: 1})
	if !errors.Is(err, runner.ErrInterrupted) {
		t.Fatalf("capped probe: err %v, want interrupted", err)
	}
	asked := p.calls.Load() - before
	if asked == 0 || asked > 11 {
		t.Fatalf("capped probe asked %d requests, want 1–11 under a $0.105 cap at $0.01", asked)
	}
	runs, err := db.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var probeRun string
	for _, r := range runs {
		if l, ok := LinkOf(r); ok && l.Probe == NoulVsChoice {
			probeRun = r.ID
		}
	}
	if probeRun == "" {
		t.Fatal("the interrupted probe run was not stored")
	}
	// The cap is the run's: resuming under it stops again (the runner
	// may fit one request its estimate prices under the cap); raised, the
	// probe finishes.
	before = p.calls.Load()
	if _, err := Run(context.Background(), Config{Set: set, Kind: NoulVsChoice, Run: capped, Resume: probeRun}); !errors.Is(err, runner.ErrInterrupted) {
		t.Fatalf("resumed under the same cap: err %v, want interrupted", err)
	}
	mid := p.calls.Load() - before
	if mid > 1 {
		t.Errorf("resumed under the spent cap, the probe asked %d more requests", mid)
	}
	raised := base
	raised.MaxCostUSD = 1
	before = p.calls.Load()
	res, err := Run(context.Background(), Config{Set: set, Kind: NoulVsChoice, Run: raised, Resume: probeRun})
	if err != nil {
		t.Fatal(err)
	}
	if again := p.calls.Load() - before; again+mid+asked != n {
		t.Errorf("resume asked %d more requests after %d and %d; want %d in all (none twice)", again, asked, mid, n)
	}
	if len(res.Runs) != 1 || res.Runs[0] != probeRun {
		t.Errorf("resumed into runs %v, want %s", res.Runs, probeRun)
	}
	ag := measure(t, res, "team", MAgreement)
	if ag.K != n-6 || ag.N != n {
		t.Errorf("resumed agreement %d/%d, want %d/%d", ag.K, ag.N, n-6, n)
	}
}
