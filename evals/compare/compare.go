package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

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
	// always complete). 0 lists every flip (what --json writes); a writer
	// that shows fewer cuts at print time and says how to see all.
	MaxFlips int
	// AllowChanged names questions accepted as changed on purpose: when one
	// cannot be compared it is reported (Allowed) but does not make the
	// overall verdict "not comparable", so the comparable questions decide.
	AllowChanged []string
	// Map renames options (choice) or levels (score, by text) between the
	// runs, per question id: Map["queue"]["other"] = "general" says A's
	// option other is B's option general. Check it with CheckOptions.
	Map map[string]map[string]string
	// Metrics carries the metric conventions (bins, ε); its Seed and
	// Bootstrap are ignored in favour of the fields above.
	Metrics metrics.Options
	// PassBytes bounds the paired records one pass over the two runs keeps
	// (0: DefaultPassBytes): questions whose records would pass it are
	// compared in a further pass, which reads both runs again. The result
	// is the same whatever the passes.
	PassBytes int
}

// Defaults used for zero Options fields.
const (
	DefaultAlpha         = 0.05
	DefaultMinBrierDelta = 0.01
	// DefaultMaxFlips was the number of flips listed per question; flips
	// are no longer cut (MaxFlips 0 lists them all). Writers show the
	// first DefaultShownFlips.
	DefaultMaxFlips = 50
	// DefaultShownFlips is how many flips per question the text and
	// Markdown writers print before saying how to see the rest.
	DefaultShownFlips = 10
	// DefaultPassBytes is Options.PassBytes's default: the 8 questions of
	// two 100,000-item runs (about 62 MB of records) are one pass, of two
	// million-item runs three.
	DefaultPassBytes = 256 << 20
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
	// NotComparable lists the questions that could not be compared, with
	// why; Allowed ones (Options.AllowChanged) are listed but do not
	// decide the verdict.
	NotComparable []Incomparable `json:"not_comparable,omitempty"`
	Conventions   string         `json:"conventions"`
}

// Incomparable is one question that could not be compared.
type Incomparable struct {
	Question string `json:"question"`
	Reason   string `json:"reason"`
	// Allowed is true when the question was accepted as changed on
	// purpose (Options.AllowChanged).
	Allowed bool `json:"allowed"`
}

// String is "queue — option other of A is not in B".
func (n Incomparable) String() string { return n.Question + " — " + n.Reason }

// Blocking returns the questions that could not be compared and were not
// allowed to change: a CI gate fails on them as on a regression.
func (c *Comparison) Blocking() []Incomparable {
	var out []Incomparable
	for _, n := range c.NotComparable {
		if !n.Allowed {
			out = append(out, n)
		}
	}
	return out
}

// Failed reports whether a CI gate should fail: a regression, or a
// question that could not be compared and was not allowed to change.
func (c *Comparison) Failed() bool { return len(c.Regressions) > 0 || len(c.Blocking()) > 0 }

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
	// Allowed is true when a question that could not be compared was
	// accepted as changed on purpose (Options.AllowChanged).
	Allowed bool `json:"allowed_changed,omitempty"`
	// Mapped lists the renames applied (A's name → B's name).
	Mapped map[string]string `json:"mapped,omitempty"`

	Paired         int `json:"paired"`          // items answered in both runs
	PairedLabelled int `json:"paired_labelled"` // of those, labelled (the n of every delta)
	OnlyA          int `json:"only_a"`
	OnlyB          int `json:"only_b"`
	LabelMismatch  int `json:"label_mismatch,omitempty"` // items labelled differently in the two runs (A's label used)

	Deltas []Delta `json:"deltas"`
	// Resampling describes the bag of little bootstraps behind the deltas'
	// intervals and p-values when the paired items were too many for the
	// ordinary paired bootstrap (absent otherwise).
	Resampling *metrics.Resampling `json:"resampling,omitempty"`
	McNemar    McNemar             `json:"mcnemar"`
	// BrierP is the paired-bootstrap two-sided p-value of ΔBrier, and
	// BrierPHolm it after Holm's correction across questions. With
	// BrierPBelow the bootstrap put no resample on one side of 0: the
	// p-value is below BrierP (= 1/B), never 0.
	BrierP      float64 `json:"brier_p"`
	BrierPHolm  float64 `json:"brier_p_holm"`
	BrierPBelow bool    `json:"brier_p_below,omitempty"`

	Flips Flips `json:"flips"`
	Drift Drift `json:"drift"`
	Noise Noise `json:"noise"`

	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

// Delta is one metric's paired change B − A with its paired bootstrap 95%
// interval. Significant when the interval excludes 0; Better says whether
// the change is an improvement given the metric's direction. Macro-F1 of
// both runs is over the union of the classes either uses (label or
// decision), so A and B here may differ from each run's own report.
type Delta struct {
	Metric string           `json:"metric"`
	A      metrics.Estimate `json:"a"`
	B      metrics.Estimate `json:"b"`
	Delta  metrics.Estimate `json:"delta"`
	// P is the two-sided paired-bootstrap p-value of a zero change. With
	// PBelow no resample fell on one side of 0 and the p-value is below P
	// (= 1/B): it never reads 0.
	P             float64 `json:"p"`
	PBelow        bool    `json:"p_below,omitempty"`
	LowerIsBetter bool    `json:"lower_is_better"`
	Significant   bool    `json:"significant"`
	Better        bool    `json:"better"`
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

// FlipItem is one flipped item. PLabelA and PLabelB are the probability
// each run gave the item's label (for a noul labelled false, 1 − p); Shift
// is PLabelB − PLabelA (items are ranked by |Shift|, largest first).
type FlipItem struct {
	ItemID  string  `json:"item"`
	Kind    string  `json:"kind"`
	Label   string  `json:"label"`
	A       string  `json:"a"`
	B       string  `json:"b"`
	PLabelA float64 `json:"p_label_a"`
	PLabelB float64 `json:"p_label_b"`
	Shift   float64 `json:"shift"`
	// Deprecated: PTrueA and PTrueB are PLabelA and PLabelB under their
	// old, misleading name (for a noul labelled false they are not
	// P(true)); not written to JSON.
	PTrueA float64 `json:"-"`
	PTrueB float64 `json:"-"`
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
	c, _ := CompareLoaded(a, b, opt) // in-memory RunData: no load to fail
	return c
}

// CompareLoaded is Compare for runs read as they are compared (RunData's
// Stream or Load, e.g. LoadRun): both runs' items are merged by id in one
// pass, each question keeping a compact record pair per labelled item.
// Its error is the first read that failed.
func CompareLoaded(a, b RunData, opt Options) (*Comparison, error) {
	opt = opt.withDefaults()
	c := &Comparison{
		A:         RunRef{a.ID, a.Name, a.Model},
		B:         RunRef{b.ID, b.Name, b.Model},
		Seed:      opt.Seed,
		Bootstrap: max(0, opt.Bootstrap),
		Alpha:     opt.Alpha,
		Conventions: fmt.Sprintf("paired by item id (first repeat); deltas are B - A with percentile 95%% paired bootstrap intervals (B=%d, seed %d); "+
			"exact McNemar (two-sided binomial on the discordant pairs) and bootstrap Brier p-values, Holm-corrected across questions at alpha %.3g; "+
			"a Brier change counts when |delta| >= %.3g or, with repeats, when the decisions change more than the runs' own flip rate; "+
			"a bootstrap p-value with no resample on one side of 0 is reported as <1/B, never 0; macro-F1 of both runs is over the union of the classes either uses; "+
			"flips carry p(label), the probability each run gave the item's label",
			max(0, opt.Bootstrap), opt.Seed, opt.Alpha, opt.MinBrierDelta),
	}
	results := make([]QuestionComparison, len(a.Questions))
	inB := make([]bool, len(a.Questions))
	// Passes over both runs, merged by item id (stream.go), each for as
	// many questions as opt.PassBytes of records hold.
	for _, pass := range comparePasses(&a, &b, opt) {
		merged, err := mergeQuestions(&a, &b, opt, pass)
		if err != nil {
			return nil, err
		}
		// One question at a time, each on every core (its two runs'
		// columns are prepared at once, its resamples drawn on GOMAXPROCS
		// goroutines): only one question's prepared columns are held beside
		// the records of those still to come, which are dropped as each is
		// done.
		for _, i := range pass {
			inB[i] = true
			results[i] = merged[i].result(opt)
			merged[i] = nil // its records are no longer needed
		}
	}
	little := false // the conventions name the bag of little bootstraps
	for i, e := range a.Questions {
		if !inB[i] {
			c.Questions = append(c.Questions, QuestionComparison{ID: e.ID, Type: e.Question.Type, Reason: "question absent from run B", Verdict: NotComparable})
			continue
		}
		c.Questions = append(c.Questions, results[i])
		if results[i].Resampling != nil && !little {
			little = true
			c.Conventions += fmt.Sprintf("; above %d paired labelled items the intervals and p-values are estimated by the bag of little bootstraps (%s; each question's resampling says its subsets)",
				metrics.DefaultExactBootstrapMax, metrics.BLBRule)
		}
	}
	for _, e := range b.Questions {
		if _, ok := a.Questions.Get(e.ID); !ok {
			c.Questions = append(c.Questions, QuestionComparison{ID: e.ID, Type: e.Question.Type, Reason: "question absent from run A", Verdict: NotComparable})
		}
	}
	holm(c.Questions, opt)
	boxVerdicts(c.Questions, opt) // box.go
	for i := range c.Questions {
		q := &c.Questions[i]
		if q.Verdict != NotComparable {
			continue
		}
		q.Allowed = slices.Contains(opt.AllowChanged, q.ID)
		if q.Allowed {
			q.Why = "accepted as changed on purpose"
		}
		c.NotComparable = append(c.NotComparable, Incomparable{Question: q.ID, Reason: q.Reason, Allowed: q.Allowed})
	}
	overall(c)
	return c, nil
}

// CheckOptions checks opt's AllowChanged and Map against the two runs: every
// allowed question is in one of them, every mapped question in both, every
// mapped name an option (or level) of A and its target one of B. The error
// names the first problem.
func CheckOptions(a, b RunData, opt Options) error {
	for _, id := range opt.AllowChanged {
		_, inA := a.Questions.Get(id)
		_, inB := b.Questions.Get(id)
		if !inA && !inB {
			return fmt.Errorf("allowed question %q is in neither run (questions: %s)", id, strings.Join(questionIDs(a, b), ", "))
		}
	}
	qids := make([]string, 0, len(opt.Map))
	for id := range opt.Map {
		qids = append(qids, id)
	}
	slices.Sort(qids)
	for _, id := range qids {
		qa, inA := a.Questions.Get(id)
		qb, inB := b.Questions.Get(id)
		if !inA || !inB {
			return fmt.Errorf("mapped question %q must be in both runs (A has it: %t, B has it: %t)", id, inA, inB)
		}
		if qa.Type != qb.Type || qa.Type == provider.Noul {
			return fmt.Errorf("mapped question %q: only the options of a choice or the levels of a score can be mapped (A %s, B %s)", id, qa.Type, qb.Type)
		}
		na, nb := names(qa), names(qb)
		from := make([]string, 0, len(opt.Map[id]))
		for k := range opt.Map[id] {
			from = append(from, k)
		}
		slices.Sort(from)
		seen := map[string]string{}
		for _, k := range from {
			v := opt.Map[id][k]
			if !slices.Contains(na, k) {
				return fmt.Errorf("mapped question %q: %q is not an %s of A (A has %s)", id, k, noun(qa), quoteAll(na))
			}
			if !slices.Contains(nb, v) {
				return fmt.Errorf("mapped question %q: %q is not an %s of B (B has %s)", id, v, noun(qb), quoteAll(nb))
			}
			if o, dup := seen[v]; dup {
				return fmt.Errorf("mapped question %q: %q and %q of A both map to %q of B", id, o, k, v)
			}
			seen[v] = k
		}
	}
	return nil
}

func questionIDs(a, b RunData) []string {
	var out []string
	for _, e := range a.Questions {
		out = append(out, e.ID)
	}
	for _, e := range b.Questions {
		if !slices.Contains(out, e.ID) {
			out = append(out, e.ID)
		}
	}
	return out
}

// names are a choice's option labels or a score's level texts.
func names(q *provider.Question) []string {
	switch q.Type {
	case provider.Choice:
		out := make([]string, len(q.Options))
		for i, o := range q.Options {
			out[i] = o.Label
		}
		return out
	case provider.Score:
		out := make([]string, len(q.Levels))
		for i, l := range q.Levels {
			out[i] = provider.Text(l)
		}
		return out
	}
	return nil
}

func noun(q *provider.Question) string {
	if q.Type == provider.Score {
		return "level"
	}
	return "option"
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
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

// alignQuestion checks that qb asks what qa asks, after renaming A's
// options (or levels) by rename (A name → B name). For a choice whose
// options were reordered or renamed it returns remap[iB] = iA. The reason
// names the first difference, e.g. "option other of A is not in B".
func alignQuestion(qa, qb *provider.Question, rename map[string]string) ([]int, string) {
	if qa.Type != qb.Type {
		return nil, fmt.Sprintf("type changed from %s in A to %s in B", qa.Type, qb.Type)
	}
	if qa.Type == provider.Noul {
		return nil, ""
	}
	na, nb := names(qa), names(qb)
	inB := func(name string) string {
		if v, ok := rename[name]; ok {
			return v
		}
		return name
	}
	if qa.Type == provider.Score {
		if len(na) != len(nb) {
			return nil, fmt.Sprintf("%d levels in A, %d in B", len(na), len(nb))
		}
		for i := range na {
			if inB(na[i]) != nb[i] {
				if _, ok := rename[na[i]]; ok {
					return nil, fmt.Sprintf("level %d of A (%q) is mapped to %q, but level %d of B is %q", i, na[i], inB(na[i]), i, nb[i])
				}
				return nil, fmt.Sprintf("level %d is %q in A, %q in B", i, na[i], nb[i])
			}
		}
		return nil, ""
	}
	posB := make(map[string]int, len(nb))
	for i, n := range nb {
		posB[n] = i
	}
	remap := make([]int, len(nb))
	for i := range remap {
		remap[i] = -1
	}
	same := len(na) == len(nb)
	for i, n := range na {
		j, ok := posB[inB(n)]
		if !ok {
			if _, mapped := rename[n]; mapped {
				return nil, fmt.Sprintf("option %s of A is mapped to %s, which is not an option of B", n, inB(n))
			}
			return nil, fmt.Sprintf("option %s of A is not in B", n)
		}
		remap[j] = i
		same = same && i == j
	}
	for j, i := range remap {
		if i < 0 {
			return nil, fmt.Sprintf("option %s of B is not in A", nb[j])
		}
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
// resampled items (plan p) and returns the deltas and the Brier p-value
// (and whether it is only an upper bound).
func pairedDeltas(dA, dB *metrics.Data, p metrics.Plan) ([]Delta, float64, bool) {
	ms := dA.Metrics()
	pa, pb := make([]float64, len(ms)), make([]float64, len(ms))
	dA.EvalAll(ms, nil, pa)
	dB.EvalAll(ms, nil, pb)
	union(ms, dA, dB, pa, pb)
	out := make([]Delta, len(ms))
	point := make([]float64, len(ms))
	for j, m := range ms {
		out[j] = Delta{Metric: m.String(), A: metrics.Point(pa[j]), B: metrics.Point(pb[j]), Delta: metrics.Point(pb[j] - pa[j]), P: 1, LowerIsBetter: m.LowerIsBetter()}
		point[j] = pb[j] - pa[j]
	}
	brierP, brierBelow := 1.0, false
	if p.B <= 0 {
		return out, brierP, false
	}
	res := metrics.Resample([]*metrics.Data{dA, dB}, p, point, func(ds []*metrics.Data, w, v []float64) {
		va, vb := make([]float64, len(ms)), make([]float64, len(ms))
		ds[0].EvalAll(ms, w, va)
		ds[1].EvalAll(ms, w, vb)
		union(ms, ds[0], ds[1], va, vb)
		for j := range ms {
			v[j] = vb[j] - va[j]
		}
	})
	for j, m := range ms {
		out[j].P, out[j].PBelow = res.TwoSidedP(j)
		out[j].Delta.Lo, out[j].Delta.Hi = res.Interval(j)
		d := &out[j]
		if d.Delta.HasInterval() && (d.Delta.Lo > 0 || d.Delta.Hi < 0) {
			d.Significant = true
		}
		d.Better = d.Delta.Value != 0 && (d.Delta.Value < 0) == m.LowerIsBetter()
		if m == metrics.MBrier {
			brierP, brierBelow = d.P, d.PBelow
		}
	}
	return out, brierP, brierBelow
}

// union replaces the macro-F1 of both sides (just evaluated under the same
// weights) by their values over the union of the classes either uses.
func union(ms []metrics.Metric, a, b *metrics.Data, va, vb []float64) {
	for j, m := range ms {
		if m == metrics.MMacroF1 {
			va[j], vb[j] = metrics.MacroF1Union(a, b)
		}
	}
}

// bootP is the two-sided bootstrap p-value of a zero delta over draws
// (metrics.TwoSidedP): 2·min(P*(Δ ≤ 0), P*(Δ ≥ 0)), capped at 1; 1/B with
// below = true when no defined draw lies on one side of 0.
func bootP(draws []float64) (p float64, below bool) { return metrics.TwoSidedP(draws) }

// FormatP writes a p-value as "0.0312", or "<0.001" when it is only an
// upper bound (below).
func FormatP(p float64, below bool) string {
	if below {
		return "<" + strconv.FormatFloat(p, 'g', 3, 64)
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

// FormatPHolm writes a Holm-adjusted p-value; when the raw p-value was
// only an upper bound (below) so is the adjusted one: "≤0.003".
func FormatPHolm(p float64, below bool) string {
	if below {
		return "≤" + strconv.FormatFloat(p, 'g', 3, 64)
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
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
			PLabelA: dA.PTrue[i], PLabelB: dB.PTrue[i], Shift: dB.PTrue[i] - dA.PTrue[i]}
		it.PTrueA, it.PTrueB = it.PLabelA, it.PLabelB
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
	if maxItems > 0 && len(f.Items) > maxItems {
		f.Items = f.Items[:maxItems]
	}
	return f
}

// holm adjusts McNemar and Brier p-values across the compared questions
// and sets each question's verdict.
func holm(qs []QuestionComparison, opt Options) {
	var idx, bidx []int
	var pm, pbr []float64
	for i := range qs {
		if qs[i].Reason != "" || qs[i].PairedLabelled == 0 {
			continue
		}
		idx = append(idx, i)
		pm = append(pm, qs[i].McNemar.P)
		if qs[i].Type != provider.Box { // a box has no Brier (box.go)
			bidx = append(bidx, i)
			pbr = append(pbr, qs[i].BrierP)
		}
	}
	hm, hb := Holm(pm), Holm(pbr)
	for k, i := range idx {
		qs[i].McNemar.PHolm = hm[k]
	}
	for k, i := range bidx {
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
		qc.Verdict, qc.Reason = NotComparable, "no item answered in both runs"
		qc.Why = qc.Reason
	case (worse || better) && withinNoise:
		qc.Verdict = WithinNoise
		qc.Why = fmt.Sprintf("significant, but %.1f%% of decisions changed and the runs' own repeats flip %.1f%% (mean TV %.3g vs %.3g)",
			100*qc.Drift.ChangedShare, 100*qc.Noise.FlipRate, qc.Drift.MeanTV, qc.Noise.MeanTV)
	case worse:
		qc.Verdict = Regressed
		qc.Why = why(accWorse, m, dBrier, qc.BrierPHolm, qc.BrierPBelow)
	case better:
		qc.Verdict = Improved
		qc.Why = why(accBetter, m, dBrier, qc.BrierPHolm, qc.BrierPBelow)
	case withinNoise:
		qc.Verdict = WithinNoise
		qc.Why = fmt.Sprintf("%.1f%% of decisions changed, within the runs' own repeat flip rate %.1f%%", 100*qc.Drift.ChangedShare, 100*qc.Noise.FlipRate)
	case qc.PairedLabelled == 0:
		qc.Verdict = NoChange
		qc.Why = fmt.Sprintf("no labels: drift only (%d of %d decisions changed, mean TV %.3g)", qc.Drift.ChangedDecisions, qc.Paired, qc.Drift.MeanTV)
	default:
		qc.Verdict = NoChange
		qc.Why = fmt.Sprintf("McNemar %d vs %d discordant, p=%.3g (Holm %.3g); Brier delta %+.4f, p=%s (Holm)",
			m.ARightBWrong, m.AWrongBRight, m.P, m.PHolm, dBrier, FormatPHolm(qc.BrierPHolm, qc.BrierPBelow))
	}
}

func why(acc bool, m McNemar, dBrier, pBrier float64, below bool) string {
	if acc {
		return fmt.Sprintf("McNemar: %d right→wrong vs %d wrong→right, exact p=%.3g (Holm %.3g)", m.ARightBWrong, m.AWrongBRight, m.P, m.PHolm)
	}
	return fmt.Sprintf("Brier %+.4f, paired bootstrap p=%s (Holm)", dBrier, FormatPHolm(pBrier, below))
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
	case len(c.Blocking()) > 0:
		// A question that moved in a way no test can see must not hide
		// behind "no significant change" (or an improvement elsewhere).
		c.Verdict = NotComparable
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
