package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// perQuestionReference is compareQuestion as it was before the merge by
// item id (every observation of both runs held, B looked up by id): the
// reference the merged comparison must equal.
func perQuestionReference(id string, qa, qb *provider.Question, obsA, obsB []metrics.Obs, a, b *RunData, opt Options, qi uint64) QuestionComparison {
	qc := QuestionComparison{ID: id, Type: qa.Type, McNemar: McNemar{P: 1, PHolm: 1}, BrierP: 1, BrierPHolm: 1}
	remap, reason := alignQuestion(qa, qb, opt.Map[id])
	if len(opt.Map[id]) > 0 {
		qc.Mapped = opt.Map[id]
	}
	if reason != "" {
		qc.Reason, qc.Verdict = reason, NotComparable
		return qc
	}
	if remap != nil {
		obsB = remapObs(obsB, remap)
	}
	fa, fb := firstRepeat(obsA), firstRepeat(obsB)
	posB := make(map[string]int, len(fb))
	for i := range fb {
		posB[fb[i].ItemID] = i
	}
	ta, tb := a.threshold(id), b.threshold(id)
	var la, lb []metrics.Obs
	seen := 0
	var tvs, dps []float64
	for i := range fa {
		oa := &fa[i]
		j, ok := posB[oa.ItemID]
		if !ok {
			qc.OnlyA++
			continue
		}
		seen++
		ob := fb[j]
		if oa.Answer == nil || ob.Answer == nil || !usableShape(qa, oa.Answer) || !usableShape(qa, ob.Answer) {
			continue
		}
		qc.Paired++
		da, db := metrics.Decide(qa, oa.Answer, ta), metrics.Decide(qa, ob.Answer, tb)
		tvs = append(tvs, metrics.TV(oa.Answer, ob.Answer))
		dps = append(dps, math.Abs(outcomeP(oa.Answer, da)-outcomeP(ob.Answer, da)))
		if da != db {
			qc.Drift.ChangedDecisions++
		}
		if valuesDiffer(oa.Answer, ob.Answer) {
			qc.Drift.ChangedValues++
		}
		if oa.HasLabel || ob.HasLabel {
			if oa.HasLabel && ob.HasLabel && oa.Label != ob.Label {
				qc.LabelMismatch++
			}
			lab := ob
			if oa.HasLabel {
				lab.Label, lab.HasLabel = oa.Label, true
			}
			x := *oa
			x.Label, x.HasLabel = lab.Label, true
			if metrics.Usable(qa, &x) && metrics.Usable(qa, &lab) {
				la = append(la, x)
				lb = append(lb, lab)
			}
		}
	}
	qc.OnlyB = len(fb) - seen
	qc.Drift.N = qc.Paired
	if qc.Paired > 0 {
		// Exactly summed (bigSum), rounded once.
		qc.Drift.MeanTV = bigSum(tvs) / float64(qc.Paired)
		qc.Drift.MeanAbsDeltaP = bigSum(dps) / float64(qc.Paired)
		qc.Drift.ChangedShare = float64(qc.Drift.ChangedDecisions) / float64(qc.Paired)
	}

	qc.Noise.A = metrics.RepeatNoise(qa, obsA, ta)
	qc.Noise.B = metrics.RepeatNoise(qa, obsB, tb)
	qc.Noise.Known = qc.Noise.A.Items > 0 || qc.Noise.B.Items > 0
	qc.Noise.FlipRate = max(qc.Noise.A.FlipRate, qc.Noise.B.FlipRate)
	qc.Noise.MeanTV = max(qc.Noise.A.MeanDelta, qc.Noise.B.MeanDelta)

	qc.PairedLabelled = len(la)
	if len(la) > 0 {
		ma, mb := opt.Metrics, opt.Metrics
		ma.Threshold, mb.Threshold = ta, tb
		dA, dB := metrics.Prepare(qa, la, ma), metrics.Prepare(qa, lb, mb)
		qc.Deltas, qc.BrierP, qc.BrierPBelow = pairedDeltas(dA, dB, metrics.PlanFor(dA.N, opt.Bootstrap, opt.Seed+qi*0x9e3779b9, opt.Metrics.ExactBootstrapMax))
		qc.McNemar = mcnemarOf(dA, dB)
		qc.Flips = flips(qa, dA, dB, opt.MaxFlips)
	}
	return qc
}

// randomRun is a run of q over items (a random subset of n, in a shuffled
// dataset order, with repeats, failures, unlabelled items and labels that
// sometimes disagree with the other run's).
func randomRun(id string, qs provider.Questions, n int, seed uint64) RunData {
	rng := rand.New(rand.NewPCG(seed, 3))
	rd := RunData{ID: id, Questions: qs, Obs: map[string][]metrics.Obs{}, Thresholds: map[string]float64{}}
	order := rng.Perm(n)
	for _, e := range qs {
		q := e.Question
		k := q.Size()
		for _, i := range order {
			if rng.IntN(12) == 0 {
				continue // not in this run
			}
			reps := 1 + rng.IntN(2)
			for rep := range reps {
				o := metrics.Obs{ItemID: fmt.Sprintf("it%03d", i), Repeat: rep, Label: (i*7 + rep*rng.IntN(2)) % k, HasLabel: i%9 != 0}
				if rng.IntN(25) == 0 {
					o.ErrKind = "timeout"
					rd.Obs[e.ID] = append(rd.Obs[e.ID], o)
					continue
				}
				a := &provider.Answer{ID: e.ID, Type: q.Type}
				if q.Type == provider.Noul {
					a.P = float64(rng.IntN(101)) / 100
				} else {
					p := make([]float64, k)
					left := 100
					for j := range k - 1 {
						v := rng.IntN(left + 1)
						p[j], left = float64(v)/100, left-v
					}
					p[k-1] = float64(left) / 100
					a.Probs = p
					m := 0
					for j := range p {
						if p[j] > p[m] {
							m = j
						}
					}
					if q.Type == provider.Choice {
						a.Choice = q.Options[m].Label
					} else {
						for j, v := range p {
							a.Score += float64(j) * v
						}
					}
				}
				o.Answer = a
				rd.Obs[e.ID] = append(rd.Obs[e.ID], o)
			}
		}
		rd.Thresholds[e.ID] = 0.5
		if q.Type == provider.Noul {
			rd.Thresholds[e.ID] = 0.4 + float64(rng.IntN(3))/10
		}
	}
	return rd
}

func streamQuestions(reorder bool) provider.Questions {
	ch := provider.Question{Type: provider.Choice}
	for _, l := range []string{"billing", "technical", "other", "sales"} {
		ch.Options = append(ch.Options, provider.Option{Label: l})
	}
	sc := provider.Question{Type: provider.Score}
	for i := range 4 {
		sc.Levels = append(sc.Levels, json.RawMessage(fmt.Sprintf("%q", fmt.Sprint("level ", i))))
	}
	if reorder {
		ch.Options[0], ch.Options[2] = ch.Options[2], ch.Options[0]
	}
	return provider.Questions{{ID: "queue", Question: ch}, {ID: "urgency", Question: sc}, {ID: "refund", Question: provider.Question{Type: provider.Noul}}}
}

// Comparing by merging both runs' items by id gives, question by
// question, exactly what holding every observation and looking B up by id
// gave: drift, only-in-one counts, repeat noise, deltas with their
// intervals and p-values, McNemar, flips — also with B's options
// reordered (remapped) and with different thresholds.
func TestMergedEqualsPerQuestion(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		reorder := seed%2 == 0
		a := randomRun("a", streamQuestions(false), 160, seed)
		b := randomRun("b", streamQuestions(reorder), 160, seed+100)
		opt := Options{Seed: 5, Bootstrap: 150}.withDefaults()
		merged, err := mergeQuestions(&a, &b, opt, []int{0, 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range a.Questions {
			qb, _ := b.Questions.Get(e.ID)
			want := perQuestionReference(e.ID, &a.Questions[i].Question, qb, a.Obs[e.ID], b.Obs[e.ID], &a, &b, opt, uint64(i))
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(merged[i].result(opt))
			if string(wj) != string(gj) {
				t.Fatalf("seed %d question %s:\nmerged    %s\nreference %s", seed, e.ID, gj, wj)
			}
			if want.PairedLabelled == 0 || want.Paired == 0 {
				t.Fatalf("seed %d question %s: nothing paired, the test proves nothing", seed, e.ID)
			}
		}
	}
	_ = math.Abs
}

// However the questions are split into passes (each reading both runs
// again), the comparison is the same; the passes keep under the bound.
func TestPassesGiveTheSameComparison(t *testing.T) {
	a := randomRun("a", streamQuestions(false), 300, 3)
	b := randomRun("b", streamQuestions(true), 300, 103)
	a.ItemsHint, b.ItemsHint = 300, 300
	var reads atomic.Int32 // the two runs are read on goroutines of their own
	counted := func(r RunData) RunData {
		held := r.items()
		r.Stream = func(yield func(*Item) error) error { reads.Add(1); return held(yield) }
		return r
	}
	one, err := CompareLoaded(counted(a), counted(b), Options{Seed: 9, Bootstrap: 200})
	if err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("default bound: the runs were read %d times in all, want once each", n)
	}
	// A bound under one question's records: a question a pass.
	reads.Store(0)
	opt := Options{Seed: 9, Bootstrap: 200, PassBytes: 1}
	if n := Passes(a, b, opt); n != 3 {
		t.Fatalf("%d passes, want 3", n)
	}
	split, err := CompareLoaded(counted(a), counted(b), opt)
	if err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 6 {
		t.Fatalf("a question a pass: runs read %d times, want 6", n)
	}
	oj, _ := json.Marshal(one)
	sj, _ := json.Marshal(split)
	if string(oj) != string(sj) {
		t.Fatalf("passes changed the comparison:\none   %s\nsplit %s", oj, sj)
	}
	// Two questions fit a bound of their records, the third does not.
	two := 300 * (pairedBytes(a.Questions[0].Question.Type) + pairedBytes(a.Questions[1].Question.Type))
	if got := comparePasses(&a, &b, Options{PassBytes: two}); len(got) != 2 || len(got[0]) != 2 || got[1][0] != 2 {
		t.Fatalf("passes under %d bytes: %v, want [[0 1] [2]]", two, got)
	}
}
