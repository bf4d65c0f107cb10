package tui

import (
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
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
