package tui

import (
	"bytes"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// The design screen's history pane: the selected question's revisions,
// newest first, with their dates, the word diff from the revision before
// and the metrics of every run that asked each — exactly the text `jevlab
// log FILE QUESTION` prints (workbench.WriteHistory), read from the store
// in a tea.Cmd.

// historyMsg carries a loaded history (or why it could not be loaded).
type historyMsg struct {
	seq   int
	qid   string
	lines []string
	err   error
}

// historyPane shows one question's history in the design screen's right
// pane; h (or esc) closes it.
type historyPane struct {
	d       *designModel
	open    bool
	qid     string
	loading bool
	err     string
	seq     int
	// lines are the history exactly as `jevlab log` prints it; drawn are
	// they wrapped to the pane's width (drawn on load and resize).
	lines  []string
	drawn  []string
	width  int
	scroll list
	keys   bindings
}

func newHistoryPane(d *designModel) *historyPane {
	h := &historyPane{d: d, scroll: newScroll()}
	k := d.e.keys
	h.keys = bindings{
		bind(withHelp(k.History, "h", "close history"), "History", h.close).inBar(),
		bind(withHelp(k.Back, "esc", "close history"), "History", h.close),
	}
	h.keys = append(h.keys, h.scroll.navBindings(k, "Scroll")...)
	return h
}

// toggle opens the selected question's history (loading it) or closes it.
func (h *historyPane) toggle() tea.Cmd {
	if h.open {
		return h.close()
	}
	sel := h.d.selected()
	if sel == nil {
		return nil
	}
	h.open, h.qid, h.lines, h.drawn, h.err = true, sel.ID, nil, nil, ""
	h.d.focus = paneHistory
	h.scroll.setLen(0)
	if !h.d.e.hasDB() {
		h.err = "no database: the history is read from stored runs (open the workbench with --db or set $JEVLAB_DB)"
		return nil
	}
	set, err := h.savedSet()
	if err != nil {
		h.err = err.Error()
		return nil
	}
	if _, ok := set.Questions.Get(h.qid); !ok {
		h.err = fmt.Sprintf("%s is not in the set as last saved: save it (ctrl+s) to start its history", termsafe.String(h.qid))
		return nil
	}
	h.loading = true
	h.seq++
	seq, qid, ctx, db := h.seq, h.qid, h.d.e.ctx, h.d.e.sess.Template.DB
	return func() tea.Msg {
		revs, err := workbench.QuestionHistory(ctx, db, set, qid, nil)
		if err != nil {
			return historyMsg{seq: seq, qid: qid, err: err}
		}
		var b bytes.Buffer
		workbench.WriteHistory(&b, set.Title(), qid, revs)
		return historyMsg{seq: seq, qid: qid, lines: strings.Split(strings.TrimRight(b.String(), "\n"), "\n")}
	}
}

// savedSet is the set as last loaded or saved: the history records the
// question as the file holds it (as `jevlab log` does), never an unsaved
// draft. A copy, so the Cmd cannot race with edits.
func (h *historyPane) savedSet() (*questionset.Set, error) {
	d := h.d
	if !d.e.dirty {
		return d.e.set.Clone(), nil
	}
	name := d.e.set.Path
	if name == "" {
		name = defaultSavePath(d.e.set)
	}
	s, err := questionset.Parse(name, d.clean)
	if err != nil {
		return nil, fmt.Errorf("the set as last saved does not parse: %w", err)
	}
	return s, nil
}

func (h *historyPane) close() tea.Cmd {
	h.open, h.loading = false, false
	h.seq++ // a load still running is dropped
	h.d.focus = paneList
	return nil
}

// loaded takes a finished load.
func (h *historyPane) loaded(msg historyMsg) {
	if msg.seq != h.seq || !h.open {
		return
	}
	h.loading = false
	if msg.err != nil {
		h.err = firstLine(msg.err.Error())
		return
	}
	h.lines = msg.lines
	h.redraw()
}

// redraw wraps the lines to the pane's width, continuation lines indented
// as their line.
func (h *historyPane) redraw() {
	_, w := h.d.layout()
	h.width = w
	h.drawn = h.drawn[:0]
	for _, l := range h.lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		for i, part := range wrapText(strings.TrimLeft(l, " "), max(10, w-indent-2), 1000) {
			pad := strings.Repeat(" ", indent)
			if i > 0 {
				pad += "  "
			}
			h.drawn = append(h.drawn, fit(pad+part, w))
		}
	}
	h.scroll.setLen(len(h.drawn))
}

// view draws the pane in w×h.
func (h *historyPane) view(w, rows int) []string {
	st := &h.d.e.st
	out := []string{h.d.paneTitle("History · "+termsafe.String(h.qid)+" (h closes)", paneHistory, w)}
	switch {
	case h.err != "":
		for _, l := range wrapText(h.err, w-1, 8) {
			out = append(out, st.Warn.Render(" "+l))
		}
		return out
	case h.loading:
		return append(out, st.Muted.Render(" loading the revisions…"))
	}
	room := max(1, rows-1)
	more := len(h.drawn) > room
	if more {
		room = max(1, room-1)
	}
	h.scroll.setHeight(room)
	out = append(out, h.scroll.render(h.drawn, nil)...)
	if more {
		start, end := h.scroll.window()
		out = append(out, st.Faint.Render(fit(fmt.Sprintf("… %d–%d of %d lines (↑↓ to scroll)", start+1, end, len(h.drawn)), w)))
	}
	return out
}
