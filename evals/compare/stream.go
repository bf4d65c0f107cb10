package compare

import (
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// Item is one dataset item of a run as a comparison reads it: its id,
// its place in the run (dataset order) and its observations by question
// id, every repeat in repeat order.
type Item struct {
	ID    string
	Order int
	Obs   map[string][]metrics.Obs
	// orders, when set, places the item per question (RunData held in
	// memory, whose questions may list items in different orders).
	orders map[string]int
}

func (it *Item) order(qid string) int {
	if o, ok := it.orders[qid]; ok {
		return o
	}
	return it.Order
}

// Items streams a run's items in ascending id order (byte order), each
// once; yield's error stops the stream and is returned.
type Items func(yield func(*Item) error) error

// items is r's item stream: r.Stream, else its held observations.
func (r *RunData) items() Items {
	if r.Stream != nil {
		return r.Stream
	}
	return heldItems(r)
}

// heldItems streams RunData held in memory (Obs, or Load per question).
func heldItems(r *RunData) Items {
	return func(yield func(*Item) error) error {
		by := map[string]*Item{}
		for _, e := range r.Questions {
			obs, err := r.QuestionObs(e.ID)
			if err != nil {
				return err
			}
			pos := 0
			for i := range obs {
				o := obs[i]
				it := by[o.ItemID]
				if it == nil {
					it = &Item{ID: o.ItemID, Obs: map[string][]metrics.Obs{}, orders: map[string]int{}}
					by[o.ItemID] = it
				}
				if _, ok := it.orders[e.ID]; !ok {
					it.orders[e.ID] = pos
					pos++
				}
				it.Obs[e.ID] = append(it.Obs[e.ID], o)
			}
		}
		ids := make([]string, 0, len(by))
		for id := range by {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			it := by[id]
			for q, obs := range it.Obs {
				// Repeat order within the item, as a stored run streams.
				slices.SortStableFunc(obs, func(x, y metrics.Obs) int { return x.Repeat - y.Repeat })
				it.Obs[q] = obs
			}
			if err := yield(it); err != nil {
				return err
			}
		}
		return nil
	}
}

var errStopped = errors.New("stopped")

// pull turns an item stream into a pull iterator. The stream is read on
// its own goroutine, a batch of items ahead, so the two runs of a
// comparison are decoded on two cores while the merge consumes them; stop
// ends the stream and waits until it has returned.
func pull(items Items) (next func() (*Item, error, bool), stop func()) {
	type batch struct {
		items []*Item
		err   error
	}
	const batchSize = 64
	out := make(chan batch, 4)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer close(out)
		send := func(b batch) bool {
			select {
			case out <- b:
				return true
			case <-done:
				return false
			}
		}
		cur := make([]*Item, 0, batchSize)
		err := items(func(it *Item) error {
			cur = append(cur, it)
			if len(cur) == batchSize {
				if !send(batch{items: cur}) {
					return errStopped
				}
				cur = make([]*Item, 0, batchSize)
			}
			return nil
		})
		if errors.Is(err, errStopped) {
			return
		}
		if len(cur) > 0 && !send(batch{items: cur}) {
			return
		}
		if err != nil {
			send(batch{err: err})
		}
	}()
	var pending []*Item
	next = func() (*Item, error, bool) {
		for len(pending) == 0 {
			b, ok := <-out
			if !ok {
				return nil, nil, false
			}
			if b.err != nil {
				return nil, b.err, true
			}
			pending = b.items
		}
		it := pending[0]
		pending = pending[1:]
		return it, nil, true
	}
	var once bool
	stop = func() {
		if !once {
			once = true
			close(done)
		}
		<-finished
	}
	return next, stop
}

// pairedQuestion accumulates one question's comparison while the two
// runs' items are merged by id: drift, only-in-one counts and repeat noise
// as they pass, and a pair of compact records per labelled item.
type pairedQuestion struct {
	id     string
	qi     uint64
	qa, qb *provider.Question
	remap  []int
	ta, tb float64
	box    bool
	skip   bool
	qc     QuestionComparison
	noiseA *metrics.RepeatNoiser
	noiseB *metrics.RepeatNoiser
	onlyB  int
	seen   int
	drift  []driftTerm
	// the labelled pairs: A's and B's records, and A's order of each
	pairA, pairB *metrics.RecColumns
	pairOrder    []int32
	boxA         []orderedObs
	boxB         []orderedObs
	boxOrder     int
}

// driftTerm is one paired item's drift terms, summed in A's order.
type driftTerm struct {
	order  int32
	tv, dp float64
}

type orderedObs struct {
	order int
	obs   metrics.Obs
}

func newPairedQuestion(id string, qi uint64, qa, qb *provider.Question, a, b *RunData, opt Options) *pairedQuestion {
	p := &pairedQuestion{id: id, qi: qi, qa: qa, qb: qb, ta: a.threshold(id), tb: b.threshold(id)}
	if qa.Type == provider.Box {
		p.box = true
		return p
	}
	p.qc = QuestionComparison{ID: id, Type: qa.Type, McNemar: McNemar{P: 1, PHolm: 1}, BrierP: 1, BrierPHolm: 1}
	remap, reason := alignQuestion(qa, qb, opt.Map[id])
	if len(opt.Map[id]) > 0 {
		p.qc.Mapped = opt.Map[id]
	}
	if reason != "" {
		p.qc.Reason, p.qc.Verdict = reason, NotComparable
		p.skip = true
		return p
	}
	p.remap = remap
	n := max(a.ItemsHint, 0)
	p.pairA, p.pairB = metrics.NewRecColumns(qa.Type, n), metrics.NewRecColumns(qa.Type, n)
	p.pairOrder = make([]int32, 0, n)
	p.drift = make([]driftTerm, 0, n)
	p.noiseA, p.noiseB = metrics.NewRepeatNoiser(qa, p.ta), metrics.NewRepeatNoiser(qa, p.tb)
	return p
}

// lowest is the observation with the lowest repeat (the first on ties).
func lowest(obs []metrics.Obs) metrics.Obs {
	j := 0
	for i := range obs {
		if obs[i].Repeat < obs[j].Repeat {
			j = i
		}
	}
	return obs[j]
}

// item reads one item of A (ia) and of B (ib), either nil when the item
// is only in the other run.
func (p *pairedQuestion) item(ia, ib *Item) {
	var oa, ob []metrics.Obs
	if ia != nil {
		oa = ia.Obs[p.id]
	}
	if ib != nil {
		ob = ib.Obs[p.id]
	}
	if p.skip {
		return
	}
	if p.box {
		for _, o := range oa {
			p.boxA = append(p.boxA, orderedObs{ia.order(p.id), o})
		}
		for _, o := range ob {
			p.boxB = append(p.boxB, orderedObs{ib.order(p.id), o})
		}
		return
	}
	if p.remap != nil && len(ob) > 0 {
		ob = remapObs(ob, p.remap)
	}
	if len(oa) > 0 {
		p.noiseA.AddItem(oa, ia.order(p.id))
	}
	if len(ob) > 0 {
		p.noiseB.AddItem(ob, ib.order(p.id))
	}
	switch {
	case len(oa) == 0 && len(ob) == 0:
		return
	case len(oa) == 0:
		p.onlyB++
		return
	case len(ob) == 0:
		p.qc.OnlyA++
		return
	}
	p.seen++
	x, lab := lowest(oa), lowest(ob)
	qa := p.qa
	if x.Answer == nil || lab.Answer == nil || !usableShape(qa, x.Answer) || !usableShape(qa, lab.Answer) {
		return
	}
	p.qc.Paired++
	da, db := metrics.Decide(qa, x.Answer, p.ta), metrics.Decide(qa, lab.Answer, p.tb)
	p.drift = append(p.drift, driftTerm{int32(ia.order(p.id)), metrics.TV(x.Answer, lab.Answer), math.Abs(outcomeP(x.Answer, da) - outcomeP(lab.Answer, da))})
	if da != db {
		p.qc.Drift.ChangedDecisions++
	}
	if valuesDiffer(x.Answer, lab.Answer) {
		p.qc.Drift.ChangedValues++
	}
	if !x.HasLabel && !lab.HasLabel {
		return
	}
	if x.HasLabel && lab.HasLabel && x.Label != lab.Label {
		p.qc.LabelMismatch++
	}
	// A's label when it has one, else B's, on both sides.
	if x.HasLabel {
		lab.Label, lab.HasLabel = x.Label, true
	}
	x.Label, x.HasLabel = lab.Label, true
	if metrics.Usable(qa, &x) && metrics.Usable(qa, &lab) {
		p.pairA.Append(metrics.RecOf(qa, &x))
		p.pairB.Append(metrics.RecOf(qa, &lab))
		p.pairOrder = append(p.pairOrder, int32(ia.order(p.id)))
	}
}

// result finishes the question's comparison.
func (p *pairedQuestion) result(opt Options) QuestionComparison {
	if p.box {
		return compareBox(p.id, p.qa, p.qb, sortedObs(p.boxA), sortedObs(p.boxB), opt, p.qi) // box.go
	}
	qc := p.qc
	if p.skip {
		return qc
	}
	qc.OnlyB = p.onlyB
	qc.Drift.N = qc.Paired
	if qc.Paired > 0 {
		slices.SortStableFunc(p.drift, func(x, y driftTerm) int { return int(x.order - y.order) })
		var sumTV, sumDP float64
		for _, d := range p.drift {
			sumTV += d.tv
			sumDP += d.dp
		}
		p.drift = nil
		qc.Drift.MeanTV = sumTV / float64(qc.Paired)
		qc.Drift.MeanAbsDeltaP = sumDP / float64(qc.Paired)
		qc.Drift.ChangedShare = float64(qc.Drift.ChangedDecisions) / float64(qc.Paired)
	}
	qc.Noise.A, qc.Noise.B = p.noiseA.Result(), p.noiseB.Result()
	qc.Noise.Known = qc.Noise.A.Items > 0 || qc.Noise.B.Items > 0
	qc.Noise.FlipRate = max(qc.Noise.A.FlipRate, qc.Noise.B.FlipRate)
	qc.Noise.MeanTV = max(qc.Noise.A.MeanDelta, qc.Noise.B.MeanDelta)

	qc.PairedLabelled = p.pairA.Len()
	if qc.PairedLabelled > 0 {
		// Resampled in A's dataset order, whatever order the merge read.
		idx := make([]int32, qc.PairedLabelled)
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(x, y int32) int { return int(p.pairOrder[x] - p.pairOrder[y]) })
		la, lb := make([]metrics.Rec, len(idx)), make([]metrics.Rec, len(idx))
		for i, j := range idx {
			la[i], lb[i] = p.pairA.Rec(int(j)), p.pairB.Rec(int(j))
		}
		p.pairA, p.pairB, p.pairOrder = nil, nil, nil
		ma, mb := opt.Metrics, opt.Metrics
		ma.Threshold, mb.Threshold = p.ta, p.tb
		dA, dB := metrics.PrepareRecs(p.qa, la, ma), metrics.PrepareRecs(p.qa, lb, mb)
		plan := metrics.PlanFor(dA.N, opt.Bootstrap, opt.Seed+p.qi*0x9e3779b9, opt.Metrics.ExactBootstrapMax)
		qc.Resampling = plan.Resampling()
		qc.Deltas, qc.BrierP, qc.BrierPBelow = pairedDeltas(dA, dB, plan)
		qc.McNemar = mcnemarOf(dA, dB)
		qc.Flips = flips(p.qa, dA, dB, opt.MaxFlips)
	}
	return qc
}

func sortedObs(in []orderedObs) []metrics.Obs {
	slices.SortStableFunc(in, func(x, y orderedObs) int { return x.order - y.order })
	out := make([]metrics.Obs, len(in))
	for i := range in {
		out[i] = in[i].obs
	}
	return out
}

// mergeQuestions reads both runs' items once, merged by id, into every
// comparable question of A that B also asks; the questions are in A's
// order.
func mergeQuestions(a, b *RunData, opt Options) ([]*pairedQuestion, error) {
	var qs []*pairedQuestion
	for i, e := range a.Questions {
		qb, ok := b.Questions.Get(e.ID)
		if !ok {
			qs = append(qs, nil)
			continue
		}
		qs = append(qs, newPairedQuestion(e.ID, uint64(i), &a.Questions[i].Question, qb, a, b, opt))
	}
	nextA, stopA := pull(a.items())
	defer stopA()
	nextB, stopB := pull(b.items())
	defer stopB()
	ia, errA, okA := nextA()
	ib, errB, okB := nextB()
	for {
		if errA != nil {
			return nil, errA
		}
		if errB != nil {
			return nil, errB
		}
		if !okA && !okB {
			return qs, nil
		}
		var xa, xb *Item
		switch {
		case !okB || (okA && strings.Compare(ia.ID, ib.ID) < 0):
			xa = ia
		case !okA || strings.Compare(ia.ID, ib.ID) > 0:
			xb = ib
		default:
			xa, xb = ia, ib
		}
		for _, p := range qs {
			if p != nil {
				p.item(xa, xb)
			}
		}
		if xa != nil {
			ia, errA, okA = nextA()
		}
		if xb != nil {
			ib, errB, okB = nextB()
		}
	}
}
