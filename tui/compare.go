package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

type (
	// compareMsg asks the compare screen to compare run b (the
	// candidate) against run a (the baseline, the first pick).
	compareMsg  struct{ a, b *workbench.Run }
	comparedMsg struct {
		seq int
		c   *workbench.Compared
		err error
	}
	// itemAnswersMsg carries one flipped item's answers in both runs,
	// with each run's questions as it asked them.
	itemAnswersMsg struct {
		seq  int
		sets [2]*questionset.Set
		res  [2]map[string]*workbench.ItemResult
		err  error
	}
)

// flipRow is one flipped item of one question.
type flipRow struct {
	q    string
	item workbench.FlipItem
}

type compareModel struct {
	e        *env
	w, h     int
	ld       loader                      // the comparison in flight (loading.go)
	a, b     *workbench.Run              // the runs compared: A the baseline
	sets     map[string]*questionset.Set // question snapshots by run id, read for the flipped items
	c        *workbench.Comparison
	iseq     int                                 // item answers sequence: a newer pick (or esc) drops an older read
	ireading bool                                // the open item's answers are being read
	ires     [2]map[string]*workbench.ItemResult // the open item's answers in A and B
	flips    []flipRow
	total    int // flips counted (every one is listed once compare lists them all)
	list     list
	open     bool
	head     []string // drawn summary
	fl       []string // drawn flipped-item rows
	detail   []string // drawn side-by-side item
	dscroll  list
	pending  compareMsg
	keys     bindings
}

func newCompareScreen(e *env) screen {
	m := &compareModel{e: e, list: newList(), dscroll: newScroll(), ld: loader{for_: screenCompare}, sets: map[string]*questionset.Set{}}
	k := e.keys
	listing := func() bool { return !m.open && m.c != nil && !m.ld.active }
	opened := func() bool { return m.open && !m.ld.active }
	m.keys = bindings{
		bind(k.Open, "Flipped items", m.openFlip).inBar().enabledWhen(func() bool { return listing() && len(m.flips) > 0 }).withDesc("both runs' answers"),
		bind(k.Back, "Flipped item", func() tea.Cmd { m.open, m.ireading = false, false; m.iseq++; return nil }).inBar().enabledWhen(opened),
		bind(k.Runs, "Compare", nil).inBar().withDesc("runs: pick A and B"),
	}
	for _, b := range m.list.navBindings(k, "Flipped items") {
		m.keys = append(m.keys, b.enabledWhen(listing))
	}
	for _, b := range m.dscroll.navBindings(k, "Flipped item") {
		m.keys = append(m.keys, b.enabledWhen(opened))
	}
	m.keys[3], m.keys[4] = m.keys[3].inBar(), m.keys[4].inBar()
	m.keys = append(m.keys, bind(k.Back, "Compare", m.cancelCompare).inBar().enabledWhen(func() bool { return m.ld.active }).withDesc("stop comparing"))
	return m
}

func (m *compareModel) capturing() bool { return false }
func (m *compareModel) help() helpMap   { return m.keys.help() }

func (m *compareModel) resize(w, h int) {
	m.w, m.h = w, h
	m.draw()
}

// openFlip opens the selected flipped item: its answers in both runs are
// read (workbench.ItemAnswers: that item only) in a command.
func (m *compareModel) openFlip() tea.Cmd {
	i, ok := m.list.selected()
	if !ok {
		return nil
	}
	f := m.flips[i]
	m.open, m.ireading, m.ires = true, true, [2]map[string]*workbench.ItemResult{}
	m.iseq++
	seq, ctx, db := m.iseq, m.e.ctx, m.e.sess.Template.DB
	runs := [2]*workbench.Run{m.a, m.b}
	known := [2]*questionset.Set{m.sets[m.a.ID], m.sets[m.b.ID]}
	m.drawDetail()
	return func() tea.Msg {
		out := itemAnswersMsg{seq: seq, sets: known}
		for i, r := range runs {
			if out.sets[i] == nil {
				if out.sets[i], out.err = workbench.RunSet(ctx, db, r); out.err != nil {
					return out
				}
			}
			if out.res[i], out.err = workbench.ItemAnswers(ctx, db, r, f.item.ItemID); out.err != nil {
				return out
			}
		}
		return out
	}
}

// cancelCompare stops the comparison in flight.
func (m *compareModel) cancelCompare() tea.Cmd {
	if m.ld.stop() {
		m.e.say("stopped comparing A %s → B %s", m.pending.a.ID, m.pending.b.ID)
	}
	return nil
}

func (m *compareModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case compareMsg:
		m.open, m.pending = false, msg
		db := m.e.sess.Template.DB
		ctx, seq, progress, ch, wait := m.ld.begin(m.e.ctx, fmt.Sprintf("comparing A %s → B %s", msg.a.ID, msg.b.ID), "items read")
		m.ld.after = fmt.Sprintf("comparing A %s → B %s: every item read, resampling the paired items", msg.a.ID, msg.b.ID)
		m.e.say("comparing A %s → B %s…", msg.a.ID, msg.b.ID)
		load := func() tea.Msg {
			defer close(ch)
			c, err := workbench.CompareStored(ctx, db, msg.a, msg.b, nil, progress) // DefaultCompareOptions: seed 1, as jevlab compare
			return comparedMsg{seq: seq, c: c, err: err}
		}
		return tea.Batch(load, wait) // load first: a synchronous driver (tests) runs it before waiting
	case loadProgressMsg:
		cmd, _ := m.ld.progress(msg)
		return cmd
	case itemAnswersMsg:
		if msg.seq != m.iseq || !m.open {
			return nil
		}
		m.ireading = false
		if msg.err != nil {
			m.open = false
			m.e.fail("read the item's answers: %s", firstLine(msg.err.Error()))
			return nil
		}
		m.sets[m.a.ID], m.sets[m.b.ID] = msg.sets[0], msg.sets[1]
		m.ires = msg.res
		m.drawDetail()
	case comparedMsg:
		if !m.ld.finished(msg.seq) {
			return nil // superseded or cancelled
		}
		if msg.err != nil {
			m.e.fail("compare: %s", firstLine(msg.err.Error()))
			return nil
		}
		m.a, m.b, m.c = msg.c.A, msg.c.B, msg.c.Comparison
		m.flips, m.total = m.flips[:0], 0
		for _, q := range m.c.Questions {
			m.total += q.Flips.Fixed + q.Flips.Broken + q.Flips.Changed
			for _, f := range q.Flips.Items {
				m.flips = append(m.flips, flipRow{q: q.ID, item: f})
			}
		}
		// Rank across questions by the shift of the true label's probability.
		sort.SliceStable(m.flips, func(i, j int) bool { return math.Abs(m.flips[i].item.Shift) > math.Abs(m.flips[j].item.Shift) })
		m.list.home()
		m.e.say("verdict: %s", m.c.Verdict)
		m.draw()
	case tea.KeyMsg:
		cmd, _ := m.keys.handle(msg)
		return cmd
	}
	return nil
}

func fmtDelta(d workbench.Delta) string {
	v := d.Delta
	if math.IsNaN(v.Value) {
		return "—"
	}
	return fmt.Sprintf("%+.3f [%+.3f,%+.3f]", v.Value, v.Lo, v.Hi)
}

// draw precomputes the summary: verdict, per-question deltas (questions
// that cannot be compared named with why), flips.
func (m *compareModel) draw() {
	st := &m.e.st
	w := max(20, m.w-1)
	if m.c == nil {
		m.head = nil
		return
	}
	c := m.c
	verdict := st.Good
	switch {
	case len(c.Regressions) > 0:
		verdict = st.Bad
	case c.Verdict == workbench.NotComparable:
		verdict = st.Warn
	}
	name := func(id, n, model string) string {
		if n != "" {
			id += " " + termsafe.String(n)
		}
		return id + " (" + termsafe.String(model) + ")"
	}
	boot := "paired bootstrap"
	for _, q := range c.Questions {
		if n := workbench.ResamplingNote(q.Resampling); n != "" {
			boot = "paired bootstrap (" + n + ")"
			break
		}
	}
	l := []string{
		st.Focused.Render(fit(fmt.Sprintf(" Compare · paired by item · 95%% %s, seed %d", boot, workbench.CanonicalSeed), w)),
		fit(" A (baseline) "+st.Key.Render(name(c.A.ID, c.A.Name, c.A.Model)), w),
		fit(" B            "+st.Key.Render(name(c.B.ID, c.B.Name, c.B.Model)), w),
		fit(" verdict: "+verdict.Render(c.Verdict), w),
	}
	var notComparable []string
	for _, q := range c.Questions {
		if q.Verdict == workbench.NotComparable {
			why := q.Reason
			if why == "" {
				why = q.Why
			}
			notComparable = append(notComparable, termsafe.String(q.ID)+" — "+termsafe.String(why))
		}
	}
	if len(notComparable) > 0 {
		for _, s := range wrapText("not comparable: "+strings.Join(notComparable, "; "), w-2, 4) {
			l = append(l, st.Warn.Render(" "+s))
		}
	}
	l = append(l, st.Muted.Render(fit(fmt.Sprintf("   %-14s %-16s %-23s %-23s %s", "question", "verdict", "Δ accuracy [95%]", "Δ Brier [95%]", "fixed/broken"), w)))
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
		case workbench.Improved:
			vs = st.Good
		case workbench.Regressed:
			vs = st.Bad
		case workbench.NotComparable:
			vs = st.Warn
		}
		row := fmt.Sprintf("   %-14s %s %-23s %-23s %d/%d", midTrunc(termsafe.String(q.ID), 14), vs.Render(fit(q.Verdict, 16)), acc, brier, q.Flips.Fixed, q.Flips.Broken)
		l = append(l, fit(row, w))
	}
	title := fmt.Sprintf(" Flipped items (%d), ranked by the shift in the true label's probability", m.total)
	if len(m.flips) < m.total {
		title = fmt.Sprintf(" Flipped items: %d listed of %d, ranked by the shift in the true label's probability", len(m.flips), m.total)
	}
	l = append(l, "", st.Focused.Render(fit(title, w)))
	m.head = l
	m.fl = m.fl[:0]
	for _, f := range m.flips {
		m.fl = append(m.fl, m.flipLine(f, w))
	}
	m.list.setLen(len(m.fl))
	m.list.setHeight(max(1, m.h-len(m.head)-1))
	if m.open {
		m.drawDetail()
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
	it := f.item
	return padRight(fmt.Sprintf("   %s %s %s label: %s · A %s → B %s · p(label) %.3f → %.3f (%+.3f)", kind.Render(fit(it.Kind, 7)), fit(termsafe.String(it.ItemID), 10),
		fit(termsafe.String(f.q), 12), termsafe.String(it.Label), termsafe.String(it.A), termsafe.String(it.B), it.PLabelA, it.PLabelB, it.Shift), w)
}

// drawDetail draws the selected flipped item's answers in both runs side
// by side, the true label marked.
func (m *compareModel) drawDetail() {
	st := &m.e.st
	i, ok := m.list.selected()
	if !ok {
		m.open = false
		return
	}
	f := m.flips[i]
	half := max(20, (m.w-3)/2)
	if m.ireading {
		m.detail = []string{st.Muted.Render(fit(fmt.Sprintf(" reading item %s's answers in both runs…", termsafe.String(f.item.ItemID)), m.w-1))}
		m.dscroll.setLen(1)
		m.dscroll.setHeight(m.h)
		return
	}
	chart := func(side int) []string {
		set := m.sets[[2]*workbench.Run{m.a, m.b}[side].ID]
		var q *provider.Question
		if set != nil {
			q, _ = set.Questions.Get(f.q)
		}
		if q == nil {
			return []string{st.Muted.Render("question not in this run")}
		}
		in := chartInput{ID: f.q, Q: q, Threshold: set.Threshold(f.q), True: -1, Width: half}
		if r := m.ires[side][f.q]; r != nil {
			in.True, in.Cur, in.CurQ, in.Err = r.Label, r.Answer, q, r.Err
		}
		return renderChart(in, st)
	}
	left, right := chart(0), chart(1)
	l := []string{st.Focused.Render(fit(fmt.Sprintf(" Item %s · %s · %s (label: %s)", termsafe.String(f.item.ItemID), termsafe.String(f.q), f.item.Kind, termsafe.String(f.item.Label)), m.w-1)),
		padRight(st.Key.Render(" A "+m.a.ID+" (baseline)"), half) + " │ " + st.Key.Render("B "+m.b.ID)}
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
	m.dscroll.setLen(len(l))
	m.dscroll.setHeight(m.h)
}

func (m *compareModel) view(w, h int) string {
	st := &m.e.st
	switch {
	case m.ld.active:
		return st.Muted.Render(fit(m.ld.line(), w))
	case m.c == nil:
		return st.Muted.Render(" Pick two runs on the runs screen (4, then space on each: the first is A, the baseline) to compare them here.")
	case m.open:
		return joinLines(m.dscroll.render(m.detail, nil))
	}
	lines := append([]string(nil), m.head...)
	lines = append(lines, m.list.render(m.fl, func(s string) string { return st.Selected.Render(stripForSelect(s)) })...)
	if len(m.flips) == 0 {
		lines = append(lines, st.Muted.Render("   no flipped items"))
	} else if more := m.list.more(); more != "" {
		lines = append(lines, st.Muted.Render(fit("   "+more+" · ↓/pgdn scroll", w)))
	}
	return joinLines(lines)
}
