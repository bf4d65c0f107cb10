package metrics

import (
	"math"
	"slices"

	"github.com/jevlab/jevlab/provider"
)

// Data is one question's answered, labelled observations prepared once
// (decisions, confidences, per-item losses, sort orders) so that every
// metric can be evaluated many times under bootstrap weights in O(n).
// Item i of every slice is the same dataset item.
type Data struct {
	Type provider.QuestionType
	K    int // outcomes: options, levels, or 2 for a noul
	N    int // items

	// IDs are the items' ids: nil when the Data was built by a Recorder
	// (a report reads no item id; a comparison's flips do).
	IDs     []string
	Label   []int32
	Dec     []int32   // primary decision
	Correct []float64 // 1 when Dec == Label
	// Conf is the calibration confidence: a noul's p, otherwise the top
	// probability; Obs is what it is calibrated against (a noul's label,
	// otherwise Correct).
	Conf []float64
	Obs  []float64
	// Sel is the selective-prediction confidence (see Selective). Columns
	// that hold the same values share their array: a choice's Sel is its
	// Conf, a choice's or score's Obs its Correct, a noul's Sel its DecConf.
	Sel []float64
	// DecConf is the confidence of the decision: the probability the
	// answer gives its decided outcome (a noul's p when p >= threshold,
	// else 1−p; the decided option's or level's probability otherwise).
	DecConf []float64
	Brier   []float64
	NLL     []float64
	// PTrue is the probability given to the true outcome.
	PTrue   []float64
	Clipped int
	// argmaxDisagree counts the choice items decided other than their
	// argmax (the provider's choice is not its top probability).
	argmaxDisagree int

	// score only
	Score   []float64
	Nearest []int32
	RPS     []float64

	bins     int
	binW     []int32 // equal-width bin of Conf
	confAsc  []int32 // items by Conf ascending
	selDesc  []int32 // items by Sel descending
	scoreAsc []int32 // items by Score ascending (score only)
	labelAsc []int32 // items by Label ascending

	// Tie groups: cg[i] is item i's group among the distinct Conf values
	// (cgVal ascending), sg[i] among the distinct Sel values (sgVal
	// descending), scg[i] among the distinct scores (ascending).
	cg, sg, scg  []int32
	cgVal, sgVal []float64
	scgN         int
	// cg2sg maps a conf group to its sel group when every item of a conf
	// group has the same Sel (choice, noul); nil otherwise (score).
	cg2sg []int32
	// gcell[i] = 4·cg[i] + 2·Obs[i] + Correct[i]; ydcell[i] = Label·K + Dec
	// (choice with K² <= maxYD only).
	gcell, ydcell []int32
	// ydncell[i] = (Label·K + Dec)·K + Nearest (score with K³ <= maxYDN
	// only).
	ydncell []int32
	harm    []float64 // harm[k] = 1 + 1/2 + … + 1/k

	ones []float64
	// scratch reused across evaluations
	sc scratch

	keepIDs bool // IDs are filled (prepareRecs; a Recorder leaves them out)
}

type scratch struct {
	bs, bc, bo []float64 // per-bin weight, Σ conf, Σ obs
	edges      []float64
	rankA      []float64
	rankB      []float64
	tp, pred   []float64
	sup        []float64
	mat        []float64
	ydn        []float64 // score: label × decision × nearest cells
	// per tie group: weight and Σ obs (conf groups), weight and Σ errors
	// (sel groups), weight (score groups)
	cgW, cgO, cgC, sgW, sgE, scgW []float64
	cell                          []float64 // 4 per conf group
	cellX                         []float64 // three more copies of cell when groups are few (addCells4)
	mbs, mbc, mbo                 []float64 // equal-mass bins
	sum                           sums
}

// sums are the weighted totals of one pass over the items.
type sums struct {
	t, correct, brier, nll, dconf      float64
	rps, abs, sq, within, exN, withinN float64
}

// Fork returns a copy of d that shares its (read-only) item data but has
// its own scratch space, so two goroutines can evaluate metrics at once.
func (d *Data) Fork() *Data {
	f := *d
	sc := &d.sc
	cp := func(s []float64) []float64 { return make([]float64, len(s)) }
	cpNil := func(s []float64) []float64 {
		if s == nil {
			return nil
		}
		return cp(s)
	}
	f.sc = scratch{
		bs: cp(sc.bs), bc: cp(sc.bc), bo: cp(sc.bo), edges: cp(sc.edges),
		rankA: cp(sc.rankA), rankB: cp(sc.rankB), tp: cp(sc.tp), pred: cp(sc.pred), sup: cp(sc.sup), mat: cp(sc.mat), ydn: cp(sc.ydn),
		cgW: cp(sc.cgW), cgO: cp(sc.cgO), cgC: cp(sc.cgC), sgW: cp(sc.sgW), sgE: cp(sc.sgE), scgW: cp(sc.scgW),
		mbs: cp(sc.mbs), mbc: cp(sc.mbc), mbo: cp(sc.mbo), cell: cp(sc.cell), cellX: cpNil(sc.cellX),
	}
	return &f
}

// decide returns the primary decision of a checked answer: the provider's
// choice for a choice (argmax when the label is unknown), the top-probability
// level for a score (first on ties), p >= threshold for a noul.
func decide(q *provider.Question, a *provider.Answer, threshold float64) int {
	switch q.Type {
	case provider.Noul:
		if a.P >= threshold {
			return 1
		}
		return 0
	case provider.Choice:
		m := argmax(a.Probs)
		if m < len(q.Options) && q.Options[m].Label == a.Choice {
			return m
		}
		if i := q.OptionIndex(a.Choice); i >= 0 {
			return i
		}
		return m
	}
	return argmax(a.Probs)
}

func argmax(p []float64) int {
	bi, best := 0, math.Inf(-1)
	for i, v := range p {
		if v > best {
			best, bi = v, i
		}
	}
	return bi
}

// decisionConfidence is the probability answer a gives its decision dec:
// for a noul p when dec is true, else 1−p (at threshold 0.5 this is
// max(p, 1−p); at another threshold it is the confidence in the decision
// that threshold takes, which may be under ½); otherwise the decided
// option's or level's probability.
func decisionConfidence(q *provider.Question, a *provider.Answer, dec int) float64 {
	if q.Type == provider.Noul {
		if dec == 1 {
			return a.P
		}
		return 1 - a.P
	}
	if dec >= 0 && dec < len(a.Probs) {
		return a.Probs[dec]
	}
	return math.NaN()
}

// DecisionConfidence is the confidence of answer a's decision under
// threshold (see Data.DecConf).
func DecisionConfidence(q *provider.Question, a *provider.Answer, threshold float64) float64 {
	return decisionConfidence(q, a, decide(q, a, threshold))
}

// usable reports whether an answer has the shape the question needs.
func usable(q *provider.Question, a *provider.Answer) bool {
	if a == nil {
		return false
	}
	switch q.Type {
	case provider.Noul:
		return !math.IsNaN(a.P)
	case provider.Choice, provider.Score:
		return len(a.Probs) == q.Size() && len(a.Probs) > 0
	}
	return false
}

// Prepare builds Data from the given observations in order. Observations
// without a usable answer or a label in range are skipped; the caller picks
// which repeat each item contributes (Compute uses the first).
func Prepare(q *provider.Question, obs []Obs, opt Options) *Data {
	return PrepareRecs(q, RecsOf(q, obs), opt)
}

// PrepareRecs is Prepare over observations already reduced to Recs.
func PrepareRecs(q *provider.Question, recs []Rec, opt Options) *Data {
	n := 0
	for i := range recs {
		if recs[i].Labelled() {
			n++
		}
	}
	return prepareRecs(q, len(recs), n, func(i int) *Rec { return &recs[i] }, opt)
}

// PrepareColumns is PrepareRecs over the Recs c holds, taken in order ord
// (the i-th is c.Rec(ord[i])), read in place instead of copied out.
func PrepareColumns(q *provider.Question, c *RecColumns, ord []int32, opt Options) *Data {
	var r Rec
	n := 0
	for _, i := range ord {
		if c.labelled(int(i)) {
			n++
		}
	}
	return prepareRecs(q, len(ord), n, func(i int) *Rec {
		r = c.Rec(int(ord[i]))
		return &r
	}, opt)
}

// prepareRecs is PrepareRecs over the m Recs rec(0), …, rec(m-1) (each
// valid until the next call), n of them Labelled.
func prepareRecs(q *provider.Question, m, n int, rec func(i int) *Rec, opt Options) *Data {
	opt = opt.WithDefaults()
	d := newData(q, opt)
	d.keepIDs = true
	d.grow(n)
	for i := range m {
		d.appendRec(q, rec(i), opt)
	}
	d.index()
	return d
}

// newData is an empty Data for question q under opt (with defaults), to
// be filled by appendRec and finished by index.
func newData(q *provider.Question, opt Options) *Data {
	return &Data{Type: q.Type, K: q.Size(), bins: opt.Bins}
}

// grow makes room for n more items in every per-item column the type
// fills (appendRec).
func (d *Data) grow(n int) {
	if d.keepIDs {
		d.IDs = slices.Grow(d.IDs, n)
	}
	floats := []*[]float64{&d.Correct, &d.Conf, &d.DecConf, &d.Brier, &d.NLL, &d.PTrue}
	ints := []*[]int32{&d.Label, &d.Dec, &d.binW}
	if d.ownObs() {
		floats = append(floats, &d.Obs)
	}
	if d.ownSel() {
		floats = append(floats, &d.Sel)
	}
	if d.Type == provider.Score {
		floats = append(floats, &d.Score, &d.RPS)
		ints = append(ints, &d.Nearest)
	}
	for _, c := range floats {
		*c = slices.Grow(*c, n)
	}
	for _, c := range ints {
		*c = slices.Grow(*c, n)
	}
}

// appendRec adds r to the per-item columns when it counts towards the
// label metrics (Labelled); opt has its defaults.
func (d *Data) appendRec(q *provider.Question, r *Rec, opt Options) {
	if !r.Labelled() {
		return
	}
	k := d.K
	eps := opt.EpsilonLogLoss
	y := int(r.Label)
	dec := r.Decision(q, opt.Threshold)
	corr := 0.0
	if dec == y {
		corr = 1
	}
	var conf, ob, sel, brier, pt float64
	dconf := r.decisionConf(q, dec)
	switch q.Type {
	case provider.Noul:
		conf, ob = r.P, float64(y)
		sel = dconf
		brier = (r.P - float64(y)) * (r.P - float64(y))
		pt = r.P
		if y == 0 {
			pt = 1 - r.P
		}
	default:
		conf = r.Top
		ob = corr
		sel = conf
		brier = r.Brier
		pt = r.PLabel
		if r.flags&recArgmaxDiffers != 0 {
			d.argmaxDisagree++
		}
		if q.Type == provider.Score {
			if r.HasConf() {
				sel = r.Conf
			}
			s := r.Score
			d.Score = append(d.Score, s)
			near := int32(math.Floor(s + 0.5))
			near = max(0, min(int32(k-1), near))
			d.Nearest = append(d.Nearest, near)
			d.RPS = append(d.RPS, r.RPS)
		}
	}
	c := pt
	if c < eps {
		c = eps
		d.Clipped++
	} else if c > 1-eps {
		c = 1 - eps
	}
	d.N++
	if d.keepIDs {
		d.IDs = append(d.IDs, r.ItemID)
	}
	d.Label = append(d.Label, int32(y))
	d.Dec = append(d.Dec, int32(dec))
	d.Correct = append(d.Correct, corr)
	d.Conf = append(d.Conf, conf)
	// Sel and Obs only where they are not another column (see shareColumns).
	if d.ownObs() {
		d.Obs = append(d.Obs, ob)
	}
	if d.ownSel() {
		d.Sel = append(d.Sel, sel)
	}
	d.DecConf = append(d.DecConf, dconf)
	d.Brier = append(d.Brier, brier)
	d.NLL = append(d.NLL, -math.Log(c))
	d.PTrue = append(d.PTrue, pt)
	d.binW = append(d.binW, int32(widthBin(conf, opt.Bins)))
}

// shareColumns points the columns that hold another's values at it: a
// choice's Sel at Conf (its selective confidence is its top probability),
// a choice's or score's Obs at Correct (it is calibrated against being
// right), a noul's Sel at DecConf (the probability of its decided
// outcome).
func (d *Data) shareColumns() {
	if !d.ownObs() {
		d.Obs = d.Correct
	}
	if !d.ownSel() {
		d.Sel = d.Conf
		if d.Type == provider.Noul {
			d.Sel = d.DecConf
		}
	}
}

// ownObs and ownSel say whether Obs and Sel are columns of their own
// (filled item by item) rather than another column (shareColumns): Obs is
// a noul's label, Sel a score's own confidence.
func (d *Data) ownObs() bool { return d.Type == provider.Noul }
func (d *Data) ownSel() bool { return d.Type == provider.Score }

// index builds what the metrics read besides the per-item columns (which
// must be filled): the sort orders, tie groups, cells and scratch space.
func (d *Data) index() {
	d.shareColumns()
	n, k := d.N, d.K
	t := d.Type
	d.ones = make([]float64, n)
	for i := range d.ones {
		d.ones[i] = 1
	}
	var sb sortBuf // the orders' scratch, shared
	d.confAsc = sb.orderBy(d.Conf, false)
	if t == provider.Choice {
		// Sel is Conf: the reverse order is a descending order.
		d.selDesc = make([]int32, n)
		for i, j := range d.confAsc {
			d.selDesc[n-1-i] = j
		}
	} else {
		d.selDesc = sb.orderBy(d.Sel, true)
	}
	d.labelAsc = orderByInt(d.Label, k)
	if t == provider.Score {
		d.scoreAsc = sb.orderBy(d.Score, false)
	}
	d.cg, d.cgVal = tieGroups(d.confAsc, d.Conf)
	if t == provider.Choice {
		g := len(d.cgVal)
		d.sgVal = make([]float64, g)
		for i, v := range d.cgVal {
			d.sgVal[g-1-i] = v
		}
		d.sg = make([]int32, n)
		for i, c := range d.cg {
			d.sg[i] = int32(g-1) - c
		}
	} else {
		d.sg, d.sgVal = tieGroups(d.selDesc, d.Sel)
	}
	d.cg2sg = make([]int32, len(d.cgVal))
	for i := range d.cg2sg {
		d.cg2sg[i] = -1
	}
	for i, g := range d.cg {
		if d.cg2sg[g] == -1 {
			d.cg2sg[g] = d.sg[i]
		} else if d.cg2sg[g] != d.sg[i] {
			d.cg2sg = nil
			break
		}
	}
	if t == provider.Score {
		var sv []float64
		d.scg, sv = tieGroups(d.scoreAsc, d.Score)
		d.scgN = len(sv)
	}
	d.gcell = make([]int32, n)
	for i, g := range d.cg {
		d.gcell[i] = 4*g + 2*int32(d.Obs[i]) + int32(d.Correct[i])
	}
	if t == provider.Choice && k*k <= maxYD {
		d.ydcell = make([]int32, n)
		for i, y := range d.Label {
			d.ydcell[i] = y*int32(k) + d.Dec[i]
		}
	}
	if t == provider.Score && k*k*k <= maxYDN {
		d.ydncell = make([]int32, n)
		for i, y := range d.Label {
			d.ydncell[i] = (y*int32(k)+d.Dec[i])*int32(k) + d.Nearest[i]
		}
	}
	d.harm = make([]float64, n+1)
	for k := 1; k <= n; k++ {
		d.harm[k] = d.harm[k-1] + 1/float64(k)
	}
	b := d.bins
	d.sc = scratch{
		cgW: make([]float64, len(d.cgVal)), cgO: make([]float64, len(d.cgVal)), cgC: make([]float64, len(d.cgVal)),
		sgW: make([]float64, len(d.sgVal)), sgE: make([]float64, len(d.sgVal)),
		scgW: make([]float64, d.scgN),
		mbs:  make([]float64, b), mbc: make([]float64, b), mbo: make([]float64, b),
		cell: make([]float64, 4*len(d.cgVal)),
		bs:   make([]float64, b), bc: make([]float64, b), bo: make([]float64, b),
		edges: make([]float64, b+1),
		tp:    make([]float64, k), pred: make([]float64, k), sup: make([]float64, k),
	}
	if t == provider.Score {
		d.sc.rankA = make([]float64, d.scgN)
		d.sc.rankB = make([]float64, k)
	}
	if t == provider.Score || d.ydcell != nil {
		d.sc.mat = make([]float64, k*k)
	}
	if d.ydncell != nil {
		d.sc.ydn = make([]float64, k*k*k)
	}
	if len(d.sc.cell)*fewCells <= n {
		d.sc.cellX = make([]float64, 3*len(d.sc.cell))
	}
}

// maxYD bounds the label × decision cells counted per item (K ≤ 32).
const maxYD = 1024

// fewCells: conf-group cells are few when there are at most n/fewCells
// of them (addCells4 then pays for its merge many times over).
const fewCells = 16

// maxYDN bounds the label × decision × nearest cells of a score (K ≤ 16).
const maxYDN = 4096

// edgeTol treats a value within this distance of a bin edge as on it, so
// two-decimal outputs such as 0.3 land where their decimal value says.
const edgeTol = 1e-9

// widthBin returns the equal-width bin of v: right-closed (lo, hi], the
// first bin also holding 0, as scikit-learn's calibration_curve.
func widthBin(v float64, bins int) int {
	b := int(math.Ceil(v*float64(bins)-edgeTol)) - 1
	return max(0, min(bins-1, b))
}

// sortBuf is the scratch space of orderBy's radix sort, reused by the
// orders of one Data.
type sortBuf struct {
	keys, tmpK []uint64
	tmpI       []int32
	cnt        []int
}

// orderBy returns the indexes of v sorted ascending (descending when
// desc). The order among equal values is unspecified: every metric groups
// ties. Large inputs use an LSD radix sort on the float bits, in sb's
// scratch space.
func (sb *sortBuf) orderBy(v []float64, desc bool) []int32 {
	n := len(v)
	idx := make([]int32, n)
	if n < 4096 {
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortFunc(idx, func(a, b int32) int {
			x, y := v[a], v[b]
			if desc {
				x, y = y, x
			}
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		})
		return idx
	}
	if cap(sb.keys) < n {
		sb.keys, sb.tmpK, sb.tmpI = make([]uint64, n), make([]uint64, n), make([]int32, n)
		sb.cnt = make([]int, 1<<16)
	}
	keys, tmpK, tmpI := sb.keys[:n], sb.tmpK[:n], sb.tmpI[:n]
	out := idx
	for i, x := range v {
		k := math.Float64bits(x + 0) // +0 folds -0 into 0
		if k>>63 == 1 {
			k = ^k
		} else {
			k |= 1 << 63
		}
		if desc {
			k = ^k
		}
		keys[i] = k
	}
	for i := range idx {
		idx[i] = int32(i)
	}
	cnt := sb.cnt
	for shift := uint(0); shift < 64; shift += 16 {
		clear(cnt[:])
		for _, k := range keys {
			cnt[(k>>shift)&0xffff]++
		}
		if cnt[(keys[0]>>shift)&0xffff] == n {
			continue // every key shares this digit
		}
		sum := 0
		for d := range cnt {
			c := cnt[d]
			cnt[d] = sum
			sum += c
		}
		for i, k := range keys {
			d := (k >> shift) & 0xffff
			tmpK[cnt[d]] = k
			tmpI[cnt[d]] = idx[i]
			cnt[d]++
		}
		keys, tmpK = tmpK, keys
		idx, tmpI = tmpI, idx
	}
	if &idx[0] != &out[0] {
		copy(out, idx) // the order ended in the scratch slice
	}
	return out
}

// tieGroups numbers the runs of equal values along ord: group[i] is item
// i's run, vals the runs' values in ord's order.
func tieGroups(ord []int32, v []float64) (group []int32, vals []float64) {
	group = make([]int32, len(v))
	for k, i := range ord {
		if k == 0 || v[i] != vals[len(vals)-1] {
			vals = append(vals, v[i])
		}
		group[i] = int32(len(vals) - 1)
	}
	return group, vals
}

// orderByInt is a counting sort of small non-negative ints below k.
func orderByInt(v []int32, k int) []int32 {
	cnt := make([]int, k+1)
	for _, x := range v {
		cnt[x+1]++
	}
	for i := 1; i <= k; i++ {
		cnt[i] += cnt[i-1]
	}
	idx := make([]int32, len(v))
	for i, x := range v {
		idx[cnt[x]] = int32(i)
		cnt[x]++
	}
	return idx
}

// weights returns w, or all ones when w is nil.
func (d *Data) weights(w []float64) []float64 {
	if w == nil {
		return d.ones
	}
	return w
}

func wmean(x, w []float64) float64 {
	var s, t float64
	for i, v := range x {
		s += w[i] * v
		t += w[i]
	}
	if t == 0 {
		return math.NaN()
	}
	return s / t
}

func wsum(w []float64) float64 {
	var t float64
	for _, v := range w {
		t += v
	}
	return t
}

// ECEWidth is the expected calibration error over equal-width bins:
// Σ_b (n_b/N)|observed_b − confidence_b|. obs overrides d.Obs when non-nil
// (the noise floor draws outcomes).
func (d *Data) ECEWidth(w, obs []float64) float64 {
	w = d.weights(w)
	if obs == nil {
		obs = d.Obs
	}
	bc, bo := d.sc.bc, d.sc.bo
	clear(bc)
	clear(bo)
	var t float64
	for i, b := range d.binW {
		wi := w[i]
		t += wi
		bc[b] += wi * d.Conf[i]
		bo[b] += wi * obs[i]
	}
	if t == 0 {
		return math.NaN()
	}
	var e float64
	for b := range bc {
		e += math.Abs(bo[b] - bc[b])
	}
	return e / t
}
