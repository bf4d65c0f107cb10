package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/compare"
)

type comparedMsg struct {
	a, b *runAnalysis
	c    *compare.Comparison
	err  error
}

// flipRow is one flipped item of one question.
type flipRow struct {
	q    string
	item compare.FlipItem
}

type compareModel struct {
	e       *env
	w, h    int
	busy    bool
	err     error
	a, b    *runAnalysis
	c       *compare.Comparison
	flips   []flipRow
	cursor  int
	open    bool
	head    []string // drawn summary
	fl      []string // drawn flipped-item rows
	detail  []string // drawn side-by-side item
	scroll  int
	pending compareMsg
}

func newCompareScreen(e *env) screen { return &compareModel{e: e} }

func (m *compareModel) capturing() bool { return false }

func (m *compareModel) resize(w, h int) {
	m.w, m.h = w, h
	m.draw()
}

func (m *compareModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case compareMsg:
		m.busy, m.err, m.open, m.cursor, m.pending = true, nil, false, 0, msg
		db, ctx := m.e.opt.DB, m.e.ctx
		m.e.say("comparing %s → %s…", msg.a, msg.b)
		return func() tea.Msg {
			a, err := analyzeRun(ctx, db, msg.a)
			if err != nil {
				return comparedMsg{err: err}
			}
			b, err := analyzeRun(ctx, db, msg.b)
			if err != nil {
				return comparedMsg{err: err}
			}
			return comparedMsg{a: a, b: b, c: compare.Compare(a.data, b.data, compare.Options{})}
		}
	case comparedMsg:
		m.busy, m.err = false, msg.err
		if msg.err != nil {
			m.e.fail("compare: %s", firstLine(msg.err.Error()))
			return nil
		}
		m.a, m.b, m.c = msg.a, msg.b, msg.c
		m.flips = m.flips[:0]
		for _, q := range m.c.Questions {
			for _, f := range q.Flips.Items {
				m.flips = append(m.flips, flipRow{q: q.ID, item: f})
			}
		}
		// Rank across questions by the shift of the true label's probability.
		sortFlips(m.flips)
		m.e.say("verdict: %s", m.c.Verdict)
		m.draw()
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

func sortFlips(f []flipRow) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && math.Abs(f[j].item.Shift) > math.Abs(f[j-1].item.Shift); j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

func (m *compareModel) key(msg tea.KeyMsg) tea.Cmd {
	k := m.e.keys
	if m.open {
		switch {
		case key.Matches(msg, k.Back):
			m.open, m.scroll = false, 0
		case key.Matches(msg, k.Up):
			m.scroll = max(0, m.scroll-1)
		case key.Matches(msg, k.Down):
			m.scroll = min(m.scroll+1, max(0, len(m.detail)-1))
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Up):
		m.cursor = max(0, m.cursor-1)
	case key.Matches(msg, k.Down):
		m.cursor = max(0, min(len(m.flips)-1, m.cursor+1))
	case key.Matches(msg, k.Open):
		if m.cursor < len(m.flips) {
			m.open, m.scroll = true, 0
			m.drawDetail()
		}
	}
	return nil
}

func (m *compareModel) help() helpMap {
	k := m.e.keys
	if m.open {
		return helpMap{short: []key.Binding{k.Up, k.Down, k.Back}}
	}
	return helpMap{short: []key.Binding{k.Up, k.Down, withHelp(k.Open, "enter", "open flipped item"), k.Runs},
		full: [][]key.Binding{{withHelp(k.Open, "enter", "both runs' answers side by side"), k.Back}, k.navKeys()}}
}

func fmtDelta(d compare.Delta) string {
	v := d.Delta
	s := fmt.Sprintf("%+.3f [%+.3f,%+.3f]", v.Value, v.Lo, v.Hi)
	if math.IsNaN(v.Value) {
		return "—"
	}
	return s
}

// draw precomputes the summary: verdict, per-question deltas, flips.
func (m *compareModel) draw() {
	st := &m.e.st
	w := max(20, m.w-1)
	if m.c == nil {
		m.head = nil
		return
	}
	c := m.c
	verdict := st.Good
	if len(c.Regressions) > 0 {
		verdict = st.Bad
	}
	l := []string{
		st.Focused.Render(fit(fmt.Sprintf(" Compare A %s (%s) → B %s (%s)", c.A.ID, c.A.Model, c.B.ID, c.B.Model), w)),
		" verdict: " + verdict.Render(c.Verdict),
		st.Muted.Render(fit(fmt.Sprintf("   %-14s %-22s %-26s %-26s %s", "question", "verdict", "Δ accuracy [95%]", "Δ Brier [95%]", "fixed/broken"), w)),
	}
	for _, q := range c.Questions {
		var acc, brier string
		for _, d := range q.Deltas {
			switch d.Metric {
			case "accuracy":
				acc = fmtDelta(d)
			case "brier":
				brier = fmtDelta(d)
			}
		}
		vs := st.Muted
		switch q.Verdict {
		case compare.Improved:
			vs = st.Good
		case compare.Regressed:
			vs = st.Bad
		}
		row := fmt.Sprintf("   %-14s %s %-26s %-26s %d/%d", truncID(q.ID, 14), vs.Render(fit(q.Verdict, 22)), acc, brier, q.Flips.Fixed, q.Flips.Broken)
		l = append(l, padRight(row, w))
		if q.Reason != "" {
			l = append(l, st.Muted.Render(fit("     "+q.Reason, w)))
		}
	}
	l = append(l, "", st.Focused.Render(fit(fmt.Sprintf(" Flipped items (%d), ranked by the shift in the true label's probability — enter opens", len(m.flips)), w)))
	m.head = l
	m.fl = m.fl[:0]
	for _, f := range m.flips {
		m.fl = append(m.fl, m.flipLine(f, w))
	}
}

func (m *compareModel) flipLine(f flipRow, w int) string {
	st := &m.e.st
	kind := st.Muted
	switch f.item.Kind {
	case "fixed":
		kind = st.Good
	case "broken":
		kind = st.Bad
	}
	return padRight(fmt.Sprintf("   %s %s %s true %s: %s → %s  P(true) %.3f → %.3f (%+.3f)", kind.Render(fit(f.item.Kind, 7)), fit(f.item.ItemID, 10), fit(f.q, 12),
		f.item.Label, f.item.A, f.item.B, f.item.PTrueA, f.item.PTrueB, f.item.Shift), w)
}

// drawDetail draws the selected flipped item's answers in both runs side
// by side, the true label marked.
func (m *compareModel) drawDetail() {
	st := &m.e.st
	f := m.flips[m.cursor]
	half := max(20, (m.w-3)/2)
	chart := func(ra *runAnalysis) []string {
		q := ra.question(f.q)
		if q == nil {
			return []string{st.Muted.Render("question not in this run")}
		}
		in := chartInput{ID: f.q, Q: q, Threshold: ra.set.Threshold(f.q), True: -1, Width: half}
		if lab, ok := ra.labels[f.item.ItemID][f.q]; ok {
			in.True = lab
		}
		if r := ra.byItem[f.item.ItemID][f.q]; r != nil {
			in.Cur, in.CurQ, in.Err = r.ans, r.asked, r.err
		}
		return renderChart(in, st)
	}
	left, right := chart(m.a), chart(m.b)
	l := []string{st.Focused.Render(fit(fmt.Sprintf(" Item %s · %s · %s (true: %s)", f.item.ItemID, f.q, f.item.Kind, f.item.Label), m.w-1)),
		padRight(st.Key.Render(" A "+m.a.run.ID), half) + " │ " + st.Key.Render("B "+m.b.run.ID)}
	for i := 0; i < max(len(left), len(right)); i++ {
		a, b := "", ""
		if i < len(left) {
			a = left[i]
		}
		if i < len(right) {
			b = right[i]
		}
		l = append(l, padRight(a, half)+" │ "+b)
	}
	m.detail = l
}

func (m *compareModel) view(w, h int) string {
	st := &m.e.st
	switch {
	case m.busy:
		return st.Muted.Render(fmt.Sprintf(" comparing %s → %s…", m.pending.a, m.pending.b))
	case m.c == nil:
		return st.Muted.Render(" Pick two runs on the runs screen (4, then space on each) to compare them here.")
	case m.open:
		end := min(len(m.detail), m.scroll+h)
		return strings.Join(m.detail[min(m.scroll, end):end], "\n")
	}
	lines := append([]string(nil), m.head...)
	room := max(1, h-len(lines))
	top := 0
	if m.cursor >= room {
		top = m.cursor - room + 1
	}
	for i := top; i < len(m.fl) && i < top+room; i++ {
		row := m.fl[i]
		if i == m.cursor {
			row = st.Selected.Render(stripForSelect(row))
		}
		lines = append(lines, row)
	}
	if len(m.flips) == 0 {
		lines = append(lines, st.Muted.Render("   no flipped items"))
	}
	return strings.Join(lines, "\n")
}
