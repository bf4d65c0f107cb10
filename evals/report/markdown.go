package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// mdEsc escapes the characters that break a Markdown table cell.
func mdEsc(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// headline returns the type's most telling metric beyond accuracy.
func headline(q *metrics.QuestionReport) string {
	switch {
	case q.Choice != nil:
		return "macro-F1 " + est(q.Choice.MacroF1)
	case q.Noul != nil:
		return "AUROC " + est(q.Noul.AUROC)
	case q.Score != nil:
		return "QWK " + est(q.Score.QWK)
	}
	return ""
}

// WriteMarkdown writes a run report as Markdown, fit for a PR comment: a
// summary table, the gates, and per-question details folded away.
func WriteMarkdown(w io.Writer, rep *RunReport) error {
	b := &strings.Builder{}
	if r := rep.Run; r != nil {
		fmt.Fprintf(b, "### jevlab run `%s`", r.ID)
		if r.Name != "" {
			fmt.Fprintf(b, " (%s)", mdEsc(r.Name))
		}
		fmt.Fprintf(b, "\n\n%s · %d/%d items · %d errors · model `%s` → `%s` · question set `%s`\n\n",
			r.Status, r.Done, r.Total, r.Errors, r.Model, strings.Join(r.Models, ", "), mdEsc(r.SetName))
	}
	if len(rep.Gates) > 0 {
		if rep.Passed {
			b.WriteString("**Gates: all passed** ✅\n\n")
		} else {
			b.WriteString("**Gates: FAILED** ❌\n\n")
		}
	}
	if !onlyBox(rep.Questions) { // box.go
		b.WriteString("| question | type | labelled | accuracy | top prob | ECE (noise floor) | Brier | log loss | |\n|---|---|---:|---|---|---|---|---|---|\n")
	}
	for _, q := range rep.Questions {
		if q.Box != nil {
			continue // boxMarkdown
		}
		acc := est(q.Accuracy)
		if q.Accuracy.Defined() {
			acc += fmt.Sprintf(" (%d/%d)", q.Correct, q.Labelled)
		}
		ece := est(q.ECE)
		if q.Noise.FloorDraws > 0 {
			ece += fmt.Sprintf(" (floor %.3g", q.Noise.ECEFloorMean)
			if q.Noise.ECEWithinFloor {
				ece += ", within it"
			}
			ece += ")"
		}
		fmt.Fprintf(b, "| `%s` | %s | %d | %s | %s | %s | %s | %s | %s |\n", mdEsc(q.ID), q.Type, q.Labelled,
			mdEsc(acc), mdEsc(est(q.MeanConfidence)), mdEsc(ece), mdEsc(est(q.Brier)), mdEsc(est(q.LogLoss)), mdEsc(headline(q)))
	}
	boxMarkdown(b, rep.Questions) // box.go
	for _, q := range rep.Questions {
		if c := q.Selective.Cutpoint; c != nil && !c.Reached {
			fmt.Fprintf(b, "\n- `%s` cut-point %s", mdEsc(q.ID), mdEsc(CutpointText(c)))
		}
	}
	routed := false
	for _, q := range rep.Questions {
		if rt := q.Selective.Routing; rt != nil {
			if !routed {
				b.WriteString("\n")
				routed = true
			}
			fmt.Fprintf(b, "- `%s` %s\n", mdEsc(q.ID), mdEsc(rt.String()))
		}
	}
	for _, l := range HoldoutLines(rep) {
		fmt.Fprintf(b, "\n- ⚠️ %s", mdEsc(l))
	}
	if len(rep.Holdout) > 0 {
		b.WriteString("\n")
	}
	if lines := append(CostLines(rep.Costs), ChoiceCostLines(rep.ChoiceCosts)...); len(lines) > 0 {
		b.WriteString("\n```\n" + strings.ReplaceAll(strings.Join(lines, "\n"), "```", "'''") + "\n```\n")
	}
	variantsMarkdown(b, rep.Variants)
	if len(rep.Gates) > 0 {
		b.WriteString("\n| | question | gate | result | source |\n|---|---|---|---|---|\n")
		for _, g := range rep.Gates {
			mark := "✅"
			if !g.Passed {
				mark = "❌"
			}
			fmt.Fprintf(b, "| %s | `%s` | %s | %s | %s |\n", mark, mdEsc(g.Question), g.Gate, mdEsc(g.Msg), g.Source)
		}
	}
	for _, q := range rep.Questions {
		fmt.Fprintf(b, "\n<details><summary><code>%s</code> details</summary>\n\n```\n", mdEsc(q.ID))
		sb := &strings.Builder{}
		writeQuestionText(sb, q)
		b.WriteString(strings.ReplaceAll(sb.String(), "```", "'''"))
		b.WriteString("```\n\n</details>\n")
	}
	if len(rep.Questions) > 0 {
		fmt.Fprintf(b, "\n<sub>%s</sub>\n", mdEsc(ConventionsOf(rep.Questions)))
	}
	if u := UsageNote(rep); u != "" {
		fmt.Fprintf(b, "\n<sub>%s</sub>\n", mdEsc(u))
	}
	_, err := io.WriteString(w, termsafe.Text(b.String())) // names and messages from files and servers: escaped
	return err
}
