package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// est formats an estimate with its interval: "0.778 [0.742,0.816]"; the
// same figures `jevlab show` prints.
func est(e workbench.Estimate) string {
	if math.IsNaN(e.Value) {
		return "—"
	}
	if math.IsNaN(e.Lo) || math.IsNaN(e.Hi) || (e.Lo == 0 && e.Hi == 0) {
		return fmt.Sprintf("%.3f", e.Value)
	}
	return fmt.Sprintf("%.3f [%.3f,%.3f]", e.Value, e.Lo, e.Hi) + workbench.IntervalMark(e)
}

// mean formats a mean probability ("—" when undefined).
func mean(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return fmt.Sprintf("%.3f", p)
}

// metricsTable draws every question's headline figures, the ones `jevlab
// show` prints: accuracy beside the mean top prob (the probability each
// answer gives its decision; show's "mean confidence") and the gap between
// them (a model sure of more than it gets right is overconfident), the mean
// of the provider's confidence field, ECE, and when wide Brier, log loss
// and errors; a score question adds within one, MAE and QWK.
func (m *evalModel) metricsTable(w int) []string {
	st := &m.e.st
	v := m.v
	boot := "bootstrap"
	for _, r := range v.Report.Questions {
		if n := workbench.ResamplingNote(r.Conventions.Resampling); n != "" {
			boot = "bootstrap (" + n + ")"
			break
		}
	}
	l := []string{st.Focused.Render(fit(fmt.Sprintf(" Metrics · run %s · 95%% intervals: %s (seed %d), ᵂ Wilson, ᴺ Newcombe · [ ] picks a question", v.Run.ID, boot, workbench.CanonicalSeed), w))}
	wide := w >= 150
	qw := 11
	if wide {
		qw = 0
		for _, r := range v.Report.Questions {
			qw = max(qw, len([]rune(r.ID)))
		}
		qw = max(11, min(qw, 24))
	}
	head := fmt.Sprintf("   %-*s %4s %-19s %-19s", qw, "question", "n", "accuracy", "top prob")
	if wide {
		head += fmt.Sprintf(" %-7s %-10s %-19s %-19s %-19s %s", "gap", "confidence", "ECE", "Brier", "log loss", "errors")
	}
	l = append(l, st.Muted.Render(fit(head, w)))
	indent := strings.Repeat(" ", qw+4)
	for i, r := range v.Report.Questions {
		c := v.Confidence(r.ID)
		conf := mean(c.MeanConfidence)
		if !m.answersRead() {
			conf = "…" // the provider's field is averaged over the answers, not yet read
		}
		gap := "—"
		if r.Overconfidence.Defined() {
			gap = fmt.Sprintf("%+.3f", r.Overconfidence.Value)
		}
		if r.Box != nil { // evalbox.go
			row := boxRow(r, qw)
			if i == m.qi {
				l = append(l, st.Selected.Render(fit(" ▶ "+row, w)))
			} else {
				l = append(l, fit("   "+row, w))
			}
			continue
		}
		row := fmt.Sprintf("%-*s %4d %-19s %-19s", qw, midTrunc(termsafe.String(r.ID), qw), r.Labelled, est(r.Accuracy), est(r.MeanConfidence))
		if wide {
			errs := 0
			for _, n := range r.Errors {
				errs += n
			}
			row += fmt.Sprintf(" %-7s %-10s %-19s %-19s %-19s %d", gap, conf, est(r.ECE), est(r.Brier), est(r.LogLoss), errs)
		}
		if i == m.qi {
			l = append(l, st.Selected.Render(fit(" ▶ "+row, w)))
		} else {
			l = append(l, fit("   "+row, w))
		}
		if !wide {
			l = append(l, fit(fmt.Sprintf("%s gap %s · confidence %s · ECE %s", indent, gap, conf, est(r.ECE)), w))
		}
		if s := r.Score; s != nil {
			l = append(l, fit(fmt.Sprintf("%s within one %s · MAE %s · QWK %s", indent, est(s.WithinOneArgmax), est(s.MAE), est(s.QWK)), w))
		}
	}
	l = append(l, st.Muted.Render(fit(" top prob: the probability each answer gives its decision · gap: top prob − accuracy · confidence: the provider's confidence field (a noul has none)", w)))
	return append(l, m.variantsTable(w)...)
}

// confusionLines draws the heat-shaded confusion matrix (rows: true label,
// columns: decision), limited to the classes that occur and fit. Columns
// carry the rows' numbers; labels cut in the middle stay distinguishable.
func confusionLines(st *Styles, rep *workbench.QuestionReport, mat [][]int, w int) []string {
	l := []string{st.Focused.Render(fit(" Confusion · rows = true label, columns = decision (numbered as the rows)", w))}
	if len(mat) == 0 {
		return append(l, st.Muted.Render(fit(" no labelled answers", w)))
	}
	k := len(mat)
	support := make([]int, k)
	for i := range mat {
		for j := range mat[i] {
			support[i] += mat[i][j]
			if j < k {
				support[j] += mat[i][j]
			}
		}
	}
	var cls []int
	for i := range support {
		if support[i] > 0 {
			cls = append(cls, i)
		}
	}
	sort.SliceStable(cls, func(a, b int) bool { return support[cls[a]] > support[cls[b]] })
	const cellW = 5
	longest := 0
	for _, c := range cls {
		if c < len(rep.Classes) {
			longest = max(longest, ansi.StringWidth(termsafe.String(rep.Classes[c]))+3)
		}
	}
	labelW := max(14, min(longest, w/3))
	maxCols := max(1, (w-labelW-2)/cellW)
	shown := append([]int(nil), cls[:min(len(cls), maxCols)]...)
	sort.Ints(shown)
	// Numbers: a score's levels by their index (as every screen names
	// them), choices and nouls from 1.
	num := func(i int) int {
		if rep.Type == provider.Score {
			return i
		}
		return i + 1
	}
	name := func(i int) string {
		label := fmt.Sprint(i)
		if i < len(rep.Classes) {
			label = termsafe.String(rep.Classes[i])
		}
		return fmt.Sprintf("%2d %s", num(i), label)
	}
	head := " " + strings.Repeat(" ", labelW) + " "
	for _, j := range shown {
		head += fmt.Sprintf("%*d ", cellW-1, num(j))
	}
	l = append(l, st.Muted.Render(fit(head, w)))
	for _, i := range shown {
		row := " " + fit(midTrunc(name(i), labelW), labelW) + " "
		total := 0
		for _, v := range mat[i] {
			total += v
		}
		for _, j := range shown {
			v := 0
			if j < len(mat[i]) {
				v = mat[i][j]
			}
			shade := 0
			if total > 0 && v > 0 {
				shade = 1 + int(float64(v)/float64(total)*float64(len(st.Heat)-2)+0.5)
			}
			cell := fmt.Sprintf("%*d ", cellW-1, v)
			if v == 0 {
				cell = fmt.Sprintf("%*s ", cellW-1, "·")
			}
			row += st.Heat[min(shade, len(st.Heat)-1)].Render(cell)
		}
		l = append(l, row)
	}
	if len(shown) < len(cls) {
		l = append(l, st.Muted.Render(fit(fmt.Sprintf(" showing the %d most frequent of the %d classes that occur", len(shown), len(cls)), w)))
	}
	return l
}
