package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/store"
)

// runsPage bounds how many runs the screen reads at once.
const runsPage = 500

type (
	runsLoadedMsg struct {
		runs []*store.Run
		err  error
	}
	// compareMsg asks the compare screen to compare runs a (baseline) and
	// b (candidate).
	compareMsg struct{ a, b string }
)

type runsModel struct {
	e       *env
	w, h    int
	loaded  bool
	err     error
	runs    []*store.Run
	rows    []int
	lines   []string
	cursor  int
	marked  []string // up to two run ids
	query   string
	input   textinput.Model
	typing  bool
	thisSet bool
}

func newRunsScreen(e *env) screen { return &runsModel{e: e, input: newTextInput("/")} }

func (m *runsModel) init() tea.Cmd { return m.load() }

// load reads the newest runs (metadata only; answers are read when a run
// is opened or compared).
func (m *runsModel) load() tea.Cmd {
	db, ctx := m.e.opt.DB, m.e.ctx
	if db == nil {
		return nil
	}
	return func() tea.Msg {
		runs, err := db.Runs(ctx, store.RunFilter{Limit: runsPage})
		return runsLoadedMsg{runs: runs, err: err}
	}
}

func (m *runsModel) capturing() bool { return m.typing }

func (m *runsModel) resize(w, h int) {
	m.w, m.h = w, h
	m.input.Width = max(10, w-4)
	m.rebuild()
}

func (m *runsModel) rebuild() {
	st := &m.e.st
	m.rows, m.lines = m.rows[:0], m.lines[:0]
	q := strings.ToLower(m.query)
	invert := strings.HasPrefix(q, "!")
	q = strings.TrimPrefix(q, "!")
	for i, r := range m.runs {
		if m.thisSet && r.SetName != m.e.set.Title() {
			continue
		}
		if q != "" {
			hay := strings.ToLower(r.ID + " " + r.Name + " " + r.SetName + " " + r.Model + " " + strings.Join(r.Models, " "))
			if strings.Contains(hay, q) == invert {
				continue
			}
		}
		m.rows = append(m.rows, i)
		mark := "  "
		for k, id := range m.marked {
			if id == r.ID {
				mark = []string{"A ", "B "}[k]
			}
		}
		models := r.Model
		if len(r.Models) > 0 {
			models = strings.Join(r.Models, "+")
		}
		status := string(r.Status)
		switch r.Status {
		case store.StatusDone:
			status = st.Good.Render(fit(status, 11))
		default:
			status = st.Warn.Render(fit(status, 11))
		}
		line := fmt.Sprintf("%s%s %s %s %s %5d/%-5d %3d err $%.4f %s", st.Key.Render(mark), fit(r.ID, 24), fit(r.SetName, 16), fit(models, 14), status,
			r.Done, r.Total, r.Errors, r.CostUSD, r.StartedAt.Format("2006-01-02 15:04"))
		m.lines = append(m.lines, padRight(" "+line, m.w))
	}
	m.cursor = min(m.cursor, max(0, len(m.rows)-1))
}

func (m *runsModel) selected() *store.Run {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return nil
	}
	return m.runs[m.rows[m.cursor]]
}

func (m *runsModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case runsLoadedMsg:
		m.loaded, m.err, m.runs = true, msg.err, msg.runs
		m.rebuild()
	case evalDoneMsg:
		return m.load()
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

func (m *runsModel) key(msg tea.KeyMsg) tea.Cmd {
	k := m.e.keys
	if m.typing {
		var cmd tea.Cmd
		m.typing, m.query, cmd = filterKey(&m.input, msg)
		m.rebuild()
		return cmd
	}
	n := len(m.rows)
	switch {
	case key.Matches(msg, k.Up):
		m.cursor = max(0, m.cursor-1)
	case key.Matches(msg, k.Down):
		m.cursor = max(0, min(n-1, m.cursor+1))
	case key.Matches(msg, k.PageDown):
		m.cursor = max(0, min(n-1, m.cursor+m.h-3))
	case key.Matches(msg, k.PageUp):
		m.cursor = max(0, m.cursor-m.h+3)
	case key.Matches(msg, k.Top):
		m.cursor = 0
	case key.Matches(msg, k.Bottom):
		m.cursor = max(0, n-1)
	case key.Matches(msg, k.Filter):
		m.typing = true
		return m.input.Focus()
	case key.Matches(msg, k.Cycle):
		m.thisSet = !m.thisSet
		m.rebuild()
	case key.Matches(msg, k.Mark):
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
		m.marked = append(m.marked, r.ID)
		if len(m.marked) > 2 {
			m.marked = m.marked[len(m.marked)-2:]
		}
		m.rebuild()
		if len(m.marked) == 2 {
			return m.compare()
		}
	case key.Matches(msg, k.Open):
		r := m.selected()
		if r == nil {
			return nil
		}
		db, ctx, id := m.e.opt.DB, m.e.ctx, r.ID
		m.e.say("reading run %s…", id)
		return tea.Batch(func() tea.Msg { return gotoScreenMsg{to: screenEval} }, func() tea.Msg {
			ra, err := analyzeRun(ctx, db, id)
			return analysisMsg{ra: ra, err: err, for_: screenEval}
		})
	case key.Matches(msg, k.Back):
		m.marked, m.query, m.thisSet = nil, "", false
		m.input.SetValue("")
		m.rebuild()
	case key.Matches(msg, k.Run):
		return m.load()
	}
	return nil
}

// compare sends the two marked runs to the compare screen, older first.
func (m *runsModel) compare() tea.Cmd {
	a, b := m.marked[0], m.marked[1]
	byID := map[string]*store.Run{}
	for _, r := range m.runs {
		byID[r.ID] = r
	}
	ra, rb := byID[a], byID[b]
	if ra != nil && rb != nil && rb.StartedAt.Before(ra.StartedAt) {
		a, b = b, a
	}
	return tea.Batch(func() tea.Msg { return gotoScreenMsg{to: screenCompare} }, func() tea.Msg { return compareMsg{a: a, b: b} })
}

func (m *runsModel) help() helpMap {
	k := m.e.keys
	if m.typing {
		return helpMap{short: []key.Binding{withHelp(k.Accept, "enter", "keep filter"), withHelp(k.Back, "esc", "clear")}}
	}
	short := []key.Binding{k.Up, k.Down, withHelp(k.Mark, "space", "pick two to compare"), withHelp(k.Open, "enter", "metrics"), k.Filter, withHelp(k.Cycle, "f", "this set only")}
	return helpMap{short: short, full: [][]key.Binding{
		{withHelp(k.Mark, "space", "pick (two → compare)"), withHelp(k.Open, "enter", "open metrics"), withHelp(k.Filter, "/", "filter set/model (!x inverts)"), withHelp(k.Cycle, "f", "this set only"), withHelp(k.Run, "r", "reload"), withHelp(k.Back, "esc", "clear")},
		k.navKeys(),
	}}
}

func (m *runsModel) view(w, h int) string {
	st := &m.e.st
	switch {
	case m.e.opt.DB == nil:
		return st.Muted.Render(" No database: runs are stored in SQLite (--db, $JEVLAB_DB).")
	case !m.loaded:
		return st.Muted.Render(" reading runs…")
	case m.err != nil:
		return st.Bad.Render(" runs: " + firstLine(m.err.Error()))
	}
	title := fmt.Sprintf(" Runs %d of %d", len(m.rows), len(m.runs))
	if len(m.runs) == runsPage {
		title += fmt.Sprintf(" (the newest %d; `jevlab runs` lists all)", runsPage)
	}
	if m.thisSet {
		title += " · set " + termsafe.String(m.e.set.Title())
	}
	if m.query != "" {
		title += " · /" + m.query
	}
	if len(m.marked) == 1 {
		title += " · picked " + m.marked[0] + " — pick one more to compare"
	}
	lines := []string{st.Focused.Render(fit(title, w))}
	if m.typing {
		lines = append(lines, m.input.View())
	}
	if len(m.runs) == 0 {
		lines = append(lines, st.Muted.Render(" no runs yet — start one on the evaluation screen (3, then r) or with `jevlab eval`"))
		return strings.Join(lines, "\n")
	}
	room := max(1, h-len(lines))
	top := 0
	if m.cursor >= room {
		top = m.cursor - room + 1
	}
	for i := top; i < len(m.lines) && i < top+room; i++ {
		if i == m.cursor {
			lines = append(lines, st.Selected.Render(fit(stripForSelect(m.lines[i]), w)))
		} else {
			lines = append(lines, m.lines[i])
		}
	}
	return strings.Join(lines, "\n")
}
