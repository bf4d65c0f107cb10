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
// its place in the run (dataset order) and its observations by question:
// Obs[i] are those of the run's i-th question (RunData.Questions), every
// repeat in repeat order.
type Item struct {
	ID    string
	Order int
	Obs   [][]metrics.Obs
	// orders, when set, places the item per question (RunData held in
	// memory, whose questions may list items in different orders).
	orders []int
}

func (it *Item) order(qi int) int {
	if it.orders != nil {
		return it.orders[qi]
	}
	return it.Order
}

// Items streams a run's items in ascending id order (byte order), each
// once; yield's error stops the stream and is returned. The item and what
// it points to (its observations, their answers, distributions and boxes)
// are the stream's again once yield returns: a stream may reuse them.
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
		nq := len(r.Questions)
		for qi, e := range r.Questions {
			obs, err := r.QuestionObs(e.ID)
			if err != nil {
				return err
			}
			pos := 0
			for i := range obs {
				o := obs[i]
				it := by[o.ItemID]
				if it == nil {
					it = &Item{ID: o.ItemID, Obs: make([][]metrics.Obs, nq), orders: make([]int, nq)}
					by[o.ItemID] = it
				}
				if len(it.Obs[qi]) == 0 {
					it.orders[qi] = pos
					pos++
				}
				it.Obs[qi] = append(it.Obs[qi], o)
			}
		}
		ids := make([]string, 0, len(by))
		for id := range by {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			it := by[id]
			for _, obs := range it.Obs {
				// Repeat order within the item, as a stored run streams.
				slices.SortStableFunc(obs, func(x, y metrics.Obs) int { return x.Repeat - y.Repeat })
			}
			if err := yield(it); err != nil {
				return err
			}
		}
		return nil
	}
}

var errStopped = errors.New("stopped")

// batch is a run of items pull copied out of a stream, with the storage
// they point into; the merge hands it back to be filled again.
type batch struct {
	items []Item
	spans [][]metrics.Obs // the items' Obs
	ords  []int           // the items' orders
	obs   []metrics.Obs
	ans   []provider.Answer
	flts  []float64
	edges []provider.Edges
	err   error
}

// reset empties b for refilling, keeping its storage.
func (b *batch) reset() {
	clear(b.items) // drop the strings and pointers of the items read
	b.items, b.spans, b.ords = b.items[:0], b.spans[:0], b.ords[:0]
	b.obs, b.ans, b.flts, b.edges = b.obs[:0], b.ans[:0], b.flts[:0], b.edges[:0]
	b.err = nil
}

// carve returns n elements from the end of *slab, growing it into a new
// array when full (the elements already handed out stay where they are).
func carve[T any](slab *[]T, n int) []T {
	s := *slab
	if cap(s)-len(s) < n {
		s = make([]T, 0, max(2*cap(s), n, 64))
	}
	m := len(s)
	*slab = s[:m+n]
	return s[m : m+n : m+n]
}

// add copies it, its observations, their answers, distributions and boxes
// into b (not the raw bytes, which no comparison reads).
func (b *batch) add(it *Item) {
	b.items = append(b.items, Item{ID: it.ID, Order: it.Order})
	c := &b.items[len(b.items)-1]
	c.Obs = carve(&b.spans, len(it.Obs))
	if it.orders != nil {
		c.orders = carve(&b.ords, len(it.orders))
		copy(c.orders, it.orders)
	}
	for qi, obs := range it.Obs {
		if len(obs) == 0 {
			c.Obs[qi] = nil
			continue
		}
		dst := carve(&b.obs, len(obs))
		copy(dst, obs)
		for j := range dst {
			o := &dst[j]
			if o.LabelBox != nil {
				e := &carve(&b.edges, 1)[0]
				*e = *o.LabelBox
				o.LabelBox = e
			}
			a := o.Answer
			if a == nil {
				continue
			}
			na := &carve(&b.ans, 1)[0]
			*na = *a
			na.Raw = nil
			if a.Probs != nil {
				na.Probs = carve(&b.flts, len(a.Probs))
				copy(na.Probs, a.Probs)
			}
			if a.Box != nil {
				na.Box = &carve(&b.edges, 1)[0]
				*na.Box = *a.Box
			}
			o.Answer = na
		}
		c.Obs[qi] = dst
	}
}

// pull turns an item stream into a pull iterator. The stream is read on
// its own goroutine, a batch of items ahead, so the two runs of a
// comparison are decoded on two cores while the merge consumes them; the
// batches are copied out of the stream and handed back once read, so the
// items of a large run are read into the same few batches. An item next
// returns is valid until the following call of next. stop ends the stream
// and waits until it has returned.
func pull(items Items) (next func() (*Item, error, bool), stop func()) {
	const batchSize, ahead = 64, 4
	out := make(chan *batch, ahead)
	// Every batch is in out, free, being filled or being read: free never
	// blocks a send.
	free := make(chan *batch, ahead+2)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer close(out)
		send := func(b *batch) bool {
			select {
			case out <- b:
				return true
			case <-done:
				return false
			}
		}
		get := func() *batch {
			select {
			case b := <-free:
				b.reset()
				return b
			default:
				return &batch{items: make([]Item, 0, batchSize)}
			}
		}
		cur := get()
		err := items(func(it *Item) error {
			cur.add(it)
			if len(cur.items) == batchSize {
				if !send(cur) {
					return errStopped
				}
				cur = get()
			}
			return nil
		})
		if errors.Is(err, errStopped) {
			return
		}
		if len(cur.items) > 0 {
			if !send(cur) {
				return
			}
			cur = get()
		}
		if err != nil {
			cur.err = err
			send(cur)
		}
	}()
	var reading *batch
	var pos int
	next = func() (*Item, error, bool) {
		for reading == nil || pos == len(reading.items) {
			if reading != nil {
				free <- reading // its last item was the caller's until now
				reading = nil
			}
			b, ok := <-out
			if !ok {
				return nil, nil, false
			}
			if b.err != nil {
				return nil, b.err, true
			}
			reading, pos = b, 0
		}
		it := &reading.items[pos]
		pos++
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
	id string
	qi uint64
	// posA, posB are the question's places in A's and B's questions
	// (Item.Obs).
	posA, posB int
	qa, qb     *provider.Question
	remap      []int
	ta, tb     float64
	box        bool
	skip       bool
	qc         QuestionComparison
	noiseA     *metrics.RepeatNoiser
	noiseB     *metrics.RepeatNoiser
	onlyB      int
	seen       int
	// the drift terms' sums over the paired items, exact (the same in
	// any order the items come)
	sumTV, sumDP exactSum
	// the labelled pairs: A's and B's records, and A's order of each
	pairA, pairB *metrics.RecColumns
	pairOrder    []int32
	boxA         []orderedObs
	boxB         []orderedObs
	boxOrder     int
}

type orderedObs struct {
	order int
	obs   metrics.Obs
}

func newPairedQuestion(id string, qi uint64, posB int, qa, qb *provider.Question, a, b *RunData, names *metrics.ItemNames, opt Options) *pairedQuestion {
	p := &pairedQuestion{id: id, qi: qi, posA: int(qi), posB: posB, qa: qa, qb: qb, ta: a.threshold(id), tb: b.threshold(id)}
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
	p.pairA, p.pairB = metrics.NewRecColumns(qa.Type, n, names), metrics.NewRecColumns(qa.Type, n, names)
	p.pairOrder = make([]int32, 0, n)
	p.noiseA, p.noiseB = metrics.NewRepeatNoiser(qa, p.ta), metrics.NewRepeatNoiser(qa, p.tb)
	return p
}

// cloneObs is a copy of o that shares nothing a stream reuses: its
// answer, distribution and boxes are copied.
func cloneObs(o metrics.Obs) metrics.Obs {
	if o.LabelBox != nil {
		e := *o.LabelBox
		o.LabelBox = &e
	}
	if a := o.Answer; a != nil {
		c := *a
		c.Probs = slices.Clone(a.Probs)
		if a.Box != nil {
			e := *a.Box
			c.Box = &e
		}
		o.Answer = &c
	}
	return o
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
// is only in the other run; name is the item's place in the merge's
// ItemNames when it is in both.
func (p *pairedQuestion) item(ia, ib *Item, name int32) {
	var oa, ob []metrics.Obs
	if ia != nil {
		oa = ia.Obs[p.posA]
	}
	if ib != nil {
		ob = ib.Obs[p.posB]
	}
	if p.skip {
		return
	}
	if p.box {
		// Kept past the item, whose answers the stream reuses.
		for _, o := range oa {
			p.boxA = append(p.boxA, orderedObs{ia.order(p.posA), cloneObs(o)})
		}
		for _, o := range ob {
			p.boxB = append(p.boxB, orderedObs{ib.order(p.posB), cloneObs(o)})
		}
		return
	}
	if p.remap != nil && len(ob) > 0 {
		ob = remapObs(ob, p.remap)
	}
	if len(oa) > 0 {
		p.noiseA.AddItem(oa, ia.order(p.posA))
	}
	if len(ob) > 0 {
		p.noiseB.AddItem(ob, ib.order(p.posB))
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
	p.sumTV.add(metrics.TV(x.Answer, lab.Answer))
	p.sumDP.add(math.Abs(outcomeP(x.Answer, da) - outcomeP(lab.Answer, da)))
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
		p.pairA.Append(metrics.RecOf(qa, &x), name)
		p.pairB.Append(metrics.RecOf(qa, &lab), name)
		p.pairOrder = append(p.pairOrder, int32(ia.order(p.posA)))
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
		qc.Drift.MeanTV = p.sumTV.Float64() / float64(qc.Paired)
		qc.Drift.MeanAbsDeltaP = p.sumDP.Float64() / float64(qc.Paired)
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
		ma, mb := opt.Metrics, opt.Metrics
		ma.Threshold, mb.Threshold = p.ta, p.tb
		// A's and B's columns are prepared at once, on two cores.
		var dA *metrics.Data
		done := make(chan struct{})
		go func() {
			defer close(done)
			dA = metrics.PrepareColumns(p.qa, p.pairA, idx, ma)
		}()
		dB := metrics.PrepareColumns(p.qa, p.pairB, idx, mb)
		<-done
		p.pairA, p.pairB, p.pairOrder = nil, nil, nil
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

// posInB is the place in b's questions of a's question i, or -1.
func posInB(a, b *RunData, i int) int {
	id := a.Questions[i].ID
	return slices.IndexFunc(b.Questions, func(x provider.QuestionEntry) bool { return x.ID == id })
}

// pairedBytes is about what a question of type t keeps per paired item:
// both runs' records and A's order (a box keeps both runs' observations).
func pairedBytes(t provider.QuestionType) int {
	if t == provider.Box {
		return 2 * 256
	}
	return 2*metrics.RecColumnBytes(t) + 4
}

// comparePasses groups the questions of A that B also asks (places in A's
// questions, in order) into passes whose records for a's items stay under
// opt.PassBytes (one question a pass at least). Runs of unknown size are
// one pass.
func comparePasses(a, b *RunData, opt Options) [][]int {
	budget := opt.PassBytes
	if budget <= 0 {
		budget = DefaultPassBytes
	}
	items := max(a.ItemsHint, 0)
	var out [][]int
	var cur []int
	used := 0
	for i := range a.Questions {
		if posInB(a, b, i) < 0 {
			continue
		}
		n := items * pairedBytes(a.Questions[i].Question.Type)
		if len(cur) > 0 && used+n > budget {
			out, cur, used = append(out, cur), nil, 0
		}
		cur, used = append(cur, i), used+n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Passes is how many times a comparison of a and b under opt reads each
// run (see Options.PassBytes).
func Passes(a, b RunData, opt Options) int { return len(comparePasses(&a, &b, opt)) }

// mergeQuestions reads both runs' items once, merged by id, into the
// questions of A at the places pass lists (each also asked by B); the
// result is indexed by A's questions, nil for those not in pass.
func mergeQuestions(a, b *RunData, opt Options, pass []int) ([]*pairedQuestion, error) {
	qs := make([]*pairedQuestion, len(a.Questions))
	// The paired items' ids, once for every question's records.
	names := metrics.NewItemNames(max(a.ItemsHint, 0))
	for _, i := range pass {
		e := a.Questions[i]
		posB := posInB(a, b, i)
		qs[i] = newPairedQuestion(e.ID, uint64(i), posB, &a.Questions[i].Question, &b.Questions[posB].Question, a, b, names, opt)
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
		name := int32(-1)
		if xa != nil && xb != nil {
			name = names.Add(xa.ID)
		}
		for _, p := range qs {
			if p != nil {
				p.item(xa, xb, name)
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
