package tui

import tea "github.com/charmbracelet/bubbletea"

type placeholder struct {
	e    *env
	name string
}

func (p *placeholder) update(tea.Msg) tea.Cmd { return nil }
func (p *placeholder) view(w, h int) string   { return p.e.st.Muted.Render(" " + p.name + ": coming") }
func (p *placeholder) resize(w, h int)        {}
func (p *placeholder) help() helpMap          { return helpMap{} }
func (p *placeholder) capturing() bool        { return false }

func newRunsScreen(e *env) screen    { return &placeholder{e, "runs"} }
func newCompareScreen(e *env) screen { return &placeholder{e, "compare"} }
