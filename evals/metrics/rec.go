package metrics

import (
	"slices"

	"github.com/jevlab/jevlab/provider"
)

// Rec is one observation reduced, once, to what the metrics read: the
// decision, the label, the probabilities of both, the top probability,
// the proper-score terms and the provider's confidence. It holds no
// distribution, raw bytes or provenance, so a report over n items holds n
// Recs (96 bytes each) whatever the size of the answers. Every field is
// computed with the same arithmetic Prepare used on full answers, so the
// metrics are bit-identical either way.
type Rec struct {
	ItemID string
	Repeat int32
	// Label is the gold outcome index (choice option, score level, noul
	// 1 = true), -1 when the item has none or it is out of range.
	Label int32
	// Dec is a choice's or score's primary decision (the provider's choice,
	// the most probable level); a noul decides by P at the threshold in use.
	Dec   int32
	flags uint8
	// P is a noul's P(true); Top a choice's or score's top probability.
	P, Top float64
	// PLabel and PDec are the probabilities the answer gives the label and
	// Dec (choice, score); Brier is Σₖ(pₖ − [k = label])² (labelled only).
	PLabel, PDec, Brier float64
	// Score, Conf and RPS are a score's expected level, the provider's
	// confidence (choice and score, when sent) and its ranked probability
	// score against the label.
	Score, Conf, RPS float64
}

const (
	recAnswered      uint8 = 1 << iota // an answer came back (maybe unusable)
	recUsable                          // of the shape the question needs
	recHasConf                         // the provider sent a confidence
	recArgmaxDiffers                   // a choice decided other than its argmax
)

// Answered reports whether the observation has an answer.
func (r *Rec) Answered() bool { return r.flags&recAnswered != 0 }

// Usable reports whether the answer has the shape the question needs.
func (r *Rec) Usable() bool { return r.flags&recUsable != 0 }

// HasConf reports whether the provider sent a confidence.
func (r *Rec) HasConf() bool { return r.flags&recHasConf != 0 }

// Labelled reports whether the observation counts towards label metrics:
// usable and labelled in range.
func (r *Rec) Labelled() bool { return r.Usable() && r.Label >= 0 }

// Decision is the primary decision under a noul threshold (see Decide).
func (r *Rec) Decision(q *provider.Question, threshold float64) int {
	if q.Type == provider.Noul {
		if r.P >= threshold {
			return 1
		}
		return 0
	}
	return int(r.Dec)
}

// decisionConf is the probability of decision dec (decisionConfidence).
func (r *Rec) decisionConf(q *provider.Question, dec int) float64 {
	if q.Type == provider.Noul {
		if dec == 1 {
			return r.P
		}
		return 1 - r.P
	}
	return r.PDec
}

// selConf is the selective-prediction confidence of a usable answer, as
// Prepare computes it: the probability of the decided outcome for a noul
// (max(p, 1−p) at threshold 0.5), the provider's confidence for a score
// that has one, otherwise the top probability.
func (r *Rec) selConf(q *provider.Question, threshold float64) float64 {
	switch q.Type {
	case provider.Noul:
		return r.decisionConf(q, r.Decision(q, threshold))
	case provider.Score:
		if r.HasConf() {
			return r.Conf
		}
	}
	return r.Top
}

// RecOf reduces observation o of question q to its Rec.
func RecOf(q *provider.Question, o *Obs) Rec {
	r := Rec{ItemID: o.ItemID, Repeat: int32(o.Repeat), Label: -1, Dec: -1}
	k := q.Size()
	if o.HasLabel && o.Label >= 0 && o.Label < k {
		r.Label = int32(o.Label)
	}
	a := o.Answer
	if a != nil {
		r.flags |= recAnswered
	}
	if !usable(q, a) {
		return r
	}
	r.flags |= recUsable
	if a.HasConfidence {
		r.flags |= recHasConf
		r.Conf = a.Confidence
	}
	if q.Type == provider.Noul {
		r.P = a.P
		return r
	}
	m := argmax(a.Probs)
	dec := decide(q, a, DefaultThreshold) // no threshold outside a noul
	r.Dec, r.Top, r.PDec = int32(dec), a.Probs[m], decisionConfidence(q, a, dec)
	if dec != m {
		r.flags |= recArgmaxDiffers
	}
	if q.Type == provider.Score {
		r.Score = a.Score
	}
	if r.Label < 0 {
		return r
	}
	y := int(r.Label)
	var brier float64
	for j, p := range a.Probs {
		t := 0.0
		if j == y {
			t = 1
		}
		brier += (p - t) * (p - t)
	}
	r.Brier, r.PLabel = brier, a.Probs[y]
	if q.Type == provider.Score {
		var cq, co, rps float64
		for l := 0; l < k-1; l++ {
			cq += a.Probs[l]
			if l >= y {
				co = 1
			}
			rps += (cq - co) * (cq - co)
		}
		r.RPS = rps / float64(k-1)
	}
	return r
}

// RecsOf reduces observations to Recs, in order.
func RecsOf(q *provider.Question, obs []Obs) []Rec {
	out := make([]Rec, len(obs))
	for i := range obs {
		out[i] = RecOf(q, &obs[i])
	}
	return out
}

// Recorder computes one question's report in one pass over its
// observations. As each item ends, its Rec (its lowest repeat) goes into
// the metric columns Prepare would build (labelled items only) and into
// the routing cells; no Rec is kept, and at a time it holds the answers of
// one item only (for the repeat noise): a large run's report holds its
// columns, never its distributions. Observations of one item must come
// together (the store's order: dataset order, then repeat).
type Recorder struct {
	q   *provider.Question
	opt Options

	d        *Data       // the labelled items' columns, filled as items end
	route    *routingAcc // nil without a minimum confidence
	onItem   func(*Rec)
	items    int
	answered int
	id       string
	lat      []float64
	errs     map[string]int
	in       int64
	out      int64
	cost     float64

	// the item being read: its Rec so far (lowest repeat) and its usable
	// answers (repeat noise)
	cur       string
	open      bool
	rec       Rec
	group     []*provider.Answer
	anyRepeat bool
	nobs      int
	noise     noiseAcc
}

// NewRecorder starts the report of question q under opt.
func NewRecorder(q *provider.Question, opt Options) *Recorder {
	opt = opt.WithDefaults()
	rc := &Recorder{q: q, opt: opt, d: newData(q, opt), noise: noiseAcc{q: q, threshold: opt.Threshold}}
	if opt.MinConfidence != nil {
		rc.route = newRoutingAcc(q, *opt.MinConfidence, opt)
	}
	return rc
}

// OnItem has fn called with each item's Rec (its lowest repeat) as the
// item ends, in the order items came, before Report returns; fn must not
// keep the pointer. A caller that needs more of each item than the report
// (a cost fit) collects it there instead of holding every Rec.
func (rc *Recorder) OnItem(fn func(*Rec)) { rc.onItem = fn }

// Add reads one observation. An observation of the item just read is one
// of its repeats; any other starts a new item.
func (rc *Recorder) Add(o *Obs) {
	rc.add(o, rc.open && o.ItemID == rc.cur)
}

// addDistinct reads an observation as an item of its own (observations
// without repeats: every one is a distinct item, as Compute has it).
func (rc *Recorder) addDistinct(o *Obs) { rc.add(o, false) }

func (rc *Recorder) add(o *Obs, sameItem bool) {
	rc.nobs++
	if o.Repeat != 0 {
		rc.anyRepeat = true
	}
	if o.Answer == nil {
		if rc.errs == nil {
			rc.errs = map[string]int{}
		}
		k := o.ErrKind
		if k == "" {
			k = "unknown"
		}
		rc.errs[k]++
	}
	if o.LatencyMS > 0 {
		rc.lat = append(rc.lat, o.LatencyMS)
	}
	rc.in += o.InputTokens
	rc.out += o.OutputTokens
	rc.cost += o.CostUSD
	if sameItem {
		if int32(o.Repeat) < rc.rec.Repeat {
			rc.rec = RecOf(rc.q, o)
		}
	} else {
		rc.flush()
		rc.cur, rc.open = o.ItemID, true
		rc.rec = RecOf(rc.q, o)
	}
	if rc.id == "" && o.Answer != nil && rc.rec.Answered() {
		rc.id = o.Answer.ID
	}
	if usable(rc.q, o.Answer) {
		rc.group = append(rc.group, o.Answer)
	}
}

// flush ends the item being read.
func (rc *Recorder) flush() {
	if rc.open {
		rc.noise.item(rc.group)
		r := &rc.rec
		rc.items++
		if r.Answered() {
			rc.answered++
		}
		if rc.route != nil {
			rc.route.add(r)
		}
		rc.d.appendRec(rc.q, r, rc.opt)
		if rc.onItem != nil {
			rc.onItem(r)
		}
	}
	rc.group = rc.group[:0]
	rc.open = false
}

// Grow makes room for n more items (and n more observations' latencies),
// so a caller that knows how many items a question has (a stored run's
// count) fills each column once, at its size: appending to a growing one
// holds the old and the new copy at once and leaves up to a quarter of it
// unused.
func (rc *Recorder) Grow(n int) {
	if n > 0 {
		rc.d.grow(n)
		rc.lat = slices.Grow(rc.lat, n)
		if rc.route != nil {
			rc.route.cat = slices.Grow(rc.route.cat, n)
		}
	}
}

// Report computes the question's report from what was read. The Recorder
// is spent: its columns become the report's data and are released with
// it.
func (rc *Recorder) Report() *QuestionReport {
	rc.flush()
	q, opt := rc.q, rc.opt
	r := &QuestionReport{Type: q.Type, Classes: classes(q)}
	r.Conventions = conventions(q, opt)
	r.N, r.Answered = rc.items, rc.answered
	r.ID = rc.id
	r.Errors = rc.errs
	r.Latency = latency(rc.lat)
	rc.lat = nil
	r.Tokens.Input, r.Tokens.Output, r.CostUSD = rc.in, rc.out, rc.cost
	r.UsagePerRequest = opt.UsagePerRequest
	var rt *Routing
	if rc.route != nil {
		rt = rc.route.result()
		rc.route = nil
	}
	d := rc.d
	rc.d, rc.group, rc.onItem = nil, nil, nil
	d.index()
	measure(r, q, d, opt)
	if rt != nil {
		r.Selective.Routing = rt
	}
	var nz Noise
	switch {
	case !rc.anyRepeat:
		nz.Repeats = 1
		if rc.nobs == 0 {
			nz.Repeats = 0
		}
	default:
		nz = rc.noise.result()
	}
	r.Noise = noiseFloor(nz, d, opt)
	r.Noise.ECEWithinFloor = r.Noise.FloorDraws > 0 && r.ECE.Defined() && r.ECE.Value <= r.Noise.ECEFloorP95+1e-12
	return r
}

// noiseAcc accumulates the repeat-to-repeat noise item by item: how many
// items have two or more usable repeats, how many of them changed
// decision, and their mean total-variation distance between repeats.
type noiseAcc struct {
	q         *provider.Question
	threshold float64
	nz        Noise
	sumDelta  float64
}

// item adds one item's usable answers, in repeat order.
func (n *noiseAcc) item(as []*provider.Answer) {
	n.nz.Repeats = max(n.nz.Repeats, len(as))
	if len(as) < 2 {
		return
	}
	n.nz.Items++
	d0 := decide(n.q, as[0], n.threshold)
	flip := false
	var s float64
	pairs := 0
	for a := range as {
		if decide(n.q, as[a], n.threshold) != d0 {
			flip = true
		}
		for b := a + 1; b < len(as); b++ {
			s += TV(as[a], as[b])
			pairs++
		}
	}
	if flip {
		n.nz.Flipped++
	}
	n.sumDelta += s / float64(pairs)
}

// result is the noise of the items added (no ECE floor).
func (n *noiseAcc) result() Noise {
	nz := n.nz
	if nz.Items > 0 {
		nz.FlipRate = float64(nz.Flipped) / float64(nz.Items)
		nz.MeanDelta = n.sumDelta / float64(nz.Items)
	}
	return nz
}

// RepeatNoiser measures a question's repeat-to-repeat noise item by item
// (RepeatNoise over a stream): feed each item's observations together,
// with the item's place in its run; the mean is summed in that order, so
// the figures are RepeatNoise's to the last bit whatever order the items
// come in.
type RepeatNoiser struct {
	acc       noiseAcc
	anyRepeat bool
	n         int
	buf       []*provider.Answer
	deltas    []orderedDelta
}

type orderedDelta struct {
	order int
	delta float64
}

// NewRepeatNoiser starts the repeat noise of question q under threshold.
func NewRepeatNoiser(q *provider.Question, threshold float64) *RepeatNoiser {
	opt := Options{Threshold: threshold}.WithDefaults()
	return &RepeatNoiser{acc: noiseAcc{q: q, threshold: opt.Threshold}}
}

// AddItem adds one item's observations (every repeat, in repeat order);
// order is the item's place in its run.
func (r *RepeatNoiser) AddItem(obs []Obs, order int) {
	r.buf = r.buf[:0]
	for i := range obs {
		r.n++
		if obs[i].Repeat != 0 {
			r.anyRepeat = true
		}
		if usable(r.acc.q, obs[i].Answer) {
			r.buf = append(r.buf, obs[i].Answer)
		}
	}
	before := r.acc.sumDelta
	r.acc.item(r.buf)
	if len(r.buf) >= 2 {
		r.deltas = append(r.deltas, orderedDelta{order, r.acc.sumDelta - before})
		r.acc.sumDelta = before
	}
}

// Result is the noise of the items added: RepeatNoise's figures.
func (r *RepeatNoiser) Result() Noise {
	if !r.anyRepeat {
		nz := Noise{Repeats: 1}
		if r.n == 0 {
			nz.Repeats = 0
		}
		return nz
	}
	slices.SortStableFunc(r.deltas, func(x, y orderedDelta) int { return x.order - y.order })
	for _, d := range r.deltas {
		r.acc.sumDelta += d.delta
	}
	r.deltas = nil
	return r.acc.result()
}

// ItemNames is a table of item ids that several RecColumns share: each
// keeps a 4-byte place in the table per item instead of a string, so the
// columns of a comparison's questions hold no pointers the garbage
// collector scans, and an item's id is kept once, not once per question
// and run.
type ItemNames struct{ ids []string }

// NewItemNames is an empty table with room for n ids.
func NewItemNames(n int) *ItemNames { return &ItemNames{ids: make([]string, 0, n)} }

// Add appends id and returns its place.
func (t *ItemNames) Add(id string) int32 {
	t.ids = append(t.ids, id)
	return int32(len(t.ids) - 1)
}

// RecColumns holds one question's Recs as columns of just the fields its
// type reads (a noul's P; a choice's top, label and decision
// probabilities and Brier; a score's also its level, confidence and RPS):
// what a comparison keeps per paired item, 29–73 bytes instead of a Rec's
// 96, none of them a pointer. The item id is a place in an ItemNames table.
// Repeat is not kept (every Rec read back is a first repeat).
type RecColumns struct {
	typ   provider.QuestionType
	names *ItemNames
	ids   []int32 // places in names
	ints  []int32 // label, decision
	flags []uint8
	vals  []float64
}

// NewRecColumns holds Recs of a question of type t, with room for n, their
// item ids in names.
func NewRecColumns(t provider.QuestionType, n int, names *ItemNames) *RecColumns {
	c := &RecColumns{typ: t, names: names}
	c.ids = make([]int32, 0, n)
	c.ints = make([]int32, 0, 2*n)
	c.flags = make([]uint8, 0, n)
	c.vals = make([]float64, 0, c.stride()*n)
	return c
}

func (c *RecColumns) stride() int { return recStride(c.typ) }

// recStride is how many float64s RecColumns keeps per Rec of type t.
func recStride(t provider.QuestionType) int {
	switch t {
	case provider.Noul:
		return 1
	case provider.Choice:
		return 4
	}
	return 7
}

// RecColumnBytes is what RecColumns of a question of type t hold per Rec:
// its item's place, label, decision, flags and values.
func RecColumnBytes(t provider.QuestionType) int { return 4 + 8 + 1 + 8*recStride(t) }

// Len is the number of Recs held.
func (c *RecColumns) Len() int { return len(c.ids) }

// Append adds r, whose item id is at place name of the columns' ItemNames
// (r.ItemID is not read).
func (c *RecColumns) Append(r Rec, name int32) {
	c.ids = append(c.ids, name)
	c.ints = append(c.ints, r.Label, r.Dec)
	c.flags = append(c.flags, r.flags)
	switch c.typ {
	case provider.Noul:
		c.vals = append(c.vals, r.P)
	case provider.Choice:
		c.vals = append(c.vals, r.Top, r.PLabel, r.PDec, r.Brier)
	default:
		c.vals = append(c.vals, r.Top, r.PLabel, r.PDec, r.Brier, r.Score, r.Conf, r.RPS)
	}
}

// labelled is c.Rec(i).Labelled(), without reading the rest.
func (c *RecColumns) labelled(i int) bool {
	r := Rec{Label: c.ints[2*i], flags: c.flags[i]}
	return r.Labelled()
}

// Rec returns the i-th Rec as appended (Repeat 0), with its item id.
func (c *RecColumns) Rec(i int) Rec {
	r := Rec{ItemID: c.names.ids[c.ids[i]], Label: c.ints[2*i], Dec: c.ints[2*i+1], flags: c.flags[i]}
	v := c.vals[c.stride()*i:]
	switch c.typ {
	case provider.Noul:
		r.P = v[0]
	case provider.Choice:
		r.Top, r.PLabel, r.PDec, r.Brier = v[0], v[1], v[2], v[3]
	default:
		r.Top, r.PLabel, r.PDec, r.Brier, r.Score, r.Conf, r.RPS = v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	}
	return r
}
