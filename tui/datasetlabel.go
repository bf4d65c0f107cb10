package tui

import (
	"fmt"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// The dataset screen's label editor: l opens a picker of the selected
// question's labels, enter writes the choice into the dataset file
// through the session (in place, atomically), and the items refresh.

// startLabel opens the label picker on the selected item's first
// question.
func (m *datasetModel) startLabel() tea.Cmd {
	it := m.selected()
	switch {
	case it == nil:
		return nil
	case m.saving:
		m.e.say("a label is being written")
		return nil
	case m.e.sess.Dataset.Path == "" || m.e.sess.Dataset.Open != nil:
		m.e.fail("this dataset is embedded and cannot be rewritten; save the set to a folder first")
		return nil
	case len(m.e.set.Questions) == 0:
		return nil
	}
	m.labeling, m.labelItem, m.labelQ = true, it.ID, 0
	m.labelQuestion(0)
	return nil
}

// labelQuestion moves the picker d questions on and lists that
// question's labels, the cursor on the item's current one.
func (m *datasetModel) labelQuestion(d int) {
	n := len(m.e.set.Questions)
	m.labelQ = ((m.labelQ+d)%n + n) % n
	qe := m.e.set.Questions[m.labelQ]
	cur, has := workbench.Label{}, false
	for i := range m.labelled {
		if m.labelled[i].ID == m.labelItem {
			cur, has = m.labelled[i].Labels[qe.ID]
		}
	}
	m.choices = workbench.LabelChoices(&qe.Question, !has || cur.ByIndex)
	m.pick.setLen(len(m.choices))
	m.pick.home()
	if has && cur.Index >= 0 {
		m.pick.move(cur.Index)
	}
	m.pickLines = m.pickLines[:0]
	for i, c := range m.choices {
		mark := "  "
		if has && cur.Index == i {
			mark = "• "
		}
		m.pickLines = append(m.pickLines, " "+mark+termsafe.String(c.Text))
	}
	m.pick.setHeight(max(1, m.h-4))
}

// writeLabel writes the picked label through the session in a tea.Cmd,
// on a copy of the set, then reads the dataset back.
func (m *datasetModel) writeLabel() tea.Cmd {
	i, ok := m.pick.selected()
	if !ok {
		return nil
	}
	m.labeling, m.saving = false, true
	qid, c, item := m.e.set.Questions[m.labelQ].ID, m.choices[i], m.labelItem
	set, ds, ctx := m.e.set.Clone(), m.e.sess.Dataset, m.e.ctx
	m.e.say("writing the label of %s…", item)
	return func() tea.Msg {
		sess := workbench.NewSession(set, ds, nil)
		if err := sess.SetLabel(item, qid, c.Value); err != nil {
			return labelSavedMsg{item: item, err: err}
		}
		items, err := workbench.LoadItems(ctx, set, ds)
		return labelSavedMsg{item: item, question: qid, text: c.Text, items: items, err: err}
	}
}

// labelView is the label picker: the item, the question (of how many) and
// its labels, the current one marked.
func (m *datasetModel) labelView(w int) string {
	st := &m.e.st
	qe := m.e.set.Questions[m.labelQ]
	lines := []string{
		st.Focused.Render(fit(fmt.Sprintf(" Label of item %s · question %s (%d of %d, [ ] for another)", termsafe.String(m.labelItem), qe.ID, m.labelQ+1, len(m.e.set.Questions)), w)),
		st.Muted.Render(fit(" "+oneLine(qe.Question.Instructions), w)),
		st.Muted.Render(fit(" • is the label now; enter writes the one picked into "+filepath.Base(m.e.sess.Dataset.Path)+", esc leaves it", w)),
	}
	lines = append(lines, m.pick.render(m.pickLines, func(s string) string { return st.Selected.Render(fit(stripForSelect(s), w)) })...)
	if more := m.pick.more(); more != "" {
		lines = append(lines, st.Muted.Render(" "+more))
	}
	return joinLines(lines)
}
