package metrics

import (
	"math"

	"github.com/jevlab/jevlab/provider"
)

// Compute returns every metric of question q over obs. Label metrics use,
// per item, the observation with the lowest Repeat; errors, latency,
// tokens and cost count every observation; repeats feed Noise.
func Compute(q *provider.Question, obs []Obs, opt Options) *QuestionReport {
	opt = opt.WithDefaults()
	r := &QuestionReport{Type: q.Type, Classes: classes(q)}
	r.Conventions = conventions(q, opt)
	first := firstRepeat(obs)
	for _, o := range first {
		r.N++
		if o.Answer != nil {
			r.Answered++
			if r.ID == "" {
				r.ID = o.Answer.ID
			}
		}
	}
	accounting(r, obs)
	d := Prepare(q, first, opt)
	r.Labelled = d.N
	r.NClipped = d.Clipped

	ms := d.Metrics()
	est := Bootstrap(d, ms, opt.Bootstrap, opt.Seed)
	get := func(m Metric) Estimate {
		for j, x := range ms {
			if x == m {
				return est[j]
			}
		}
		return Point(math.NaN())
	}
	r.Accuracy = get(MAccuracy)
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
		for i, a := range d.Answers {
			if int(d.Dec[i]) != argmax(a.Probs) {
				r.Choice.ArgmaxDisagree++
			}
		}
	case provider.Noul:
		nm := &NoulMetrics{AUROC: get(MAUROC), AUPRC: get(MAUPRC)}
		for _, y := range d.Label {
			if y == 1 {
				nm.Positives++
			} else {
				nm.Negatives++
			}
		}
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
	if opt.MinConfidence != nil {
		r.Selective.Routing = routing(q, first, *opt.MinConfidence, opt)
	}
	r.Noise = noise(q, obs, d, opt)
	return r
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

func confidenceName(t provider.QuestionType) string {
	switch t {
	case provider.Noul:
		return "max(p,1-p)"
	case provider.Choice:
		return "max prob"
	}
	return "provider confidence"
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
		Confidence:      confidenceName(q.Type),
		Percentiles:     "nearest-rank",
		HeadlineRepeat:  "first repeat per item",
		TargetAccuracy:  opt.TargetAccuracy,
		TargetPrecision: opt.TargetPrecision,
		MinLabels:       opt.MinLabels,
	}
}

// accounting fills errors, latency, tokens and cost from every observation.
func accounting(r *QuestionReport, obs []Obs) {
	lat := make([]float64, 0, len(obs))
	for _, o := range obs {
		if o.Answer == nil {
			if r.Errors == nil {
				r.Errors = map[string]int{}
			}
			k := o.ErrKind
			if k == "" {
				k = "unknown"
			}
			r.Errors[k]++
		}
		if o.LatencyMS > 0 {
			lat = append(lat, o.LatencyMS)
		}
		r.Tokens.Input += o.InputTokens
		r.Tokens.Output += o.OutputTokens
		r.CostUSD += o.CostUSD
	}
	r.Latency = latency(lat)
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
