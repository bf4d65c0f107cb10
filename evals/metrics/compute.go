package metrics

import (
	"fmt"
	"math"

	"github.com/jevlab/jevlab/provider"
)

// Compute returns every metric of question q over obs. Label metrics use,
// per item, the observation with the lowest Repeat; errors, latency,
// tokens and cost count every observation; repeats feed Noise. It is a
// Recorder fed with obs, item by item in first-seen order.
func Compute(q *provider.Question, obs []Obs, opt Options) *QuestionReport {
	rc := NewRecorder(q, opt)
	if !hasRepeats(obs) {
		// Without repeats every observation is a distinct item.
		for i := range obs {
			rc.addDistinct(&obs[i])
		}
		return rc.Report()
	}
	pos := make(map[string]int, len(obs))
	var groups [][]int
	for i := range obs {
		j, ok := pos[obs[i].ItemID]
		if !ok {
			j = len(groups)
			pos[obs[i].ItemID] = j
			groups = append(groups, nil)
		}
		groups[j] = append(groups[j], i)
	}
	for _, g := range groups {
		for k, i := range g {
			rc.add(&obs[i], k > 0)
		}
	}
	return rc.Report()
}

// measure fills r's label metrics, calibration, per-type figures and
// selective prediction from the prepared items d.
func measure(r *QuestionReport, q *provider.Question, d *Data, opt Options) {
	r.Labelled = d.N
	r.NClipped = d.Clipped

	ms := append(d.Metrics(), MMeanConfidence, MOverconfidence)
	plan := PlanFor(d.N, opt.Bootstrap, opt.Seed, opt.ExactBootstrapMax)
	if plan.Little() {
		r.Conventions.Resampling = plan.Resampling()
	}
	est := Bootstrap(d, ms, plan)
	pos, neg := 0, 0
	if q.Type == provider.Noul {
		for _, y := range d.Label {
			if y == 1 {
				pos++
			} else {
				neg++
			}
		}
	}
	want := opt.Bootstrap > 0 && d.N > 0
	get := func(m Metric) Estimate {
		for j, x := range ms {
			if x != m {
				continue
			}
			e := est[j]
			switch m {
			case MAccuracy, MWithinOne, MExactNearest, MWithinOneNearest:
				return proportionInterval(e, count(e.Value, d.N), d.N, want)
			case MAUROC:
				return aurocInterval(e, pos, neg, want)
			}
			return bootInterval(e)
		}
		return Point(math.NaN())
	}
	r.Accuracy = get(MAccuracy)
	if r.Accuracy.Defined() {
		r.Correct = count(r.Accuracy.Value, d.N)
	}
	r.MeanConfidence = get(MMeanConfidence)
	r.Overconfidence = get(MOverconfidence)
	if r.Accuracy.Method == IntervalWilson && r.Overconfidence.Defined() {
		r.Overconfidence.Lo, r.Overconfidence.Hi = math.NaN(), math.NaN()
		r.Overconfidence.Method = IntervalUnreliable
	}
	r.Brier = get(MBrier)
	r.LogLoss = get(MLogLoss)
	r.ECE = get(MECE)
	r.ECEMass = get(MECEMass)

	r.Reliability, r.MCE, r.EffectiveBins = d.reliabilityWidth(opt.MinBinCount)
	r.ReliabilityMass, r.MCEMass, r.EffectiveBinsMass = d.reliabilityMass(opt.MinBinCount)

	switch q.Type {
	case provider.Choice:
		r.Choice = &ChoiceMetrics{
			MacroF1:   get(MMacroF1),
			Confusion: d.confusion(d.Dec),
		}
		r.Choice.PerClass = perClass(r.Choice.Confusion, r.Classes)
		r.Choice.ArgmaxDisagree = d.argmaxDisagree
	case provider.Noul:
		nm := &NoulMetrics{AUROC: get(MAUROC), AUPRC: get(MAUPRC), Positives: pos, Negatives: neg}
		nm.Reliability, nm.Resolution, nm.Uncertainty = d.murphy()
		nm.Skill = Point(math.NaN())
		if nm.Uncertainty > 0 {
			nm.Skill = Point(1 - r.Brier.Value/nm.Uncertainty)
		}
		nm.AtPrecision = d.atPrecision(opt.TargetPrecision)
		r.Noul = nm
	case provider.Score:
		sm := &ScoreMetrics{
			ExactArgmax:      r.Accuracy,
			WithinOneArgmax:  get(MWithinOne),
			ExactNearest:     get(MExactNearest),
			WithinOneNearest: get(MWithinOneNearest),
			MAE:              get(MMAE),
			RMSE:             get(MRMSE),
			QWK:              get(MQWK),
			Spearman:         get(MSpearman),
			RPS:              get(MRPS),
			Confusion:        d.confusion(d.Dec),
		}
		if d.N > 0 {
			dis := 0
			for i := range d.Dec {
				if d.Dec[i] != d.Nearest[i] {
					dis++
				}
			}
			sm.Disagreement = float64(dis) / float64(d.N)
		}
		r.Score = sm
	}

	r.Selective = d.selective(q, opt)
	r.Selective.AURC = get(MAURC)
}

// firstRepeat keeps, per item, the observation with the lowest Repeat, in
// first-seen item order.
func firstRepeat(obs []Obs) []Obs {
	if !hasRepeats(obs) {
		return obs
	}
	pos := make(map[string]int, len(obs))
	out := make([]Obs, 0, len(obs))
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

func classes(q *provider.Question) []string {
	switch q.Type {
	case provider.Noul:
		return []string{"false", "true"}
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

// confidenceName names the selective-prediction confidence of a question
// type under a noul threshold.
func confidenceName(t provider.QuestionType, threshold float64) string {
	switch t {
	case provider.Noul:
		if threshold == DefaultThreshold {
			return "max(p,1-p)"
		}
		return fmt.Sprintf("p of the decision at threshold %g (p if p >= %g, else 1-p)", threshold, threshold)
	case provider.Choice:
		return "max prob"
	}
	return "provider confidence"
}

// IntervalRule is the statement of which interval each figure gets.
const IntervalRule = "bootstrap percentile 95% by default; a proportion (accuracy, exact, within one, routing shares) with fewer than 5 successes or failures gets the Wilson score 95% interval instead; an AUROC with fewer than 5 positives or negatives, or at 0 or 1, Newcombe's score 95% interval (2006, method 5); any other figure whose resamples all agree gets no interval (collapsed) rather than [v, v]"

// decisionConfidenceRule states the confidence of a decision.
func decisionConfidenceRule(t provider.QuestionType, threshold float64) string {
	switch t {
	case provider.Noul:
		return fmt.Sprintf("probability of the decided outcome: p if p >= %g (decided true), else 1-p", threshold)
	case provider.Choice:
		return "probability of the chosen option"
	}
	return "probability of the decided (most probable) level"
}

func conventions(q *provider.Question, opt Options) Conventions {
	brier := "sum over the K outcomes, range 0-2"
	if q.Type == provider.Noul {
		brier = "binary (p-y)^2, range 0-1"
	}
	b := opt.Bootstrap
	if b < 0 {
		b = 0
	}
	return Conventions{
		Threshold:       opt.Threshold,
		Bins:            opt.Bins,
		BinRule:         "equal-width right-closed (lo,hi] (first bin holds 0), values within 1e-9 of an edge on it; equal-mass = quantile edges (linear), right-closed, ties never split",
		MinBinCount:     opt.MinBinCount,
		EpsilonLogLoss:  opt.EpsilonLogLoss,
		Brier:           brier,
		Bootstrap:       b,
		Interval:        "percentile 95% (linear interpolation), items resampled with replacement",
		Seed:            opt.Seed,
		Confidence:      confidenceName(q.Type, opt.Threshold),
		Percentiles:     "nearest-rank",
		HeadlineRepeat:  "first repeat per item",
		TargetAccuracy:  opt.TargetAccuracy,
		TargetPrecision: opt.TargetPrecision,
		MinLabels:       opt.MinLabels,

		Intervals:          IntervalRule,
		DecisionConfidence: decisionConfidenceRule(q.Type, opt.Threshold),
		NoiseFloorDraws:    max(0, opt.NoiseFloorDraws),
	}
}

// hasRepeats reports whether any observation is a repeat (Repeat > 0).
// Without repeats every observation is taken to be a distinct item.
func hasRepeats(obs []Obs) bool {
	for i := range obs {
		if obs[i].Repeat != 0 {
			return true
		}
	}
	return false
}
