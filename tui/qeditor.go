package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// rowKind is what one editor row edits.
type rowKind int

const (
	rowType rowKind = iota
	rowInstructions
	rowItem // an option or a level
	rowThreshold
	rowMinConfidence
	rowGate
)

// edRow is one row of the question editor.
type edRow struct {
	kind rowKind
	item int    // rowItem: the option or level index
	gate string // rowGate: the gate's file field
}

// editKind says what an open editor field changes.
type editKind int

const (
	editInstructions editKind = iota
	editDescription
	editRename
	editNumber // threshold, min_confidence or a gate field (the row says which)
)

// questionEditor edits the selected question: its type (t, asked), its
// instructions, options or levels, and the caller-side settings
// (threshold, min_confidence) and gate. Edits go through questionset's
// helpers and the session (renames), one undo step each, applied when the
// field is applied.
type questionEditor struct {
	d        *designModel
	open     bool
	row      int
	input    bool // a text field is open
	kind     editKind
	asJSON   bool
	err      string
	area     textarea.Model
	line     textinput.Model
	discards int // esc presses on invalid input
	keys     bindings
	inKeys   bindings
}

func newQuestionEditor(d *designModel) *questionEditor {
	e := &questionEditor{d: d, area: newTextArea(&d.e.st), line: newTextInput("› ")}
	k := d.e.keys
	isItem := func() bool { r, ok := e.cur(); return ok && r.kind == rowItem }
	idle := func() bool { return !d.running }
	e.keys = bindings{
		bind(k.Up, "Navigate", func() tea.Cmd { e.row = max(0, e.row-1); return nil }).inBar(),
		bind(k.Down, "Navigate", func() tea.Cmd { e.row = min(len(e.rows())-1, e.row+1); return nil }).inBar(),
		bind(withHelp(k.Open, "enter", "edit field"), "Edit", e.enter).inBar(),
		bind(withHelp(k.Add, "a", "add option/level"), "Edit", e.add).inBar(),
		bind(withHelp(k.Delete, "d", "delete option/level"), "Edit", e.remove).inBar().enabledWhen(isItem),
		bind(withHelp(k.Rename, "n", "rename option"), "Edit", e.rename).inBar().enabledWhen(isItem),
		bind(k.MoveUp, "Edit", func() tea.Cmd { return e.move(-1) }).enabledWhen(isItem),
		bind(k.MoveDown, "Edit", func() tea.Cmd { return e.move(1) }).enabledWhen(isItem),
		bind(k.Type, "Edit", e.changeType).inBar(),
		bind(k.Undo, "Edit", func() tea.Cmd { d.undoEdit(); return nil }),
		bind(k.Run, "Run", d.run).inBar().enabledWhen(idle),
		bind(d.dk.StandIn, "Run", d.startStandIn).inBar().enabledWhen(d.standInOffered),
		bind(k.Save, "File", nil).inBar(),
		bind(k.Focus, "Panes", d.nextPane),
		bind(withHelp(k.Back, "esc", "close editor"), "Panes", func() tea.Cmd { e.open = false; d.focus = paneList; return nil }).inBar(),
	}
	line := func() bool { return e.kind == editRename || e.kind == editNumber }
	e.inKeys = bindings{
		bind(withHelp(k.Accept, "enter", "apply"), "Field", e.close).inBar().enabledWhen(line),
		bind(withHelp(k.Back, "esc", "apply"), "Field", e.close).inBar(),
		bind(withHelp(k.AsJSON, "ctrl+j", "text/JSON"), "Field", e.toggleJSON).inBar().enabledWhen(func() bool { return !line() }),
		bind(withHelp(k.Save, "ctrl+s", "apply & save"), "Field", nil).inBar(),
	}
	return e
}

func (e *questionEditor) resize(w, h int) {
	e.area.SetWidth(w)
	e.area.SetHeight(max(3, min(8, h/2-3)))
	e.line.Width = max(10, w-4)
}

// start opens the editor on the selected question.
func (e *questionEditor) start() { e.open, e.row, e.err = true, 0, "" }

func (e *questionEditor) q() (string, *provider.Question) {
	sel := e.d.selected()
	if sel == nil {
		return "", &provider.Question{}
	}
	return sel.ID, &sel.Question
}

// rows lists the editor's rows for the selected question.
func (e *questionEditor) rows() []edRow {
	_, q := e.q()
	rows := []edRow{{kind: rowType}, {kind: rowInstructions}}
	for i := 0; i < items(q); i++ {
		rows = append(rows, edRow{kind: rowItem, item: i})
	}
	if q.Type == provider.Noul {
		rows = append(rows, edRow{kind: rowThreshold})
	} else {
		rows = append(rows, edRow{kind: rowMinConfidence})
	}
	for _, g := range questionset.GateFields() {
		if g == "min_within_one" && q.Type != provider.Score {
			continue
		}
		rows = append(rows, edRow{kind: rowGate, gate: g})
	}
	return rows
}

func (e *questionEditor) cur() (edRow, bool) {
	rows := e.rows()
	if e.row < 0 || e.row >= len(rows) {
		return edRow{}, false
	}
	return rows[e.row], true
}

func (e *questionEditor) clampRow() { e.row = max(0, min(e.row, len(e.rows())-1)) }

// rowOf is the row index of item i.
func (e *questionEditor) rowOf(i int) int { return 2 + i }

// edit applies one change to question id as an undo step; the error, if
// any, is shown in the editor.
func (e *questionEditor) edit(id string, fn func() error) bool {
	e.err = ""
	if err := e.d.apply(id, fn); err != nil {
		e.err = err.Error()
		return false
	}
	return true
}

func (e *questionEditor) key(msg tea.KeyMsg) tea.Cmd {
	if e.d.selected() == nil {
		e.open, e.d.focus = false, paneList
		return nil
	}
	if e.input {
		if cmd, ok := e.inKeys.handle(msg); ok {
			return cmd
		}
		var cmd tea.Cmd
		if e.kind == editRename || e.kind == editNumber {
			e.line, cmd = e.line.Update(msg)
		} else {
			e.area, cmd = e.area.Update(msg)
			e.checkSlot()
		}
		e.discards = 0
		return cmd
	}
	e.err = ""
	cmd, _ := e.keys.handle(msg)
	return cmd
}

func (e *questionEditor) help() helpMap {
	if e.input {
		return e.inKeys.help()
	}
	return e.keys.help()
}

// enter opens the field under the cursor. On the type row it only says
// how a type is changed: t, which asks first.
func (e *questionEditor) enter() tea.Cmd {
	id, q := e.q()
	r, ok := e.cur()
	if !ok {
		return nil
	}
	switch r.kind {
	case rowType:
		e.err = "t changes the type (it says what happens to the criteria and asks first)"
	case rowInstructions:
		return e.openSlot(editInstructions, q.Instructions)
	case rowItem:
		if q.Type == provider.Score {
			return e.openSlot(editDescription, q.Levels[r.item])
		}
		return e.openSlot(editDescription, q.Options[r.item].Description)
	case rowThreshold:
		return e.openLine(editNumber, strconv.FormatFloat(e.d.e.set.Threshold(id), 'g', -1, 64))
	case rowMinConfidence:
		v := ""
		if mc, ok := e.d.e.set.MinConfidence(id); ok {
			v = strconv.FormatFloat(mc, 'g', -1, 64)
		}
		return e.openLine(editNumber, v)
	case rowGate:
		g := e.d.e.set.Gates[id]
		v := ""
		if x, _ := g.Field(r.gate); x != nil {
			v = strconv.FormatFloat(*x, 'g', -1, 64)
		}
		return e.openLine(editNumber, v)
	}
	return nil
}

// add inserts an option or level after the cursor (or first).
func (e *questionEditor) add() tea.Cmd {
	id, q := e.q()
	at := 0
	if r, ok := e.cur(); ok && r.kind == rowItem {
		at = r.item + 1
	} else if ok && r.kind != rowType && r.kind != rowInstructions {
		at = items(q)
	}
	set := e.d.e.set
	switch q.Type {
	case provider.Score:
		if e.edit(id, func() error { return set.AddLevel(id, at, provider.String("new level")) }) {
			e.row = e.rowOf(at)
			_, q = e.q()
			return e.openSlot(editDescription, q.Levels[at])
		}
	case provider.Choice:
		label := newLabel(q)
		if e.edit(id, func() error { return set.AddOption(id, label, nil, at) }) {
			e.row = e.rowOf(at)
			return e.openLine(editRename, label)
		}
	case provider.Noul:
		label := "true"
		if q.OptionIndex("true") >= 0 {
			label = "false"
		}
		if q.OptionIndex(label) >= 0 {
			e.err = `a noul has only the criteria "true" and "false"`
			return nil
		}
		if e.edit(id, func() error { return set.AddOption(id, label, nil, at) }) {
			e.row = e.rowOf(at)
		}
	}
	return nil
}

// remove deletes the option or level under the cursor. Labels are resolved
// by text, so labels naming it become stale (reported), never another one.
func (e *questionEditor) remove() tea.Cmd {
	id, q := e.q()
	r, _ := e.cur()
	var what string
	ok := e.edit(id, func() error {
		if q.Type == provider.Score {
			what = "level " + oneLine(q.Levels[r.item])
			return e.d.e.set.RemoveLevel(id, r.item)
		}
		what = q.Options[r.item].Label
		return e.d.e.set.RemoveOption(id, q.Options[r.item].Label)
	})
	if ok {
		e.clampRow()
		e.d.e.say("removed %s — dataset labels naming it are now excluded and reported (u undoes)", termsafe.String(what))
	}
	return nil
}

// move moves the option or level under the cursor by delta places.
func (e *questionEditor) move(delta int) tea.Cmd {
	id, q := e.q()
	r, _ := e.cur()
	to := r.item + delta
	if to < 0 || to >= items(q) {
		return nil
	}
	if e.edit(id, func() error {
		if q.Type == provider.Score {
			return e.d.e.set.MoveLevel(id, r.item, to)
		}
		return e.d.e.set.MoveOption(id, q.Options[r.item].Label, to)
	}) {
		e.row = e.rowOf(to)
	}
	return nil
}

func (e *questionEditor) rename() tea.Cmd {
	_, q := e.q()
	r, _ := e.cur()
	if q.Type != provider.Choice {
		e.err = "only choice options have labels to rename"
		return nil
	}
	return e.openLine(editRename, q.Options[r.item].Label)
}

// changeType asks before changing the question's type, saying what happens
// to its options or levels; the answer picks the new type.
func (e *questionEditor) changeType() tea.Cmd {
	id, q := e.q()
	from := q.Type
	var choices []promptChoice
	var body []string
	for _, t := range []provider.QuestionType{provider.Choice, provider.Score, provider.Noul} {
		if t == from {
			continue
		}
		t := t
		body = append(body, fmt.Sprintf("To %s: %s.", t, typeChange(q, t)))
		choices = append(choices, promptChoice{key: string(t[0]), desc: "make it a " + string(t), do: func() tea.Cmd {
			if e.edit(id, func() error { return e.d.e.set.SetType(id, t) }) {
				e.row = 0
				e.d.e.say("%s is now a %s question (u undoes)", termsafe.String(id), t)
			}
			return nil
		}})
	}
	body = append(body, "Dataset labels are read by their text against the new type: those naming nothing are excluded and reported, never moved to another outcome.")
	e.d.prompt = &prompt{title: fmt.Sprintf("Change the type of %s (a %s question)?", termsafe.String(id), from), body: strings.Join(body, " "), choices: choices}
	e.d.prompt.build(e.d)
	return nil
}

// typeChange says what questionset.SetType does to q's criteria.
func typeChange(q *provider.Question, to provider.QuestionType) string {
	n := items(q)
	switch {
	case q.Type == provider.Choice && to == provider.Score:
		return fmt.Sprintf("its %d options become %d levels in order (each its description, or its label when it has none); option labels go", n, n)
	case q.Type == provider.Score && to == provider.Choice:
		return fmt.Sprintf("its %d levels become %d options, labelled by the level's text where that can be a label, else level_N with the level as description", n, n)
	case to == provider.Noul:
		what := "options"
		if q.Type == provider.Score {
			what = "levels"
		}
		return fmt.Sprintf("its %d %s are dropped (a noul's criteria are only true/false), min_confidence goes, the threshold is 0.5", n, what)
	case to == provider.Choice:
		return "its true/false criteria become the options yes/no; the threshold goes"
	default:
		return "its true/false criteria become the levels no, yes; the threshold goes"
	}
}

// newLabel returns an unused option label.
func newLabel(q *provider.Question) string {
	label := "option"
	for n := len(q.Options) + 1; q.OptionIndex(label) >= 0; n++ {
		label = fmt.Sprintf("option_%d", n)
	}
	return label
}

func (e *questionEditor) openSlot(kind editKind, v json.RawMessage) tea.Cmd {
	text, asJSON := slotText(v)
	e.kind, e.asJSON, e.input, e.discards, e.err = kind, asJSON, true, 0, ""
	e.area.SetValue(text)
	return e.area.Focus()
}

func (e *questionEditor) openLine(kind editKind, v string) tea.Cmd {
	e.kind, e.input, e.discards, e.err = kind, true, 0, ""
	e.line.SetValue(v)
	e.line.CursorEnd()
	return e.line.Focus()
}

// toggleJSON switches the field between text and JSON. Plain text that is
// not JSON is offered as a JSON string (quoted) instead of failing; a JSON
// string switched back to text is unquoted.
func (e *questionEditor) toggleJSON() tea.Cmd {
	v := e.area.Value()
	if !e.asJSON {
		if strings.TrimSpace(v) != "" && jsonError([]byte(v)) != nil {
			e.area.SetValue(string(provider.String(v)))
			e.d.e.say("not JSON as written: offered as a JSON string")
		}
	} else if t := strings.TrimSpace(v); strings.HasPrefix(t, `"`) && jsonError([]byte(t)) == nil {
		e.area.SetValue(provider.Text(json.RawMessage(t)))
	}
	e.asJSON = !e.asJSON
	e.checkSlot()
	return nil
}

// checkSlot validates the slot being typed, as you type.
func (e *questionEditor) checkSlot() {
	e.err = ""
	if e.asJSON && strings.TrimSpace(e.area.Value()) != "" {
		if err := jsonError([]byte(e.area.Value())); err != nil {
			e.err = "JSON " + err.Error() + " (ctrl+j edits it as text)"
		}
	}
}

// close applies the open field (esc, or enter on a line): invalid input
// stays open with the reason; a second esc discards it.
func (e *questionEditor) close() tea.Cmd {
	if err := e.applyInput(); err != nil {
		e.discards++
		if e.discards >= 2 {
			e.closeInput()
			e.d.e.say("edit discarded")
			return nil
		}
		e.err = err.Error() + " — fix it, or esc again to discard"
		return nil
	}
	e.closeInput()
	return nil
}

// commit applies the open field for ctrl+s; false when it is invalid.
func (e *questionEditor) commit() bool {
	if err := e.applyInput(); err != nil {
		e.err = err.Error() + " — fix it before saving"
		return false
	}
	e.closeInput()
	return true
}

func (e *questionEditor) closeInput() {
	e.input = false
	e.area.Blur()
	e.line.Blur()
	e.err = ""
}

// number reads the line as a number in [0, 1]; empty is nil (unset).
func (e *questionEditor) number(what string, allowEmpty bool) (*float64, error) {
	s := strings.TrimSpace(e.line.Value())
	if s == "" && allowEmpty {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 1 {
		if allowEmpty {
			return nil, fmt.Errorf("%s is a number from 0 to 1 (empty removes it)", what)
		}
		return nil, fmt.Errorf("%s is a number from 0 to 1", what)
	}
	return &v, nil
}

func (e *questionEditor) applyInput() error {
	id, qp := e.q()
	if id == "" {
		return nil
	}
	q := *qp
	set, sess := e.d.e.set, e.d.e.sess
	r, _ := e.cur()
	var fn func() error
	switch {
	case e.kind == editRename:
		if r.kind != rowItem || r.item >= len(q.Options) {
			return nil
		}
		old, label := q.Options[r.item].Label, strings.TrimSpace(e.line.Value())
		if label == old {
			return nil
		}
		// Through the session, so labels with the old name count as the
		// new one and the save can rewrite them.
		fn = func() error { return sess.RenameOption(id, old, label) }
	case e.kind == editNumber && r.kind == rowThreshold:
		v, err := e.number("the threshold", false)
		if err != nil {
			return err
		}
		if *v == set.Threshold(id) {
			return nil
		}
		fn = func() error { return set.SetThreshold(id, v) }
	case e.kind == editNumber && r.kind == rowMinConfidence:
		v, err := e.number("min_confidence", true)
		if err != nil {
			return err
		}
		fn = func() error { return set.SetMinConfidence(id, v) }
	case e.kind == editNumber && r.kind == rowGate:
		v, err := e.number(r.gate, true)
		if err != nil && r.gate != "max_log_loss" && r.gate != "max_brier" {
			return err
		}
		if err != nil { // unbounded above 1: read it again without the cap
			s := strings.TrimSpace(e.line.Value())
			x, perr := strconv.ParseFloat(s, 64)
			if perr != nil {
				return fmt.Errorf("%s is a number (empty removes it)", r.gate)
			}
			v = &x
		}
		g := set.Gates[id]
		if _, err := g.SetField(r.gate, v); err != nil {
			return err
		}
		fn = func() error {
			if g.Empty() {
				return set.SetGate(id, nil)
			}
			return set.SetGate(id, &g)
		}
	default:
		v, err := parseSlot(e.area.Value(), e.asJSON)
		if err != nil {
			return fmt.Errorf("JSON %v", err)
		}
		switch {
		case e.kind == editInstructions:
			if string(v) == "null" {
				v = nil
			}
			if bytes.Equal(v, q.Instructions) {
				return nil
			}
			fn = func() error { return set.SetInstructions(id, v) }
		case r.kind != rowItem:
			return nil
		case q.Type == provider.Score:
			if bytes.Equal(v, q.Levels[r.item]) {
				return nil
			}
			fn = func() error { return set.SetLevel(id, r.item, v) }
		default:
			if bytes.Equal(v, q.Options[r.item].Description) {
				return nil
			}
			fn = func() error { return set.SetOptionDescription(id, q.Options[r.item].Label, v) }
		}
	}
	return e.d.apply(id, fn)
}
