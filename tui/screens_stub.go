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

func newDatasetScreen(e *env, d *designModel) screen { return &placeholder{e, "dataset"} }
func newEvalScreen(e *env) screen                    { return &placeholder{e, "evaluate"} }
func newRunsScreen(e *env) screen                    { return &placeholder{e, "runs"} }
func newCompareScreen(e *env) screen                 { return &placeholder{e, "compare"} }

// Store is what the runs screens read.
type Store interface{}

// Evaluator starts evaluations.
type Evaluator interface{}
