package tui

import (
	"fmt"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// boxRow is a box question's line of the evaluate screen's metrics table
// (Jev 1.14): n, mean IoU and IoU≥0.5 accuracy with their 95% intervals,
// marked as every other figure; accuracy, top prob and Brier do not apply
// to a box and are not shown.
func boxRow(r *workbench.QuestionReport, qw int) string {
	b := r.Box
	hits := est(b.Hit50)
	if b.N > 0 {
		hits += fmt.Sprintf(" (%d/%d)", b.Hits, b.N)
	}
	return fmt.Sprintf("%-*s %4d box · mean IoU %s · IoU≥0.5 accuracy %s", qw, midTrunc(termsafe.String(r.ID), qw), b.N, est(b.MeanIoU), hits)
}

// boxDetail is the selected box question's section under the table, in
// place of the coverage, reliability and confusion a box has none of.
func boxDetail(st *Styles, r *workbench.QuestionReport, w int) []string {
	b := r.Box
	l := []string{st.Focused.Render(fit(" Box · "+termsafe.String(r.ID)+" · intersection over union with the labelled box", w))}
	l = append(l, fit(fmt.Sprintf(" %d answered and labelled of %d items · mean IoU %s", b.N, r.N, est(b.MeanIoU)), w))
	l = append(l, fit(fmt.Sprintf(" IoU≥0.5 accuracy %s: %d of %d boxes overlap their label at least half", est(b.Hit50), b.Hits, b.N), w))
	return append(l, st.Muted.Render(fit(" no accuracy, Brier or calibration for a box: it has no outcomes", w)))
}
