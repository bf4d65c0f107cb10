package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/internal/termsafe"
)

func side(r compare.RunRef) string {
	s := r.ID
	if r.Name != "" {
		s += " (" + r.Name + ")"
	}
	if r.Model != "" {
		s += " · " + r.Model
	}
	return s
}

func delta(d compare.Delta) string {
	s := fmt.Sprintf("%+.4g", d.Delta.Value)
	if !d.Delta.Defined() {
		return "—"
	}
	if d.Delta.HasInterval() {
		s += fmt.Sprintf(" [%+.4g, %+.4g] p=%s", d.Delta.Lo, d.Delta.Hi, compare.FormatP(d.P, d.PBelow))
	}
	if d.Significant {
		if d.Better {
			s += " better"
		} else {
			s += " worse"
		}
	}
	return s
}

// CompareOptions tune how a comparison is written.
type CompareOptions struct {
	// Flips is how many flipped items per question the text and Markdown
	// list before saying how to see them all (--json holds every one).
	// 0 means compare.DefaultShownFlips; negative lists all.
	Flips int
}

func (o CompareOptions) flips() int {
	switch {
	case o.Flips == 0:
		return compare.DefaultShownFlips
	case o.Flips < 0:
		return math.MaxInt
	}
	return o.Flips
}

// VerdictLine is the one-line verdict every output leads with: the verdict,
// the regressed questions, and every question that could not be compared
// with why — "NOT COMPARABLE (queue — option other of A is not in B)".
func VerdictLine(c *compare.Comparison) string {
	s := strings.ToUpper(c.Verdict)
	var parts []string
	if len(c.Regressions) > 0 {
		parts = append(parts, strings.Join(c.Regressions, ", "))
	}
	var nc, allowed []string
	for _, n := range c.NotComparable {
		if n.Allowed {
			allowed = append(allowed, n.String())
		} else {
			nc = append(nc, n.String())
		}
	}
	if len(nc) > 0 {
		if c.Verdict == compare.NotComparable {
			parts = append(parts, strings.Join(nc, "; "))
		} else {
			parts = append(parts, "not comparable: "+strings.Join(nc, "; "))
		}
	}
	if len(allowed) > 0 {
		parts = append(parts, "changed on purpose (allowed): "+strings.Join(allowed, "; "))
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, " · ") + ")"
	}
	return s
}

// seeAll says how to list every flip of a comparison.
func seeAll(c *compare.Comparison) string {
	return fmt.Sprintf("jevlab compare %s %s --json (or --flips -1)", c.A.ID, c.B.ID)
}

// WriteCompareText writes a comparison for a terminal, listing the first
// compare.DefaultShownFlips flips per question.
func WriteCompareText(w io.Writer, c *compare.Comparison) error {
	return WriteCompareTextWith(w, c, CompareOptions{})
}

// WriteCompareTextWith writes a comparison for a terminal.
func WriteCompareTextWith(w io.Writer, c *compare.Comparison, o CompareOptions) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "A  %s\nB  %s\n", side(c.A), side(c.B))
	fmt.Fprintf(b, "verdict: %s", VerdictLine(c))
	fmt.Fprintf(b, "\nseed %d · B=%d paired resamples · alpha %.3g (Holm across questions)\n", c.Seed, c.Bootstrap, c.Alpha)
	for _, q := range c.Questions {
		if q.Resampling != nil {
			fmt.Fprintf(b, "paired resamples %s\n", LittleText(q.Resampling))
			break
		}
	}
	for _, q := range c.Questions {
		fmt.Fprintf(b, "\nquestion %s (%s): %s", q.ID, q.Type, strings.ToUpper(q.Verdict))
		if q.Reason != "" {
			fmt.Fprintf(b, " — %s", q.Reason)
			if q.Allowed {
				b.WriteString(" (accepted as changed on purpose)")
			}
			b.WriteString("\n")
			continue
		}
		if len(q.Mapped) > 0 {
			fmt.Fprintf(b, " — %s (mapped %s)\n", q.Why, mapped(q.Mapped))
		} else {
			fmt.Fprintf(b, " — %s\n", q.Why)
		}
		fmt.Fprintf(b, "  paired %d items (%d labelled) · only in A %d · only in B %d\n", q.Paired, q.PairedLabelled, q.OnlyA, q.OnlyB)
		if q.LabelMismatch > 0 {
			fmt.Fprintf(b, "  %d items are labelled differently in the two runs (A's labels used)\n", q.LabelMismatch)
		}
		for _, d := range q.Deltas {
			fmt.Fprintf(b, "  %-20s A %-9s B %-9s Δ %s\n", d.Metric, num(d.A.Value), num(d.B.Value), delta(d))
		}
		m := q.McNemar
		if q.PairedLabelled > 0 {
			fmt.Fprintf(b, "  McNemar exact: %d right→wrong, %d wrong→right, p=%.3g (Holm %.3g)\n", m.ARightBWrong, m.AWrongBRight, m.P, m.PHolm)
			fmt.Fprintf(b, "  flips: %d fixed · %d broken · %d changed but still wrong\n", q.Flips.Fixed, q.Flips.Broken, q.Flips.Changed)
			limit := o.flips()
			for i, f := range q.Flips.Items {
				if i == limit {
					fmt.Fprintf(b, "    … %d more (%d flips in all): see every one with %s\n", len(q.Flips.Items)-limit, len(q.Flips.Items), seeAll(c))
					break
				}
				fmt.Fprintf(b, "    %-7s %-16s label %-12s %s → %s  p(label) %.2f → %.2f\n", f.Kind, f.ItemID, short(f.Label, 12), short(f.A, 14), short(f.B, 14), f.PLabelA, f.PLabelB)
			}
		}
		dr := q.Drift
		fmt.Fprintf(b, "  drift: %d of %d decisions changed (%.3g) · mean TV %.4g · mean |Δp| %.4g · %d answers changed at all\n",
			dr.ChangedDecisions, dr.N, dr.ChangedShare, dr.MeanTV, dr.MeanAbsDeltaP, dr.ChangedValues)
		if q.Noise.Known {
			fmt.Fprintf(b, "  own noise (repeats): flip rate %.3g · mean TV %.4g\n", q.Noise.FlipRate, q.Noise.MeanTV)
		}
	}
	fmt.Fprintf(b, "\n%s\n", c.Conventions)
	_, err := io.WriteString(w, termsafe.Text(b.String())) // names and messages from files and servers: escaped
	return err
}

// WriteCompareMarkdown writes a comparison as a PR comment, listing the
// first compare.DefaultShownFlips flips per question.
func WriteCompareMarkdown(w io.Writer, c *compare.Comparison) error {
	return WriteCompareMarkdownWith(w, c, CompareOptions{})
}

// WriteCompareMarkdownWith writes a comparison as a PR comment.
func WriteCompareMarkdownWith(w io.Writer, c *compare.Comparison, o CompareOptions) error {
	b := &strings.Builder{}
	icon := map[string]string{compare.Regressed: "❌", compare.Improved: "✅", compare.NoChange: "➖", compare.WithinNoise: "〰️", compare.NotComparable: "⚠️"}
	fmt.Fprintf(b, "### jevlab compare: %s %s\n\nA: `%s` · B: `%s` · seed %d · B=%d · alpha %.3g (Holm)\n\n",
		icon[c.Verdict], c.Verdict, mdEsc(side(c.A)), mdEsc(side(c.B)), c.Seed, c.Bootstrap, c.Alpha)
	for _, n := range c.NotComparable {
		if n.Allowed {
			fmt.Fprintf(b, "- changed on purpose (allowed): `%s` — %s\n", mdEsc(n.Question), mdEsc(n.Reason))
		} else {
			fmt.Fprintf(b, "- ⚠️ **not comparable: `%s` — %s**\n", mdEsc(n.Question), mdEsc(n.Reason))
		}
	}
	if len(c.NotComparable) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("| question | verdict | paired | Δ accuracy | Δ Brier | McNemar p (Holm) | fixed / broken | drift (changed, TV) |\n|---|---|---:|---|---|---|---|---|\n")
	for _, q := range c.Questions {
		if q.Reason != "" {
			fmt.Fprintf(b, "| `%s` | %s %s | | | | | | %s |\n", mdEsc(q.ID), icon[q.Verdict], q.Verdict, mdEsc(q.Reason))
			continue
		}
		var da, dbr string
		for _, d := range q.Deltas {
			switch d.Metric {
			case "accuracy":
				da = delta(d)
			case "brier":
				dbr = delta(d)
			case compare.MetricIoU50Acc: // a box question (Jev 1.14)
				da = "IoU≥0.5 " + delta(d)
			case compare.MetricMeanIoU:
				dbr = "none (box) · Δ mean IoU " + delta(d)
			}
		}
		fmt.Fprintf(b, "| `%s` | %s %s | %d | %s | %s | %.3g | %d / %d | %d, %.3g |\n", mdEsc(q.ID), icon[q.Verdict], q.Verdict,
			q.PairedLabelled, da, dbr, q.McNemar.PHolm, q.Flips.Fixed, q.Flips.Broken, q.Drift.ChangedDecisions, q.Drift.MeanTV)
	}
	for _, q := range c.Questions {
		if len(q.Flips.Items) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n<details><summary><code>%s</code>: %d broken, %d fixed, %d changed</summary>\n\n| item | kind | label | A | B | p(label) A → B |\n|---|---|---|---|---|---|\n",
			mdEsc(q.ID), q.Flips.Broken, q.Flips.Fixed, q.Flips.Changed)
		limit := o.flips()
		for i, f := range q.Flips.Items {
			if i == limit {
				break
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %.2f → %.2f |\n", mdEsc(f.ItemID), f.Kind, mdEsc(f.Label), mdEsc(f.A), mdEsc(f.B), f.PLabelA, f.PLabelB)
		}
		if len(q.Flips.Items) > limit {
			fmt.Fprintf(b, "\n… %d more (%d flips in all): `%s`\n", len(q.Flips.Items)-limit, len(q.Flips.Items), mdEsc(seeAll(c)))
		}
		b.WriteString("\n</details>\n")
	}
	fmt.Fprintf(b, "\n<sub>%s</sub>\n", mdEsc(c.Conventions))
	_, err := io.WriteString(w, termsafe.Text(b.String())) // names and messages from files and servers: escaped
	return err
}

// mapped writes renames as "other→general, x→y" in a stable order.
func mapped(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "→" + m[k]
	}
	return strings.Join(parts, ", ")
}
