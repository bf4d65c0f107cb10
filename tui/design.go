package tui

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
)

// The design screen is three models under one frame: the question editor
// (qeditor.go), the state editor (stateeditor.go) and the answer pane
// (answerview.go); the frame (this file) holds the question list, runs the
// working state and keeps the undo history. Saving is in save.go, whole-
// question edits in questions.go, modal prompts in prompt.go.

// Panes of the design screen.
type pane int

const (
	paneList pane = iota
	paneChart
	paneEditor
	paneState
	paneHistory
)

// Messages of the design screen.
type (
	// runDoneMsg reports a finished (or failed) ask of the working state.
	runDoneMsg struct {
		seq   int
		asked *workbench.Asked
		err   error
	}
	// standInMsg reports the stand-in started (or not).
	standInMsg struct {
		p   provider.Provider
		err error
	}
)

// designKeys are the design screen's own keys beyond the shared KeyMap.
type designKeys struct {
	StandIn, Expand, Duplicate, NewQuestion key.Binding
}

func newDesignKeys() designKeys {
	b := func(k, desc string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc)) }
	return designKeys{
		StandIn:     b("S", "start the stand-in"),
		Expand:      b("o", "show/fold small options"),
		Duplicate:   b("c", "duplicate question"),
		NewQuestion: b("a", "add question"),
	}
}

// snapshot is one undo step: the set and the session's renames together.
type snapshot struct {
	set     *questionset.Set
	renames map[string]map[string]string
}

// designModel is the design screen's frame.
type designModel struct {
	e     *env
	dk    designKeys
	w, h  int
	focus pane
	list  list // the question list

	ed     *questionEditor
	st     *stateEditor
	ans    *answerPane
	hist   *historyPane
	prompt *prompt // a modal question (save, type change, delete); nil: none

	valid map[string]error

	running bool
	pending bool // a run asked for before the provider was ready
	cancel  context.CancelFunc
	seq     int
	started time.Time
	spin    spinner.Model

	// notice is a message said in full (wrapped, never cut) above the
	// answers: what to do after an offline miss, the labels a save left
	// stale. noticeBad draws it as a problem.
	notice    string
	noticeBad bool
	missed    bool // the last run missed offline: the stand-in is offered

	undo  []snapshot
	clean []byte // the set as last loaded or saved

	saved    string // where the example was saved this session ("" none)
	keysList bindings
	keysAns  bindings
}

// maxUndo bounds the undo history.
const maxUndo = 100

func newDesign(e *env) *designModel {
	d := &designModel{e: e, dk: newDesignKeys(), list: newList(), valid: map[string]error{},
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
	d.ed = newQuestionEditor(d)
	d.st = newStateEditor(d)
	d.ans = newAnswerPane(d)
	d.hist = newHistoryPane(d)
	for _, qe := range e.set.Questions {
		d.validate(qe.ID)
	}
	d.list.setLen(len(e.set.Questions))
	d.clean, _ = e.set.Marshal()
	d.buildKeys()
	d.ans.restack()
	return d
}

func (d *designModel) buildKeys() {
	k, dk := d.e.keys, d.dk
	idle := func() bool { return !d.running }
	hasQ := func() bool { return d.selected() != nil }
	common := bindings{
		bind(k.Run, "Run", d.run).inBar().enabledWhen(idle),
		bind(k.Cancel, "Run", d.cancelRun).inBar().enabledWhen(func() bool { return d.running }),
		bind(dk.StandIn, "Run", d.startStandIn).inBar().enabledWhen(d.standInOffered),
		bind(k.Undo, "Edit", func() tea.Cmd { d.undoEdit(); return nil }),
		bind(k.Save, "File", nil).inBar(), // handled by the frame (it also saves from other screens)
	}
	edit := key.NewBinding(key.WithKeys(append(k.EditQuestion.Keys(), k.Open.Keys()...)...), key.WithHelp("e", "edit question"))
	d.keysList = append(bindings{
		bind(edit, "Questions", d.openEditor).inBar().enabledWhen(hasQ),
		bind(k.EditState, "Questions", d.st.open).inBar(),
		bind(dk.NewQuestion, "Questions", d.addQuestion),
		bind(dk.Duplicate, "Questions", d.duplicateQuestion).enabledWhen(hasQ),
		bind(k.Rename, "Questions", d.renameQuestion).withDesc("rename question").enabledWhen(hasQ),
		bind(k.Delete, "Questions", d.removeQuestion).withDesc("delete question").enabledWhen(hasQ),
		bind(k.Promote, "Questions", d.promote).enabledWhen(d.hasVariants),
		bind(k.History, "Panes", d.hist.toggle).enabledWhen(hasQ),
		bind(k.MoveUp, "Questions", func() tea.Cmd { return d.moveQuestion(-1) }).enabledWhen(hasQ),
		bind(k.MoveDown, "Questions", func() tea.Cmd { return d.moveQuestion(1) }).enabledWhen(hasQ),
		bind(k.Focus, "Panes", d.nextPane).inBar(),
	}, common...)
	d.keysList = append(d.keysList, d.listNav()...)
	d.keysAns = append(bindings{
		bind(dk.Expand, "Answer", d.ans.toggleExpand).inBar(),
		bind(edit, "Answer", d.openEditor).enabledWhen(hasQ),
		bind(k.Promote, "Answer", d.promote).enabledWhen(d.hasVariants),
		bind(k.History, "Panes", d.hist.toggle).enabledWhen(hasQ),
		bind(k.Focus, "Panes", d.nextPane).inBar(),
		bind(k.Back, "Panes", func() tea.Cmd { d.focus = paneList; return nil }),
	}, common...)
	d.keysAns = append(d.keysAns, d.ans.scroll.navBindings(k, "Scroll")...)
}

// listNav is the question list's navigation; a move re-stacks the answers
// with the selected question first.
func (d *designModel) listNav() bindings {
	nav := d.list.navBindings(d.e.keys, "Navigate")
	for i := range nav {
		do := nav[i].do
		if do == nil {
			continue
		}
		nav[i].do = func(msg tea.KeyMsg) tea.Cmd {
			cmd := do(msg)
			d.ans.scroll.home()
			d.updateConfidence()
			return cmd
		}
	}
	return nav
}

func (d *designModel) init() tea.Cmd {
	if d.e.opt.RunOnStart && len(d.e.set.Questions) > 0 {
		if d.e.prov == nil {
			d.pending = true
			return nil
		}
		return d.run()
	}
	return nil
}

// connected runs a run asked for while connecting.
func (d *designModel) connected() tea.Cmd {
	if d.pending {
		d.pending = false
		return d.run()
	}
	return nil
}

// capturing: a text field, the state editor or a prompt takes every key.
func (d *designModel) capturing() bool {
	return d.prompt != nil || d.ed.input || d.focus == paneState
}

// selected returns the selected question entry, or nil.
func (d *designModel) selected() *provider.QuestionEntry {
	i, ok := d.list.selected()
	qs := d.e.set.Questions
	if !ok || i < 0 || i >= len(qs) {
		return nil
	}
	return &qs[i]
}

// cursor is the selected question's index (0 when none).
func (d *designModel) cursor() int {
	i, _ := d.list.selected()
	return i
}

// selectQuestion puts the cursor on question index i.
func (d *designModel) selectQuestion(i int) {
	d.list.setLen(len(d.e.set.Questions))
	d.list.home()
	d.list.move(i)
}

func (d *designModel) validate(id string) {
	if q, ok := d.e.set.Questions.Get(id); ok {
		d.valid[id] = q.Validate()
	}
}

// layout returns the list and right pane widths.
func (d *designModel) layout() (lw, rw int) {
	lw = min(max(d.w/4, 22), 34)
	rw = max(10, d.w-lw-1)
	return
}

func (d *designModel) resize(w, h int) {
	d.w, d.h = w, h
	_, rw := d.layout()
	d.list.setHeight(max(1, min(len(d.e.set.Questions), h-6)))
	d.ed.resize(rw, h)
	d.st.resize(rw, h)
	d.ans.redrawAll()
	d.hist.redraw()
}

// snap is the undo step for the set and renames as they are now.
func (d *designModel) snap() snapshot {
	return snapshot{set: d.e.set.Clone(), renames: d.e.sess.Renames()}
}

// apply runs one edit of the set (a questionset helper, or a session
// rename): on success the state before it becomes an undo step, the set is
// marked changed and question id (all when "") revalidated and redrawn. The
// snapshot is taken here, once per applied edit, never per keystroke.
func (d *designModel) apply(id string, fn func() error) error {
	before := d.snap()
	if err := fn(); err != nil {
		return err
	}
	d.undo = append(d.undo, before)
	if len(d.undo) > maxUndo {
		d.undo = d.undo[len(d.undo)-maxUndo:]
	}
	d.changed(id)
	return nil
}

// changed marks the set edited and redraws what depends on it.
func (d *designModel) changed(id string) {
	cur, err := d.e.set.Marshal()
	d.e.dirty = err != nil || !bytes.Equal(cur, d.clean)
	if id == "" {
		for _, qe := range d.e.set.Questions {
			d.validate(qe.ID)
		}
		d.list.setLen(len(d.e.set.Questions))
		d.ans.redrawAll()
		return
	}
	d.validate(id)
	d.ans.redraw(id)
}

// undoEdit restores the set and renames as they were before the last edit.
func (d *designModel) undoEdit() {
	if len(d.undo) == 0 {
		d.e.say("nothing to undo")
		return
	}
	prev := d.undo[len(d.undo)-1]
	d.undo = d.undo[:len(d.undo)-1]
	*d.e.set = *prev.set
	d.e.sess.RestoreRenames(prev.renames)
	d.changed("")
	d.ed.clampRow()
	d.e.say("undone (%d more)", len(d.undo))
}

// updateConfidence puts the selected answer's confidence in the status line.
func (d *designModel) updateConfidence() {
	d.e.confident = ""
	if sel := d.selected(); sel != nil {
		d.e.confident = d.ans.confidence(sel.ID)
	}
}

func (d *designModel) nextPane() tea.Cmd {
	switch d.focus {
	case paneList:
		d.focus = paneChart
	case paneChart:
		if d.ed.open {
			d.focus = paneEditor
		} else {
			d.focus = paneList
		}
	default:
		d.focus = paneList
	}
	return nil
}

func (d *designModel) openEditor() tea.Cmd {
	if d.selected() != nil {
		d.ed.start()
		d.focus = paneEditor
	}
	return nil
}

// update handles keys and results for the design screen.
func (d *designModel) update(msg tea.Msg) tea.Cmd {
	cmd := d.handle(msg)
	d.ans.restack()
	return cmd
}

func (d *designModel) handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case runDoneMsg:
		d.finishRun(msg)
	case standInMsg:
		return d.standInStarted(msg)
	case savedMsg:
		d.saved2(msg)
	case historyMsg:
		d.hist.loaded(msg)
	case spinner.TickMsg:
		if d.running {
			var cmd tea.Cmd
			d.spin, cmd = d.spin.Update(msg)
			return cmd
		}
	case tea.MouseMsg:
		if !d.capturing() {
			switch msg.Button {
			case tea.MouseButtonWheelUp:
				d.ans.scroll.move(-3)
			case tea.MouseButtonWheelDown:
				d.ans.scroll.move(3)
			}
		}
	case tea.KeyMsg:
		return d.key(msg)
	}
	return nil
}

func (d *designModel) key(msg tea.KeyMsg) tea.Cmd {
	switch {
	case d.prompt != nil:
		return d.prompt.key(msg)
	case d.focus == paneState:
		return d.st.key(msg)
	case d.focus == paneEditor:
		return d.ed.key(msg)
	case d.focus == paneChart:
		cmd, _ := d.keysAns.handle(msg)
		return cmd
	case d.focus == paneHistory:
		cmd, _ := d.hist.keys.handle(msg)
		return cmd
	}
	cmd, _ := d.keysList.handle(msg)
	return cmd
}

// help returns the keys valid in the current context, from its table.
func (d *designModel) help() helpMap {
	switch {
	case d.prompt != nil:
		return d.prompt.help()
	case d.focus == paneState:
		return d.st.help()
	case d.focus == paneEditor:
		return d.ed.help()
	case d.focus == paneHistory:
		return d.hist.keys.help()
	}
	hm := d.keysList.help()
	if d.focus == paneChart {
		hm = d.keysAns.help()
	}
	// The `?` help also lists what the editor does (e opens it), under
	// its own headings, when there is room for it.
	if d.h < 30 {
		return hm
	}
	for _, g := range d.ed.keys.help().groups {
		g.title = "Editor · " + g.title
		hm.groups = append(hm.groups, g)
	}
	return hm
}

// commitOpen applies the open text field or state editor (for ctrl+s
// inside one): true when nothing is open or the edit applied, false (with
// the reason shown) when its content is invalid or a prompt is open.
func (d *designModel) commitOpen() bool {
	switch {
	case d.prompt != nil:
		return false
	case d.focus == paneState:
		return d.st.commit()
	case d.ed.input:
		return d.ed.commit()
	}
	return true
}

// view draws the design screen.
func (d *designModel) view(w, h int) string {
	lw, rw := d.layout()
	left := d.listView(lw, h)
	right := d.rightView(rw, h)
	sep := d.e.st.Faint.Render("│")
	var b strings.Builder
	for i := 0; i < h; i++ {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		b.WriteString(padRight(l, lw))
		b.WriteString(sep)
		b.WriteString(r)
		if i < h-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (d *designModel) paneTitle(title string, p pane, w int) string {
	st := &d.e.st
	if d.focus == p {
		return st.Focused.Render(fit("▌"+title, w))
	}
	return st.Pane.Render(fit(" "+title, w))
}

func (d *designModel) rightView(w, h int) []string {
	st := &d.e.st
	var lines []string
	if d.prompt != nil {
		lines = append(lines, d.prompt.view(w)...)
		lines = append(lines, "")
	}
	if d.focus == paneState {
		return append(lines, d.st.view(w, h-len(lines))...)
	}
	if d.hist.open {
		return append(lines, d.hist.view(w, h-len(lines))...)
	}
	sel := d.selected()
	if sel == nil {
		return append(lines, st.Muted.Render("no questions — a adds one"))
	}
	if d.ed.open {
		lines = append(lines, d.ed.view(sel, w, h)...)
	}
	if d.notice != "" {
		style := st.Muted
		if d.noticeBad {
			style = st.Warn
		}
		for _, l := range wrapText(d.notice, w-1, 12) {
			lines = append(lines, style.Render(" "+l))
		}
	}
	title := "Answer"
	if d.running {
		title += " " + d.spin.View() + " running… (x cancels)"
	}
	lines = append(lines, d.paneTitle(title, paneChart, w))
	return append(lines, d.ans.view(w, max(1, h-len(lines)))...)
}

// padRight pads (or cuts) a styled line to w cells.
func padRight(s string, w int) string {
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// wrapText wraps s to w cells, at most n lines (the last says "…" when
// more was cut).
func wrapText(s string, w, n int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		for ansi.StringWidth(para) > w {
			cut := ansi.Truncate(para, w, "")
			if i := strings.LastIndexByte(cut, ' '); i > w/2 {
				cut = cut[:i+1]
			}
			out = append(out, strings.TrimRight(cut, " "))
			para = para[len(cut):]
		}
		out = append(out, para)
	}
	if len(out) > n {
		out = out[:n]
		out[n-1] = ansi.Truncate(out[n-1], max(1, w-1), "") + "…"
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func withHelp(b key.Binding, k, desc string) key.Binding {
	b.SetHelp(k, desc)
	return b
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultSavePath is where a set that came from no file is saved: its name
// as a YAML file in the working directory.
func defaultSavePath(s *questionset.Set) string {
	n := unsafeName.ReplaceAllString(s.Name, "-")
	if n == "" || n == "." || n == ".." {
		n = "questions"
	}
	return n + ".yaml"
}

// describeErr is the one-line, actionable description of a provider error
// (workbench.DescribeError), for the screens that show one.
func describeErr(err error) string { return firstLine(workbench.DescribeError(err)) }
