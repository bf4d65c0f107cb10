package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// Options tune Compare. The zero value gives the documented defaults.
type Options struct {
	// Seed seeds the paired bootstrap (0 is a valid seed; reports print it).
	Seed uint64
	// Bootstrap is the number of paired resamples B: 0 means 1000, negative
	// switches intervals off.
	Bootstrap int
	// Alpha is the family-wise error rate for McNemar and the Brier test
	// after Holm's correction across questions. 0 means 0.05.
	Alpha float64
	// MinBrierDelta is the smallest Brier change that counts as a
	// regression or improvement when no repeats measure the noise. 0 means
	// 0.01.
	MinBrierDelta float64
	// MaxFlips bounds the flipped items listed per question (counts are
	// always complete). 0 means 50.
	MaxFlips int
	// Metrics carries the metric conventions (bins, ε); its Seed and
	// Bootstrap are ignored in favour of the fields above.
	Metrics metrics.Options
}

// Defaults used for zero Options fields.
const (
	DefaultAlpha         = 0.05
	DefaultMinBrierDelta = 0.01
	DefaultMaxFlips      = 50
)

func (o Options) withDefaults() Options {
	if o.Bootstrap == 0 {
		o.Bootstrap = metrics.DefaultBootstrap
	}
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinBrierDelta <= 0 {
		o.MinBrierDelta = DefaultMinBrierDelta
	}
	if o.MaxFlips <= 0 {
		o.MaxFlips = DefaultMaxFlips
	}
	o.Metrics = o.Metrics.WithDefaults()
	return o
}

// Verdicts, per question and overall.
const (
	Improved      = "improved"
	Regressed     = "regressed"
	NoChange      = "no significant change"
	WithinNoise   = "within noise"
	NotComparable = "not comparable"
)

// Comparison is the paired comparison of run B (the candidate) against run
// A (the baseline).
type Comparison struct {
	A         RunRef               `json:"a"`
	B         RunRef               `json:"b"`
	Seed      uint64               `json:"seed"`
	Bootstrap int                  `json:"bootstrap"`
	Alpha     float64              `json:"alpha"`
	Questions []QuestionComparison `json:"questions"`
	Verdict   string               `json:"verdict"`
	// Regressions lists the questions whose verdict is Regressed.
	Regressions []string `json:"regressions,omitempty"`
	Conventions string   `json:"conventions"`
}

// RunRef names one side of a comparison.
type RunRef struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Model string `json:"model,omitempty"`
}

// QuestionComparison is one question's paired comparison.
type QuestionComparison struct {
	ID   string                `json:"question"`
	Type provider.QuestionType `json:"type"`
	// Reason says why a question could not be compared.
	Reason string `json:"reason,omitempty"`

	Paired         int `json:"paired"`          // items answered in both runs
	PairedLabelled int `json:"paired_labelled"` // of those, labelled (the n of every delta)
	OnlyA          int `json:"only_a"`
	OnlyB          int `json:"only_b"`
	LabelMismatch  int `json:"label_mismatch,omitempty"` // items labelled differently in the two runs (A's label used)

	Deltas  []Delta `json:"deltas"`
	McNemar McNemar `json:"mcnemar"`
	// BrierP is the paired-bootstrap two-sided p-value of ΔBrier, and
	// BrierPHolm it after Holm's correction across questions.
	BrierP     float64 `json:"brier_p"`
	BrierPHolm float64 `json:"brier_p_holm"`

	Flips Flips `json:"flips"`
	Drift Drift `json:"drift"`
	Noise Noise `json:"noise"`

	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

// Delta is one metric's paired change B − A with its paired bootstrap 95%
// interval. Significant when the interval excludes 0; Better says whether
// the change is an improvement given the metric's direction.
type Delta struct {
	Metric        string           `json:"metric"`
	A             metrics.Estimate `json:"a"`
	B             metrics.Estimate `json:"b"`
	Delta         metrics.Estimate `json:"delta"`
	P             float64          `json:"p"`
	LowerIsBetter bool             `json:"lower_is_better"`
	Significant   bool             `json:"significant"`
	Better        bool             `json:"better"`
}

// McNemar is the exact McNemar test on correctness: B01 = items A got right
// and B wrong, B10 = A wrong and B right.
type McNemar struct {
	ARightBWrong int     `json:"a_right_b_wrong"`
	AWrongBRight int     `json:"a_wrong_b_right"`
	BothRight    int     `json:"both_right"`
	BothWrong    int     `json:"both_wrong"`
	P            float64 `json:"p"`
	PHolm        float64 `json:"p_holm"`
}

// Flips counts and lists changed decisions on labelled items: fixed (A
// wrong, B right), broken (A right, B wrong), changed (both wrong, a
// different wrong answer).
type Flips struct {
	Fixed   int        `json:"fixed"`
	Broken  int        `json:"broken"`
	Changed int        `json:"changed"`
	Items   []FlipItem `json:"items"`
}

// FlipItem is one flipped item; Shift is B's probability of the true
// outcome minus A's (items are ranked by |Shift|, largest first).
type FlipItem struct {
	ItemID string  `json:"item"`
	Kind   string  `json:"kind"`
	Label  string  `json:"label"`
	A      string  `json:"a"`
	B      string  `json:"b"`
	PTrueA float64 `json:"p_true_a"`
	PTrueB float64 `json:"p_true_b"`
	Shift  float64 `json:"shift"`
}

// Drift is label-free change over every item answered in both runs.
type Drift struct {
	N int `json:"n"`
	// MeanTV is the mean total-variation distance between the two answers'
	// distributions (|Δp| for a noul).
	MeanTV float64 `json:"mean_tv"`
	// ChangedDecisions counts items whose decision differs.
	ChangedDecisions int     `json:"changed_decisions"`
	ChangedShare     float64 `json:"changed_share"`
	// MeanAbsDeltaP is the mean |Δ| of the probability of A's decided
	// outcome (a noul's |Δp|).
	MeanAbsDeltaP float64 `json:"mean_abs_delta_p"`
	// ChangedValues counts items whose answer changed at all (any
	// probability, p, score, confidence or choice).
	ChangedValues int `json:"changed_values"`
}

// Noise is each run's own repeat-to-repeat noise for the question.
type Noise struct {
	A metrics.Noise `json:"a"`
	B metrics.Noise `json:"b"`
	// Known is true when either run has repeats to measure noise with.
	Known bool `json:"known"`
	// FlipRate and MeanTV are the larger of the two runs'.
	FlipRate float64 `json:"flip_rate"`
	MeanTV   float64 `json:"mean_tv"`
}

// Compare pairs run b (candidate) with run a (baseline) question by
// question (in a's order) and item by item (first repeat of each item).
func Compare(a, b RunData, opt Options) *Comparison {
	opt = opt.withDefaults()
	c := &Comparison{
		A:         RunRef{a.ID, a.Name, a.Model},
		B:         RunRef{b.ID, b.Name, b.Model},
		Seed:      opt.Seed,
		Bootstrap: max(0, opt.Bootstrap),
		Alpha:     opt.Alpha,
		Conventions: fmt.Sprintf("paired by item id (first repeat); deltas are B - A with percentile 95%% paired bootstrap intervals (B=%d, seed %d); "+
			"exact McNemar (two-sided binomial on the discordant pairs) and bootstrap Brier p-values, Holm-corrected across questions at alpha %.3g; "+
			"a Brier change counts when |delta| >= %.3g or, with repeats, when the decisions change more than the runs' own flip rate",
			max(0, opt.Bootstrap), opt.Seed, opt.Alpha, opt.MinBrierDelta),
	}
	for i, e := range a.Questions {
		qb, ok := b.Questions.Get(e.ID)
		var qc QuestionComparison
		if !ok {
			qc = QuestionComparison{ID: e.ID, Type: e.Question.Type, Reason: "question absent from run B", Verdict: NotComparable}
		} else {
			qc = compareQuestion(e.ID, &a.Questions[i].Question, qb, &a, &b, opt, uint64(i))
		}
		c.Questions = append(c.Questions, qc)
	}
	for _, e := range b.Questions {
		if _, ok := a.Questions.Get(e.ID); !ok {
			c.Questions = append(c.Questions, QuestionComparison{ID: e.ID, Type: e.Question.Type, Reason: "question absent from run A", Verdict: NotComparable})
		}
	}
	holm(c.Questions, opt)
	overall(c)
	return c
}

func compareQuestion(id string, qa, qb *provider.Question, a, b *RunData, opt Options, qi uint64) QuestionComparison {
	qc := QuestionComparison{ID: id, Type: qa.Type, McNemar: McNemar{P: 1, PHolm: 1}, BrierP: 1, BrierPHolm: 1}
	remap, reason := alignQuestion(qa, qb)
	if reason != "" {
		qc.Reason, qc.Verdict = reason, NotComparable
		return qc
	}
	obsB := b.Obs[id]
	if remap != nil {
		obsB = remapObs(obsB, remap)
	}
	fa, fb := firstRepeat(a.Obs[id]), firstRepeat(obsB)
	posB := make(map[string]int, len(fb))
	for i := range fb {
		posB[fb[i].ItemID] = i
	}
	ta, tb := a.threshold(id), b.threshold(id)
	var la, lb []metrics.Obs
	seen := 0
	var sumTV, sumDP float64
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
		sumTV += metrics.TV(oa.Answer, ob.Answer)
		sumDP += math.Abs(outcomeP(oa.Answer, da) - outcomeP(ob.Answer, da))
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
		qc.Drift.MeanTV = sumTV / float64(qc.Paired)
		qc.Drift.MeanAbsDeltaP = sumDP / float64(qc.Paired)
		qc.Drift.ChangedShare = float64(qc.Drift.ChangedDecisions) / float64(qc.Paired)
	}

	qc.Noise.A = metrics.RepeatNoise(qa, a.Obs[id], ta)
	qc.Noise.B = metrics.RepeatNoise(qa, obsB, tb)
	qc.Noise.Known = qc.Noise.A.Items > 0 || qc.Noise.B.Items > 0
	qc.Noise.FlipRate = max(qc.Noise.A.FlipRate, qc.Noise.B.FlipRate)
	qc.Noise.MeanTV = max(qc.Noise.A.MeanDelta, qc.Noise.B.MeanDelta)

	qc.PairedLabelled = len(la)
	if len(la) > 0 {
		ma, mb := opt.Metrics, opt.Metrics
		ma.Threshold, mb.Threshold = ta, tb
		dA, dB := metrics.Prepare(qa, la, ma), metrics.Prepare(qa, lb, mb)
		qc.Deltas, qc.BrierP = pairedDeltas(dA, dB, opt.Bootstrap, opt.Seed+qi*0x9e3779b9)
		qc.McNemar = mcnemarOf(dA, dB)
		qc.Flips = flips(qa, dA, dB, opt.MaxFlips)
	}
	return qc
}

// usableShape reports whether an answer fits the question's shape.
func usableShape(q *provider.Question, a *provider.Answer) bool {
	if q.Type == provider.Noul {
		return !math.IsNaN(a.P)
	}
	return len(a.Probs) == q.Size()
}

// outcomeP is the probability an answer gives outcome k.
func outcomeP(a *provider.Answer, k int) float64 {
	if a.Type == provider.Noul {
		if k == 1 {
			return a.P
		}
		return 1 - a.P
	}
	if k >= 0 && k < len(a.Probs) {
		return a.Probs[k]
	}
	return math.NaN()
}

func valuesDiffer(a, b *provider.Answer) bool {
	if a.P != b.P || a.Score != b.Score || a.Confidence != b.Confidence || a.Choice != b.Choice || len(a.Probs) != len(b.Probs) {
		return true
	}
	for i := range a.Probs {
		if a.Probs[i] != b.Probs[i] {
			return true
		}
	}
	return false
}

// alignQuestion checks that qb asks what qa asks. For a choice whose
// options were reordered it returns remap[iB] = iA.
func alignQuestion(qa, qb *provider.Question) ([]int, string) {
	if qa.Type != qb.Type {
		return nil, fmt.Sprintf("type changed from %s to %s", qa.Type, qb.Type)
	}
	if qa.Size() != qb.Size() {
		return nil, fmt.Sprintf("%d outcomes in A, %d in B", qa.Size(), qb.Size())
	}
	if qa.Type != provider.Choice {
		return nil, ""
	}
	remap := make([]int, len(qb.Options))
	same := true
	for i, o := range qb.Options {
		j := qa.OptionIndex(o.Label)
		if j < 0 {
			return nil, fmt.Sprintf("option %q of B is not an option of A", o.Label)
		}
		remap[i] = j
		same = same && i == j
	}
	if same {
		return nil, ""
	}
	return remap, ""
}

// remapObs rewrites B's observations into A's option order.
func remapObs(obs []metrics.Obs, remap []int) []metrics.Obs {
	out := make([]metrics.Obs, len(obs))
	for i, o := range obs {
		if o.HasLabel && o.Label >= 0 && o.Label < len(remap) {
			o.Label = remap[o.Label]
		}
		if o.Answer != nil && len(o.Answer.Probs) == len(remap) {
			a := *o.Answer
			a.Probs = make([]float64, len(remap))
			for j, p := range o.Answer.Probs {
				a.Probs[remap[j]] = p
			}
			o.Answer = &a
		}
		out[i] = o
	}
	return out
}

// firstRepeat keeps the lowest repeat of each item, in first-seen order.
func firstRepeat(obs []metrics.Obs) []metrics.Obs {
	rep := false
	for i := range obs {
		if obs[i].Repeat != 0 {
			rep = true
			break
		}
	}
	if !rep {
		return obs
	}
	pos := make(map[string]int, len(obs))
	out := make([]metrics.Obs, 0, len(obs))
	for _, o := range obs {
		if j, ok := pos[o.ItemID]; ok {
			if o.Repeat < out[j].Repeat {
				out[j] = o
			}
			continue
		}
		pos[o.ItemID] = len(out)
		out = append(out, o)
	}
	return out
}

// pairedDeltas evaluates every headline metric of both sides on the same
// resampled items and returns the deltas and the Brier p-value.
func pairedDeltas(dA, dB *metrics.Data, b int, seed uint64) ([]Delta, float64) {
	ms := dA.Metrics()
	pa, pb := make([]float64, len(ms)), make([]float64, len(ms))
	dA.EvalAll(ms, nil, pa)
	dB.EvalAll(ms, nil, pb)
	out := make([]Delta, len(ms))
	for j, m := range ms {
		out[j] = Delta{Metric: m.String(), A: metrics.Point(pa[j]), B: metrics.Point(pb[j]), Delta: metrics.Point(pb[j] - pa[j]), P: 1, LowerIsBetter: m.LowerIsBetter()}
	}
	brierP := 1.0
	if b <= 0 {
		return out, brierP
	}
	draws := make([][]float64, len(ms))
	for j := range draws {
		draws[j] = make([]float64, b)
	}
	workers := metrics.Workers(b)
	type fork struct {
		a, b   *metrics.Data
		va, vb []float64
	}
	forks := make([]fork, workers)
	for i := range forks {
		forks[i] = fork{dA, dB, make([]float64, len(ms)), make([]float64, len(ms))}
		if i > 0 {
			forks[i].a, forks[i].b = dA.Fork(), dB.Fork()
		}
	}
	metrics.Resamples(dA.N, b, seed, workers, func(wk, k int, w []float64) {
		f := &forks[wk]
		f.a.EvalAll(ms, w, f.va)
		f.b.EvalAll(ms, w, f.vb)
		for j := range ms {
			draws[j][k] = f.vb[j] - f.va[j]
		}
	})
	for j, m := range ms {
		out[j].P = bootP(draws[j])
		out[j].Delta.Lo, out[j].Delta.Hi = metrics.Interval(draws[j])
		d := &out[j]
		if d.Delta.HasInterval() && (d.Delta.Lo > 0 || d.Delta.Hi < 0) {
			d.Significant = true
		}
		d.Better = d.Delta.Value != 0 && (d.Delta.Value < 0) == m.LowerIsBetter()
		if m == metrics.MBrier {
			brierP = d.P
		}
	}
	return out, brierP
}

// bootP is the two-sided bootstrap p-value of a zero delta:
// 2·min(P*(Δ ≤ 0), P*(Δ ≥ 0)), capped at 1.
func bootP(draws []float64) float64 {
	var le, ge, n float64
	for _, x := range draws {
		if math.IsNaN(x) {
			continue
		}
		n++
		if x <= 0 {
			le++
		}
		if x >= 0 {
			ge++
		}
	}
	if n == 0 {
		return 1
	}
	return math.Min(1, 2*math.Min(le, ge)/n)
}

func mcnemarOf(dA, dB *metrics.Data) McNemar {
	var m McNemar
	for i := range dA.Correct {
		ca, cb := dA.Correct[i] == 1, dB.Correct[i] == 1
		switch {
		case ca && cb:
			m.BothRight++
		case ca:
			m.ARightBWrong++
		case cb:
			m.AWrongBRight++
		default:
			m.BothWrong++
		}
	}
	m.P = ExactMcNemar(m.ARightBWrong, m.AWrongBRight)
	m.PHolm = m.P
	return m
}

// ExactMcNemar is the exact two-sided McNemar p-value: the binomial test
// of min(b, c) successes in b + c trials at ½,
// min(1, 2·Σ_{i≤min(b,c)} C(n,i)/2ⁿ).
func ExactMcNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// sum in log space: each term exp(lnC(n,i) − n ln 2)
	ln2n := float64(n) * math.Ln2
	lgN, _ := math.Lgamma(float64(n + 1))
	var s float64
	for i := 0; i <= k; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(lgN - li - lni - ln2n)
	}
	return math.Min(1, 2*s)
}

// Holm returns Holm–Bonferroni adjusted p-values, in the input order.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, m)
	run := 0.0
	for r, i := range idx {
		v := math.Min(1, float64(m-r)*p[i])
		run = math.Max(run, v)
		out[i] = run
	}
	return out
}

func flips(q *provider.Question, dA, dB *metrics.Data, maxItems int) Flips {
	var f Flips
	name := func(k int32) string {
		switch q.Type {
		case provider.Noul:
			return []string{"false", "true"}[k]
		case provider.Choice:
			return q.Options[k].Label
		}
		return fmt.Sprint(k)
	}
	for i := range dA.Dec {
		if dA.Dec[i] == dB.Dec[i] {
			continue
		}
		ca, cb := dA.Correct[i] == 1, dB.Correct[i] == 1
		it := FlipItem{ItemID: dA.IDs[i], Label: name(dA.Label[i]), A: name(dA.Dec[i]), B: name(dB.Dec[i]),
			PTrueA: dA.PTrue[i], PTrueB: dB.PTrue[i], Shift: dB.PTrue[i] - dA.PTrue[i]}
		switch {
		case !ca && cb:
			it.Kind = "fixed"
			f.Fixed++
		case ca && !cb:
			it.Kind = "broken"
			f.Broken++
		default:
			it.Kind = "changed"
			f.Changed++
		}
		f.Items = append(f.Items, it)
	}
	slices.SortStableFunc(f.Items, func(x, y FlipItem) int {
		ax, ay := math.Abs(x.Shift), math.Abs(y.Shift)
		switch {
		case ax > ay:
			return -1
		case ax < ay:
			return 1
		}
		return 0
	})
	if len(f.Items) > maxItems {
		f.Items = f.Items[:maxItems]
	}
	return f
}

// holm adjusts McNemar and Brier p-values across the compared questions
// and sets each question's verdict.
func holm(qs []QuestionComparison, opt Options) {
	var idx []int
	var pm, pbr []float64
	for i := range qs {
		if qs[i].Reason != "" || qs[i].PairedLabelled == 0 {
			continue
		}
		idx = append(idx, i)
		pm = append(pm, qs[i].McNemar.P)
		pbr = append(pbr, qs[i].BrierP)
	}
	hm, hb := Holm(pm), Holm(pbr)
	for k, i := range idx {
		qs[i].McNemar.PHolm = hm[k]
		qs[i].BrierPHolm = hb[k]
	}
	for i := range qs {
		if qs[i].Reason == "" {
			verdict(&qs[i], opt)
		}
	}
}

func verdict(qc *QuestionComparison, opt Options) {
	m := qc.McNemar
	var dBrier float64
	for _, d := range qc.Deltas {
		if d.Metric == metrics.MBrier.String() {
			dBrier = d.Delta.Value
		}
	}
	accWorse := m.PHolm < opt.Alpha && m.ARightBWrong > m.AWrongBRight
	accBetter := m.PHolm < opt.Alpha && m.AWrongBRight > m.ARightBWrong
	brierSig := qc.BrierPHolm < opt.Alpha && math.Abs(dBrier) >= opt.MinBrierDelta
	worse := accWorse || brierSig && dBrier > 0
	better := accBetter || brierSig && dBrier < 0
	withinNoise := qc.Noise.Known && qc.Drift.ChangedShare <= qc.Noise.FlipRate+1e-12 && qc.Drift.MeanTV <= qc.Noise.MeanTV+1e-12
	switch {
	case qc.PairedLabelled == 0 && qc.Paired == 0:
		qc.Verdict, qc.Why = NotComparable, "no item answered in both runs"
	case (worse || better) && withinNoise:
		qc.Verdict = WithinNoise
		qc.Why = fmt.Sprintf("significant, but %.1f%% of decisions changed and the runs' own repeats flip %.1f%% (mean TV %.3g vs %.3g)",
			100*qc.Drift.ChangedShare, 100*qc.Noise.FlipRate, qc.Drift.MeanTV, qc.Noise.MeanTV)
	case worse:
		qc.Verdict = Regressed
		qc.Why = why(accWorse, m, dBrier, qc.BrierPHolm)
	case better:
		qc.Verdict = Improved
		qc.Why = why(accBetter, m, dBrier, qc.BrierPHolm)
	case withinNoise:
		qc.Verdict = WithinNoise
		qc.Why = fmt.Sprintf("%.1f%% of decisions changed, within the runs' own repeat flip rate %.1f%%", 100*qc.Drift.ChangedShare, 100*qc.Noise.FlipRate)
	case qc.PairedLabelled == 0:
		qc.Verdict = NoChange
		qc.Why = fmt.Sprintf("no labels: drift only (%d of %d decisions changed, mean TV %.3g)", qc.Drift.ChangedDecisions, qc.Paired, qc.Drift.MeanTV)
	default:
		qc.Verdict = NoChange
		qc.Why = fmt.Sprintf("McNemar %d vs %d discordant, p=%.3g (Holm %.3g); Brier delta %+.4f, p=%.3g (Holm)",
			m.ARightBWrong, m.AWrongBRight, m.P, m.PHolm, dBrier, qc.BrierPHolm)
	}
}

func why(acc bool, m McNemar, dBrier, pBrier float64) string {
	if acc {
		return fmt.Sprintf("McNemar: %d right→wrong vs %d wrong→right, exact p=%.3g (Holm %.3g)", m.ARightBWrong, m.AWrongBRight, m.P, m.PHolm)
	}
	return fmt.Sprintf("Brier %+.4f, paired bootstrap p=%.3g (Holm)", dBrier, pBrier)
}

func overall(c *Comparison) {
	var improved, noise, compared int
	for _, q := range c.Questions {
		switch q.Verdict {
		case Regressed:
			c.Regressions = append(c.Regressions, q.ID)
		case Improved:
			improved++
		case WithinNoise:
			noise++
		}
		if q.Verdict != NotComparable {
			compared++
		}
	}
	switch {
	case len(c.Regressions) > 0:
		c.Verdict = Regressed
	case improved > 0:
		c.Verdict = Improved
	case compared == 0:
		c.Verdict = NotComparable
	case noise == compared:
		c.Verdict = WithinNoise
	default:
		c.Verdict = NoChange
	}
}
