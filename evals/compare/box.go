package compare

import (
	"fmt"
	"math"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// Box question deltas (Jev 1.14), B − A over the items labelled and
// answered with a box in both runs.
const (
	MetricMeanIoU    = "mean_iou"
	MetricIoU50Acc   = "iou50_accuracy"
	streamBoxCompare = 0xb0c5c0
)

// compareBox compares box question id of two runs paired by item (first
// repeat): Δ mean IoU and Δ IoU≥0.5 accuracy with paired bootstrap 95%
// intervals and p-values (items resampled jointly), the exact McNemar
// test on hits (IoU ≥ 0.5), and drift as the share of boxes whose edges
// changed. A's label is used where both runs carry one (LabelMismatch
// counts where they differ). The verdict is set by boxVerdicts.
func compareBox(id string, qa, qb *provider.Question, obsA, obsB []metrics.Obs, opt Options, qi uint64) QuestionComparison {
	qc := QuestionComparison{ID: id, Type: provider.Box, McNemar: McNemar{P: 1, PHolm: 1}, BrierP: 1, BrierPHolm: 1}
	if qb.Type != provider.Box {
		qc.Reason, qc.Verdict = fmt.Sprintf("not comparable: box in run A, %s in run B", qb.Type), NotComparable
		return qc
	}
	fa, fb := firstRepeat(obsA), firstRepeat(obsB)
	posB := make(map[string]int, len(fb))
	for i := range fb {
		posB[fb[i].ItemID] = i
	}
	var iouA, iouB []float64
	seen := 0
	for i := range fa {
		oa := &fa[i]
		j, ok := posB[oa.ItemID]
		if !ok {
			qc.OnlyA++
			continue
		}
		seen++
		ob := &fb[j]
		ea, okA := oa.Answer.BoxOf()
		eb, okB := ob.Answer.BoxOf()
		if !okA || !okB {
			continue
		}
		qc.Paired++
		if ea != eb {
			qc.Drift.ChangedValues++
			qc.Drift.ChangedDecisions++
		}
		label := oa.LabelBox
		if label == nil {
			label = ob.LabelBox
		} else if ob.LabelBox != nil && *ob.LabelBox != *label {
			qc.LabelMismatch++
		}
		if label == nil {
			continue
		}
		iouA = append(iouA, provider.IoU(ea, *label))
		iouB = append(iouB, provider.IoU(eb, *label))
	}
	qc.OnlyB = len(fb) - seen
	qc.Drift.N = qc.Paired
	if qc.Paired > 0 {
		qc.Drift.ChangedShare = float64(qc.Drift.ChangedDecisions) / float64(qc.Paired)
	}
	n := len(iouA)
	qc.PairedLabelled = n
	if n == 0 {
		return qc
	}
	hit := func(v float64) float64 {
		if v >= metrics.BoxHitIoU {
			return 1
		}
		return 0
	}
	stats := func(w []float64, iou []float64) (mean, acc float64) {
		var s, h, tot float64
		for i, v := range iou {
			c := 1.0
			if w != nil {
				c = w[i]
			}
			s += c * v
			h += c * hit(v)
			tot += c
		}
		return s / tot, h / tot
	}
	ma, aa := stats(nil, iouA)
	mb, ab := stats(nil, iouB)
	deltas := []Delta{
		{Metric: MetricMeanIoU, A: metrics.Point(ma), B: metrics.Point(mb), Delta: metrics.Point(mb - ma), P: 1},
		{Metric: MetricIoU50Acc, A: metrics.Point(aa), B: metrics.Point(ab), Delta: metrics.Point(ab - aa), P: 1},
	}
	for i := range iouA {
		switch ha, hb := hit(iouA[i]) == 1, hit(iouB[i]) == 1; {
		case ha && hb:
			qc.McNemar.BothRight++
		case ha:
			qc.McNemar.ARightBWrong++
		case hb:
			qc.McNemar.AWrongBRight++
		default:
			qc.McNemar.BothWrong++
		}
	}
	qc.McNemar.P = ExactMcNemar(qc.McNemar.ARightBWrong, qc.McNemar.AWrongBRight)
	qc.McNemar.PHolm = qc.McNemar.P
	if b := opt.Bootstrap; b > 0 {
		rs := metrics.NewResampler(opt.Seed^streamBoxCompare+qi*0x9e3779b9, n)
		dm, da := make([]float64, b), make([]float64, b)
		for k := range b {
			w := rs.Next()
			m1, a1 := stats(w, iouA)
			m2, a2 := stats(w, iouB)
			dm[k], da[k] = m2-m1, a2-a1
		}
		for j, draws := range [][]float64{dm, da} {
			d := &deltas[j]
			d.P, d.PBelow = bootP(draws)
			d.Delta.Lo, d.Delta.Hi = metrics.Interval(draws)
			d.Delta.Method = metrics.IntervalBootstrap
			if d.Delta.HasInterval() && (d.Delta.Lo > 0 || d.Delta.Hi < 0) {
				d.Significant = true
			}
		}
	}
	for j := range deltas {
		deltas[j].Better = deltas[j].Delta.Value > 0
	}
	qc.Deltas = deltas
	return qc
}

// boxVerdicts decides the box questions of qs (after holm, which
// corrected their McNemar p-values with every other question's): the mean
// IoU's paired-bootstrap p-values are Holm-corrected across the box
// questions, and a question regressed (improved) when its hits fell (rose)
// with McNemar significant, or its mean IoU fell (rose) significantly.
func boxVerdicts(qs []QuestionComparison, opt Options) {
	var idx []int
	var ps []float64
	for i := range qs {
		if qs[i].Type == provider.Box && qs[i].Reason == "" && qs[i].PairedLabelled > 0 {
			idx = append(idx, i)
			ps = append(ps, qs[i].Deltas[0].P)
		}
	}
	holmIoU := make([]float64, len(qs))
	for k, p := range Holm(ps) {
		holmIoU[idx[k]] = p
	}
	for i := range qs {
		qc := &qs[i]
		if qc.Type != provider.Box || qc.Reason != "" {
			continue
		}
		switch {
		case qc.Paired == 0:
			qc.Verdict, qc.Reason = NotComparable, "no item answered with a box in both runs"
			qc.Why = qc.Reason
			continue
		case qc.PairedLabelled == 0:
			qc.Verdict = NoChange
			qc.Why = fmt.Sprintf("no box labels: drift only (%d of %d boxes changed)", qc.Drift.ChangedDecisions, qc.Paired)
			continue
		}
		m, d := qc.McNemar, qc.Deltas[0]
		iouSig := holmIoU[i] < opt.Alpha && d.Delta.Defined() && d.Delta.Value != 0
		accWorse := m.PHolm < opt.Alpha && m.ARightBWrong > m.AWrongBRight
		accBetter := m.PHolm < opt.Alpha && m.AWrongBRight > m.ARightBWrong
		iouText := fmt.Sprintf("mean IoU %+.4f, paired bootstrap p=%s (Holm across box questions)", d.Delta.Value, FormatPHolm(math.Min(1, holmIoU[i]), d.PBelow))
		hitText := fmt.Sprintf("IoU≥0.5 hits: %d hit→miss vs %d miss→hit, exact McNemar p=%.3g (Holm %.3g)", m.ARightBWrong, m.AWrongBRight, m.P, m.PHolm)
		switch {
		case accWorse || iouSig && d.Delta.Value < 0:
			qc.Verdict = Regressed
		case accBetter || iouSig && d.Delta.Value > 0:
			qc.Verdict = Improved
		default:
			qc.Verdict = NoChange
		}
		qc.Why = iouText + "; " + hitText
	}
}
