package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// runsPage bounds how many runs the screen reads at once.
const runsPage = 500

// defaultPoll is how often the runs screen looks for runs stored by other
// processes (one indexed query for the newest run).
const defaultPoll = 2 * time.Second

type (
	runsLoadedMsg struct {
		runs []*workbench.Run
		err  error
	}
	// runsPollMsg is the poll's tick; newestRunMsg its answer.
	runsPollMsg  struct{}
	newestRunMsg struct {
		run *workbench.Run
		err error
	}
	headlinesMsg struct {
		heads map[string]*workbench.RunHeadline
	}
)

type runsModel struct {
	e      *env
	w, h   int
	loaded bool
	err    error
	runs   []*workbench.Run
	list   list
	lines  []string // one per row of list
	marked []string // A (the baseline, the first pick) then B
	query  string
	input  textinput.Model
	typing bool
	// thisSet keeps the runs of the set being designed only.
	thisSet bool

	heads   map[string]*workbench.RunHeadline // accuracy by run id
	asking  map[string]bool                   // headlines being measured
	newest  string                            // id@updated of the newest run seen
	keys    bindings
	typeKey bindings // while the filter line has focus (help only)
}

func newRunsScreen(e *env) screen {
	m := &runsModel{e: e, input: newTextInput("/"), list: newList(), heads: map[string]*workbench.RunHeadline{}, asking: map[string]bool{}}
	k := e.keys
	m.keys = bindings{
		bind(k.Mark, "Pick & compare", m.mark).inBar().withDesc("pick A (baseline), then B"),
		bind(k.Swap, "Pick & compare", m.swap).inBar().enabledWhen(func() bool { return len(m.marked) == 2 }),
		bind(k.Open, "Pick & compare", m.openRun).inBar().withDesc("open metrics"),
		bind(k.Back, "Pick & compare", m.clear).enabledWhen(func() bool { return len(m.marked) > 0 || m.query != "" || m.thisSet }).withDesc("clear picks and filters"),
		bind(k.Filter, "Filter", func() tea.Cmd { m.typing = true; return m.input.Focus() }).inBar().withDesc("filter set/model/name (!x inverts)"),
		bind(k.Cycle, "Filter", func() tea.Cmd { m.thisSet = !m.thisSet; m.rebuild(); return m.headlines() }).inBar().withDesc("this set only"),
		bind(k.Run, "Filter", m.load).withDesc("reload"),
	}
	for _, b := range m.list.navBindings(k, "Navigate") {
		do := b.do
		b.do = func(msg tea.KeyMsg) tea.Cmd { do(msg); return m.headlines() }
		m.keys = append(m.keys, b)
	}
	m.typeKey = bindings{bind(k.Accept, "Filter", nil).inBar().withDesc("keep filter"), bind(k.Back, "Filter", nil).inBar().withDesc("clear")}
	return m
}

func (m *runsModel) init() tea.Cmd { return tea.Batch(m.load(), m.poll()) }

// load reads the newest runs (metadata only; answers are read when a run
// is opened, compared or measured for its headline).
func (m *runsModel) load() tea.Cmd {
	if !m.e.hasDB() {
		return nil
	}
	db, ctx := m.e.sess.Template.DB, m.e.ctx
	return func() tea.Msg {
		runs, err := workbench.Runs(ctx, db, runsPage)
		return runsLoadedMsg{runs: runs, err: err}
	}
}

// poll schedules the next look for runs stored by other processes.
func (m *runsModel) poll() tea.Cmd {
	every := m.e.opt.PollEvery
	if every == 0 {
		every = defaultPoll
	}
	if every < 0 || !m.e.hasDB() {
		return nil
	}
	return tea.Tick(every, func(time.Time) tea.Msg { return runsPollMsg{} })
}

func runKey(r *workbench.Run) string { return r.ID + "@" + r.UpdatedAt.String() }

// headlines measures the accuracy of the runs in view that have none yet
// (or changed since), in one command.
func (m *runsModel) headlines() tea.Cmd {
	if !m.e.hasDB() {
		return nil
	}
	var todo []*workbench.Run
	s, e := m.list.window()
	for i := s; i < e; i++ {
		r := m.runs[m.list.rows[i]]
		h := m.heads[r.ID]
		if m.asking[runKey(r)] || (h != nil && h.UpdatedAt.Equal(r.UpdatedAt)) {
			continue
		}
		m.asking[runKey(r)] = true
		todo = append(todo, r)
	}
	if len(todo) == 0 {
		return nil
	}
	db, ctx, build := m.e.sess.Template.DB, m.e.ctx, m.e.sess.Template.Build
	return func() tea.Msg {
		out := map[string]*workbench.RunHeadline{}
		for _, r := range todo {
			h, err := workbench.StoredHeadline(ctx, db, r, build)
			if err != nil {
				h = &workbench.RunHeadline{RunID: r.ID, UpdatedAt: r.UpdatedAt} // drawn as "—"; not asked again until the run changes
			}
			out[r.ID] = h
		}
		return headlinesMsg{heads: out}
	}
}

func (m *runsModel) capturing() bool { return m.typing }

func (m *runsModel) help() helpMap {
	if m.typing {
		return m.typeKey.help()
	}
	return m.keys.help()
}

func (m *runsModel) resize(w, h int) {
	m.w, m.h = w, h
	m.input.Width = max(10, w-4)
	m.list.setHeight(m.room())
	m.rebuild()
}

// room is the number of run rows in view.
func (m *runsModel) room() int {
	n := m.h - 2 // title, column heads
	n--          // the selected run's footer
	if m.typing {
		n--
	}
	return max(1, n)
}

func (m *runsModel) keep(i int) bool {
	r := m.runs[i]
	if m.thisSet && r.SetName != m.e.set.Title() {
		return false
	}
	q := strings.ToLower(m.query)
	invert := strings.HasPrefix(q, "!")
	q = strings.TrimPrefix(q, "!")
	if q == "" {
		return true
	}
	hay := strings.ToLower(r.ID + " " + r.Name + " " + r.SetName + " " + r.Model + " " + strings.Join(r.Models, " "))
	return strings.Contains(hay, q) != invert
}

// columns: the wide layout adds the set, models, errors, cost and start.
func (m *runsModel) wide() bool { return m.w >= 120 }

func (m *runsModel) rebuild() {
	st := &m.e.st
	m.list.filter(len(m.runs), m.keep)
	m.list.setHeight(m.room())
	m.lines = m.lines[:0]
	for _, i := range m.list.rows {
		r := m.runs[i]
		mark := "  "
		for k, id := range m.marked {
			if id == r.ID {
				mark = []string{"A ", "B "}[k]
			}
		}
		status := st.Warn.Render(fit(string(r.Status), 11))
		if r.Status == workbench.StatusDone {
			status = st.Good.Render(fit(string(r.Status), 11))
		}
		var line string
		if m.wide() {
			models := r.Model
			if len(r.Models) > 0 {
				models = strings.Join(r.Models, "+")
			}
			line = fmt.Sprintf("%s%s %s %s %s %s %5d/%-5d %5d %s  %s", st.Key.Render(mark), fit(r.ID, 24), fit(midTrunc(termsafe.String(r.Name), 12), 12),
				fit(midTrunc(termsafe.String(r.SetName), 14), 14), fit(midTrunc(termsafe.String(models), 14), 14), status, r.Done, r.Total, r.Errors,
				r.StartedAt.Format("2006-01-02 15:04"), m.accuracy(r, 6))
		} else {
			// Narrow: the run by its name (its id when it has none; the
			// selected run's id and details are in the footer).
			label := r.ID
			if r.Name != "" {
				label = termsafe.String(r.Name)
			}
			line = fmt.Sprintf("%s%s %s %s", st.Key.Render(mark), fit(midTrunc(label, 16), 16), status, m.accuracy(r, 6))
		}
		m.lines = append(m.lines, padRight(" "+line, m.w))
	}
}

// accuracy is a run's headline: each question's accuracy, ids cut to idW
// cells in the middle (0: whole); "…" while it is measured, "—" when it
// cannot be.
func (m *runsModel) accuracy(r *workbench.Run, idW int) string {
	h := m.heads[r.ID]
	if h == nil {
		return m.e.st.Faint.Render("…")
	}
	if len(h.Questions) == 0 {
		return "—"
	}
	if idW == 0 {
		return termsafe.String(h.String())
	}
	parts := make([]string, 0, len(h.Questions))
	for _, q := range h.Questions {
		acc := "—"
		if !math.IsNaN(q.Accuracy) {
			acc = fmt.Sprintf("%.3f", q.Accuracy)
		}
		parts = append(parts, midTrunc(termsafe.String(q.ID), idW)+" "+acc)
	}
	return strings.Join(parts, " · ")
}

// footer is the selected run in full: id, every question's accuracy, set,
// model, items, cost, start.
func (m *runsModel) footer(w int) string {
	r := m.selected()
	if r == nil {
		return ""
	}
	models := r.Model
	if len(r.Models) > 0 {
		models = strings.Join(r.Models, "+")
	}
	return fit(fmt.Sprintf(" %s · accuracy %s · %s · %s · %d/%d items · $%.4f · %s", r.ID, m.accuracy(r, 0), termsafe.String(r.SetName), termsafe.String(models),
		r.Done, r.Total, r.CostUSD, r.StartedAt.Format("2006-01-02 15:04")), w)
}

func (m *runsModel) selected() *workbench.Run {
	i, ok := m.list.selected()
	if !ok {
		return nil
	}
	return m.runs[i]
}

func (m *runsModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case runsLoadedMsg:
		m.loaded, m.err = true, msg.err
		if msg.err == nil {
			m.runs = msg.runs
			if len(m.runs) > 0 {
				m.newest = runKey(m.runs[0])
			}
		}
		m.rebuild()
		return m.headlines()
	case runsPollMsg:
		db, ctx := m.e.sess.Template.DB, m.e.ctx
		return func() tea.Msg {
			r, err := workbench.NewestRun(ctx, db)
			return newestRunMsg{run: r, err: err}
		}
	case newestRunMsg:
		next := m.poll()
		if msg.err == nil && msg.run != nil && runKey(msg.run) != m.newest {
			m.newest = runKey(msg.run)
			return tea.Batch(m.load(), next)
		}
		return next
	case headlinesMsg:
		for id, h := range msg.heads {
			m.heads[id] = h
		}
		for k := range m.asking {
			if id, _, _ := strings.Cut(k, "@"); msg.heads[id] != nil {
				delete(m.asking, k)
			}
		}
		m.rebuild()
	case evalDoneMsg:
		return m.load()
	case tea.KeyMsg:
		if m.typing {
			var cmd tea.Cmd
			m.typing, m.query, cmd = filterKey(&m.input, msg)
			m.rebuild()
			return tea.Batch(cmd, m.headlines())
		}
		cmd, _ := m.keys.handle(msg)
		return cmd
	}
	return nil
}

// mark picks the selected run: the first pick is A (the baseline), the
// second B; picking a picked run unpicks it. Two picks compare.
func (m *runsModel) mark() tea.Cmd {
	r := m.selected()
	if r == nil {
		return nil
	}
	for i, id := range m.marked {
		if id == r.ID {
			m.marked = append(m.marked[:i], m.marked[i+1:]...)
			m.rebuild()
			return nil
		}
	}
	if len(m.marked) == 2 {
		m.marked = m.marked[:1] // a third pick replaces B; A stays the baseline
	}
	m.marked = append(m.marked, r.ID)
	m.rebuild()
	if len(m.marked) == 2 {
		return m.compare()
	}
	return nil
}

// swap makes B the baseline and compares again.
func (m *runsModel) swap() tea.Cmd {
	m.marked[0], m.marked[1] = m.marked[1], m.marked[0]
	m.rebuild()
	return m.compare()
}

func (m *runsModel) clear() tea.Cmd {
	m.marked, m.query, m.thisSet = nil, "", false
	m.input.SetValue("")
	m.rebuild()
	return m.headlines()
}

func (m *runsModel) openRun() tea.Cmd {
	r := m.selected()
	if r == nil {
		return nil
	}
	m.e.say("reading run %s…", r.ID)
	return tea.Batch(func() tea.Msg { return gotoScreenMsg{to: screenEval} }, func() tea.Msg { return openRunMsg{run: r} })
}

// compare sends the two picked runs to the compare screen: A the first
// pick (the baseline), B the second.
func (m *runsModel) compare() tea.Cmd {
	byID := map[string]*workbench.Run{}
	for _, r := range m.runs {
		byID[r.ID] = r
	}
	a, b := byID[m.marked[0]], byID[m.marked[1]]
	if a == nil || b == nil {
		return nil
	}
	return tea.Batch(func() tea.Msg { return gotoScreenMsg{to: screenCompare} }, func() tea.Msg { return compareMsg{a: a, b: b} })
}

func (m *runsModel) view(w, h int) string {
	st := &m.e.st
	switch {
	case !m.e.hasDB():
		return st.Muted.Render(" No database: runs are stored in SQLite (--db, $JEVLAB_DB).")
	case !m.loaded:
		return st.Muted.Render(" reading runs…")
	case m.err != nil && len(m.runs) == 0:
		return st.Bad.Render(" runs: " + firstLine(m.err.Error()))
	}
	title := fmt.Sprintf(" Runs %d of %d", m.list.len(), len(m.runs))
	if len(m.runs) == runsPage {
		title += fmt.Sprintf(" (the newest %d; `jevlab runs` lists all)", runsPage)
	}
	if m.thisSet {
		title += " · set " + termsafe.String(m.e.set.Title())
	}
	if m.query != "" {
		title += " · /" + termsafe.String(m.query)
	}
	switch len(m.marked) {
	case 1:
		title += " · A (baseline) " + m.marked[0] + " — pick B to compare"
	case 2:
		title += " · A (baseline) " + m.marked[0] + " → B " + m.marked[1] + " · s swaps"
	}
	if more := m.list.more(); more != "" {
		title += " · " + more
	}
	lines := []string{st.Focused.Render(fit(title, w))}
	if m.typing {
		lines = append(lines, m.input.View())
	}
	if len(m.runs) == 0 {
		lines = append(lines, st.Muted.Render(" no runs yet — start one on the evaluation screen (3, then r) or with `jevlab eval`"))
		return joinLines(lines)
	}
	head := fmt.Sprintf("   %-16s %-11s %s", "run", "status", "accuracy")
	if m.wide() {
		head = fmt.Sprintf("   %-24s %-12s %-14s %-14s %-11s %11s %5s %-16s  %s", "run", "name", "set", "model", "status", "items", "err", "started", "accuracy")
	}
	lines = append(lines, st.Muted.Render(fit(head, w)))
	lines = append(lines, m.list.render(m.lines, func(s string) string { return st.Selected.Render(fit(stripForSelect(s), w)) })...)
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, st.Muted.Render(m.footer(w)))
	return joinLines(lines)
}
