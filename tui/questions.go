package tui

import (
	"bytes"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// Whole-question edits of the design screen's list (questionset's
// AddQuestion, RemoveQuestion, RenameQuestion, MoveQuestion) and the list
// pane itself.

// freeID returns base, or base_2, base_3… whichever the set does not use.
func (d *designModel) freeID(base string) string {
	id := base
	for n := 2; ; n++ {
		if _, ok := d.e.set.Questions.Get(id); !ok {
			return id
		}
		id = fmt.Sprintf("%s_%d", base, n)
	}
}

// addQuestion asks for an id and adds a yes/no question after the cursor.
func (d *designModel) addQuestion() tea.Cmd {
	at := d.cursor() + 1
	if len(d.e.set.Questions) == 0 {
		at = 0
	}
	return d.askLine("New question", "id of the new question (a noul — t changes its type):", d.freeID("question"), func(id string) (tea.Cmd, error) {
		q := provider.Question{Type: provider.Noul, Instructions: provider.String("Describe what to decide.")}
		if err := d.apply("", func() error { return d.e.set.AddQuestion(id, q, at) }); err != nil {
			return nil, err
		}
		d.selectQuestion(at)
		d.e.say("added %s — e edits it", termsafe.String(id))
		return nil, nil
	})
}

// duplicateQuestion copies the selected question under a new id, after it.
func (d *designModel) duplicateQuestion() tea.Cmd {
	sel := d.selected()
	src, q, at := sel.ID, sel.Question.Clone(), d.cursor()+1
	return d.askLine("Duplicate "+termsafe.String(src), "id of the copy:", d.freeID(src+"_copy"), func(id string) (tea.Cmd, error) {
		err := d.apply("", func() error {
			if err := d.e.set.AddQuestion(id, q, at); err != nil {
				return err
			}
			// The copy decides like the original: its threshold,
			// min_confidence and gate come along.
			if t, ok := d.e.set.Settings[src]; ok {
				d.e.set.Settings[id] = t
			}
			if g, ok := d.e.set.Gates[src]; ok {
				d.e.set.Gates[id] = g
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		d.selectQuestion(at)
		d.e.say("duplicated %s as %s", termsafe.String(src), termsafe.String(id))
		return nil, nil
	})
}

// renameQuestion changes the selected question's id. The id is not sent,
// so recorded answers still match; dataset labels are keyed by id, so the
// prompt says what happens to them.
func (d *designModel) renameQuestion() tea.Cmd {
	old := d.selected().ID
	return d.askLine("Rename question "+termsafe.String(old),
		"new id (dataset labels under "+termsafe.String(old)+" then name no question and are reported as stale until the dataset uses the new id):",
		old, func(id string) (tea.Cmd, error) {
			if id == old {
				return nil, nil
			}
			if err := d.apply("", func() error { return d.e.set.RenameQuestion(old, id) }); err != nil {
				return nil, err
			}
			d.ans.renamed(old, id)
			d.e.say("renamed %s to %s", termsafe.String(old), termsafe.String(id))
			return nil, nil
		})
}

// removeQuestion deletes the selected question after asking.
func (d *designModel) removeQuestion() tea.Cmd {
	id := d.selected().ID
	d.prompt = &prompt{
		title: "Delete question " + termsafe.String(id) + "?",
		body:  "Its criteria, settings and gate go with it (u undoes). Dataset labels for it then name no question and are reported as stale.",
		choices: []promptChoice{
			{key: "y", desc: "delete", do: func() tea.Cmd {
				if err := d.apply("", func() error { return d.e.set.RemoveQuestion(id) }); err != nil {
					d.e.fail("%v", err)
				}
				d.selectQuestion(min(d.cursor(), max(0, len(d.e.set.Questions)-1)))
				d.e.say("deleted %s", termsafe.String(id))
				return nil
			}},
		},
	}
	d.prompt.build(d)
	return nil
}

// moveQuestion moves the selected question by delta places.
func (d *designModel) moveQuestion(delta int) tea.Cmd {
	i := d.cursor()
	to := i + delta
	if to < 0 || to >= len(d.e.set.Questions) {
		return nil
	}
	id := d.selected().ID
	if err := d.apply("", func() error { return d.e.set.MoveQuestion(id, to) }); err != nil {
		d.e.fail("%v", err)
		return nil
	}
	d.selectQuestion(to)
	return nil
}

func (d *designModel) listView(w, h int) []string {
	st := &d.e.st
	qs := d.e.set.Questions
	lines := []string{d.paneTitle(fmt.Sprintf("Questions (%d)", len(qs)), paneList, w)}
	start, end := d.list.window()
	cur := d.cursor()
	for p := start; p < end; p++ {
		i := p
		qe := &qs[i]
		mark := st.Good.Render("✓")
		if d.valid[qe.ID] != nil {
			mark = st.Bad.Render("✗")
		}
		stale := " "
		if a := d.ans.answers[qe.ID]; a != nil && a.cur != nil && a.curQ != nil {
			x, _ := a.curQ.MarshalJSON()
			y, _ := qe.Question.MarshalJSON()
			if !bytes.Equal(x, y) {
				stale = st.Warn.Render("•")
			}
		}
		info := fmt.Sprintf("%s(%d)", qe.Question.Type, qe.Question.Size())
		if qe.Question.Type == provider.Noul {
			info = "noul"
		}
		idW := max(1, w-5-ansi.StringWidth(info))
		idText := midFit(termsafe.String(qe.ID), idW) // ids come from the file
		pointer := " "
		if i == cur {
			pointer = "›"
			if d.focus != paneState {
				idText = st.Selected.Render(idText)
			}
		}
		lines = append(lines, pointer+mark+stale+" "+idText+" "+st.Muted.Render(info))
	}
	if more := d.list.more(); more != "" {
		lines = append(lines, st.Faint.Render(fit(" "+more, w)))
	}
	lines = append(lines, "", d.paneTitle("State", paneState, w))
	stateText := provider.Text(d.e.set.State)
	if stateText == "" {
		stateText = "(none — s to write one)"
	}
	for _, l := range wrapText(termsafe.String(stateText), w-1, max(1, h-len(lines))) {
		lines = append(lines, " "+st.Muted.Render(l))
	}
	return lines
}

// oneLine is a slot's text on one line.
func oneLine(v []byte) string {
	s := provider.Text(v)
	if s == "" {
		return "—"
	}
	return strings.Join(strings.Fields(s), " ")
}
