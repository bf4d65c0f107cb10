package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/provider"
)

// TestEditorKeys drives the question editor: add, rename, move, delete,
// change type and back, each through the set's mutation helpers.
func TestEditorKeys(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	labels := func() string {
		var s []string
		for _, o := range set.Questions[0].Question.Options {
			s = append(s, o.Label)
		}
		return strings.Join(s, ",")
	}
	drive(m, keys("e")...)
	drive(m, press(tea.KeyDown), press(tea.KeyDown)) // billing
	drive(m, keys("a")...)                           // new option after billing, rename opened
	drive(m, press(tea.KeyCtrlU))
	drive(m, keys("refunds")...)
	drive(m, press(tea.KeyEnter))
	if got := labels(); got != "billing,refunds,orders,shipping" {
		t.Fatalf("after add+rename: %s", got)
	}
	drive(m, keys("J")...) // refunds down
	if got := labels(); got != "billing,orders,refunds,shipping" {
		t.Errorf("after move down: %s", got)
	}
	drive(m, keys("K")...)
	drive(m, keys("K")...)
	if got := labels(); got != "refunds,billing,orders,shipping" {
		t.Errorf("after move up twice: %s", got)
	}
	drive(m, keys("d")...)
	if got := labels(); got != "billing,orders,shipping" {
		t.Errorf("after delete: %s", got)
	}
	drive(m, keys("n")...)
	drive(m, press(tea.KeyCtrlU))
	drive(m, keys("orders")...)
	drive(m, press(tea.KeyEnter))
	if !strings.Contains(m.View(), "already exists") || labels() != "billing,orders,shipping" {
		t.Errorf("renaming onto a taken label was not refused:\n%s", m.View())
	}
	drive(m, press(tea.KeyEsc)) // the second esc discards
	if m.design.ed.input || !m.design.ed.open {
		t.Fatal("esc on the refused rename did not just close the field")
	}
	drive(m, keys("t")...) // asks first, saying what happens to the options
	if v := m.View(); set.Questions[0].Question.Type != provider.Choice || !strings.Contains(v, "options become 3 levels") {
		t.Fatalf("t changed the type without asking:\n%s", v)
	}
	drive(m, keys("s")...)
	if q := set.Questions[0].Question; q.Type != provider.Score || len(q.Levels) != 3 {
		t.Errorf("choice → score: %s with %d levels", q.Type, len(q.Levels))
	}
	drive(m, keys("u")...) // the options come back with undo
	if q := set.Questions[0].Question; q.Type != provider.Choice || labels() != "billing,orders,shipping" {
		t.Errorf("undo did not restore the options: %s %s", q.Type, labels())
	}
	drive(m, keys("t")...)
	drive(m, press(tea.KeyEsc)) // backing out changes nothing
	if set.Questions[0].Question.Type != provider.Choice || m.design.prompt != nil {
		t.Error("esc on the type prompt changed the type or left it open")
	}
	if m.e.dirty {
		t.Error("every edit undone or reverted, yet the set is marked unsaved")
	}
}

// TestStateEditorValidates: the state editor reports JSON errors with line
// and column as you type, refuses to apply invalid JSON on the first esc,
// and applies a valid edit.
func TestStateEditorValidates(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(m, keys("s")...)
	drive(m, keys(",")...)
	if v := m.View(); !strings.Contains(v, "✗ JSON 3:2: unexpected data after the JSON value") {
		t.Fatalf("no line:col error shown:\n%s", v)
	}
	drive(m, press(tea.KeyEsc))
	if m.design.focus != paneState || !strings.Contains(m.View(), "esc again to discard") {
		t.Fatal("invalid state applied or editor closed on the first esc")
	}
	drive(m, press(tea.KeyBackspace))
	drive(m, press(tea.KeyUp), press(tea.KeyEnd))
	drive(m, keys(`, "order": "A-104"`)...)
	if v := m.View(); !strings.Contains(v, "✓ valid") {
		t.Fatalf("valid JSON not accepted:\n%s", v)
	}
	drive(m, press(tea.KeyEsc))
	if got := string(set.State); got != `{"message":"I was charged twice: refund the charges on my invoice for order A-104","order":"A-104"}` {
		t.Errorf("state = %s", got)
	}
	if !m.e.dirty || m.design.focus != paneList {
		t.Error("state edit not applied")
	}
}

// TestSaveFromEditor: ctrl+s inside the state editor applies the edit and
// saves; with invalid JSON it refuses and keeps the editor open.
func TestSaveFromEditor(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(m, keys("s")...)
	drive(m, keys(",")...)
	drive(m, press(tea.KeyCtrlS))
	if m.design.focus != paneState || !strings.Contains(m.View(), "before saving") {
		t.Fatalf("invalid state saved:\n%s", m.View())
	}
	drive(m, press(tea.KeyBackspace), press(tea.KeyCtrlS))
	if m.design.focus == paneState || m.e.dirty {
		t.Fatalf("ctrl+s in the editor did not apply and save (dirty %v)", m.e.dirty)
	}
	_ = set
}

// TestUndo: u undoes edits one at a time, back to the file as loaded.
func TestUndo(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	orig, _ := set.Marshal()
	drive(m, keys("e")...)
	drive(m, press(tea.KeyDown), press(tea.KeyDown))
	drive(m, keys("d")...)  // delete billing
	drive(m, keys("J")...)  // move orders down
	drive(m, keys("ts")...) // to score (asked, answered)
	if set.Questions[0].Question.Type != "score" {
		t.Fatalf("setup: type %s", set.Questions[0].Question.Type)
	}
	drive(m, keys("u")...)
	if q := set.Questions[0].Question; q.Type != "choice" || q.Options[0].Label != "shipping" {
		t.Errorf("after one undo: %s %v", q.Type, q.Options)
	}
	drive(m, keys("uu")...)
	got, _ := set.Marshal()
	if string(got) != string(orig) {
		t.Errorf("three undos do not restore the file:\n%s", got)
	}
	if m.e.dirty {
		t.Error("undoing every edit left the set marked unsaved")
	}
	drive(m, keys("u")...)
	if !strings.Contains(m.View(), "nothing to undo") {
		t.Error("a fourth undo did not say there is nothing to undo")
	}
}
