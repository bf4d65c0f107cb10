package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// variantDelta returns the named metric's delta of a variant comparison.
func variantDelta(q *compare.QuestionComparison, metric string) (compare.Delta, bool) {
	for _, d := range q.Deltas {
		if d.Metric == metric {
			return d, true
		}
	}
	return compare.Delta{}, false
}

// VariantLines are the text lines of a run's variants, one block per
// variant: each paired with its question on the same items.
func VariantLines(vs []compare.VariantComparison) []string {
	if len(vs) == 0 {
		return nil
	}
	out := []string{"variants (each paired with its question on the same items of this run; B = the variant; Holm across the variants of a question)"}
	for _, v := range vs {
		q := &v.Comparison
		head := fmt.Sprintf("  %s vs %s: %s", v.ID, v.Question, strings.ToUpper(q.Verdict))
		if q.Why != "" {
			head += " — " + q.Why
		} else if q.Reason != "" {
			head += " — " + q.Reason
		}
		out = append(out, head)
		if q.Reason != "" && q.Verdict == compare.NotComparable {
			continue
		}
		out = append(out, fmt.Sprintf("    paired %d items (%d labelled)", q.Paired, q.PairedLabelled))
		for _, m := range []string{"accuracy", "brier", "ece"} {
			if d, ok := variantDelta(q, m); ok {
				out = append(out, fmt.Sprintf("    %-9s %-9s → %-9s Δ %s", m, num(d.A.Value), num(d.B.Value), delta(d)))
			}
		}
		if q.PairedLabelled > 0 {
			m := q.McNemar
			out = append(out, fmt.Sprintf("    McNemar exact: %d right→wrong, %d wrong→right, p=%.3g (Holm %.3g)", m.ARightBWrong, m.AWrongBRight, m.P, m.PHolm))
			out = append(out, fmt.Sprintf("    flips: %d fixed · %d broken · %d changed but still wrong", q.Flips.Fixed, q.Flips.Broken, q.Flips.Changed))
		}
		dr := q.Drift
		out = append(out, fmt.Sprintf("    change (label-free): %d of %d decisions changed (%.3g) · mean TV %.4g", dr.ChangedDecisions, dr.N, dr.ChangedShare, dr.MeanTV))
	}
	return out
}

// WriteVariantsText writes VariantLines (nothing without variants).
func WriteVariantsText(w io.Writer, vs []compare.VariantComparison) error {
	lines := VariantLines(vs)
	if len(lines) == 0 {
		return nil
	}
	_, err := io.WriteString(w, termsafe.Text(strings.Join(lines, "\n")+"\n"))
	return err
}

// variantsMarkdown is the Markdown table of a run's variants.
func variantsMarkdown(b *strings.Builder, vs []compare.VariantComparison) {
	if len(vs) == 0 {
		return
	}
	b.WriteString("\n**Variants** (paired with their question on the same items; Holm across a question's variants)\n\n")
	b.WriteString("| variant | verdict | paired | Δ accuracy | Δ Brier | Δ ECE | McNemar p (Holm) | fixed / broken / changed | decisions changed, TV |\n|---|---|---:|---|---|---|---|---|---|\n")
	for _, v := range vs {
		q := &v.Comparison
		if q.Reason != "" && q.Verdict == compare.NotComparable {
			fmt.Fprintf(b, "| `%s` | %s | | | | | | | %s |\n", mdEsc(v.ID), q.Verdict, mdEsc(q.Reason))
			continue
		}
		cell := func(m string) string {
			if d, ok := variantDelta(q, m); ok {
				return mdEsc(delta(d))
			}
			return "—"
		}
		fmt.Fprintf(b, "| `%s` | %s | %d | %s | %s | %s | %.3g (%.3g) | %d / %d / %d | %d/%d, %.3g |\n", mdEsc(v.ID), q.Verdict, q.PairedLabelled,
			cell("accuracy"), cell("brier"), cell("ece"), q.McNemar.P, q.McNemar.PHolm, q.Flips.Fixed, q.Flips.Broken, q.Flips.Changed,
			q.Drift.ChangedDecisions, q.Drift.N, q.Drift.MeanTV)
	}
}

// variantCases are JUnit cases of a run's variants: informational (a
// variant is an experiment, not a gate), each carrying its paired figures.
func variantCases(class string, vs []compare.VariantComparison) []junitCase {
	var out []junitCase
	for _, v := range vs {
		lines := VariantLines([]compare.VariantComparison{v})
		out = append(out, junitCase{Name: v.ID + " variant vs " + v.Question, Classname: class + "." + v.Question, SystemOut: strings.Join(lines[1:], "\n")})
	}
	return out
}
