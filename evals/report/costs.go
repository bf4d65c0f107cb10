package report

import (
	"fmt"
	"math"

	"github.com/jevlab/jevlab/evals/costs"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// CostFit is a noul's cost-optimal thresholds: fitted on one part of the
// run's labelled items (dev) and checked on the other (test).
type CostFit struct {
	Question string      `json:"question"`
	Costs    costs.Costs `json:"costs"`
	// FitOn and CheckOn name the parts ("dev", "test"); Split says how
	// they were drawn. Check is nil when the run has no items to check
	// on (a run on one split only: the fit is then in-sample).
	FitOn   string         `json:"fit_on"`
	CheckOn string         `json:"check_on,omitempty"`
	Split   string         `json:"split"`
	Fit     costs.Outcome  `json:"fit"`
	Check   *costs.Outcome `json:"check,omitempty"`
	Note    string         `json:"note,omitempty"`
	// TooFew says why the fitting items are too few for thresholds worth
	// loading (costs.TooFew); "" when enough. The fit is still shown.
	TooFew string `json:"too_few,omitempty"`
}

// FitCosts fits the cost-optimal thresholds of every noul of set that
// declares costs, from its observations (first repeat, labelled,
// answered). sp splits the items into dev (fit) and test (check); when
// runSplit is "dev" or "test" (the run asked one part only) the fit is
// made and reported on those items alone.
func FitCosts(set *questionset.Set, obs map[string][]metrics.Obs, sp questionset.SplitSpec, runSplit string) []CostFit {
	var out []CostFit
	for _, e := range set.Questions {
		if f, ok := FitCost(set, e, obs[e.ID], sp, runSplit); ok {
			out = append(out, f)
		}
	}
	return out
}

// FitCost is FitCosts for one question e and its observations; ok is false
// when e is not a noul that declares costs.
func FitCost(set *questionset.Set, e provider.QuestionEntry, obs []metrics.Obs, sp questionset.SplitSpec, runSplit string) (CostFit, bool) {
	f, ok := NewCostFitter(set, e, sp, runSplit)
	if !ok {
		return CostFit{}, false
	}
	feedObs(&e.Question, obs, f.Add)
	return f.Fit(), true
}

// feedObs hands add each observation of obs reduced to its Rec.
func feedObs(q *provider.Question, obs []metrics.Obs, add func(*metrics.Rec)) {
	for i := range obs {
		r := metrics.RecOf(q, &obs[i])
		add(&r)
	}
}

// CostFitter is FitCost over a stream of Recs (a metrics.Recorder's
// OnItem): each labelled first repeat is split into dev or test as it
// comes, and only its probability and label are kept.
type CostFitter struct {
	e   provider.QuestionEntry
	c   costs.Costs
	pts splitPoints[costs.Point]
}

// NewCostFitter starts question e's cost fit; ok is false when e is not a
// noul that declares costs.
func NewCostFitter(set *questionset.Set, e provider.QuestionEntry, sp questionset.SplitSpec, runSplit string) (*CostFitter, bool) {
	st, ok := set.Settings[e.ID]
	if !ok || st.Costs == nil || st.Costs.Choice || e.Question.Type != provider.Noul {
		return nil, false
	}
	c := costs.Costs{FalsePositive: st.Costs.FalsePositive, FalseNegative: st.Costs.FalseNegative, Abstain: st.Costs.Abstain}
	return &CostFitter{e: e, c: c, pts: splitPoints[costs.Point]{sp: sp, runSplit: runSplit}}, true
}

// Add reads one item's Rec (it is not kept).
func (f *CostFitter) Add(o *metrics.Rec) {
	if o.Repeat != 0 || !o.Labelled() {
		return
	}
	f.pts.add(o.ItemID, costs.Point{P: o.P, Label: o.Label == 1})
}

// Fit is the fit of the Recs added.
func (f *CostFitter) Fit() CostFit {
	c, p := f.c, &f.pts
	out := CostFit{Question: f.e.ID, Costs: c}
	out.FitOn, out.CheckOn, out.Split, out.Note = p.parts()
	out.Fit = costs.Fit(p.dev, c)
	out.TooFew = costs.TooFew(p.dev)
	if p.runSplit == "" {
		chk := costs.Evaluate(p.test, out.Fit.Lo, out.Fit.Hi, c)
		out.Check = &chk
	}
	return out
}

// splitPoints holds a cost fit's points as they stream, split by item id
// into dev (fit) and test (check); a run that asked one part only keeps
// every point on that part (an in-sample fit).
type splitPoints[P any] struct {
	sp        questionset.SplitSpec
	runSplit  string
	dev, test []P
}

func (s *splitPoints[P]) add(itemID string, p P) {
	if s.runSplit == "" && s.sp.Of(itemID) == questionset.SplitTest {
		s.test = append(s.test, p)
	} else {
		s.dev = append(s.dev, p)
	}
}

// parts names where the fit was made and checked, how the parts were
// drawn, and a note for an in-sample fit.
func (s *splitPoints[P]) parts() (fitOn, checkOn, split, note string) {
	if s.runSplit != "" {
		return s.runSplit, "", "the run asked " + s.runSplit + " only",
			"fitted in-sample on the run's " + s.runSplit + " items; evaluate every item to fit on dev and check on test"
	}
	return questionset.SplitDev, questionset.SplitTest, s.sp.String(), ""
}

// CostLines are the text lines of a report's cost fits.
func CostLines(fs []CostFit) []string {
	var out []string
	for _, f := range fs {
		ab := "never"
		if f.Costs.Abstain != nil {
			ab = fmt.Sprintf("%g", *f.Costs.Abstain)
		}
		out = append(out, fmt.Sprintf("%s cost-optimal thresholds (false positive %g, false negative %g, abstain %s): yes at p ≥ %s, no below %s; fitted on %s (%s)",
			f.Question, f.Costs.FalsePositive, f.Costs.FalseNegative, ab, thr(f.Fit.Hi), thr(f.Fit.Lo), f.FitOn, f.Split))
		out = append(out, "  "+outcomeLine(f.FitOn, f.Fit))
		if f.Check != nil {
			out = append(out, "  "+outcomeLine(f.CheckOn, *f.Check))
		}
		if f.Note != "" {
			out = append(out, "  "+f.Note)
		}
		if f.TooFew != "" {
			out = append(out, "  TOO FEW LABELS: "+f.TooFew+" (do not load these thresholds)")
		}
	}
	return out
}

func thr(t float64) string {
	if math.IsInf(t, 1) {
		return "never"
	}
	return fmt.Sprintf("%.4g", t)
}

func outcomeLine(part string, o costs.Outcome) string {
	return fmt.Sprintf("%-4s n %d: TP %d FP %d TN %d FN %d abstain %d · coverage %.3f · errors %d · cost per 1,000 items %.1f",
		part, o.N, o.TP, o.FP, o.TN, o.FN, o.Abstain, o.Coverage, o.Errors, o.PerThousand)
}

// CostCutpointEntry is a noul's cost-optimal thresholds in the
// --cutpoints file (Kind "cost"), beside the accuracy cut-points. Status
// is "checked" (fitted on dev, checked on test), "not checked" (the run
// asked one split, so the fit is in-sample; the thresholds are given with
// a warning) or "too few labels" (Thresholds null, the fitted values only
// under Fitted, so an application that loads "thresholds" cannot load
// them by mistake).
type CostCutpointEntry struct {
	Kind     string `json:"kind"` // "cost"
	Question string `json:"question"`
	Status   string `json:"status"`
	// Thresholds is what an application loads: yes at p ≥ yes_at, no at
	// p < no_below, abstain between; null when Status is "too few
	// labels". A null yes_at (no_below) means never yes (always no below).
	Thresholds *CostThresholds `json:"thresholds"`
	Warning    string          `json:"warning,omitempty"`
	Fitted     CostThresholds  `json:"fitted"`
	Costs      costs.Costs     `json:"costs"`
	FitOn      string          `json:"fit_on"`
	CheckOn    string          `json:"check_on,omitempty"`
	Split      string          `json:"split"`
	Fit        costs.Outcome   `json:"fit"`
	Check      *costs.Outcome  `json:"check,omitempty"`
}

// CostThresholds are a noul's decision thresholds; nil is +Inf (never).
type CostThresholds struct {
	YesAt   *float64 `json:"yes_at"`
	NoBelow *float64 `json:"no_below"`
}

// CostCutpointFile returns the cost entries of the --cutpoints file, one
// per noul that declares costs.
func CostCutpointFile(rep *RunReport) []CostCutpointEntry {
	out := []CostCutpointEntry{}
	for _, f := range rep.Costs {
		th := CostThresholds{YesAt: costs.Threshold(f.Fit.Hi), NoBelow: costs.Threshold(f.Fit.Lo)}
		e := CostCutpointEntry{Kind: "cost", Question: f.Question, Status: "checked", Fitted: th, Costs: f.Costs,
			FitOn: f.FitOn, CheckOn: f.CheckOn, Split: f.Split, Fit: f.Fit, Check: f.Check}
		switch {
		case f.TooFew != "":
			e.Status = "too few labels"
			e.Warning = "do not load: " + f.TooFew
		case f.Check == nil:
			e.Status = "not checked"
			e.Warning = f.Note
			e.Thresholds = &th
		default:
			e.Thresholds = &th
		}
		out = append(out, e)
	}
	return out
}

// CutpointFileAll is the whole --cutpoints file: the accuracy cut-point
// entries (CutpointFile, Kind "accuracy") then the cost entries.
func CutpointFileAll(rep *RunReport) []any {
	out := []any{}
	for _, e := range CutpointFile(rep) {
		out = append(out, e)
	}
	for _, e := range CostCutpointFile(rep) {
		out = append(out, e)
	}
	for _, e := range ChoiceCostCutpointFile(rep) {
		out = append(out, e)
	}
	return out
}

// ChoiceCostCutpointEntry is a choice's cost-optimal confidence cut-point
// in the --cutpoints file (Kind "choice_cost"); Status as for
// CostCutpointEntry, Cutpoint null unless it may be loaded (and when it
// is +Inf: abstain on everything).
type ChoiceCostCutpointEntry struct {
	Kind     string               `json:"kind"` // "choice_cost"
	Question string               `json:"question"`
	Status   string               `json:"status"`
	Cutpoint *float64             `json:"cutpoint"`
	Warning  string               `json:"warning,omitempty"`
	Fitted   *float64             `json:"fitted_cutpoint"`
	Costs    costs.ChoiceCosts    `json:"costs"`
	FitOn    string               `json:"fit_on"`
	CheckOn  string               `json:"check_on,omitempty"`
	Split    string               `json:"split"`
	Fit      costs.ChoiceOutcome  `json:"fit"`
	Check    *costs.ChoiceOutcome `json:"check,omitempty"`
}

// ChoiceCostCutpointFile returns the choice cost entries of the
// --cutpoints file.
func ChoiceCostCutpointFile(rep *RunReport) []ChoiceCostCutpointEntry {
	out := []ChoiceCostCutpointEntry{}
	for _, f := range rep.ChoiceCosts {
		e := ChoiceCostCutpointEntry{Kind: "choice_cost", Question: f.Question, Status: "checked", Fitted: f.Cutpoint, Costs: f.Costs,
			FitOn: f.FitOn, CheckOn: f.CheckOn, Split: f.Split, Fit: f.Fit, Check: f.Check}
		switch {
		case f.TooFew != "":
			e.Status, e.Warning = "too few labels", "do not load: "+f.TooFew
		case f.Check == nil:
			e.Status, e.Warning, e.Cutpoint = "not checked", f.Note, f.Cutpoint
		default:
			e.Cutpoint = f.Cutpoint
		}
		out = append(out, e)
	}
	return out
}

// ChoiceCostFit is a choice's cost-optimal confidence cut-point (decide
// the top option when its probability is at least the cut-point, abstain
// below): fitted on dev, checked on test, like CostFit.
type ChoiceCostFit struct {
	Question string            `json:"question"`
	Costs    costs.ChoiceCosts `json:"costs"`
	// Cutpoint is the fitted cut-point; nil when it is +Inf (abstain on
	// everything).
	Cutpoint *float64             `json:"cutpoint"`
	FitOn    string               `json:"fit_on"`
	CheckOn  string               `json:"check_on,omitempty"`
	Split    string               `json:"split"`
	Fit      costs.ChoiceOutcome  `json:"fit"`
	Check    *costs.ChoiceOutcome `json:"check,omitempty"`
	Note     string               `json:"note,omitempty"`
	TooFew   string               `json:"too_few,omitempty"`
}

// choicePoint is o's choice point; ok is false unless o is a labelled
// first repeat.
func choicePoint(q *provider.Question, o *metrics.Rec) (costs.ChoicePoint, bool) {
	if o.Repeat != 0 || !o.Labelled() {
		return costs.ChoicePoint{}, false
	}
	return costs.ChoicePoint{Conf: o.Top, Decision: o.Decision(q, 0.5), Label: int(o.Label)}, true
}

// ChoiceCostsOf returns the dense costs of question e, ok false when it
// declares none.
func ChoiceCostsOf(set *questionset.Set, e provider.QuestionEntry) (costs.ChoiceCosts, bool) {
	st, ok := set.Settings[e.ID]
	if !ok || st.Costs == nil || !st.Costs.Choice || e.Question.Type != provider.Choice {
		return costs.ChoiceCosts{}, false
	}
	c := costs.ChoiceCosts{Matrix: st.Costs.MatrixFor(&e.Question), Abstain: st.Costs.Abstain}
	for _, o := range e.Question.Options {
		c.Options = append(c.Options, o.Label)
	}
	return c, true
}

// FitChoiceCosts fits the cost-optimal confidence cut-point of every
// choice of set that declares costs, as FitCosts does for nouls.
func FitChoiceCosts(set *questionset.Set, obs map[string][]metrics.Obs, sp questionset.SplitSpec, runSplit string) []ChoiceCostFit {
	var out []ChoiceCostFit
	for _, e := range set.Questions {
		if f, ok := FitChoiceCost(set, e, obs[e.ID], sp, runSplit); ok {
			out = append(out, f)
		}
	}
	return out
}

// FitChoiceCost is FitChoiceCosts for one question e and its observations;
// ok is false when e is not a choice that declares costs.
func FitChoiceCost(set *questionset.Set, e provider.QuestionEntry, obs []metrics.Obs, sp questionset.SplitSpec, runSplit string) (ChoiceCostFit, bool) {
	f, ok := NewChoiceCostFitter(set, e, sp, runSplit)
	if !ok {
		return ChoiceCostFit{}, false
	}
	feedObs(&e.Question, obs, f.Add)
	return f.Fit(), true
}

// ChoiceCostFitter is FitChoiceCost over a stream of Recs, as
// CostFitter is for nouls.
type ChoiceCostFitter struct {
	e   provider.QuestionEntry
	c   costs.ChoiceCosts
	pts splitPoints[costs.ChoicePoint]
}

// NewChoiceCostFitter starts question e's cost fit; ok is false when e is
// not a choice that declares costs.
func NewChoiceCostFitter(set *questionset.Set, e provider.QuestionEntry, sp questionset.SplitSpec, runSplit string) (*ChoiceCostFitter, bool) {
	c, ok := ChoiceCostsOf(set, e)
	if !ok {
		return nil, false
	}
	return &ChoiceCostFitter{e: e, c: c, pts: splitPoints[costs.ChoicePoint]{sp: sp, runSplit: runSplit}}, true
}

// Add reads one item's Rec (it is not kept).
func (f *ChoiceCostFitter) Add(o *metrics.Rec) {
	if p, ok := choicePoint(&f.e.Question, o); ok {
		f.pts.add(o.ItemID, p)
	}
}

// Fit is the fit of the Recs added.
func (f *ChoiceCostFitter) Fit() ChoiceCostFit {
	c, p := f.c, &f.pts
	out := ChoiceCostFit{Question: f.e.ID, Costs: c}
	out.FitOn, out.CheckOn, out.Split, out.Note = p.parts()
	out.Fit = costs.FitChoice(p.dev, c)
	out.Cutpoint = costs.Threshold(out.Fit.Cutpoint)
	if len(p.dev) < costs.MinFitLabels {
		out.TooFew = fmt.Sprintf("%d labelled answers to fit on; a cost-optimal cut-point needs at least %d", len(p.dev), costs.MinFitLabels)
	}
	if p.runSplit == "" {
		chk := costs.EvaluateChoice(p.test, out.Fit.Cutpoint, c)
		out.Check = &chk
	}
	return out
}

// ChoiceCostLines are the text lines of a report's choice cost fits.
func ChoiceCostLines(fs []ChoiceCostFit) []string {
	var out []string
	for _, f := range fs {
		ab := "never"
		if f.Costs.Abstain != nil {
			ab = fmt.Sprintf("%g", *f.Costs.Abstain)
		}
		cut := "abstain on everything"
		if f.Cutpoint != nil {
			cut = fmt.Sprintf("decide at top probability ≥ %.4g, abstain below", *f.Cutpoint)
		}
		out = append(out, fmt.Sprintf("%s cost-optimal cut-point (costs: %s; abstain %s): %s; fitted on %s (%s)",
			f.Question, MatrixText(f.Costs), ab, cut, f.FitOn, f.Split))
		out = append(out, "  "+choiceOutcomeLine(f.FitOn, f.Fit))
		if f.Check != nil {
			out = append(out, "  "+choiceOutcomeLine(f.CheckOn, *f.Check))
		}
		if f.Note != "" {
			out = append(out, "  "+f.Note)
		}
		if f.TooFew != "" {
			out = append(out, "  TOO FEW LABELS: "+f.TooFew+" (do not load this cut-point)")
		}
	}
	return out
}

// MatrixText words a choice's costs: the most common cost of a wrong
// decision, then the true→decided pairs that cost otherwise.
func MatrixText(c costs.ChoiceCosts) string {
	count := map[float64]int{}
	for t, row := range c.Matrix {
		for d, v := range row {
			if t != d {
				count[v]++
			}
		}
	}
	mode, best := 0.0, -1
	for v, n := range count {
		if n > best || n == best && v < mode {
			mode, best = v, n
		}
	}
	s := fmt.Sprintf("a wrong decision %g", mode)
	sep := " except "
	for t, row := range c.Matrix {
		for d, v := range row {
			if t != d && v != mode {
				s += fmt.Sprintf("%s%s→%s %g", sep, c.Options[t], c.Options[d], v)
				sep = ", "
			}
		}
	}
	return s
}

func choiceOutcomeLine(part string, o costs.ChoiceOutcome) string {
	return fmt.Sprintf("%-4s n %d: correct %d errors %d abstain %d · coverage %.3f · cost per 1,000 items %.1f",
		part, o.N, o.Correct, o.Errors, o.Abstain, o.Coverage, o.PerThousand)
}
