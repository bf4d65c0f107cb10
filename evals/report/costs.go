package report

import (
	"fmt"
	"math"

	"github.com/jevlab/jevlab/evals/costs"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
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
		st, ok := set.Settings[e.ID]
		if !ok || st.Costs == nil {
			continue
		}
		c := costs.Costs{FalsePositive: st.Costs.FalsePositive, FalseNegative: st.Costs.FalseNegative, Abstain: st.Costs.Abstain}
		var dev, test []costs.Point
		for _, o := range obs[e.ID] {
			if o.Repeat != 0 || !o.HasLabel || o.Answer == nil || math.IsNaN(o.Answer.P) || o.Label < 0 {
				continue
			}
			p := costs.Point{P: o.Answer.P, Label: o.Label == 1}
			if runSplit == "" && sp.Of(o.ItemID) == questionset.SplitTest {
				test = append(test, p)
			} else {
				dev = append(dev, p)
			}
		}
		f := CostFit{Question: e.ID, Costs: c, FitOn: questionset.SplitDev, CheckOn: questionset.SplitTest, Split: sp.String()}
		if runSplit != "" {
			f.FitOn, f.CheckOn, f.Split = runSplit, "", "the run asked "+runSplit+" only"
			f.Note = "fitted in-sample on the run's " + runSplit + " items; evaluate every item to fit on dev and check on test"
		}
		f.Fit = costs.Fit(dev, c)
		f.TooFew = costs.TooFew(dev)
		if runSplit == "" {
			chk := costs.Evaluate(test, f.Fit.Lo, f.Fit.Hi, c)
			f.Check = &chk
		}
		out = append(out, f)
	}
	return out
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
	return out
}
