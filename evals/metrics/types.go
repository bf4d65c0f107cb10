// Package metrics computes per-question evaluation metrics for System One
// answers against dataset labels: accuracy, proper scores, calibration,
// discrimination, ordinal agreement, selective prediction, repeat noise,
// latency and cost, each headline figure with a seeded bootstrap interval.
//
// Conventions (stated in every report and tested):
//   - Log loss clips probabilities to [ε, 1−ε], ε = 1e-15 by default
//     (scikit-learn's historical default); NClipped counts the answers
//     whose probability of the true outcome was clipped.
//   - Multiclass Brier is summed over the K outcomes (range 0–2); a noul's
//     Brier is the binary (p−y)² (range 0–1).
//   - ECE uses equal-width bins, right-closed (lo, hi] with the first bin
//     also holding 0 (scikit-learn's calibration_curve); a value within 1e-9
//     of an edge counts as on it. Equal-mass bins never split tied
//     confidences across an edge, so they may be fewer than asked.
//   - Bootstrap intervals are percentile intervals (linear interpolation)
//     over B resamples of the items, B = 1000 and seed 0 by default; above
//     DefaultExactBootstrapMax items they are estimated by the bag of
//     little bootstraps (Plan, Conventions.Resampling). A
//     proportion with fewer than MinTailCount successes or failures gets
//     the Wilson interval instead, an AUROC with a class under MinTailCount
//     (or at 0 or 1) Newcombe's score interval, and any other figure whose
//     resamples all agree no interval; Estimate.Method says which.
//   - A decision's confidence is the probability the answer gives the
//     decided outcome: a noul's p when p >= threshold, else 1−p (max(p,1−p)
//     at 0.5); a choice's top probability; a score's top level probability.
package metrics

import (
	"encoding/json"
	"math"

	"github.com/jevlab/jevlab/provider"
)

// Obs is one observation of one question on one dataset item: the checked
// answer (nil when the call failed), the label when the item has one, and
// the call's accounting.
type Obs struct {
	ItemID string
	// Answer is nil when the call failed; ErrKind then says why.
	Answer  *provider.Answer
	ErrKind string
	// Label is the gold outcome index: choice option, score level, noul
	// 1 = true / 0 = false. Used only when HasLabel.
	Label    int
	HasLabel bool
	// LabelBox is a box question's labelled box (with HasLabel); box
	// questions are measured by BoxesOf, not by Label.
	LabelBox *provider.Edges
	// LatencyMS is the provider round trip; 0 (a cache hit) is left out of
	// latency percentiles.
	LatencyMS    float64
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	// Repeat numbers repeated asks of the same item (0 first).
	Repeat int
}

// Options tune Compute. The zero value gives the documented defaults.
type Options struct {
	// Threshold is the noul decision threshold: true when p >= Threshold.
	// 0 means 0.5.
	Threshold float64
	// Bins is the number of calibration bins (equal-width and equal-mass).
	// 0 means 10.
	Bins int
	// MinBinCount is the fewest items a bin needs to count towards MCE.
	// 0 means 10.
	MinBinCount int
	// Seed seeds every random draw (bootstrap, splits, noise floor). 0 is a
	// valid seed; reports print it.
	Seed uint64
	// Bootstrap is the number of bootstrap resamples B. 0 means 1000; a
	// negative value switches intervals off.
	Bootstrap int
	// ExactBootstrapMax is the largest number of labelled items resampled
	// by the ordinary bootstrap; larger samples use the bag of little
	// bootstraps (see Plan). 0 means DefaultExactBootstrapMax; negative
	// means always the ordinary bootstrap.
	ExactBootstrapMax int
	// EpsilonLogLoss clips probabilities in log loss. 0 means 1e-15.
	EpsilonLogLoss float64
	// TargetAccuracy is the selective accuracy the confidence cut-point must
	// reach on held-out items. 0 means 0.95.
	TargetAccuracy float64
	// TargetPrecision is the precision a noul threshold must reach. 0 means 0.9.
	TargetPrecision float64
	// MinLabels is the fewest labelled answers needed before a cut-point is
	// fitted. 0 means 100.
	MinLabels int
	// NoiseFloorDraws is the number of perfectly calibrated resamples drawn
	// for the ECE noise floor. 0 means 1000; negative switches it off.
	NoiseFloorDraws int
	// UsagePerRequest says the provider reports token usage and cost per
	// request (every question of an item at once), so they cannot be
	// attributed to one question: the report's Tokens and CostUSD are then
	// unknown (JSON null) and UsagePerRequest is set on it.
	UsagePerRequest bool
	// Model names the model in the cut-point artifact.
	Model string
	// MinConfidence, when set, is the question's caller-side minimum
	// confidence: Selective.Routing then reports the share of answers
	// routed to "uncertain" (confidence strictly under it) and the
	// accuracy of the rest. nil computes no routing.
	MinConfidence *float64
}

// Defaults used when an Options field is zero.
const (
	DefaultThreshold       = 0.5
	DefaultBins            = 10
	DefaultMinBinCount     = 10
	DefaultBootstrap       = 1000
	DefaultEpsilon         = 1e-15
	DefaultTargetAccuracy  = 0.95
	DefaultTargetPrecision = 0.9
	DefaultMinLabels       = 100
	DefaultNoiseFloorDraws = 1000
)

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Bins <= 0 {
		o.Bins = DefaultBins
	}
	if o.MinBinCount <= 0 {
		o.MinBinCount = DefaultMinBinCount
	}
	if o.Bootstrap == 0 {
		o.Bootstrap = DefaultBootstrap
	}
	if o.EpsilonLogLoss <= 0 {
		o.EpsilonLogLoss = DefaultEpsilon
	}
	if o.TargetAccuracy <= 0 {
		o.TargetAccuracy = DefaultTargetAccuracy
	}
	if o.TargetPrecision <= 0 {
		o.TargetPrecision = DefaultTargetPrecision
	}
	if o.MinLabels <= 0 {
		o.MinLabels = DefaultMinLabels
	}
	if o.NoiseFloorDraws == 0 {
		o.NoiseFloorDraws = DefaultNoiseFloorDraws
	}
	return o
}

// Estimate is a point value with its 95% interval. Value is NaN when the
// metric is undefined (e.g. AUROC with one class); Lo and Hi are NaN when
// no interval was computed. Method says which interval it is (one of the
// Interval* constants; "" when none was asked for). JSON writes NaN as null
// and Method as "interval".
type Estimate struct {
	Value float64
	Lo    float64
	Hi    float64
	// Method names the interval: IntervalBootstrap, IntervalWilson,
	// IntervalNewcombe, or IntervalCollapsed (the bootstrap gave one value
	// and no interval is reported).
	Method string
}

// Point returns an Estimate without an interval.
func Point(v float64) Estimate { return Estimate{Value: v, Lo: math.NaN(), Hi: math.NaN()} }

// Defined reports whether the value is a number.
func (e Estimate) Defined() bool { return !math.IsNaN(e.Value) }

// HasInterval reports whether a bootstrap interval was computed.
func (e Estimate) HasInterval() bool { return !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi) }

type estimateJSON struct {
	Value    *float64 `json:"value"`
	Lo       *float64 `json:"lo,omitempty"`
	Hi       *float64 `json:"hi,omitempty"`
	Interval string   `json:"interval,omitempty"`
}

func fptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func fval(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes {"value","lo","hi","interval"} with null for an
// undefined value and the interval left out when none was computed.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(estimateJSON{fptr(e.Value), fptr(e.Lo), fptr(e.Hi), e.Method})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var v estimateJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Estimate{Value: fval(v.Value), Lo: fval(v.Lo), Hi: fval(v.Hi), Method: v.Interval}
	return nil
}

// Conventions records the choices behind the numbers, so a report states them.
type Conventions struct {
	Threshold      float64 `json:"threshold"`
	Bins           int     `json:"bins"`
	BinRule        string  `json:"bin_rule"`
	MinBinCount    int     `json:"min_bin_count"`
	EpsilonLogLoss float64 `json:"epsilon_log_loss"`
	Brier          string  `json:"brier"`
	Bootstrap      int     `json:"bootstrap"`
	Interval       string  `json:"interval"`
	// Resampling describes the bag of little bootstraps when the sample
	// was too large for the ordinary bootstrap (absent otherwise).
	Resampling      *Resampling `json:"resampling,omitempty"`
	Seed            uint64      `json:"seed"`
	Confidence      string      `json:"confidence"`
	Percentiles     string      `json:"percentiles"`
	HeadlineRepeat  string      `json:"headline_repeat"`
	TargetAccuracy  float64     `json:"target_accuracy"`
	TargetPrecision float64     `json:"target_precision"`
	MinLabels       int         `json:"min_labels"`
	// Intervals states which interval each figure gets (see Estimate.Method).
	Intervals string `json:"intervals"`
	// DecisionConfidence states the confidence of a decision (mean
	// confidence, the overconfidence gap and, for nouls, selective
	// prediction).
	DecisionConfidence string `json:"decision_confidence"`
	// NoiseFloorDraws is the number of draws behind the ECE noise floor.
	NoiseFloorDraws int `json:"noise_floor_draws"`
}

// QuestionReport holds every metric of one question over one run.
type QuestionReport struct {
	ID      string                `json:"question"`
	Type    provider.QuestionType `json:"type"`
	Classes []string              `json:"classes"` // option labels, level texts, or false/true

	N        int            `json:"n"`        // observations (first repeat per item)
	Answered int            `json:"answered"` // observations with an answer
	Labelled int            `json:"labelled"` // answered and labelled: the n of every label metric
	Errors   map[string]int `json:"errors,omitempty"`

	Accuracy Estimate `json:"accuracy"`
	// Correct counts the labelled answers whose decision was right
	// (Accuracy = Correct/Labelled).
	Correct int `json:"correct"`
	// MeanConfidence is the mean confidence of the decisions (the
	// probability each answer gives its decided outcome, see
	// Conventions.DecisionConfidence) over the labelled answers, and
	// Overconfidence is MeanConfidence − Accuracy (positive: the model
	// claims more than it delivers), both with intervals from the same
	// resamples.
	MeanConfidence Estimate `json:"mean_confidence"`
	Overconfidence Estimate `json:"overconfidence"`
	Brier          Estimate `json:"brier"`
	LogLoss        Estimate `json:"log_loss"`
	NClipped       int      `json:"log_loss_clipped"`
	ECE            Estimate `json:"ece"`      // equal-width bins
	ECEMass        Estimate `json:"ece_mass"` // equal-mass bins
	MCE            Estimate `json:"mce"`      // equal-width, bins with >= MinBinCount items
	MCEMass        Estimate `json:"mce_mass"` // equal-mass, same rule
	// EffectiveBins and EffectiveBinsMass count the non-empty bins.
	EffectiveBins     int `json:"effective_bins"`
	EffectiveBinsMass int `json:"effective_bins_mass"`

	Reliability     []Bin `json:"reliability"`      // equal-width, non-empty bins
	ReliabilityMass []Bin `json:"reliability_mass"` // equal-mass bins

	// Box is a box question's report (mean IoU, IoU≥0.5 accuracy); the
	// class metrics above do not apply to a box.
	Box *BoxReport `json:"box,omitempty"`

	Choice *ChoiceMetrics `json:"choice,omitempty"`
	Noul   *NoulMetrics   `json:"noul,omitempty"`
	Score  *ScoreMetrics  `json:"score,omitempty"`

	Selective Selective `json:"selective"`
	Latency   Latency   `json:"latency"`
	// Tokens and CostUSD are summed over the observations; with
	// UsagePerRequest they are unknown per question and JSON writes null.
	Tokens          Tokens  `json:"tokens"`
	CostUSD         float64 `json:"cost_usd"`
	UsagePerRequest bool    `json:"usage_per_request"`
	Noise           Noise   `json:"noise"`

	Conventions Conventions `json:"conventions"`
}

// Bin is one row of a reliability table: the items whose confidence (a
// noul's p) falls in (Lo, Hi], their mean confidence and observed accuracy
// (a noul's rate of true).
type Bin struct {
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	N          int     `json:"n"`
	Confidence float64 `json:"confidence"`
	Observed   float64 `json:"observed"`
}

// ChoiceMetrics are the metrics only a choice question has.
type ChoiceMetrics struct {
	MacroF1 Estimate `json:"macro_f1"`
	// Confusion[label][decision] counts labelled answers.
	Confusion [][]int      `json:"confusion"`
	PerClass  []ClassStats `json:"per_class"`
	// ArgmaxDisagree counts answers whose choice field is not the
	// highest-probability option.
	ArgmaxDisagree int `json:"argmax_disagree"`
}

// ClassStats are one class's precision, recall and F1 (0 when undefined,
// as scikit-learn's zero_division=0).
type ClassStats struct {
	Label     string  `json:"label"`
	Support   int     `json:"support"`
	Predicted int     `json:"predicted"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// NoulMetrics are the metrics only a noul question has.
type NoulMetrics struct {
	Positives int `json:"positives"`
	Negatives int `json:"negatives"`
	// Murphy decomposition over the equal-width bins: BS ≈ REL − RES + UNC.
	Reliability float64  `json:"brier_reliability"`
	Resolution  float64  `json:"brier_resolution"`
	Uncertainty float64  `json:"brier_uncertainty"`
	Skill       Estimate `json:"brier_skill"` // 1 − BS/UNC (point only)
	AUROC       Estimate `json:"auroc"`
	AUPRC       Estimate `json:"auprc"`
	// AtPrecision is the lowest threshold whose precision reaches the target.
	AtPrecision PrecisionPoint `json:"at_precision"`
}

// PrecisionPoint is the threshold reaching a target precision (in sample).
type PrecisionPoint struct {
	Target    float64 `json:"target"`
	Found     bool    `json:"found"`
	Threshold float64 `json:"threshold"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
}

// ScoreMetrics are the metrics only a score question has. "Argmax" decides
// the level with the highest probability (first on ties); "Nearest" decides
// the level nearest the expected score (halves round up).
type ScoreMetrics struct {
	ExactArgmax      Estimate `json:"exact_argmax"`
	WithinOneArgmax  Estimate `json:"within_one_argmax"`
	ExactNearest     Estimate `json:"exact_nearest"`
	WithinOneNearest Estimate `json:"within_one_nearest"`
	// Disagreement is the share of answers where the two rules differ.
	Disagreement float64  `json:"disagreement"`
	MAE          Estimate `json:"mae"`
	RMSE         Estimate `json:"rmse"`
	QWK          Estimate `json:"qwk"`      // on argmax levels, all L levels as categories
	Spearman     Estimate `json:"spearman"` // score vs label, average ranks
	RPS          Estimate `json:"rps"`
	// Confusion[label][argmax level].
	Confusion [][]int `json:"confusion"`
}

// Selective describes accuracy against coverage as a confidence cut-point
// moves. ConfidenceName says which confidence: "max(p,1-p)" for a noul,
// "max prob" for a choice, "provider confidence" for a score.
type Selective struct {
	ConfidenceName string       `json:"confidence"`
	Curve          []CurvePoint `json:"curve"`
	AURC           Estimate     `json:"aurc"`
	EAURC          float64      `json:"e_aurc"`
	Cutpoint       *Cutpoint    `json:"cutpoint,omitempty"`
	// Refused says why no cut-point was fitted.
	Refused string `json:"refused,omitempty"`
	// Routing is what Options.MinConfidence does to the answers (nil when
	// no minimum confidence was given).
	Routing *Routing `json:"routing,omitempty"`
}

// CurvePoint is accuracy over the answers whose confidence >= Threshold.
type CurvePoint struct {
	Threshold float64 `json:"threshold"`
	N         int     `json:"n"`
	Coverage  float64 `json:"coverage"`
	Accuracy  float64 `json:"accuracy"`
}

// Cutpoint is the artifact an application loads: answer only when the
// confidence is at least Cutpoint. It was chosen on FitN items and measured
// on HoldoutN other items (seeded split).
type Cutpoint struct {
	Question        string  `json:"question"`
	Model           string  `json:"model"`
	Confidence      string  `json:"confidence"`
	Cutpoint        float64 `json:"cutpoint"`
	Target          float64 `json:"target"`
	FitN            int     `json:"fit_n"`
	FitAccuracy     float64 `json:"fit_accuracy"`
	FitCoverage     float64 `json:"fit_coverage"`
	HoldoutN        int     `json:"holdout_n"`
	HoldoutAccuracy float64 `json:"holdout_accuracy"`
	HoldoutCoverage float64 `json:"holdout_coverage"`
	// HoldoutAccuracyLo is the exact (Clopper–Pearson) lower bound of the
	// held-out selective accuracy: the lower limit of the two-sided 95%
	// interval, which is a one-sided bound at HoldoutAccuracyLoConfidence
	// (0.975).
	HoldoutAccuracyLo           float64 `json:"holdout_accuracy_lo"`
	HoldoutAccuracyLoConfidence float64 `json:"holdout_accuracy_lo_confidence"`
	// Reached is true when the held-out lower bound reaches the target:
	// with 97.5% confidence the cut-point delivers the target accuracy on
	// new items. An unreached cut-point must not be loaded.
	Reached bool   `json:"reached"`
	Seed    uint64 `json:"seed"`
}

// Latency summarises provider round trips (nearest-rank percentiles over
// observations with a positive latency). With N = 0 (offline, every answer
// cached) there is no latency: JSON writes null, never 0.
type Latency struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	Mean float64 `json:"mean_ms"`
	Max  float64 `json:"max_ms"`
}

// Tokens are summed over the observations as the caller attributed them.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// Noise is what repeats and resampling say about a question's own noise.
type Noise struct {
	Repeats   int     `json:"repeats"` // most repeats of any item
	Items     int     `json:"items"`   // items with at least two answered repeats
	Flipped   int     `json:"flipped"` // of those, items whose decision changed
	FlipRate  float64 `json:"flip_rate"`
	MeanDelta float64 `json:"mean_delta"` // mean total-variation distance between repeats (|Δp| for a noul)
	// ECEFloorMean and ECEFloorP95 are the ECE of perfectly calibrated
	// outcomes drawn at the same n and confidences.
	ECEFloorMean float64 `json:"ece_floor_mean"`
	ECEFloorP95  float64 `json:"ece_floor_p95"`
	FloorDraws   int     `json:"ece_floor_draws"`
	// ECEWithinFloor is true when the equal-width ECE is at most the
	// floor's p95: the measured miscalibration is indistinguishable from
	// the sampling noise of a perfectly calibrated model at this n.
	ECEWithinFloor bool `json:"ece_within_floor"`
}

type latencyJSON struct {
	N    int      `json:"n"`
	P50  *float64 `json:"p50_ms"`
	P95  *float64 `json:"p95_ms"`
	P99  *float64 `json:"p99_ms"`
	Mean *float64 `json:"mean_ms"`
	Max  *float64 `json:"max_ms"`
}

// MarshalJSON writes the percentiles as null when there were no round
// trips (N = 0).
func (l Latency) MarshalJSON() ([]byte, error) {
	v := latencyJSON{N: l.N}
	if l.N > 0 {
		v.P50, v.P95, v.P99, v.Mean, v.Max = &l.P50, &l.P95, &l.P99, &l.Mean, &l.Max
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads what MarshalJSON writes (null as 0).
func (l *Latency) UnmarshalJSON(b []byte) error {
	var v latencyJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	g := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	*l = Latency{N: v.N, P50: g(v.P50), P95: g(v.P95), P99: g(v.P99), Mean: g(v.Mean), Max: g(v.Max)}
	return nil
}

// MarshalJSON writes the report with tokens and cost null when usage is
// reported per request only (UsagePerRequest).
func (r QuestionReport) MarshalJSON() ([]byte, error) {
	type plain QuestionReport
	v := struct {
		plain
		Tokens  *Tokens  `json:"tokens"`
		CostUSD *float64 `json:"cost_usd"`
	}{plain: plain(r)}
	if !r.UsagePerRequest {
		v.Tokens, v.CostUSD = &r.Tokens, &r.CostUSD
	}
	return json.Marshal(v)
}
