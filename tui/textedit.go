package tui

import (
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// newTextArea returns a textarea set up for the workbench: no character or
// line limits, a static cursor (no blink ticks, stable screens).
func newTextArea(st *Styles) textarea.Model {
	ta := textarea.New()
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.MaxWidth = 0
	ta.ShowLineNumbers = true
	ta.Prompt = "│ "
	ta.Cursor.SetMode(cursor.CursorStatic)
	fs, bs := textarea.DefaultStyles()
	fs.LineNumber = st.Faint
	fs.CursorLineNumber = st.Muted
	fs.CursorLine = fs.CursorLine.UnsetBackground()
	bs.LineNumber = st.Faint
	ta.FocusedStyle, ta.BlurredStyle = fs, bs
	return ta
}

// newTextInput returns a one-line input with a static cursor.
func newTextInput(prompt string) textinput.Model {
	ti := textinput.New()
	ti.Prompt = prompt
	ti.CharLimit = 0
	ti.Cursor.SetMode(cursor.CursorStatic)
	return ti
}

// filterKey feeds a key to a list screen's filter line while it has focus:
// enter keeps the query and esc clears it, both blurring the line and ending
// typing; any other key edits the line. It returns whether typing goes on,
// the query (the line's text) and the line's command.
func filterKey(in *textinput.Model, msg tea.KeyMsg) (typing bool, query string, cmd tea.Cmd) {
	switch msg.Type {
	case tea.KeyEnter:
		in.Blur()
		return false, in.Value(), nil
	case tea.KeyEsc:
		in.SetValue("")
		in.Blur()
		return false, "", nil
	}
	*in, cmd = in.Update(msg)
	return true, in.Value(), cmd
}
