package tui

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// Messages of the dataset screen.
type (
	datasetLoadedMsg struct {
		items []workbench.Item
		err   error
	}
	itemDoneMsg struct {
		itemID string
		asked  *workbench.Asked
		err    error
	}
	// runResultsMsg carries a finished evaluation, so the dataset screen
	// can show each item's correctness in that run.
	runResultsMsg struct{ v *workbench.RunView }
	// labelSavedMsg says a label edit was written (or why not), with the
	// dataset read back from the file.
	labelSavedMsg struct {
		item, question, text string
		items                []workbench.Item
		err                  error
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

type datasetModel struct {
	e       *env
	w, h    int
	loading bool
	loadErr error
	items   []workbench.Item // as loaded (labels as text)
	// labelled are items with labels resolved against the set as it is
	// now (through the session's renames), on every rebuild; stale names
	// the labels that name nothing any more, excluded.
	labelled []workbench.Item
	stale    []workbench.StaleLabel
	results  map[string]map[string]*itemResult // item → question → result
	runID    string                            // evaluation the results came from

	filter    int
	query     string
	filtering bool
	input     textinput.Model

	list    list
	lines   []string // one per row of list
	open    bool     // detail view of the selected item
	detail  []string // drawn detail
	dscroll list
	running map[string]bool
	keys    bindings
	typeKey bindings

	order workbench.ItemOrder
	perm  []int // m.labelled indices in m.order; list rows index perm

	// The label picker (l): the question, its choices and a cursor.
	labeling  bool
	labelItem string
	labelQ    int
	choices   []workbench.LabelChoice
	pick      list
	pickLines []string
	saving    bool
	labelKeys bindings
}

func newDatasetScreen(e *env, _ *designModel) screen {
	m := &datasetModel{e: e, results: map[string]map[string]*itemResult{}, running: map[string]bool{},
		input: newTextInput("/"), loading: e.sess.Dataset.Path != "", list: newList(), dscroll: newScroll()}
	k := e.keys
	listing := func() bool { return !m.open }
	opened := func() bool { return m.open }
	m.keys = bindings{
		bind(k.Open, "Items", m.openItem).inBar().enabledWhen(listing).withDesc("open item"),
		bind(k.Run, "Items", m.runItem).inBar().withDesc("run item"),
		bind(k.Filter, "Items", func() tea.Cmd { m.filtering = true; return m.input.Focus() }).inBar().enabledWhen(listing).withDesc("filter (!x inverts)"),
		bind(k.Cycle, "Items", m.cycle).inBar().enabledWhen(listing),
		bind(k.Sort, "Items", m.cycleOrder).inBar().enabledWhen(listing).withDesc("order: wrong/margin/variants"),
		bind(k.Label, "Items", m.startLabel).inBar().withDesc("edit label"),
		bind(k.Back, "Items", m.clearFilter).enabledWhen(func() bool { return listing() && (m.query != "" || m.filter != filterAll) }).withDesc("clear filter"),
		bind(k.Back, "Item", func() tea.Cmd { m.open = false; return nil }).inBar().enabledWhen(opened),
	}
	for _, b := range m.list.navBindings(k, "Navigate") {
		m.keys = append(m.keys, b.enabledWhen(listing))
	}
	for _, b := range m.dscroll.navBindings(k, "Item") {
		m.keys = append(m.keys, b.enabledWhen(opened))
	}
	m.typeKey = bindings{bind(k.Accept, "Filter", nil).inBar().withDesc("keep filter"), bind(k.Back, "Filter", nil).inBar().withDesc("clear")}
	m.pick = newList()
	m.labelKeys = bindings{
		bind(k.Accept, "Label", m.writeLabel).inBar().withDesc("write label"),
		bind(k.PrevQ, "Label", func() tea.Cmd { m.labelQuestion(-1); return nil }).inBar(),
		bind(k.NextQ, "Label", func() tea.Cmd { m.labelQuestion(1); return nil }).inBar(),
		bind(k.Back, "Label", func() tea.Cmd { m.labeling = false; m.e.say("label unchanged"); return nil }).inBar().withDesc("cancel"),
	}
	m.labelKeys = append(m.labelKeys, m.pick.navBindings(k, "Label")...)
	return m
}

func (m *datasetModel) init() tea.Cmd {
	ds := m.e.sess.Dataset
	if ds.Path == "" {
		return nil
	}
	ctx, set := m.e.ctx, m.e.set.Clone() // the loader reads a copy: the editor may change the set meanwhile
	return func() tea.Msg {
		items, err := workbench.LoadItems(ctx, set, ds)
		return datasetLoadedMsg{items: items, err: err}
	}
}

func (m *datasetModel) capturing() bool { return m.filtering || m.labeling }

func (m *datasetModel) help() helpMap {
	if m.filtering {
		return m.typeKey.help()
	}
	if m.labeling {
		return m.labelKeys.help()
	}
	return m.keys.help()
}

func (m *datasetModel) resize(w, h int) {
	m.w, m.h = w, h
	m.input.Width = max(10, w-4)
	m.rebuild()
}

// answer lays out an item's result for question id against the set as it
// is now, with the item's label marked: the decision, right/wrong and the
// low-confidence band all come from the layer.
func (m *datasetModel) answer(it *workbench.Item, id string) (workbench.AnswerView, *itemResult) {
	r := m.results[it.ID][id]
	q, ok := m.e.set.Questions.Get(id)
	if r == nil || !ok {
		return workbench.AnswerView{DecisionIndex: -1}, r
	}
	o := workbench.ViewOptions{Threshold: m.e.set.Threshold(id), True: -1, Asked: r.asked}
	if l, ok := it.Labels[id]; ok {
		o.True = l.Index
	}
	return workbench.View(q, r.ans, o), r
}

// correct is 1 right, 0 wrong, -1 unknown (no label or no answer).
func (m *datasetModel) correct(it *workbench.Item, id string) int {
	av, _ := m.answer(it, id)
	switch {
	case !av.LabelKnown || av.DecisionIndex < 0:
		return -1
	case av.Right:
		return 1
	}
	return 0
}

// rebuild resolves the labels, filters the items and draws the rows: done
// when items, results, the filter, the set or the width change, never in
// View.
func (m *datasetModel) rebuild() {
	m.labelled, m.stale = m.e.sess.Labelled(m.items)
	ids := m.e.set.Questions.IDs()
	q := strings.ToLower(m.query)
	invert := strings.HasPrefix(q, "!")
	q = strings.TrimPrefix(q, "!")
	m.perm = workbench.OrderItems(m.e.set, m.labelled, m.lookup, m.order)
	m.list.filter(len(m.perm), func(i int) bool {
		it := &m.labelled[m.perm[i]]
		if !m.keep(it, ids) {
			return false
		}
		if q == "" {
			return true
		}
		hit := strings.Contains(strings.ToLower(it.ID), q) || strings.Contains(strings.ToLower(string(it.State)), q)
		for _, l := range it.Labels {
			hit = hit || strings.Contains(strings.ToLower(l.Text), q)
		}
		return hit != invert
	})
	m.list.setHeight(m.room())
	m.lines = m.lines[:0]
	st := &m.e.st
	idW := 10
	labW := min(24, max(10, (m.w-idW-12)/3))
	for _, i := range m.list.rows {
		it := &m.labelled[m.perm[i]]
		var labs, marks []string
		conf := ""
		for _, id := range ids {
			if l, ok := it.Labels[id]; ok {
				labs = append(labs, m.labelShort(id, l.Index, l.Text))
			}
			av, r := m.answer(it, id)
			switch m.correct(it, id) {
			case 1:
				marks = append(marks, st.Good.Render(workbench.MarkTrue))
			case 0:
				marks = append(marks, st.Bad.Render(workbench.MarkWrong))
			default:
				if r != nil && r.err != "" {
					marks = append(marks, st.Warn.Render("!"))
				} else {
					marks = append(marks, st.Faint.Render("·"))
				}
			}
			if av.HasConfidence && conf == "" {
				conf = workbench.Prob(av.Confidence)
			}
		}
		if m.order != workbench.OrderFile {
			conf = ""
			if v := workbench.ItemSortValue(m.e.set, it, m.lookup, m.order); !math.IsNaN(v) {
				conf = fmt.Sprintf("%.2f", math.Abs(v))
			}
		}
		if m.running[it.ID] {
			conf = "…"
		}
		line := fmt.Sprintf(" %s %s %s %4s  %s", fit(termsafe.String(it.ID), idW), padRight(strings.Join(marks, ""), max(3, len(ids))),
			fit(midTrunc(termsafe.String(strings.Join(labs, ",")), labW), labW), conf, oneLine(it.State))
		m.lines = append(m.lines, padRight(line, m.w))
	}
	if m.open {
		m.drawDetail()
	}
}

// room is the number of item rows in view.
func (m *datasetModel) room() int {
	n := m.h - 2 // title, column heads
	if len(m.results) > 0 {
		n-- // accuracy
	}
	if m.filtering {
		n--
	}
	if len(m.stale) > 0 {
		n -= len(m.staleLines())
	}
	return max(1, n)
}

func (m *datasetModel) staleLines() []string {
	return wrapText(workbench.StaleSummary(m.stale, 3), max(10, m.w-2), 3)
}

// labelShort is a label as the list shows it: a score level by its index
// (its text is in the item's detail), other labels by their text.
func (m *datasetModel) labelShort(id string, index int, text string) string {
	if q, ok := m.e.set.Questions.Get(id); ok && q.Type == provider.Score && index >= 0 {
		return fmt.Sprintf("L%d", index)
	}
	return text
}

// keep applies the f filter.
func (m *datasetModel) keep(it *workbench.Item, ids []string) bool {
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
			if av, _ := m.answer(it, id); av.LowConfidence() {
				return true
			}
		}
		return false
	}
	return true
}

func (m *datasetModel) selected() *workbench.Item {
	i, ok := m.list.selected()
	if !ok {
		return nil
	}
	return &m.labelled[m.perm[i]]
}

// drawDetail draws the open item: its state and every question's chart
// with the true label marked.
func (m *datasetModel) drawDetail() {
	it := m.selected()
	st := &m.e.st
	if it == nil {
		m.detail, m.open = nil, false
		return
	}
	w := m.w - 1
	lines := []string{st.Focused.Render(fit("Item "+termsafe.String(it.ID), w))}
	for _, l := range wrapText(provider.Text(it.State), w-2, 6) {
		lines = append(lines, " "+st.Muted.Render(l))
	}
	for _, qe := range m.e.set.Questions {
		lines = append(lines, "")
		r := m.results[it.ID][qe.ID]
		in := chartInput{ID: qe.ID, Q: &qe.Question, Threshold: m.e.set.Threshold(qe.ID), True: -1, Width: w}
		if lab, ok := it.Labels[qe.ID]; ok {
			in.True = lab.Index
			in.ID += "  (label: " + lab.Text + ")"
		}
		if r != nil {
			in.Cur, in.CurQ, in.Err = r.ans, r.asked, r.err
		}
		lines = append(lines, renderChart(in, st)...)
	}
	m.detail = lines
	m.dscroll.setLen(len(lines))
	m.dscroll.setHeight(m.h)
}

func (m *datasetModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case datasetLoadedMsg:
		m.loading, m.items, m.loadErr = false, msg.items, msg.err
		m.e.items = msg.items
		m.rebuild()
	case itemDoneMsg:
		delete(m.running, msg.itemID)
		res := m.results[msg.itemID]
		if res == nil {
			res = map[string]*itemResult{}
			m.results[msg.itemID] = res
		}
		if msg.err != nil {
			for _, id := range m.e.set.Questions.IDs() {
				res[id] = &itemResult{err: workbench.DescribeError(msg.err)}
			}
			m.e.fail("item %s: %s", msg.itemID, workbench.DescribeError(msg.err))
		} else {
			for i := range msg.asked.Result.Answers {
				a := msg.asked.Result.Answers[i]
				if q, ok := msg.asked.Request.Questions.Get(a.ID); ok {
					res[a.ID] = &itemResult{ans: &a, asked: q}
				}
			}
			for id, err := range msg.asked.Failed {
				res[id] = &itemResult{err: workbench.DescribeError(err)}
			}
			m.e.say("item %s answered", msg.itemID)
		}
		m.rebuild()
	case runResultsMsg:
		m.results, m.runID = map[string]map[string]*itemResult{}, msg.v.Run.ID
		variants := map[string]*provider.Question{}
		for _, r := range msg.v.Variants {
			if q, ok := msg.v.Set.VariantQuestion(r); ok {
				variants[r.ID()] = &q
			}
		}
		for item, qs := range msg.v.Items {
			res := map[string]*itemResult{}
			for id, r := range qs {
				asked := msg.v.Question(id)
				if asked == nil {
					asked = variants[id]
				}
				res[id] = &itemResult{ans: r.Answer, asked: asked, err: r.Err}
			}
			m.results[item] = res
		}
		m.rebuild()
	case labelSavedMsg:
		m.saving = false
		if msg.err != nil {
			m.e.fail("label of %s not written: %s", msg.item, firstLine(msg.err.Error()))
			return nil
		}
		m.items = msg.items
		m.e.items = msg.items
		m.rebuild()
		m.e.say("%s: %s labelled %s in %s", msg.item, msg.question, msg.text, filepath.Base(m.e.sess.Dataset.Path))
	case tea.KeyMsg:
		if m.labeling {
			cmd, _ := m.labelKeys.handle(msg)
			return cmd
		}
		if m.filtering {
			var cmd tea.Cmd
			m.filtering, m.query, cmd = filterKey(&m.input, msg)
			if m.filtering {
				m.list.home()
			}
			m.rebuild()
			return cmd
		}
		cmd, _ := m.keys.handle(msg)
		return cmd
	default:
		return nil
	}
	return nil
}

// lookup is the answer an item's row shows for question (or variant) id.
func (m *datasetModel) lookup(item, id string) (workbench.ItemAnswer, bool) {
	r := m.results[item][id]
	if r == nil || r.ans == nil {
		return workbench.ItemAnswer{}, false
	}
	return workbench.ItemAnswer{Answer: r.ans, Asked: r.asked}, true
}

func (m *datasetModel) cycleOrder() tea.Cmd {
	m.order = (m.order + 1) % workbench.NItemOrders
	m.list.home()
	m.rebuild()
	return nil
}

// accuracyLine is each question's accuracy over the items' answers shown,
// against the labels as they are now.
func (m *datasetModel) accuracyLine() string {
	var parts []string
	for _, h := range workbench.ItemAccuracy(m.e.set, m.labelled, m.lookup) {
		acc := "—"
		if !math.IsNaN(h.Accuracy) {
			acc = fmt.Sprintf("%.3f", h.Accuracy)
		}
		parts = append(parts, fmt.Sprintf("%s %s (n %d)", h.ID, acc, h.Labelled))
	}
	return "accuracy " + strings.Join(parts, " · ")
}

func (m *datasetModel) openItem() tea.Cmd {
	if m.selected() != nil {
		m.open = true
		m.drawDetail()
		m.dscroll.home()
	}
	return nil
}

func (m *datasetModel) cycle() tea.Cmd {
	m.filter = (m.filter + 1) % nFilters
	m.list.home()
	m.rebuild()
	return nil
}

func (m *datasetModel) clearFilter() tea.Cmd {
	m.query, m.filter = "", filterAll
	m.input.SetValue("")
	m.rebuild()
	return nil
}

// runItem asks the set about the selected item's state, through the
// layer's ask (one question missing offline does not hide the others).
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
	req, err := workbench.Request(m.e.set, it.State, m.e.requestedModel())
	if err != nil {
		m.e.fail("cannot ask: %s", firstLine(err.Error()))
		return nil
	}
	m.running[it.ID] = true
	m.rebuild()
	id, prov, ctx := it.ID, m.e.prov, m.e.ctx
	m.e.say("asking item %s…", id)
	return func() tea.Msg {
		asked, err := workbench.Ask(ctx, prov, req)
		return itemDoneMsg{itemID: id, asked: asked, err: err}
	}
}

func (m *datasetModel) view(w, h int) string {
	st := &m.e.st
	switch {
	case m.e.sess.Dataset.Path == "":
		return st.Muted.Render(" This question set names no dataset. Add `dataset: FILE.jsonl` to it (items with\n id, state and labels) to see items, labels and correctness here.")
	case m.loading:
		return st.Muted.Render(" loading the dataset…")
	case m.loadErr != nil && len(m.items) == 0:
		return st.Bad.Render(" dataset: " + firstLine(m.loadErr.Error()))
	}
	if m.labeling {
		return m.labelView(w)
	}
	if m.open {
		return joinLines(m.dscroll.render(m.detail, nil))
	}
	title := fmt.Sprintf("Items %d of %d · filter: %s", m.list.len(), len(m.items), filterNames[m.filter])
	if m.order != workbench.OrderFile {
		title += " · order: " + m.order.String()
	}
	if m.query != "" {
		title += " · /" + termsafe.String(m.query)
	}
	if m.runID != "" {
		title += " · results of run " + m.runID
	}
	if more := m.list.more(); more != "" {
		title += " · " + more
	}
	lines := []string{st.Focused.Render(fit(" "+title, w))}
	for _, s := range m.staleLines() {
		if len(m.stale) > 0 {
			lines = append(lines, st.Warn.Render(" "+s))
		}
	}
	if len(m.results) > 0 {
		lines = append(lines, fit(" "+m.accuracyLine(), w))
	}
	if m.filtering {
		lines = append(lines, m.input.View())
	}
	col := "confidence"
	switch m.order {
	case workbench.OrderConfidentWrong:
		col = "top prob of the wrong decision"
	case workbench.OrderMargin:
		col = "top-two margin"
	case workbench.OrderDisagreement:
		col = "base–variant TV"
	}
	lines = append(lines, st.Muted.Render(fit(fmt.Sprintf(" %s %s %s", fit("id", 10), padRight("ok", max(3, len(m.e.set.Questions))), "labels / "+col+" / state"), w)))
	lines = append(lines, m.list.render(m.lines, func(s string) string { return st.Selected.Render(fit(stripForSelect(s), w)) })...)
	if m.list.len() == 0 {
		lines = append(lines, st.Muted.Render(" no items match"))
	}
	return joinLines(lines)
}
