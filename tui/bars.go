package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

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
}

// renderChart draws one question's answer as lines of exactly Width cells
// (or fewer): the work done once when an answer arrives, so View only joins
// the visible lines.
func renderChart(in chartInput, st *Styles) []string {
	w := in.Width
	if w < 20 {
		w = 20
	}
	var out []string
	title := fmt.Sprintf("%s · %s", termsafe.String(in.ID), in.Q.Type) // ids and labels come from the file: escaped
	if in.Cur != nil {
		switch in.Q.Type {
		case provider.Choice:
			title += " → " + in.Cur.Choice
		case provider.Score:
			title += fmt.Sprintf(" → E[level]=%.2f", in.Cur.Score)
		case provider.Noul:
			dec := "false"
			if in.Cur.P >= in.Threshold {
				dec = "true"
			}
			title += fmt.Sprintf(" → %s (P=%.3f)", dec, in.Cur.P)
		}
		if in.Cur.HasConfidence {
			title += fmt.Sprintf("  conf %.3f", in.Cur.Confidence)
		}
	}
	out = append(out, st.Header.Render(fit(title, w)))
	if in.Cur != nil && in.Cur.Provenance.Source != "" {
		pv := in.Cur.Provenance
		src := string(pv.Source)
		if pv.Origin != "" {
			o := pv.Origin
			if i := strings.LastIndexByte(o, '/'); i >= 0 {
				o = o[i+1:] // the file, not where it lives
			}
			src += " " + o
		}
		if pv.Model != "" {
			src += " · " + pv.Model
		}
		out = append(out, st.Faint.Render(fit("from "+src, w)))
	}
	if in.Err != "" {
		out = append(out, st.Bad.Render(fit("error: "+in.Err, w)))
	}
	if in.Cur != nil && in.Cur.Type != in.Q.Type {
		in.Cur, in.CurQ = nil, nil
	}
	if in.Prev != nil && (in.Prev.Type != in.Q.Type || in.PrevQ == nil) {
		in.Prev, in.PrevQ = nil, nil
	}
	if in.Stale {
		out = append(out, st.Warn.Render(fit("edited since this answer — press r to re-run", w)))
	}
	if in.Cur == nil {
		if in.Err == "" {
			out = append(out, st.Muted.Render(fit("not run yet — press r to run", w)))
		}
		return out
	}
	switch in.Q.Type {
	case provider.Choice:
		out = append(out, choiceLines(in, w, st)...)
	case provider.Score:
		out = append(out, scoreLines(in, w, st)...)
	case provider.Noul:
		out = append(out, noulLines(in, w, st)...)
	}
	return out
}

// probOf returns a's probability for outcome i of the displayed question q,
// where a answered the question as asked: choice options are matched by
// label (so reordering or adding options keeps each bar's value), score
// levels by index. NaN when the outcome was not asked.
func probOf(a *provider.Answer, asked, q *provider.Question, i int) float64 {
	if a == nil || asked == nil {
		return math.NaN()
	}
	j := i
	if q.Type == provider.Choice {
		if i >= len(q.Options) {
			return math.NaN()
		}
		j = asked.OptionIndex(q.Options[i].Label)
	}
	if j < 0 || j >= len(a.Probs) {
		return math.NaN()
	}
	return a.Probs[j]
}

// rowLayout splits a row into marker, label, bar and number columns.
func rowLayout(w, maxLabel int) (labelW, barW int) {
	labelW = maxLabel
	if labelW > w/3 {
		labelW = w / 3
	}
	if labelW < 4 {
		labelW = 4
	}
	barW = w - 2 - labelW - 1 - 1 - 6 - 7
	if barW < 4 {
		barW = 4
	}
	return
}

func choiceLines(in chartInput, w int, st *Styles) []string {
	q := in.Q
	idx := make([]int, len(q.Options))
	maxLabel := 0
	for i := range idx {
		idx[i] = i
		if n := ansi.StringWidth(termsafe.String(q.Options[i].Label)); n > maxLabel {
			maxLabel = n
		}
	}
	cur := func(i int) float64 { return probOf(in.Cur, in.CurQ, q, i) }
	prev := func(i int) float64 { return probOf(in.Prev, in.PrevQ, q, i) }
	sort.SliceStable(idx, func(a, b int) bool {
		return cur(idx[a]) > cur(idx[b]) || (math.IsNaN(cur(idx[b])) && !math.IsNaN(cur(idx[a])))
	})
	labelW, barW := rowLayout(w, maxLabel)
	lines := make([]string, 0, len(idx)*2)
	for _, i := range idx {
		label := q.Options[i].Label
		marker, style := "  ", st.Bar
		if label == in.Cur.Choice {
			marker, style = "▶ ", st.BarChosen
		}
		if i == in.True {
			marker = "✓ "
			if label == in.Cur.Choice {
				marker = "✓▶"
			}
			style = st.BarTrue
		}
		row := valueRow(marker, termsafe.String(label), cur(i), labelW, barW, style, st)
		if in.Prev != nil {
			lines = append(lines, withDelta(row, prev(i), cur(i), st), ghostRow(prev(i), labelW, barW, st))
		} else {
			lines = append(lines, row)
		}
	}
	return lines
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

// ghostRow draws the previous probability faintly beneath the current one,
// with the change.
func ghostRow(prev float64, labelW, barW int, st *Styles) string {
	num := "     -"
	if !math.IsNaN(prev) {
		num = fmt.Sprintf("%6.3f", prev)
	}
	return "  " + st.Faint.Render(fit("  before", labelW)) + " " + st.Ghost.Render(Bar(prev, barW)) + " " + st.Faint.Render(num)
}

func scoreLines(in chartInput, w int, st *Styles) []string {
	q := in.Q
	legends := make([]string, len(q.Levels))
	maxLabel := 0
	for i, l := range q.Levels {
		legends[i] = fmt.Sprintf("%d %s", i, termsafe.String(provider.Text(l)))
		if n := ansi.StringWidth(legends[i]); n > maxLabel {
			maxLabel = n
		}
	}
	labelW, barW := rowLayout(w, maxLabel)
	best := in.Cur.Decision(0.5)
	cur := func(i int) float64 { return probOf(in.Cur, in.CurQ, q, i) }
	prev := func(i int) float64 { return probOf(in.Prev, in.PrevQ, q, i) }
	var lines []string
	for i := range q.Levels {
		marker, style := "  ", st.Bar
		if i == best {
			marker, style = "▶ ", st.BarChosen
		}
		if i == in.True {
			marker, style = "✓ ", st.BarTrue
			if i == best {
				marker = "✓▶"
			}
		}
		row := valueRow(marker, legends[i], cur(i), labelW, barW, style, st)
		if in.Prev != nil {
			lines = append(lines, withDelta(row, prev(i), cur(i), st), ghostRow(prev(i), labelW, barW, st))
		} else {
			lines = append(lines, row)
		}
	}
	// The expected-level axis: ◆ where the expected score lies between the
	// lowest and the highest level.
	n := len(q.Levels)
	if n >= 2 {
		axis := []rune(strings.Repeat("─", barW))
		pos := func(s float64) int {
			x := int(math.Round(s / float64(n-1) * float64(barW-1)))
			return max(0, min(barW-1, x))
		}
		if in.Prev != nil {
			axis[pos(in.Prev.Score)] = '◇'
		}
		axis[pos(in.Cur.Score)] = '◆'
		label := fmt.Sprintf("E=%.2f", in.Cur.Score)
		lines = append(lines, "  "+fit(label, labelW)+" "+st.BarChosen.Render(string(axis))+fmt.Sprintf(" 0..%d", n-1))
	}
	return lines
}

func noulLines(in chartInput, w int, st *Styles) []string {
	labelW, barW := rowLayout(w, len("threshold"))
	style := st.Bar
	if in.Cur.P >= in.Threshold {
		style = st.BarChosen
	}
	marker := "  "
	if in.True == 1 {
		marker = "✓ "
	} else if in.True == 0 {
		marker = "✗ "
	}
	lines := []string{valueRow(marker, "P(true)", in.Cur.P, labelW, barW, style, st)}
	if in.Prev != nil {
		lines[0] = withDelta(lines[0], in.Prev.P, in.Cur.P, st)
		lines = append(lines, ghostRow(in.Prev.P, labelW, barW, st))
	}
	t := in.Threshold
	x := int(math.Round(t * float64(barW*8)))
	x = max(0, min(barW-1, x/8))
	tick := strings.Repeat(" ", x) + "▲"
	lines = append(lines, "  "+fit("threshold", labelW)+" "+st.Warn.Render(fit(tick, barW))+fmt.Sprintf(" %6.3f", t))
	return lines
}
