package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/provider"
)

// stateEditor edits the working state: text, or JSON validated as you
// type. esc applies (a second esc discards invalid input); the edit
// becomes one undo step when applied.
type stateEditor struct {
	d    *designModel
	area textarea.Model
	err  string
	disc int // esc presses on invalid input
	keys bindings
}

func newStateEditor(d *designModel) *stateEditor {
	s := &stateEditor{d: d, area: newTextArea(&d.e.st)}
	k := d.e.keys
	s.keys = bindings{
		bind(withHelp(k.Back, "esc", "apply"), "State", s.close).inBar(),
		bind(withHelp(k.Save, "ctrl+s", "apply & save"), "State", nil).inBar(),
	}
	return s
}

func (s *stateEditor) resize(w, h int) {
	s.area.SetWidth(w)
	s.area.SetHeight(max(3, h-3))
}

// open starts editing the working state.
func (s *stateEditor) open() tea.Cmd {
	text, _ := slotText(s.d.e.set.State)
	if len(s.d.e.set.State) > 0 && s.d.e.set.State[0] == '"' {
		text = provider.Text(s.d.e.set.State)
	}
	s.d.focus, s.err, s.disc = paneState, "", 0
	s.area.SetValue(text)
	s.check()
	return s.area.Focus()
}

// value reads the editor: JSON when it looks like JSON (object, array,
// quoted string), plain text otherwise.
func (s *stateEditor) value() (json.RawMessage, error) {
	text := s.area.Value()
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

func (s *stateEditor) check() {
	s.err = ""
	if _, err := s.value(); err != nil {
		s.err = err.Error()
	}
}

func (s *stateEditor) key(msg tea.KeyMsg) tea.Cmd {
	if cmd, ok := s.keys.handle(msg); ok {
		return cmd
	}
	var cmd tea.Cmd
	s.area, cmd = s.area.Update(msg)
	s.disc = 0
	s.check()
	return cmd
}

// close applies the state (esc): invalid input stays open with the reason;
// a second esc discards it.
func (s *stateEditor) close() tea.Cmd {
	if _, err := s.value(); err != nil {
		s.disc++
		if s.disc >= 2 {
			s.leave()
			s.d.e.say("state edit discarded")
			return nil
		}
		s.err = err.Error() + " — fix it, or esc again to discard"
		return nil
	}
	s.commit()
	return nil
}

// commit applies the state; false (with the reason) when it is invalid.
func (s *stateEditor) commit() bool {
	v, err := s.value()
	if err != nil {
		s.err = err.Error() + " — fix it before saving"
		return false
	}
	if !bytes.Equal(v, s.d.e.set.State) {
		if err := s.d.apply("", func() error { return s.d.e.set.SetWorkingState(v) }); err != nil {
			s.err = err.Error()
			return false
		}
		s.d.ans.stateChanged()
		s.d.e.say("state changed — r to run")
	}
	s.leave()
	return true
}

func (s *stateEditor) leave() {
	s.area.Blur()
	s.d.focus = paneList
}

func (s *stateEditor) help() helpMap { return s.keys.help() }

func (s *stateEditor) view(w, h int) []string {
	st := &s.d.e.st
	lines := []string{s.d.paneTitle("State editor — text, or JSON validated as you type", paneState, w)}
	lines = append(lines, strings.Split(s.area.View(), "\n")...)
	if s.err != "" {
		msg := wrapText("✗ "+s.err, w, 3)
		lines = lines[:min(len(lines), max(1, h-len(msg)))]
		for _, l := range msg {
			lines = append(lines, st.Bad.Render(l))
		}
		return lines
	}
	return append(lines[:min(len(lines), max(1, h-1))], st.Good.Render(fit("✓ valid", w)))
}
