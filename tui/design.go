package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// Panes of the design screen.
type pane int

const (
	paneList pane = iota
	paneChart
	paneEditor
	paneState
)

// qAnswer is what the design screen knows about one question's answers.
type qAnswer struct {
	cur   *provider.Answer
	curQ  *provider.Question // question as cur was asked
	prev  *provider.Answer   // ghost
	prevQ *provider.Question
	err   string
	lines []string // the chart, drawn when something changed
}

// Messages of the design screen.
type (
	// runDoneMsg reports a finished (or failed) ask of the working state.
	runDoneMsg struct {
		seq     int
		asked   provider.Questions
		answers []provider.Answer
		errs    map[string]string // per question id, when asked one by one
		err     error             // the whole call's error
		model   string
		usage   provider.Usage
		cost    float64
		latency time.Duration
		elapsed time.Duration
	}
	// savedMsg reports a finished save.
	savedMsg struct {
		path string
		data []byte
		err  error
	}
)

// designModel is the design screen: questions, editors and answers.
type designModel struct {
	e      *env
	w, h   int
	cursor int
	focus  pane
	scroll int

	answers map[string]*qAnswer
	valid   map[string]error

	running bool
	pending bool // a run asked for before the provider was ready
	cancel  context.CancelFunc
	seq     int
	spin    spinner.Model
	started time.Time

	// question editor
	editing  bool
	edRow    int
	edInput  bool // a text field is open
	edKind   editKind
	edJSON   bool
	edErr    string
	edArea   textarea.Model
	edLine   textinput.Model
	discards int // esc presses on invalid input

	// state editor
	stArea textarea.Model
	stErr  string
	stDisc int

	stash map[string]map[provider.QuestionType]provider.Question // criteria kept across type changes
	stack []string                                               // the answer pane's lines (restack)

	undo  []*questionset.Set // sets before each edit, newest last
	clean []byte             // the set as last loaded or saved
	muts  int                // edits made (to know whether to keep a checkpoint)
}

// maxUndo bounds the undo history.
const maxUndo = 100

// withUndo runs fn, keeping the set as it was before as an undo step when
// fn changed it.
func (d *designModel) withUndo(fn func() tea.Cmd) tea.Cmd {
	before, n := d.e.set.Clone(), d.muts
	cmd := fn()
	if d.muts != n {
		d.undo = append(d.undo, before)
		if len(d.undo) > maxUndo {
			d.undo = d.undo[len(d.undo)-maxUndo:]
		}
	}
	return cmd
}

// undoEdit restores the set as it was before the last edit.
func (d *designModel) undoEdit() {
	if len(d.undo) == 0 {
		d.e.say("nothing to undo")
		return
	}
	prev := d.undo[len(d.undo)-1]
	d.undo = d.undo[:len(d.undo)-1]
	*d.e.set = *prev
	cur, err := d.e.set.Marshal()
	d.e.dirty = err != nil || !bytes.Equal(cur, d.clean)
	for _, qe := range d.e.set.Questions {
		d.validate(qe.ID)
		d.redraw(qe.ID)
	}
	d.cursor = min(d.cursor, max(0, len(d.e.set.Questions)-1))
	if sel := d.selected(); sel != nil {
		d.edRow = min(d.edRow, d.edRows(&sel.Question)-1)
	}
	d.e.say("undone (%d more)", len(d.undo))
}

// editKind says what an open editor field changes.
type editKind int

const (
	editInstructions editKind = iota
	editDescription
	editRename
	editThreshold
)

func newDesign(e *env) *designModel {
	d := &designModel{
		e:       e,
		answers: map[string]*qAnswer{},
		valid:   map[string]error{},
		spin:    spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		edArea:  newTextArea(&e.st),
		edLine:  newTextInput("› "),
		stArea:  newTextArea(&e.st),
		stash:   map[string]map[provider.QuestionType]provider.Question{},
	}
	for _, qe := range e.set.Questions {
		d.validate(qe.ID)
	}
	d.clean, _ = e.set.Marshal()
	d.restack()
	return d
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

func (d *designModel) capturing() bool { return d.edInput || d.focus == paneState }

// selected returns the selected question entry, or nil.
func (d *designModel) selected() *provider.QuestionEntry {
	qs := d.e.set.Questions
	if d.cursor < 0 || d.cursor >= len(qs) {
		return nil
	}
	return &qs[d.cursor]
}

func (d *designModel) validate(id string) {
	q, ok := d.e.set.Questions.Get(id)
	if !ok {
		return
	}
	d.valid[id] = q.Validate()
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
	d.edArea.SetWidth(rw)
	d.stArea.SetWidth(rw)
	d.stArea.SetHeight(max(3, h-3))
	d.edArea.SetHeight(max(3, min(8, h/2-3)))
	d.edLine.Width = max(10, rw-4)
	for id := range d.answers {
		d.redraw(id)
	}
	d.restack()
}

// redraw recomputes question id's chart lines; called whenever an answer,
// the question or the width changes, never from View.
func (d *designModel) redraw(id string) {
	a := d.answers[id]
	q, ok := d.e.set.Questions.Get(id)
	if a == nil || !ok {
		return
	}
	_, rw := d.layout()
	stale := false
	if a.curQ != nil {
		x, _ := a.curQ.MarshalJSON()
		y, _ := q.MarshalJSON()
		stale = !bytes.Equal(x, y)
	}
	a.lines = renderChart(chartInput{
		ID: id, Q: q, Cur: a.cur, CurQ: a.curQ, Prev: a.prev, PrevQ: a.prevQ, Stale: stale,
		Err: a.err, Threshold: d.e.set.Threshold(id), True: -1, Width: rw,
	}, &d.e.st)
}

// run asks the working state, asynchronously. Unchanged questions are
// answered by the cache; if the provider cannot answer the whole request
// from what it has (offline, a cache miss), each question is asked alone so
// the ones it can answer still show.
func (d *designModel) run() tea.Cmd {
	if d.running {
		d.e.say("already running — x cancels")
		return nil
	}
	if d.e.prov == nil {
		if d.e.connErr != nil {
			d.e.fail("cannot run: %v", firstLine(d.e.connErr.Error()))
			return nil
		}
		d.pending = true
		d.e.say("will run when the recorded answers are loaded…")
		return nil
	}
	set := d.e.set
	req := set.Request(nil)
	req.Model = d.e.requestedModel()
	if err := req.Validate(); err != nil {
		d.e.fail("not sent: %v", firstLine(err.Error()))
		return nil
	}
	// Copy what the goroutine reads, so later edits cannot race with it.
	body, _ := req.MarshalJSON()
	var sent provider.Request
	if err := json.Unmarshal(body, &sent); err != nil {
		d.e.fail("internal: %v", err)
		return nil
	}
	ctx, cancel := context.WithCancel(d.e.ctx)
	d.cancel, d.running, d.started = cancel, true, d.e.now()
	d.seq++
	seq, prov, now := d.seq, d.e.prov, d.e.now
	d.e.say("running %d question(s)…", len(sent.Questions))
	ask := func() tea.Msg {
		defer cancel()
		t0 := now()
		msg := runDoneMsg{seq: seq, asked: sent.Questions}
		res, err := prov.Ask(ctx, &sent)
		if err != nil && len(sent.Questions) > 1 && ctx.Err() == nil &&
			(provider.KindOf(err) == provider.KindMiss || provider.KindOf(err) == provider.KindMalformed) {
			msg.errs = map[string]string{}
			for _, id := range sent.Questions.IDs() {
				r, qerr := prov.Ask(ctx, sent.Subset([]string{id}))
				if qerr != nil {
					msg.errs[id] = describeErr(qerr)
					continue
				}
				msg.answers = append(msg.answers, r.Answers...)
				msg.model, msg.latency = r.Model, msg.latency+r.Latency
				msg.usage.InputTokens += r.Usage.InputTokens
				msg.usage.OutputTokens += r.Usage.OutputTokens
				msg.cost += r.CostUSD
			}
			err = nil
		} else if err == nil {
			msg.answers, msg.model, msg.usage, msg.cost, msg.latency = res.Answers, res.Model, res.Usage, res.CostUSD, res.Latency
		}
		msg.err, msg.elapsed = err, now().Sub(t0)
		return msg
	}
	return tea.Batch(ask, d.spin.Tick)
}

// describeErr is a one-line, actionable description of a provider error.
func describeErr(err error) string {
	switch provider.KindOf(err) {
	case provider.KindMiss:
		return "no recorded answer for this question as edited (offline); run with a key (live or cached mode) to ask it"
	case provider.KindAuth:
		return "the provider refused the key: check $TYPESAFE_API_KEY"
	case provider.KindCanceled:
		return "cancelled"
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func (d *designModel) finishRun(msg runDoneMsg) {
	if msg.seq != d.seq {
		return
	}
	d.running, d.cancel = false, nil
	e := d.e
	if msg.err != nil {
		if provider.KindOf(msg.err) == provider.KindCanceled || e.ctx.Err() == nil && isCanceled(msg.err) {
			e.say("run cancelled")
		} else {
			e.fail("run failed: %s", describeErr(msg.err))
		}
		return
	}
	if msg.model != "" {
		e.resolved = msg.model
	}
	e.latency, e.tokens, e.costUSD = msg.latency, msg.usage.InputTokens+msg.usage.OutputTokens, msg.cost
	got := map[string]bool{}
	for i := range msg.answers {
		ans := msg.answers[i]
		q, ok := msg.asked.Get(ans.ID)
		if !ok {
			continue
		}
		a := d.answers[ans.ID]
		if a == nil {
			a = &qAnswer{}
			d.answers[ans.ID] = a
		}
		if a.cur != nil {
			a.prev, a.prevQ = a.cur, a.curQ
		}
		qc := cloneQuestion(*q)
		a.cur, a.curQ, a.err = &ans, &qc, ""
		got[ans.ID] = true
	}
	for id, m := range msg.errs {
		a := d.answers[id]
		if a == nil {
			a = &qAnswer{}
			d.answers[id] = a
		}
		a.err = m
	}
	for _, qe := range e.set.Questions {
		d.redraw(qe.ID)
	}
	switch {
	case len(msg.errs) > 0:
		e.fail("%d answered, %d failed (see the chart)", len(got), len(msg.errs))
	default:
		e.say("%d answered in %s", len(got), msg.elapsed.Round(time.Millisecond))
	}
	d.updateConfidence()
}

func isCanceled(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "context canceled"))
}

// updateConfidence puts the selected answer's confidence in the status line.
func (d *designModel) updateConfidence() {
	d.e.confident = ""
	sel := d.selected()
	if sel == nil {
		return
	}
	a := d.answers[sel.ID]
	if a == nil || a.cur == nil {
		return
	}
	switch {
	case a.cur.HasConfidence:
		d.e.confident = fmt.Sprintf("%s confidence %.3f", sel.ID, a.cur.Confidence)
	case a.cur.Type == provider.Noul:
		d.e.confident = fmt.Sprintf("%s P(true) %.3f", sel.ID, a.cur.P)
	}
}

// save marshals the set now and writes it in the background.
func (d *designModel) save() tea.Cmd {
	set := d.e.set
	data, err := set.Marshal()
	if err != nil {
		d.e.fail("cannot save: %v", err)
		return nil
	}
	path := set.Path
	if path == "" && d.e.opt.SaveNew != nil {
		saveNew := d.e.opt.SaveNew
		d.e.say("saving a copy of the example…")
		return func() tea.Msg {
			p, err := saveNew(data)
			return savedMsg{path: p, data: data, err: err}
		}
	}
	if path == "" {
		path = defaultSavePath(set)
	}
	d.e.say("saving to %s…", filepath.Base(path))
	return func() tea.Msg {
		return savedMsg{path: path, data: data, err: questionset.WriteFileAtomic(path, data, 0o644)}
	}
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

// edit applies one of the set's mutation helpers to question id: on
// success the set is marked changed and the question revalidated and
// redrawn; on failure the editor shows why.
func (d *designModel) edit(id string, err error) bool {
	if err != nil {
		d.edErr = err.Error()
		return false
	}
	d.e.dirty = true
	d.muts++
	d.validate(id)
	if d.answers[id] == nil {
		d.answers[id] = &qAnswer{}
	}
	d.redraw(id)
	return true
}

// update handles keys and results for the design screen.
func (d *designModel) update(msg tea.Msg) tea.Cmd {
	cmd := d.handle(msg)
	d.restack()
	return cmd
}

// restack assembles the answer pane: the selected question's chart first,
// then every other question's in file order, so one run shows every
// distribution move. Done after each message, never in View.
func (d *designModel) restack() {
	st := &d.e.st
	_, w := d.layout()
	sel := d.selected()
	d.stack = d.stack[:0]
	add := func(qe *provider.QuestionEntry) {
		if a := d.answers[qe.ID]; a != nil && a.lines != nil {
			d.stack = append(d.stack, a.lines...)
		} else {
			d.stack = append(d.stack, st.Header.Render(fit(fmt.Sprintf("%s · %s", termsafe.String(qe.ID), qe.Question.Type), w)), st.Muted.Render("not run yet — press r to run"))
		}
	}
	if sel != nil {
		add(sel)
	}
	for i := range d.e.set.Questions {
		if i == d.cursor {
			continue
		}
		d.stack = append(d.stack, "")
		add(&d.e.set.Questions[i])
	}
}

func (d *designModel) handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case runDoneMsg:
		d.finishRun(msg)
		return nil
	case savedMsg:
		if msg.err != nil {
			d.e.fail("%v", msg.err)
			return nil
		}
		shown := filepath.Base(msg.path)
		if d.e.set.Path == "" {
			d.e.set.Path = msg.path
			shown = msg.path // a new file: say where
		}
		d.clean = msg.data
		if cur, err := d.e.set.Marshal(); err == nil && bytes.Equal(cur, msg.data) {
			d.e.dirty = false
		}
		d.e.say("saved %s", shown)
		return nil
	case spinner.TickMsg:
		if !d.running {
			return nil
		}
		var cmd tea.Cmd
		d.spin, cmd = d.spin.Update(msg)
		return cmd
	case tea.MouseMsg:
		if d.capturing() {
			return nil
		}
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			d.scroll = max(0, d.scroll-3)
		case tea.MouseButtonWheelDown:
			d.scroll += 3
		}
		d.clampScroll()
		return nil
	case tea.KeyMsg:
		return d.key(msg)
	}
	return nil
}

func (d *designModel) key(msg tea.KeyMsg) tea.Cmd {
	k := d.e.keys
	if d.focus == paneState {
		return d.withUndo(func() tea.Cmd { return d.stateKey(msg) })
	}
	if d.edInput {
		return d.withUndo(func() tea.Cmd { return d.inputKey(msg) })
	}
	switch {
	case key.Matches(msg, k.Undo):
		d.undoEdit()
		return nil
	case key.Matches(msg, k.Run):
		return d.run()
	case key.Matches(msg, k.Cancel):
		if d.running && d.cancel != nil {
			d.cancel()
			d.e.say("cancelling…")
		}
		return nil
	case key.Matches(msg, k.EditState):
		return d.openState()
	case key.Matches(msg, k.Focus):
		switch d.focus {
		case paneList:
			d.focus = paneChart
		case paneChart:
			if d.editing {
				d.focus = paneEditor
			} else {
				d.focus = paneList
			}
		default:
			d.focus = paneList
		}
		return nil
	}
	switch d.focus {
	case paneList:
		return d.listKey(msg)
	case paneChart:
		return d.chartKey(msg)
	case paneEditor:
		return d.withUndo(func() tea.Cmd { return d.editorKey(msg) })
	}
	return nil
}

func (d *designModel) listKey(msg tea.KeyMsg) tea.Cmd {
	k := d.e.keys
	n := len(d.e.set.Questions)
	switch {
	case key.Matches(msg, k.Up):
		d.cursor = max(0, d.cursor-1)
	case key.Matches(msg, k.Down):
		d.cursor = min(n-1, d.cursor+1)
	case key.Matches(msg, k.Top):
		d.cursor = 0
	case key.Matches(msg, k.Bottom):
		d.cursor = n - 1
	case key.Matches(msg, k.Open), key.Matches(msg, k.EditQuestion):
		if d.selected() != nil {
			d.editing, d.focus, d.edRow, d.edErr = true, paneEditor, 0, ""
		}
		return nil
	default:
		return nil
	}
	d.scroll = 0
	d.updateConfidence()
	return nil
}

func (d *designModel) chartKey(msg tea.KeyMsg) tea.Cmd {
	k := d.e.keys
	page := max(1, d.h-4)
	switch {
	case key.Matches(msg, k.Up):
		d.scroll = max(0, d.scroll-1)
	case key.Matches(msg, k.Down):
		d.scroll++
	case key.Matches(msg, k.PageUp):
		d.scroll = max(0, d.scroll-page)
	case key.Matches(msg, k.PageDown):
		d.scroll += page
	case key.Matches(msg, k.Top):
		d.scroll = 0
	case key.Matches(msg, k.Bottom):
		d.scroll = 1 << 30
	case key.Matches(msg, k.Back):
		d.focus = paneList
	case key.Matches(msg, k.EditQuestion), key.Matches(msg, k.Open):
		d.editing, d.focus, d.edRow = true, paneEditor, 0
	}
	d.clampScroll()
	return nil
}

// clampScroll keeps the answer's scroll offset within its lines (with the
// whole body as the window; View clamps again for the actual room).
func (d *designModel) clampScroll() {
	n := len(d.stack)
	room := d.h - 2
	if d.editing {
		room -= d.h/2 + 2
	}
	d.scroll = max(0, min(d.scroll, n-max(1, room)))
}

// Editor rows: 0 type, 1 instructions, then criteria, then (noul) threshold.
func (d *designModel) edRows(q *provider.Question) int {
	n := 2 + items(q)
	if q.Type == provider.Noul {
		n++
	}
	return n
}

func (d *designModel) editorKey(msg tea.KeyMsg) tea.Cmd {
	k := d.e.keys
	sel := d.selected()
	if sel == nil {
		d.editing, d.focus = false, paneList
		return nil
	}
	id, q := sel.ID, sel.Question
	rows := d.edRows(&q)
	item := d.edRow - 2 // criterion index under the cursor
	d.edErr = ""
	switch {
	case key.Matches(msg, k.Back):
		d.editing, d.focus = false, paneList
	case key.Matches(msg, k.Up):
		d.edRow = max(0, d.edRow-1)
	case key.Matches(msg, k.Down):
		d.edRow = min(rows-1, d.edRow+1)
	case key.Matches(msg, k.Type):
		d.changeType(id, q)
	case key.Matches(msg, k.Add):
		set := d.e.set
		at := min(max(item, -1), items(&q)-1) + 1
		switch q.Type {
		case provider.Score:
			if d.edit(id, set.AddLevel(id, at, provider.String("new level"))) {
				d.edRow = 2 + at
				return d.openSlot(editDescription, d.curQ().Levels[at])
			}
		case provider.Choice:
			label := newLabel(&q)
			if d.edit(id, set.AddOption(id, label, nil, at)) {
				d.edRow = 2 + at
				return d.openLine(editRename, label)
			}
		case provider.Noul:
			label := "true"
			if q.OptionIndex("true") >= 0 {
				label = "false"
			}
			if q.OptionIndex(label) >= 0 {
				d.edErr = `a noul has only the criteria "true" and "false"`
				return nil
			}
			if d.edit(id, set.AddOption(id, label, nil, at)) {
				d.edRow = 2 + at
			}
		}
	case key.Matches(msg, k.Delete):
		if item >= 0 && item < items(&q) {
			var err error
			if q.Type == provider.Score {
				err = d.e.set.RemoveLevel(id, item)
			} else {
				err = d.e.set.RemoveOption(id, q.Options[item].Label)
			}
			d.edit(id, err)
			d.edRow = min(d.edRow, d.edRows(d.curQ())-1)
		}
	case key.Matches(msg, k.MoveUp), key.Matches(msg, k.MoveDown):
		to := item - 1
		if key.Matches(msg, k.MoveDown) {
			to = item + 1
		}
		if item < 0 || item >= items(&q) || to < 0 || to >= items(&q) {
			return nil
		}
		var err error
		if q.Type == provider.Score {
			err = d.e.set.MoveLevel(id, item, to)
		} else {
			err = d.e.set.MoveOption(id, q.Options[item].Label, to)
		}
		if d.edit(id, err) {
			d.edRow = 2 + to
		}
	case key.Matches(msg, k.Rename):
		if item >= 0 && item < len(q.Options) && q.Type != provider.Score {
			return d.openLine(editRename, q.Options[item].Label)
		}
		d.edErr = "only choice options have labels to rename"
	case key.Matches(msg, k.Open):
		switch {
		case d.edRow == 0:
			d.changeType(id, q)
		case d.edRow == 1:
			return d.openSlot(editInstructions, q.Instructions)
		case item < items(&q):
			if q.Type == provider.Score {
				return d.openSlot(editDescription, q.Levels[item])
			}
			return d.openSlot(editDescription, q.Options[item].Description)
		default:
			return d.openLine(editThreshold, strconv.FormatFloat(d.e.set.Threshold(id), 'g', -1, 64))
		}
	}
	return nil
}

func (d *designModel) curQ() *provider.Question {
	if sel := d.selected(); sel != nil {
		return &sel.Question
	}
	return &provider.Question{}
}

// changeType cycles the question's type. The criteria it had under each
// type are kept for this session, so cycling back restores them.
func (d *designModel) changeType(id string, q provider.Question) {
	if d.stash[id] == nil {
		d.stash[id] = map[provider.QuestionType]provider.Question{}
	}
	d.stash[id][q.Type] = cloneQuestion(q)
	t := nextType(q.Type)
	if err := d.e.set.SetType(id, t); err != nil {
		d.edErr = err.Error()
		return
	}
	if old, ok := d.stash[id][t]; ok {
		for i := range d.e.set.Questions {
			if d.e.set.Questions[i].ID == id {
				nq := cloneQuestion(d.e.set.Questions[i].Question)
				nq.Options, nq.Levels = cloneQuestion(old).Options, cloneQuestion(old).Levels
				d.e.set.Questions[i].Question = nq
			}
		}
	}
	d.edit(id, nil)
	d.edRow = 0
	d.e.say("%s is now a %s question", id, t)
}

// newLabel returns an unused option label.
func newLabel(q *provider.Question) string {
	label := "option"
	for n := len(q.Options) + 1; q.OptionIndex(label) >= 0; n++ {
		label = fmt.Sprintf("option_%d", n)
	}
	return label
}

func (d *designModel) openSlot(kind editKind, v json.RawMessage) tea.Cmd {
	text, asJSON := slotText(v)
	d.edKind, d.edJSON, d.edInput, d.discards = kind, asJSON, true, 0
	d.edArea.SetValue(text)
	return d.edArea.Focus()
}

func (d *designModel) openLine(kind editKind, v string) tea.Cmd {
	d.edKind, d.edInput, d.discards = kind, true, 0
	d.edLine.SetValue(v)
	d.edLine.CursorEnd()
	return d.edLine.Focus()
}

// inputKey edits the open field: esc applies (or explains why not; a second
// esc discards), enter applies a one-line field, ctrl+j toggles text/JSON.
func (d *designModel) inputKey(msg tea.KeyMsg) tea.Cmd {
	k := d.e.keys
	line := d.edKind == editRename || d.edKind == editThreshold
	switch {
	case key.Matches(msg, k.AsJSON) && !line:
		d.edJSON = !d.edJSON
		d.checkSlot()
		return nil
	case key.Matches(msg, k.Back), line && key.Matches(msg, k.Accept):
		if err := d.applyInput(); err != nil {
			d.discards++
			if d.discards >= 2 {
				d.closeInput()
				d.e.say("edit discarded")
				return nil
			}
			d.edErr = err.Error() + " — fix it, or esc again to discard"
			return nil
		}
		d.closeInput()
		return nil
	}
	var cmd tea.Cmd
	if line {
		d.edLine, cmd = d.edLine.Update(msg)
	} else {
		d.edArea, cmd = d.edArea.Update(msg)
		d.checkSlot()
	}
	d.discards = 0
	return cmd
}

// checkSlot validates the slot being typed, as you type.
func (d *designModel) checkSlot() {
	d.edErr = ""
	if d.edJSON {
		if err := jsonError([]byte(d.edArea.Value())); err != nil && strings.TrimSpace(d.edArea.Value()) != "" {
			d.edErr = "JSON " + err.Error()
		}
	}
}

func (d *designModel) closeInput() {
	d.edInput = false
	d.edArea.Blur()
	d.edLine.Blur()
	d.edErr = ""
}

func (d *designModel) applyInput() error {
	sel := d.selected()
	if sel == nil {
		return nil
	}
	set := d.e.set
	id, q := sel.ID, sel.Question
	item := d.edRow - 2
	var err error
	switch d.edKind {
	case editRename:
		if item < 0 || item >= len(q.Options) {
			return nil
		}
		old, label := q.Options[item].Label, strings.TrimSpace(d.edLine.Value())
		if label == old {
			return nil
		}
		err = set.RenameOption(id, old, label)
	case editThreshold:
		v, perr := strconv.ParseFloat(strings.TrimSpace(d.edLine.Value()), 64)
		if perr != nil || v < 0 || v > 1 {
			return fmt.Errorf("the threshold is a number from 0 to 1")
		}
		if v == set.Threshold(id) {
			return nil
		}
		err = set.SetThreshold(id, &v)
	case editInstructions, editDescription:
		v, perr := parseSlot(d.edArea.Value(), d.edJSON)
		if perr != nil {
			return fmt.Errorf("JSON %v", perr)
		}
		switch {
		case d.edKind == editInstructions:
			if string(v) == "null" {
				v = nil
			}
			if bytes.Equal(v, q.Instructions) {
				return nil
			}
			err = set.SetInstructions(id, v)
		case q.Type == provider.Score:
			if item < 0 || item >= len(q.Levels) || bytes.Equal(v, q.Levels[item]) {
				return nil
			}
			err = set.SetLevel(id, item, v)
		default:
			if item < 0 || item >= len(q.Options) || bytes.Equal(v, q.Options[item].Description) {
				return nil
			}
			err = set.SetOptionDescription(id, q.Options[item].Label, v)
		}
	}
	if err != nil {
		return err
	}
	d.edit(id, nil)
	return nil
}

// openState opens the state editor on the working state.
func (d *designModel) openState() tea.Cmd {
	text, _ := slotText(d.e.set.State)
	if len(d.e.set.State) > 0 && d.e.set.State[0] == '"' {
		text = provider.Text(d.e.set.State)
	}
	d.focus, d.stErr, d.stDisc = paneState, "", 0
	d.stArea.SetValue(text)
	d.checkState()
	return d.stArea.Focus()
}

// stateValue reads the state editor: JSON when it looks like JSON (object,
// array, quoted string), plain text otherwise.
func (d *designModel) stateValue() (json.RawMessage, error) {
	text := d.stArea.Value()
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, fmt.Errorf("the state is empty; write text or JSON")
	}
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") || strings.HasPrefix(t, `"`) {
		if err := jsonError([]byte(text)); err != nil {
			return nil, fmt.Errorf("JSON %v", err)
		}
		return provider.Compact(json.RawMessage(text)), nil
	}
	return provider.String(text), nil
}

func (d *designModel) checkState() {
	d.stErr = ""
	if _, err := d.stateValue(); err != nil {
		d.stErr = err.Error()
	}
}

// commitOpen applies the open text field or state editor (for ctrl+s
// inside one): true when nothing is open or the edit applied, false (with
// the reason shown) when its content is invalid.
func (d *designModel) commitOpen() bool {
	ok := true
	d.withUndo(func() tea.Cmd { ok = d.commitOpenNow(); return nil })
	return ok
}

func (d *designModel) commitOpenNow() bool {
	switch {
	case d.focus == paneState:
		if _, err := d.stateValue(); err != nil {
			d.stErr = err.Error() + " — fix it before saving"
			return false
		}
		d.stateKey(tea.KeyMsg{Type: tea.KeyEsc})
		d.restack()
		return d.focus != paneState
	case d.edInput:
		if err := d.applyInput(); err != nil {
			d.edErr = err.Error() + " — fix it before saving"
			return false
		}
		d.closeInput()
		d.restack()
	}
	return true
}

func (d *designModel) stateKey(msg tea.KeyMsg) tea.Cmd {
	if key.Matches(msg, d.e.keys.Back) {
		v, err := d.stateValue()
		if err != nil {
			d.stDisc++
			if d.stDisc >= 2 {
				d.stArea.Blur()
				d.focus = paneList
				d.e.say("state edit discarded")
				return nil
			}
			d.stErr = err.Error() + " — fix it, or esc again to discard"
			return nil
		}
		d.stArea.Blur()
		d.focus = paneList
		if !bytes.Equal(v, d.e.set.State) {
			if err := d.e.set.SetWorkingState(v); err != nil {
				d.stErr = err.Error()
				d.focus = paneState
				return nil
			}
			d.e.dirty = true
			d.muts++
			for id := range d.answers {
				a := d.answers[id]
				a.err = ""
				d.redraw(id)
			}
			d.e.say("state changed — r to run")
		}
		return nil
	}
	var cmd tea.Cmd
	d.stArea, cmd = d.stArea.Update(msg)
	d.stDisc = 0
	d.checkState()
	return cmd
}

// help returns the keys valid in the current pane.
func (d *designModel) help() helpMap {
	k := d.e.keys
	var short []key.Binding
	switch {
	case d.focus == paneState:
		short = []key.Binding{withHelp(k.Back, "esc", "apply"), withHelp(k.Save, "ctrl+s", "apply & save")}
	case d.edInput && (d.edKind == editRename || d.edKind == editThreshold):
		short = []key.Binding{withHelp(k.Accept, "enter", "apply"), withHelp(k.Back, "esc", "apply"), withHelp(k.Save, "ctrl+s", "apply & save")}
	case d.edInput:
		short = []key.Binding{withHelp(k.Back, "esc", "apply"), k.AsJSON, withHelp(k.Save, "ctrl+s", "apply & save")}
	case d.focus == paneEditor:
		short = []key.Binding{k.Up, k.Down, withHelp(k.Open, "enter", "edit"), k.Add, k.Delete, k.Rename, k.MoveUp, k.MoveDown, k.Type, k.Undo, k.Run, k.Save, k.Back}
	case d.focus == paneChart:
		short = []key.Binding{k.Up, k.Down, k.PageDown, k.EditQuestion, k.Run, k.Focus, k.Back}
	default:
		short = []key.Binding{k.Up, k.Down, k.EditQuestion, k.EditState, k.Run, k.Save, k.Focus}
	}
	if d.running && !d.capturing() {
		short = append([]key.Binding{k.Cancel}, short...)
	}
	full := [][]key.Binding{
		{k.Run, k.Cancel, k.EditQuestion, k.EditState, k.Focus, k.Save},
		{k.Add, k.Delete, k.Rename, k.MoveUp, k.MoveDown, k.Type, withHelp(k.Open, "enter", "edit field"), k.AsJSON, k.Undo},
		k.navKeys(),
	}
	return helpMap{short: short, full: full}
}

func withHelp(b key.Binding, k, desc string) key.Binding {
	b.SetHelp(k, desc)
	return b
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

// padRight pads (or cuts) a styled line to w cells.
func padRight(s string, w int) string {
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

func (d *designModel) paneTitle(title string, p pane, w int) string {
	st := &d.e.st
	if d.focus == p {
		return st.Focused.Render(fit("▌"+title, w))
	}
	return st.Pane.Render(fit(" "+title, w))
}

func (d *designModel) listView(w, h int) []string {
	st := &d.e.st
	qs := d.e.set.Questions
	lines := []string{d.paneTitle(fmt.Sprintf("Questions (%d)", len(qs)), paneList, w)}
	listH := max(1, min(len(qs), h-6))
	top := 0
	if d.cursor >= listH {
		top = d.cursor - listH + 1
	}
	for i := top; i < len(qs) && i < top+listH; i++ {
		qe := &qs[i]
		mark := st.Good.Render("✓")
		if d.valid[qe.ID] != nil {
			mark = st.Bad.Render("✗")
		}
		stale := " "
		if a := d.answers[qe.ID]; a != nil && a.cur != nil && a.curQ != nil {
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
		iw := ansi.StringWidth(info)
		idW := max(1, w-5-iw)
		idText := fit(termsafe.String(qe.ID), idW) // ids come from the file
		if i == d.cursor && d.focus != paneState {
			idText = st.Selected.Render(idText)
		}
		row := idText + " " + st.Muted.Render(info)
		cur := " "
		if i == d.cursor {
			cur = "›"
		}
		lines = append(lines, cur+mark+stale+" "+row)
	}
	lines = append(lines, "")
	lines = append(lines, d.paneTitle("State", paneState, w))
	stateText := provider.Text(d.e.set.State)
	if stateText == "" {
		stateText = "(none — s to write one)"
	}
	for _, l := range wrapText(stateText, w-1, max(1, h-len(lines))) {
		lines = append(lines, " "+st.Muted.Render(l))
	}
	return lines
}

// wrapText wraps s to w cells, at most n lines.
func wrapText(s string, w, n int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		for ansi.StringWidth(para) > w && len(out) < n {
			cut := ansi.Truncate(para, w, "")
			if i := strings.LastIndexByte(cut, ' '); i > w/2 {
				cut = cut[:i+1]
			}
			out = append(out, strings.TrimRight(cut, " "))
			para = para[len(cut):]
		}
		if len(out) < n {
			out = append(out, para)
		}
	}
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func (d *designModel) rightView(w, h int) []string {
	st := &d.e.st
	if d.focus == paneState {
		lines := []string{d.paneTitle("State editor — text, or JSON validated as you type", paneState, w)}
		lines = append(lines, strings.Split(d.stArea.View(), "\n")...)
		if d.stErr != "" {
			msg := wrapText("✗ "+d.stErr, w, 3)
			lines = lines[:min(len(lines), h-len(msg))]
			for _, l := range msg {
				lines = append(lines, st.Bad.Render(l))
			}
		} else {
			lines = append(lines[:min(len(lines), h-1)], st.Good.Render(fit("✓ valid", w)))
		}
		return lines
	}
	sel := d.selected()
	if sel == nil {
		return []string{st.Muted.Render("no questions")}
	}
	var lines []string
	if d.editing {
		lines = d.editorView(sel, w, h)
	}
	title := "Answer"
	if d.running {
		title += " " + d.spin.View() + " running… (x cancels)"
	}
	lines = append(lines, d.paneTitle(title, paneChart, w))
	chart := d.stack
	room := max(1, h-len(lines))
	maxScroll := max(0, len(chart)-room)
	s := min(d.scroll, maxScroll)
	end := min(len(chart), s+room)
	lines = append(lines, chart[s:end]...)
	if maxScroll > 0 && len(lines) > 0 {
		lines[len(lines)-1] = st.Faint.Render(fit(fmt.Sprintf("… %d–%d of %d lines (tab, ↑↓ to scroll)", s+1, end, len(chart)), w))
	}
	return lines
}

func (d *designModel) editorView(sel *provider.QuestionEntry, w, h int) []string {
	st := &d.e.st
	q := &sel.Question
	title := "Edit " + sel.ID
	if err := d.valid[sel.ID]; err != nil {
		title += " — ✗ " + firstLine(err.Error())
	}
	lines := []string{d.paneTitle(title, paneEditor, w)}
	rows := []string{"type: " + string(q.Type), "instructions: " + oneLine(q.Instructions)}
	for i := 0; i < items(q); i++ {
		if q.Type == provider.Score {
			rows = append(rows, fmt.Sprintf("level %d: %s", i, oneLine(q.Levels[i])))
		} else {
			rows = append(rows, fmt.Sprintf("%s: %s", q.Options[i].Label, oneLine(q.Options[i].Description)))
		}
	}
	if q.Type == provider.Noul {
		rows = append(rows, fmt.Sprintf("threshold (caller-side, never sent): %g", d.e.set.Threshold(sel.ID)))
	}
	budget := max(3, h/2-1)
	if d.edInput {
		budget = max(2, h/2-d.edArea.Height()-2)
	}
	top := 0
	if d.edRow >= budget {
		top = d.edRow - budget + 1
	}
	for i := top; i < len(rows) && i < top+budget; i++ {
		if i == d.edRow && d.focus == paneEditor {
			lines = append(lines, st.Selected.Render(fit("› "+rows[i], w)))
		} else {
			lines = append(lines, fit("  "+rows[i], w))
		}
	}
	if d.edInput {
		switch d.edKind {
		case editRename:
			lines = append(lines, st.Focused.Render("new label (enter applies)"), d.edLine.View())
		case editThreshold:
			lines = append(lines, st.Focused.Render("threshold 0..1 (enter applies)"), d.edLine.View())
		default:
			mode := "text"
			if d.edJSON {
				mode = "JSON"
			}
			lines = append(lines, st.Focused.Render(fmt.Sprintf("editing as %s (ctrl+j toggles; esc applies)", mode)))
			lines = append(lines, strings.Split(d.edArea.View(), "\n")...)
		}
	}
	if d.edErr != "" {
		for _, l := range wrapText("✗ "+d.edErr, w, 3) {
			lines = append(lines, st.Bad.Render(l))
		}
	}
	return lines
}

// oneLine is a slot's text on one line.
func oneLine(v json.RawMessage) string {
	s := provider.Text(v)
	if s == "" {
		return "—"
	}
	return strings.Join(strings.Fields(s), " ")
}
