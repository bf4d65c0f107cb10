// Package report turns runs and comparisons into what people and CI read:
// text (the default), JSON, Markdown (a PR comment) and JUnit XML (one test
// case per question × gate), and evaluates the question set's gates.
package report

import (
	"fmt"
	"math"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// RunReport is one run's full report: the stored run, each question's
// metrics and the gates evaluated on them.
type RunReport struct {
	Run       *store.Run                `json:"run"`
	Set       *questionset.Set          `json:"-"`
	Questions []*metrics.QuestionReport `json:"questions"`
	Gates     []GateResult              `json:"gates,omitempty"`
	// Split is the part of the dataset the run asked ("" all, dev, test);
	// Holdout says, for a run on test, how many revisions of each question
	// had seen test by then (the ledger).
	Split   string        `json:"split,omitempty"`
	Holdout []HoldoutNote `json:"holdout,omitempty"`
	// Costs are the cost-optimal thresholds of nouls that declare costs.
	Costs []CostFit `json:"costs,omitempty"`
	// ChoiceCosts are the cost-optimal confidence cut-points of choices
	// that declare costs.
	ChoiceCosts []ChoiceCostFit `json:"choice_costs,omitempty"`
	// Variants pairs each variant the run asked with its question on the
	// same items (compare.CompareVariants).
	Variants []compare.VariantComparison `json:"variants,omitempty"`
	// Passed is false when any gate failed.
	Passed bool `json:"passed"`
}

// HoldoutNote is the hold-out ledger's word on one question of a run on
// test: how many revisions of it had been evaluated on test by then.
type HoldoutNote struct {
	Question  string `json:"question"`
	Revisions int    `json:"revisions"`
	// Relabelled counts the items whose label of the question was changed
	// after test had been seen, before this run (RelabelledOnTest of them
	// test items).
	Relabelled       int    `json:"relabelled,omitempty"`
	RelabelledOnTest int    `json:"relabelled_on_test,omitempty"`
	Message          string `json:"message"`
}

// WithRelabels adds the ledger's relabels to h: n labels changed after
// test was seen, onTest of them on test items.
func (h HoldoutNote) WithRelabels(n, onTest int) HoldoutNote {
	if n == 0 {
		return h
	}
	h.Relabelled, h.RelabelledOnTest = n, onTest
	word := "labels"
	if n == 1 {
		word = "label"
	}
	h.Message += fmt.Sprintf("; %d %s of %s changed after test was seen", n, word, h.Question)
	if onTest > 0 {
		h.Message += fmt.Sprintf(" (%d on test items: fixed after seeing test's errors, they flatter it)", onTest)
	}
	return h
}

// NewHoldoutNote words the ledger's count for question q.
func NewHoldoutNote(q string, revisions int) HoldoutNote {
	msg := fmt.Sprintf("test seen by %d revision of %s (this one): an unbiased estimate only if nothing was tuned on it", revisions, q)
	if revisions > 1 {
		msg = fmt.Sprintf("test seen by %d revisions of %s: its accuracy is optimistic", revisions, q)
	}
	return HoldoutNote{Question: q, Revisions: revisions, Message: msg}
}

// HoldoutLines are the ledger lines of a report on test (none otherwise).
func HoldoutLines(rep *RunReport) []string {
	var out []string
	for _, h := range rep.Holdout {
		out = append(out, h.Message)
	}
	return out
}

// GateResult is one question × gate condition.
type GateResult struct {
	Question string  `json:"question"`
	Gate     string  `json:"gate"` // e.g. "min_accuracy"
	Metric   string  `json:"metric"`
	Limit    float64 `json:"limit"`
	// Value is the metric's point value (NaN, written null, when it could
	// not be computed — which fails the gate).
	Value  metrics.Estimate `json:"value"`
	Passed bool             `json:"passed"`
	Source string           `json:"source"` // "question set" or "flag"
	Msg    string           `json:"message"`
}

func passed(gs []GateResult) bool {
	for _, g := range gs {
		if !g.Passed {
			return false
		}
	}
	return true
}

// ObsOf converts a stored answer into a metrics observation.
func ObsOf(a *store.ItemAnswer) metrics.Obs {
	o := metrics.Obs{ItemID: a.ItemID, Answer: a.Answer, ErrKind: a.ErrKind, LatencyMS: a.LatencyMS, Repeat: a.Repeat}
	if a.Answer == nil && o.ErrKind == "" {
		o.ErrKind = "unknown"
	}
	if a.Label != nil {
		o.Label, o.HasLabel = *a.Label, true
	}
	withBoxLabel(&o, a)
	return o
}

// Build computes the report of run from observations grouped by question
// id, in the set's question order. Each question's noul threshold and
// min_confidence (routing to uncertain) come from set.
func Build(run *store.Run, set *questionset.Set, obs map[string][]metrics.Obs, opt metrics.Options, flags questionset.Gate) *RunReport {
	qs := make([]*metrics.QuestionReport, 0, len(set.Questions))
	for _, e := range set.Questions {
		qs = append(qs, Question(set, e, obs[e.ID], opt))
	}
	return Assemble(run, set, qs, flags)
}

// Question computes the report of one question of set (e) from its
// observations, with the question's threshold and min_confidence: what
// Build does for each question.
func Question(set *questionset.Set, e provider.QuestionEntry, obs []metrics.Obs, opt metrics.Options) *metrics.QuestionReport {
	q := e.Question
	o := questionOptions(set, e, opt)
	r := finish(e, metrics.Compute(&q, obs, o))
	boxQuestion(r, &q, obs, o)
	return r
}

// QuestionRecorder starts the report of one question of set (e), to be
// fed its observations one by one (the store's order) and finished with
// FinishQuestion: Question for a large run read as a stream. A box
// question is measured by Question (its labelled boxes are not Recs).
func QuestionRecorder(set *questionset.Set, e provider.QuestionEntry, opt metrics.Options) *metrics.Recorder {
	q := e.Question
	return metrics.NewRecorder(&q, questionOptions(set, e, opt))
}

// FinishQuestion is question e's report from its recorder.
func FinishQuestion(e provider.QuestionEntry, rc *metrics.Recorder) *metrics.QuestionReport {
	return finish(e, rc.Report())
}

// questionOptions are opt with question e's threshold and min_confidence.
func questionOptions(set *questionset.Set, e provider.QuestionEntry, opt metrics.Options) metrics.Options {
	// The store keeps usage per request (item), never per question.
	opt.UsagePerRequest = true
	opt.Threshold = set.Threshold(e.ID)
	opt.MinConfidence = nil
	if mc, ok := set.MinConfidence(e.ID); ok {
		opt.MinConfidence = &mc
	}
	return opt
}

func finish(e provider.QuestionEntry, r *metrics.QuestionReport) *metrics.QuestionReport {
	r.ID = e.ID
	if r.Selective.Cutpoint != nil {
		r.Selective.Cutpoint.Question = e.ID
	}
	return r
}

// Assemble is the report of run from its questions' reports (Question, in
// the set's order) with the gates of set and flags evaluated.
func Assemble(run *store.Run, set *questionset.Set, qs []*metrics.QuestionReport, flags questionset.Gate) *RunReport {
	rep := &RunReport{Run: run, Set: set, Questions: qs}
	rep.Gates = EvaluateGates(set, flags, rep.Questions)
	rep.Passed = passed(rep.Gates)
	return rep
}

// gateSpec is one Gate field: its file name, the metric it reads, and
// whether the value must stay at or above (min) or at or below the limit.
type gateSpec struct {
	name, metric string
	min          bool
	get          func(*questionset.Gate) *float64
	value        func(*metrics.QuestionReport) (metrics.Estimate, bool) // false: not applicable to the type
}

var gateSpecs = []gateSpec{
	{"min_accuracy", "accuracy", true, func(g *questionset.Gate) *float64 { return g.MinAccuracy },
		func(r *metrics.QuestionReport) (metrics.Estimate, bool) { return r.Accuracy, true }},
	{"max_ece", "ece", false, func(g *questionset.Gate) *float64 { return g.MaxECE },
		func(r *metrics.QuestionReport) (metrics.Estimate, bool) { return r.ECE, true }},
	{"max_brier", "brier", false, func(g *questionset.Gate) *float64 { return g.MaxBrier },
		func(r *metrics.QuestionReport) (metrics.Estimate, bool) { return r.Brier, true }},
	{"min_macro_f1", "macro_f1", true, func(g *questionset.Gate) *float64 { return g.MinMacroF1 },
		func(r *metrics.QuestionReport) (metrics.Estimate, bool) {
			if r.Choice == nil {
				return metrics.Estimate{}, false
			}
			return r.Choice.MacroF1, true
		}},
	{"max_log_loss", "log_loss", false, func(g *questionset.Gate) *float64 { return g.MaxLogLoss },
		func(r *metrics.QuestionReport) (metrics.Estimate, bool) { return r.LogLoss, true }},
	{"min_within_one", "within_one_argmax", true, func(g *questionset.Gate) *float64 { return g.MinWithinOne },
		func(r *metrics.QuestionReport) (metrics.Estimate, bool) {
			if r.Score == nil {
				return metrics.Estimate{}, false
			}
			return r.Score.WithinOneArgmax, true
		}},
	{"max_error_rate", "error_rate", false, func(g *questionset.Gate) *float64 { return g.MaxErrorRate },
		func(r *metrics.QuestionReport) (metrics.Estimate, bool) {
			if r.N == 0 {
				return metrics.Point(math.NaN()), true
			}
			return metrics.Point(float64(r.N-r.Answered) / float64(r.N)), true
		}},
}

// EvaluateGates checks every question against its effective gate: the
// set's "*" gate, overridden field by field by the question's own gate,
// overridden by flags. A gate on a metric that could not be computed (no
// labels) fails; a gate on a metric the type lacks (macro-F1 of a noul) is
// not applied. Values are point estimates.
func EvaluateGates(set *questionset.Set, flags questionset.Gate, qs []*metrics.QuestionReport) []GateResult {
	var out []GateResult
	for _, r := range qs {
		for _, sp := range gateSpecs {
			limit, src, own := (*float64)(nil), "", false
			if set != nil {
				if g, ok := set.Gates["*"]; ok && sp.get(&g) != nil {
					limit, src = sp.get(&g), "question set"
				}
				if g, ok := set.Gates[r.ID]; ok && sp.get(&g) != nil {
					limit, src, own = sp.get(&g), "question set", true
				}
			}
			if v := sp.get(&flags); v != nil {
				limit, src, own = v, "flag", false
			}
			if limit == nil {
				continue
			}
			metric, boxMsg := sp.metric, ""
			var v metrics.Estimate
			var ok bool
			if r.Box != nil {
				metric, v, ok, boxMsg = boxGateValue(sp, r, own)
			} else {
				v, ok = sp.value(r)
			}
			if !ok {
				continue
			}
			gr := GateResult{Question: r.ID, Gate: sp.name, Metric: metric, Limit: *limit, Value: v, Source: src}
			op := "<="
			if sp.min {
				op = ">="
			}
			switch {
			case boxMsg != "":
				gr.Msg = boxMsg
			case !v.Defined():
				gr.Msg = fmt.Sprintf("%s could not be computed (%d labelled answers)", metric, r.Labelled)
			case sp.min && v.Value >= *limit, !sp.min && v.Value <= *limit:
				gr.Passed = true
				gr.Msg = fmt.Sprintf("%s %.4g %s %.4g", metric, v.Value, op, *limit)
			default:
				gr.Msg = fmt.Sprintf("%s %.4g, needs %s %.4g", metric, v.Value, op, *limit)
			}
			if v.HasInterval() {
				gr.Msg += fmt.Sprintf(" (95%% CI %.4g–%.4g)", v.Lo, v.Hi)
			}
			out = append(out, gr)
		}
	}
	return out
}

// Regressed reports whether a comparison found a significant regression.
func Regressed(c *compare.Comparison) bool { return c.Verdict == compare.Regressed }

// CutpointEntry is one entry of the --cutpoints file: the fitted
// cut-point with its check. An entry whose target was not reached has
// Cutpoint null and Status "not reached", the fitted value only under
// FittedCutpoint, so an application that loads "cutpoint" cannot load it by
// mistake.
type CutpointEntry struct {
	Kind     string   `json:"kind"` // "accuracy"; cost entries are CostCutpointEntry
	Question string   `json:"question"`
	Status   string   `json:"status"` // "reached" or "not reached"
	Cutpoint *float64 `json:"cutpoint"`
	// Warning says, for an unreached entry, why it must not be loaded.
	Warning        string  `json:"warning,omitempty"`
	FittedCutpoint float64 `json:"fitted_cutpoint"`
	Model          string  `json:"model"`
	Confidence     string  `json:"confidence"`
	Target         float64 `json:"target"`
	FitN           int     `json:"fit_n"`
	FitAccuracy    float64 `json:"fit_accuracy"`
	FitCoverage    float64 `json:"fit_coverage"`
	HoldoutN       int     `json:"holdout_n"`
	// HoldoutAccuracyLo is the one-sided lower bound at
	// HoldoutAccuracyLoConfidence that Reached is decided on.
	HoldoutAccuracy             float64 `json:"holdout_accuracy"`
	HoldoutAccuracyLo           float64 `json:"holdout_accuracy_lo"`
	HoldoutAccuracyLoConfidence float64 `json:"holdout_accuracy_lo_confidence"`
	HoldoutCoverage             float64 `json:"holdout_coverage"`
	Reached                     bool    `json:"reached"`
	Seed                        uint64  `json:"seed"`
}

// CutpointFile returns the entries of the --cutpoints file: every fitted
// cut-point, unreached ones marked and without a loadable value.
func CutpointFile(rep *RunReport) []CutpointEntry {
	out := []CutpointEntry{}
	for _, c := range Cutpoints(rep) {
		e := CutpointEntry{
			Kind: "accuracy", Question: c.Question, Status: "reached", FittedCutpoint: c.Cutpoint, Model: c.Model, Confidence: c.Confidence,
			Target: c.Target, FitN: c.FitN, FitAccuracy: c.FitAccuracy, FitCoverage: c.FitCoverage, HoldoutN: c.HoldoutN,
			HoldoutAccuracy: c.HoldoutAccuracy, HoldoutAccuracyLo: c.HoldoutAccuracyLo, HoldoutAccuracyLoConfidence: c.HoldoutAccuracyLoConfidence,
			HoldoutCoverage: c.HoldoutCoverage, Reached: c.Reached, Seed: c.Seed,
		}
		if c.Reached {
			v := c.Cutpoint
			e.Cutpoint = &v
		} else {
			e.Status = "not reached"
			e.Warning = fmt.Sprintf("do not load: held-out accuracy %.3g, one-sided %.1f%% lower bound %.3g < target %.3g", c.HoldoutAccuracy, 100*c.HoldoutAccuracyLoConfidence, c.HoldoutAccuracyLo, c.Target)
		}
		out = append(out, e)
	}
	return out
}

// Cutpoints returns the fitted confidence cut-points of a run, one per
// question that has one: the artifact an application loads to answer only
// above the cut-point (check Reached before loading one).
func Cutpoints(rep *RunReport) []metrics.Cutpoint {
	var out []metrics.Cutpoint
	for _, q := range rep.Questions {
		if c := q.Selective.Cutpoint; c != nil {
			out = append(out, *c)
		}
	}
	return out
}
