package tui

import (
	"fmt"

	"github.com/jevlab/jevlab/internal/termsafe"
)

// variantsTable draws the run's variants, each paired with its question on
// the same items (RunView.VariantPairs): Δ accuracy with its paired
// bootstrap interval, the exact McNemar p (Holm across the question's
// variants) and the flips fixed/broken/changed; nothing when the run asked
// no variant.
func (m *evalModel) variantsTable(w int) []string {
	pairs := m.v.VariantPairs()
	if len(pairs) == 0 {
		return nil
	}
	st := &m.e.st
	l := []string{"", st.Focused.Render(fit(" Variants · each against its question on the same items · McNemar exact, Holm across a question's variants", w))}
	wide := w >= 150
	head := fmt.Sprintf("   %-18s %-24s %4s %-23s", "variant", "verdict", "n", "Δ accuracy")
	if wide {
		head += fmt.Sprintf(" %-13s %-20s   %-23s %s", "McNemar p", "fixed/broken/changed", "Δ Brier", "decisions changed · mean TV")
	}
	l = append(l, st.Muted.Render(fit(head, w)))
	for _, p := range pairs {
		name := midTrunc(termsafe.String(p.Ref.ID()), 18)
		c := p.Comparison
		if c == nil {
			l = append(l, st.Muted.Render(fit(fmt.Sprintf("   %-18s not compared", name), w)))
			continue
		}
		q := &c.Comparison
		if q.Reason != "" && len(q.Deltas) == 0 {
			l = append(l, fit(fmt.Sprintf("   %-18s %-24s %s", name, q.Verdict, termsafe.String(q.Reason)), w))
			continue
		}
		acc, brier := "—", "—"
		for _, d := range q.Deltas {
			switch d.Metric {
			case "accuracy":
				acc = fmtDelta(d)
			case "brier":
				brier = fmtDelta(d)
			}
		}
		vs := st.Muted
		switch {
		case q.McNemar.PHolm < 0.05 && q.Flips.Fixed > q.Flips.Broken:
			vs = st.Good
		case q.McNemar.PHolm < 0.05:
			vs = st.Bad
		}
		row := fmt.Sprintf("   %-18s %s %4d %-23s", name, vs.Render(fit(q.Verdict, 24)), q.PairedLabelled, acc)
		p := fmt.Sprintf("%.3g (%.3g)", q.McNemar.P, q.McNemar.PHolm)
		flips := fmt.Sprintf("%d/%d/%d", q.Flips.Fixed, q.Flips.Broken, q.Flips.Changed)
		if wide {
			row += fmt.Sprintf(" %-13s %-20s   %-23s %d/%d · %.3f", p, flips, brier, q.Drift.ChangedDecisions, q.Drift.N, q.Drift.MeanTV)
			l = append(l, fit(row, w))
			continue
		}
		l = append(l, fit(row, w), fit(fmt.Sprintf("   %-18s McNemar p %s · fixed/broken/changed %s · decisions changed %d/%d", "", p, flips, q.Drift.ChangedDecisions, q.Drift.N), w))
	}
	return append(l, st.Muted.Render(fit(" McNemar p (Holm-corrected) · fixed: the question wrong, the variant right · broken: the reverse", w)))
}
