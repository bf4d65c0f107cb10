package htmlreport

import (
	"fmt"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/report"
)

// boxQuestion writes a box question's section (Jev 1.14): per run n,
// labelled, mean IoU and IoU≥0.5 accuracy with their 95% intervals (marked
// as every other figure), errors; then, in a comparison, B against A. No
// accuracy, Brier, calibration or confusion: they do not apply to a box.
func (d *doc) boxQuestion(qi int, id string, qs []*metrics.QuestionReport, qc *compare.QuestionComparison) {
	d.p(`<section class="question" id="q%d"><h2>%s <span class="muted">box · mean IoU and IoU≥0.5 accuracy</span></h2>`+"\n", qi, esc(id))
	d.s(`<div class="scroll"><table class="metrics"><thead><tr><th>run</th><th>n</th><th>labelled</th><th>mean IoU</th><th>IoU≥0.5 accuracy</th><th>errors</th></tr></thead><tbody>` + "\n")
	for i, q := range qs {
		if q == nil || q.Box == nil {
			d.p(`<tr><td>%s</td><td colspan="5" class="muted">question not in this run (or not a box in it)</td></tr>`+"\n", esc(d.names[i]))
			continue
		}
		run := runID(d.in.Runs[i])
		d.p(`<tr><td title="%s"><span class="key s%d"></span> <strong>%s</strong></td><td class="num">%d</td><td class="num">%d</td>`, esc(d.names[i]), i%nSeries, sideLabel(i), q.N, q.Box.N)
		d.cell(run, id, "box.mean_iou", q.Box.MeanIoU)
		d.cellWith(run, id, "box.iou50_accuracy", q.Box.Hit50, fmt.Sprintf(` <span class="ci">(%d/%d)</span>`, q.Box.Hits, q.Box.N))
		errs := 0
		for _, n := range q.Errors {
			errs += n
		}
		d.p(`<td class="num">%d</td></tr>`+"\n", errs)
	}
	d.s("</tbody></table></div>\n")
	d.p(`<p class="note">%s</p>`+"\n", esc(report.BoxConventions))
	if qc != nil {
		d.boxComparison(qc)
	}
	d.s("</section>\n")
}

// boxComparison writes a box question's paired comparison: verdict, Δ
// mean IoU and Δ IoU≥0.5 accuracy with their paired intervals, and the
// McNemar count of hits.
func (d *doc) boxComparison(qc *compare.QuestionComparison) {
	d.p(`<h3>B against A</h3><p class="verdict v-%s" data-cmp="%s" data-m="verdict" data-v="%s"><strong>%s</strong>`, cls(qc.Verdict), esc(qc.ID), esc(qc.Verdict), esc(qc.Verdict))
	if qc.Reason != "" {
		d.p(" — %s</p>\n", esc(qc.Reason))
		return
	}
	d.p(" — %s</p>\n", esc(qc.Why))
	d.p("<p>%d items paired (%d labelled) · only in A %d · only in B %d · %d boxes changed</p>\n", qc.Paired, qc.PairedLabelled, qc.OnlyA, qc.OnlyB, qc.Drift.ChangedValues)
	d.s(`<div class="scroll"><table class="deltas"><thead><tr><th>metric</th><th>A</th><th>B</th><th>Δ = B − A [95% paired CI]</th><th>bootstrap p</th></tr></thead><tbody>` + "\n")
	for _, dl := range qc.Deltas {
		d.p(`<tr><td>%s</td><td class="num">%s</td><td class="num">%s</td><td class="num" data-cmp="%s" data-m="delta.%s" data-v="%s" data-lo="%s" data-hi="%s" data-p="%s">%s</td><td class="num">%s</td></tr>`+"\n",
			esc(dl.Metric), f3(dl.A.Value), f3(dl.B.Value), esc(qc.ID), esc(dl.Metric), full(dl.Delta.Value), full(dl.Delta.Lo), full(dl.Delta.Hi), full(dl.P),
			deltaText(dl.Delta), bootP(dl.P, dl.PBelow))
	}
	d.s("</tbody></table></div>\n")
	if m := qc.McNemar; qc.PairedLabelled > 0 {
		d.p(`<p data-cmp="%s" data-m="mcnemar" data-v="%s" data-holm="%s">IoU≥0.5 hits, exact McNemar: %d hit→miss, %d miss→hit (both hit %d, both miss %d), p = %s (Holm %s).</p>`+"\n",
			esc(qc.ID), full(m.P), full(m.PHolm), m.ARightBWrong, m.AWrongBRight, m.BothRight, m.BothWrong, pText(m.P), pText(m.PHolm))
	}
}

// comparisonOf is the comparison's question id (nil without one).
func (d *doc) comparisonOf(id string) *compare.QuestionComparison {
	if c := d.in.Comparison; c != nil {
		for i := range c.Questions {
			if c.Questions[i].ID == id {
				return &c.Questions[i]
			}
		}
	}
	return nil
}
