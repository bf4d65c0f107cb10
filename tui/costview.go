package tui

import (
	"fmt"
	"math"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
)

// The evaluate screen's cost view: what a question's declared costs make
// of the run's labelled answers as the noul threshold (,/.) or the
// confidence cut-point (←/→) moves. Every number comes from
// RunView.CostView; this file only draws.

// costAt is where the cost view stands.
func (m *evalModel) costAt() workbench.CostAt {
	return workbench.CostAt{Threshold: m.thr, Cut: m.cut}
}

// hasCostView reports whether the selected question declares costs.
func (m *evalModel) hasCostView() bool {
	if m.v == nil {
		return false
	}
	_, qid := m.selectedQuestion()
	_, ok := m.v.CostView(qid, m.costAt())
	return ok
}

func (m *evalModel) moveThreshold(d float64) tea.Cmd {
	m.thr = math.Max(0, math.Min(1, math.Round((m.thr+d)*100)/100))
	m.draw()
	return nil
}

// costLines draws question qid's cost view (none without costs).
func (m *evalModel) costLines(qid string, w int) []string {
	cv, ok := m.v.CostView(qid, m.costAt())
	if !ok {
		return nil
	}
	st := &m.e.st
	l := []string{"", st.Focused.Render(fit(" Costs · "+cv.Costs, w))}
	if !m.answersRead() {
		return append(l, st.Muted.Render(fit(" "+m.needsAnswers(), w)))
	}
	switch {
	case cv.Noul != nil:
		o := cv.Noul
		where := fmt.Sprintf(" threshold %.2f (,/. moves it): yes at p ≥ %.2f, no below %.2f", m.thr, o.Hi, o.Lo)
		if !cv.Abstains {
			where = fmt.Sprintf(" threshold %.2f (,/. moves it): yes at p ≥ %.2f, never abstains", m.thr, o.Hi)
		} else if o.Lo != o.Hi {
			where += fmt.Sprintf(", abstain between (cut %.2f)", m.cut)
		}
		l = append(l, fit(where, w))
		l = append(l, fit(fmt.Sprintf(" n %d  TP %d  FP %d  TN %d  FN %d  abstain %d", o.N, o.TP, o.FP, o.TN, o.FN, o.Abstain), w))
		l = append(l, m.costTail(o.Coverage, o.Errors, o.PerThousand, w)...)
	case cv.Choice != nil:
		o := cv.Choice
		where := fmt.Sprintf(" cut %.2f (←/→ moves it): decide at top probability ≥ %.2f, abstain below", m.cut, m.cut)
		if !cv.Abstains {
			where = " every item decided (no abstain cost declared)"
		}
		l = append(l, fit(where, w))
		l = append(l, m.choiceConfusion(cv, w)...)
		l = append(l, m.costTail(o.Coverage, o.Errors, o.PerThousand, w)...)
	}
	for _, f := range cv.Fitted {
		l = append(l, st.Muted.Render(fit(" "+strings.TrimSpace(f), w)))
	}
	return l
}

// costTail draws coverage as a bar, then errors and cost per 1,000.
func (m *evalModel) costTail(coverage float64, errors int, perThousand float64, w int) []string {
	st := &m.e.st
	barW := max(10, w-34)
	return []string{
		fmt.Sprintf(" coverage %s %5.1f%%", st.Bar.Render(Bar(coverage, barW)), 100*coverage),
		fit(fmt.Sprintf(" errors %d · expected cost per 1,000 items %.1f", errors, perThousand), w),
	}
}

// choiceConfusion draws the decided answers by true option (rows) and
// decision (columns), with the abstentions last.
func (m *evalModel) choiceConfusion(cv *workbench.CostView, w int) []string {
	o := cv.Choice
	cw := 6
	for _, name := range cv.Options {
		cw = max(cw, min(14, len([]rune(name))+1))
	}
	row := func(head string, cells []string) string {
		b := fmt.Sprintf(" %-*s", cw, trunc(head, cw))
		for _, c := range cells {
			b += fmt.Sprintf("%*s", cw, trunc(c, cw-1))
		}
		return fit(b, w)
	}
	head := append(append([]string{}, cv.Options...), "abstain")
	l := []string{row("true\\dec", head)}
	for t, name := range cv.Options {
		cells := make([]string, 0, len(cv.Options)+1)
		for d := range cv.Options {
			cells = append(cells, fmt.Sprint(o.Confusion[t][d]))
		}
		l = append(l, row(name, append(cells, fmt.Sprint(o.Abstained[t]))))
	}
	return l
}

// trunc cuts s to n runes.
func trunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(0, n)])
}
