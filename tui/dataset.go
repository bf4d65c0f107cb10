package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/provider"
)

// Messages of the dataset screen.
type (
	datasetLoadedMsg struct {
		items []dataset.Item
		err   error
	}
	itemDoneMsg struct {
		itemID  string
		asked   provider.Questions
		answers []provider.Answer
		err     error
	}
	// itemAnswersMsg carries a finished evaluation's answers by item and
	// question id, so the dataset screen can show correctness.
	itemAnswersMsg struct {
		runID   string
		answers map[string]map[string]*itemResult
	}
)

// itemResult is one item's answer to one question, with the question as
// asked.
type itemResult struct {
	ans   *provider.Answer
	asked *provider.Question
	err   string
}

// Filters cycled with f.
const (
	filterAll = iota
	filterWrong
	filterLowConf
	nFilters
)

var filterNames = [...]string{"all", "wrong only", "low confidence"}

// lowConfidence is the confidence under which an answer counts as low.
const lowConfidence = 0.6

type datasetModel struct {
	e       *env
	w, h    int
	loading bool
	loadErr error
	items   []dataset.Item
	results map[string]map[string]*itemResult // item → question → result
	runID   string                            // evaluation the results came from

	filter    int
	query     string
	filtering bool
	input     textinput.Model

	rows   []int    // indices into items after filtering
	lines  []string // drawn rows
	cursor int

	open      bool     // detail view of the selected item
	detail    []string // drawn detail
	scroll    int
	running   map[string]bool
	cancelRun context.CancelFunc
}

func newDatasetScreen(e *env, _ *designModel) screen {
	return &datasetModel{e: e, results: map[string]map[string]*itemResult{}, running: map[string]bool{},
		input: newTextInput("/"), loading: e.opt.Dataset != nil}
}

func (m *datasetModel) init() tea.Cmd {
	load := m.e.opt.Dataset
	if load == nil {
		return nil
	}
	ctx := m.e.ctx
	return func() tea.Msg {
		items, err := load(ctx)
		return datasetLoadedMsg{items: items, err: err}
	}
}

func (m *datasetModel) capturing() bool { return m.filtering }

func (m *datasetModel) resize(w, h int) {
	m.w, m.h = w, h
	m.input.Width = max(10, w-4)
	m.rebuild()
}

// correct reports whether an item's answer to question id matches its
// label: 1 right, 0 wrong, -1 unknown (no label or no answer).
func (m *datasetModel) correct(it *dataset.Item, id string) int {
	lab, ok := it.Labels[id]
	r := m.results[it.ID][id]
	q, qok := m.e.set.Questions.Get(id)
	if !ok || r == nil || r.ans == nil || !qok || lab.Index < 0 {
		return -1
	}
	dec := decisionIndex(r.ans, r.asked, q, m.e.set.Threshold(id))
	if dec == lab.Index {
		return 1
	}
	return 0
}

// decisionIndex is the decided outcome as an index of the current question
// q (choice matched by label).
func decisionIndex(a *provider.Answer, asked, q *provider.Question, threshold float64) int {
	switch a.Type {
	case provider.Choice:
		return q.OptionIndex(a.Choice)
	default:
		return a.Decision(threshold)
	}
}

// rebuild filters the items and draws the rows: done when items, results,
// the filter or the width change, never in View.
func (m *datasetModel) rebuild() {
	m.rows = m.rows[:0]
	q := strings.ToLower(m.query)
	invert := strings.HasPrefix(q, "!")
	q = strings.TrimPrefix(q, "!")
	ids := m.e.set.Questions.IDs()
	for i := range m.items {
		it := &m.items[i]
		if !m.keep(it, ids) {
			continue
		}
		if q != "" {
			hit := strings.Contains(strings.ToLower(it.ID), q) || strings.Contains(strings.ToLower(string(it.State)), q)
			for _, l := range it.Labels {
				hit = hit || strings.Contains(strings.ToLower(l.Text), q)
			}
			if hit == invert {
				continue
			}
		}
		m.rows = append(m.rows, i)
	}
	if m.cursor >= len(m.rows) {
		m.cursor = max(0, len(m.rows)-1)
	}
	m.lines = m.lines[:0]
	st := &m.e.st
	idW := 10
	labW := min(24, max(10, (m.w-idW-12)/3))
	for _, i := range m.rows {
		it := &m.items[i]
		var labs, marks []string
		conf := ""
		for _, id := range ids {
			if l, ok := it.Labels[id]; ok {
				labs = append(labs, m.labelShort(id, l))
			}
			switch m.correct(it, id) {
			case 1:
				marks = append(marks, st.Good.Render("✓"))
			case 0:
				marks = append(marks, st.Bad.Render("✗"))
			default:
				if r := m.results[it.ID][id]; r != nil && r.err != "" {
					marks = append(marks, st.Warn.Render("!"))
				} else {
					marks = append(marks, st.Faint.Render("·"))
				}
			}
			if r := m.results[it.ID][id]; r != nil && r.ans != nil && r.ans.HasConfidence && conf == "" {
				conf = fmt.Sprintf("%.2f", r.ans.Confidence)
			}
		}
		if m.running[it.ID] {
			conf = "…"
		}
		mk := strings.Join(marks, "")
		line := fmt.Sprintf(" %s %s %s %4s  %s", fit(it.ID, idW), padRight(mk, max(3, len(ids))), fit(strings.Join(labs, ","), labW), conf,
			oneLine(it.State))
		m.lines = append(m.lines, padRight(line, m.w))
	}
	if m.open {
		m.drawDetail()
	}
}

// labelShort is a label as the list shows it: a score level by its index
// (its text is in the item's detail), other labels by their text.
func (m *datasetModel) labelShort(id string, l dataset.Label) string {
	if q, ok := m.e.set.Questions.Get(id); ok && q.Type == provider.Score && l.Index >= 0 {
		return fmt.Sprintf("L%d", l.Index)
	}
	return l.Text
}

// keep applies the f filter.
func (m *datasetModel) keep(it *dataset.Item, ids []string) bool {
	switch m.filter {
	case filterWrong:
		for _, id := range ids {
			if m.correct(it, id) == 0 {
				return true
			}
		}
		return false
	case filterLowConf:
		for _, id := range ids {
			r := m.results[it.ID][id]
			if r == nil || r.ans == nil {
				continue
			}
			if (r.ans.HasConfidence && r.ans.Confidence < lowConfidence) ||
				(r.ans.Type == provider.Noul && r.ans.P > 1-lowConfidence && r.ans.P < lowConfidence) {
				return true
			}
		}
		return false
	}
	return true
}

func (m *datasetModel) selected() *dataset.Item {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return nil
	}
	return &m.items[m.rows[m.cursor]]
}

// drawDetail draws the open item: its state and every question's chart
// with the true label marked.
func (m *datasetModel) drawDetail() {
	it := m.selected()
	st := &m.e.st
	if it == nil {
		m.detail = nil
		return
	}
	w := m.w - 1
	lines := []string{st.Focused.Render(fit("Item "+it.ID, w))}
	for _, l := range wrapText(provider.Text(it.State), w-2, 6) {
		lines = append(lines, " "+st.Muted.Render(l))
	}
	for _, qe := range m.e.set.Questions {
		lines = append(lines, "")
		r := m.results[it.ID][qe.ID]
		in := chartInput{ID: qe.ID, Q: &qe.Question, Threshold: m.e.set.Threshold(qe.ID), True: -1, Width: w}
		if lab, ok := it.Labels[qe.ID]; ok {
			in.True = lab.Index
			in.ID += "  (true: " + lab.Text + ")"
		}
		if r != nil {
			in.Cur, in.CurQ, in.Err = r.ans, r.asked, r.err
		}
		lines = append(lines, renderChart(in, st)...)
	}
	m.detail = lines
}

func (m *datasetModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case datasetLoadedMsg:
		m.loading, m.items, m.loadErr = false, msg.items, msg.err
		m.e.items = msg.items
		m.rebuild()
		return nil
	case itemDoneMsg:
		delete(m.running, msg.itemID)
		res := m.results[msg.itemID]
		if res == nil {
			res = map[string]*itemResult{}
			m.results[msg.itemID] = res
		}
		if msg.err != nil {
			for _, id := range msg.asked.IDs() {
				res[id] = &itemResult{err: describeErr(msg.err)}
			}
			m.e.fail("item %s: %s", msg.itemID, describeErr(msg.err))
		} else {
			for i := range msg.answers {
				a := msg.answers[i]
				q, ok := msg.asked.Get(a.ID)
				if !ok {
					continue
				}
				qc := cloneQuestion(*q)
				res[a.ID] = &itemResult{ans: &a, asked: &qc}
			}
			m.e.say("item %s answered", msg.itemID)
		}
		m.rebuild()
		return nil
	case itemAnswersMsg:
		m.results, m.runID = msg.answers, msg.runID
		m.rebuild()
		return nil
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

func (m *datasetModel) key(msg tea.KeyMsg) tea.Cmd {
	k := m.e.keys
	if m.filtering {
		var cmd tea.Cmd
		m.filtering, m.query, cmd = filterKey(&m.input, msg)
		if m.filtering {
			m.cursor = 0
		}
		m.rebuild()
		return cmd
	}
	if m.open {
		switch {
		case key.Matches(msg, k.Back):
			m.open, m.scroll = false, 0
		case key.Matches(msg, k.Up):
			m.scroll = max(0, m.scroll-1)
		case key.Matches(msg, k.Down):
			m.scroll = min(m.scroll+1, max(0, len(m.detail)-1))
		case key.Matches(msg, k.PageDown):
			m.scroll = min(m.scroll+m.h-2, max(0, len(m.detail)-1))
		case key.Matches(msg, k.PageUp):
			m.scroll = max(0, m.scroll-m.h+2)
		case key.Matches(msg, k.Run):
			return m.runItem()
		}
		return nil
	}
	n := len(m.rows)
	page := max(1, m.h-3)
	switch {
	case key.Matches(msg, k.Up):
		m.cursor = max(0, m.cursor-1)
	case key.Matches(msg, k.Down):
		m.cursor = min(n-1, m.cursor+1)
	case key.Matches(msg, k.PageUp):
		m.cursor = max(0, m.cursor-page)
	case key.Matches(msg, k.PageDown):
		m.cursor = min(n-1, m.cursor+page)
	case key.Matches(msg, k.Top):
		m.cursor = 0
	case key.Matches(msg, k.Bottom):
		m.cursor = n - 1
	case key.Matches(msg, k.Open):
		if m.selected() != nil {
			m.open, m.scroll = true, 0
			m.drawDetail()
		}
	case key.Matches(msg, k.Filter):
		m.filtering = true
		return m.input.Focus()
	case key.Matches(msg, k.Cycle):
		m.filter = (m.filter + 1) % nFilters
		m.cursor = 0
		m.rebuild()
	case key.Matches(msg, k.Back):
		if m.query != "" || m.filter != filterAll {
			m.query, m.filter = "", filterAll
			m.input.SetValue("")
			m.rebuild()
		}
	case key.Matches(msg, k.Run):
		return m.runItem()
	}
	m.cursor = max(0, m.cursor)
	return nil
}

// runItem asks the set about the selected item's state.
func (m *datasetModel) runItem() tea.Cmd {
	it := m.selected()
	if it == nil {
		return nil
	}
	if m.e.prov == nil {
		m.e.say("the provider is not ready yet")
		return nil
	}
	if m.running[it.ID] {
		return nil
	}
	req := m.e.set.Request(it.State)
	req.Model = m.e.requestedModel()
	body, _ := req.MarshalJSON()
	var sent provider.Request
	if err := json.Unmarshal(body, &sent); err != nil {
		m.e.fail("internal: %v", err)
		return nil
	}
	m.running[it.ID] = true
	m.rebuild()
	id, prov, ctx := it.ID, m.e.prov, m.e.ctx
	m.e.say("asking item %s…", id)
	return func() tea.Msg {
		res, err := prov.Ask(ctx, &sent)
		msg := itemDoneMsg{itemID: id, asked: sent.Questions, err: err}
		if err == nil {
			msg.answers = res.Answers
		}
		return msg
	}
}

func (m *datasetModel) help() helpMap {
	k := m.e.keys
	var short []key.Binding
	switch {
	case m.filtering:
		short = []key.Binding{withHelp(k.Accept, "enter", "keep filter"), withHelp(k.Back, "esc", "clear")}
	case m.open:
		short = []key.Binding{k.Up, k.Down, withHelp(k.Run, "r", "run item"), k.Back}
	default:
		short = []key.Binding{k.Up, k.Down, withHelp(k.Open, "enter", "open item"), k.Filter, k.Cycle, withHelp(k.Run, "r", "run item")}
	}
	full := [][]key.Binding{
		{withHelp(k.Open, "enter", "open item"), withHelp(k.Run, "r", "run item"), withHelp(k.Filter, "/", "filter (!x inverts)"), k.Cycle, withHelp(k.Back, "esc", "clear filter / back")},
		k.navKeys(),
	}
	return helpMap{short: short, full: full}
}

func (m *datasetModel) view(w, h int) string {
	st := &m.e.st
	switch {
	case m.e.opt.Dataset == nil:
		return st.Muted.Render(" This question set names no dataset. Add `dataset: FILE.jsonl` to it (items with\n id, state and labels) to see items, labels and correctness here.")
	case m.loading:
		return st.Muted.Render(" loading the dataset…")
	case m.loadErr != nil && len(m.items) == 0:
		return st.Bad.Render(" dataset: " + firstLine(m.loadErr.Error()))
	}
	if m.open {
		end := min(len(m.detail), m.scroll+h)
		return strings.Join(m.detail[min(m.scroll, end):end], "\n")
	}
	title := fmt.Sprintf("Items %d of %d · filter: %s", len(m.rows), len(m.items), filterNames[m.filter])
	if m.query != "" {
		title += " · /" + m.query
	}
	if m.runID != "" {
		title += " · results of run " + m.runID
	}
	lines := []string{st.Focused.Render(fit(" "+title, w))}
	if m.filtering {
		lines = append(lines, m.input.View())
	}
	lines = append(lines, st.Muted.Render(fit(fmt.Sprintf(" %s %s %s", fit("id", 10), padRight("ok", max(3, len(m.e.set.Questions))), "labels / conf / state"), w)))
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
	if len(m.rows) == 0 {
		lines = append(lines, st.Muted.Render(" no items match"))
	}
	return strings.Join(lines, "\n")
}
