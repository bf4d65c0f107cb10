package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/bars"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// Bar draws p ∈ [0,1] as exactly width cells with eighth-cell resolution
// (the shared internal/bars drawing): a 40-cell bar has 320 steps, so 0.53
// and 0.55 differ by six eighths.
func Bar(p float64, width int) string { return bars.Bar(p, width) }

// fit truncates s to w cells (with an ellipsis) and pads it to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = ansi.Truncate(s, w, "…")
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// midFit cuts plain text s to w cells by replacing its middle with an
// ellipsis, then pads it to w: labels sharing a long prefix stay
// distinguishable ("balance_n…_update" and "balance_n…_delay", never
// "balance_not_update…" twice).
func midFit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		r := []rune(s)
		tail := (w - 1) / 2
		head := w - 1 - tail
		for head > 0 && ansi.StringWidth(string(r[:head]))+1+ansi.StringWidth(string(r[len(r)-tail:])) > w {
			if head > tail {
				head--
			} else if tail > 0 {
				tail--
			} else {
				head--
			}
		}
		s = string(r[:head]) + "…" + string(r[len(r)-tail:])
	}
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// chartInput is what one question's chart is drawn from.
type chartInput struct {
	ID        string
	Q         *provider.Question
	Cur       *provider.Answer   // nil: not answered yet
	CurQ      *provider.Question // the question as Cur was asked
	Prev      *provider.Answer   // the answer before the last re-run (ghost)
	PrevQ     *provider.Question // the question as Prev was asked
	Stale     bool               // the question changed since Cur was asked
	Err       string             // the last run's error for this question
	Threshold float64            // noul caller threshold
	True      int                // true label index, -1 when unknown
	Width     int
	Expand    bool // show the options folded under 0.005 one by one
}

// renderChart draws one question's answer as lines of at most Width cells
// from the workbench's AnswerView (the decision, markers, confidence and
// top prob, folding): the work done once when an answer arrives, so View
// only joins the visible lines.
func renderChart(in chartInput, st *Styles) []string {
	w := max(in.Width, 20)
	var out []string
	cur, curQ := in.Cur, in.CurQ
	if cur != nil && cur.Type != in.Q.Type {
		cur, curQ = nil, nil // answered as another type: nothing to draw
	}
	prev, prevQ := in.Prev, in.PrevQ
	if prev != nil && (prev.Type != in.Q.Type || prevQ == nil) {
		prev, prevQ = nil, nil
	}
	v := workbench.View(in.Q, cur, workbench.ViewOptions{Threshold: in.Threshold, True: in.True, Asked: curQ,
		PrevAnswer: prev, PrevAsked: prevQ, NoFold: in.Expand})
	// ids and labels come from the file: escaped.
	title := fmt.Sprintf("%s · %s", termsafe.String(in.ID), in.Q.Type)
	h := ""
	if cur != nil {
		h = termsafe.String(v.Headline())
	}
	switch {
	case h != "" && ansi.StringWidth(title)+1+ansi.StringWidth(h) <= w:
		out = append(out, st.Header.Render(fit(title+" "+h, w)))
	case h != "":
		// The headline says the decision, confidence, top prob and the
		// label: wrapped, never cut.
		out = append(out, st.Header.Render(fit(title, w)))
		for _, l := range wrapText(h, w, 4) {
			out = append(out, st.Header.Render(fit(l, w)))
		}
	default:
		out = append(out, st.Header.Render(fit(title, w)))
	}
	if cur != nil {
		if v.Source != "" {
			out = append(out, st.Faint.Render(fit("from "+termsafe.String(v.Source), w)))
		}
	}
	if in.Err != "" {
		for _, l := range wrapText("error: "+in.Err, w, 8) {
			out = append(out, st.Bad.Render(fit(l, w)))
		}
	}
	if in.Stale && cur != nil {
		out = append(out, st.Warn.Render(fit("edited since this answer — press r to re-run", w)))
	}
	if cur == nil {
		if in.Err == "" {
			out = append(out, st.Muted.Render(fit("not run yet — press r to run", w)))
		}
		return out
	}
	labels := make([]string, len(v.Rows))
	maxLabel := 0
	for i, r := range v.Rows {
		labels[i] = termsafe.String(r.Label)
		maxLabel = max(maxLabel, ansi.StringWidth(labels[i]))
	}
	if v.Type == provider.Noul {
		maxLabel = max(maxLabel, len("threshold"))
	}
	labelW, barW := rowLayout(w, maxLabel)
	for i, r := range v.Rows {
		style := st.Bar
		switch {
		case r.True:
			style = st.BarTrue
		case r.Chosen:
			style = st.BarChosen
		}
		label := midFit(labels[i], labelW) // option labels often share a prefix
		if v.Type == provider.Score {
			label = fit(labels[i], labelW) // level text reads from its start
		}
		row := valueRow(r.Marker(v.LabelKnown), label, r.P, labelW, barW, style, st)
		if prev != nil {
			out = append(out, withDelta(row, r.Prev, r.P, st), ghostRow(r.Prev, labelW, barW, st))
		} else {
			out = append(out, row)
		}
	}
	if f := v.Folded; f != nil {
		out = append(out, st.Faint.Render(fit(fmt.Sprintf("  … %d more under %s (largest %s): o shows them", len(f.Rows), workbench.Prob(workbench.FoldBelow), workbench.Prob(f.Max)), w)))
	} else if in.Expand && in.Q.Type == provider.Choice && len(in.Q.Options) >= workbench.FoldMinOptions {
		out = append(out, st.Faint.Render(fit("  o folds the options under "+workbench.Prob(workbench.FoldBelow)+" again", w)))
	}
	switch v.Type {
	case provider.Score:
		if n := v.Levels; n >= 2 {
			// The expected-level axis: ◆ where the expected score lies
			// between the lowest and the highest level.
			axis := []rune(strings.Repeat("─", barW))
			pos := func(s float64) int {
				return max(0, min(barW-1, int(math.Round(s/float64(n-1)*float64(barW-1)))))
			}
			if prev != nil {
				axis[pos(prev.Score)] = '◇'
			}
			axis[pos(v.Expected)] = '◆'
			out = append(out, "  "+fit(fmt.Sprintf("E=%.2f", v.Expected), labelW)+" "+st.BarChosen.Render(string(axis))+fmt.Sprintf(" 0..%d", n-1))
		}
	case provider.Noul:
		x := int(math.Round(v.Threshold * float64(barW*8)))
		x = max(0, min(barW-1, x/8))
		tick := strings.Repeat(" ", x) + "▲"
		out = append(out, "  "+fit("threshold", labelW)+" "+st.Warn.Render(fit(tick, barW))+fmt.Sprintf(" %6.3f", v.Threshold))
	}
	return out
}

// rowLayout splits a row into marker, label, bar and number columns. The
// label gets what it needs up to what leaves the bar a quarter of the row
// (at least 10 cells), so long level text is not cut in a wide pane.
func rowLayout(w, maxLabel int) (labelW, barW int) {
	const fixed = 2 + 1 + 1 + 6 + 7 // marker, spaces, number, delta
	minBar := max(10, w/4)
	labelW = max(4, min(maxLabel, w-fixed-minBar))
	barW = max(4, w-fixed-labelW)
	return
}

// valueRow is "M label  ████▍     0.553".
func valueRow(marker, label string, p float64, labelW, barW int, bar lipgloss.Style, st *Styles) string {
	num := "     -"
	if !math.IsNaN(p) {
		num = fmt.Sprintf("%6.3f", p)
	}
	return marker + fit(label, labelW) + " " + bar.Render(Bar(p, barW)) + " " + num
}

// withDelta appends the change from prev to cur as a 7-cell column.
func withDelta(row string, prev, cur float64, st *Styles) string {
	if math.IsNaN(prev) || math.IsNaN(cur) {
		return row + st.Faint.Render("    new")
	}
	switch delta := cur - prev; {
	case delta >= 0.0005:
		return row + st.Good.Render(fmt.Sprintf(" %+6.3f", delta))
	case delta <= -0.0005:
		return row + st.Bad.Render(fmt.Sprintf(" %+6.3f", delta))
	}
	return row + st.Faint.Render("     ±0")
}

// ghostRow draws the previous probability faintly beneath the current one.
func ghostRow(prev float64, labelW, barW int, st *Styles) string {
	num := "     -"
	if !math.IsNaN(prev) {
		num = fmt.Sprintf("%6.3f", prev)
	}
	return "  " + st.Faint.Render(fit("  before", labelW)) + " " + st.Ghost.Render(Bar(prev, barW)) + " " + st.Faint.Render(num)
}
