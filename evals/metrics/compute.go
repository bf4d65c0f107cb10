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
	r.Accuracy = Point(d.Accuracy(nil))
	r.Brier = Point(d.BrierScore(nil))
	r.LogLoss = Point(d.LogLoss(nil))
	r.ECE = Point(d.ECEWidth(nil, nil))
	r.ECEMass = Point(math.NaN())
	return r
}

// firstRepeat keeps, per item, the observation with the lowest Repeat, in
// first-seen item order.
func firstRepeat(obs []Obs) []Obs {
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
