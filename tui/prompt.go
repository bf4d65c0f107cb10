package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// prompt is the design screen's modal question: a title, a sentence said in
// full, and either single-key choices or a line to type (enter accepts).
// esc always backs out without doing anything.
type prompt struct {
	title   string
	body    string
	choices []promptChoice
	// line, when set, is typed into; enter passes its value to accept. An
	// error from accept is shown and the prompt stays open.
	line   *textinput.Model
	accept func(string) (tea.Cmd, error)
	// cancel runs when the prompt is left with esc (nil: nothing).
	cancel func() tea.Cmd
	err    string
	keys   bindings
	st     *Styles
}

// promptChoice is one answer of a prompt, chosen by its key.
type promptChoice struct {
	key, desc string
	do        func() tea.Cmd
}

// build makes the prompt's key table: its choices, enter for a line, esc.
func (p *prompt) build(d *designModel) {
	k := d.e.keys
	p.st = &d.e.st
	for _, c := range p.choices {
		c := c
		p.keys = append(p.keys, bind(key.NewBinding(key.WithKeys(c.key), key.WithHelp(c.key, c.desc)), "Prompt", func() tea.Cmd {
			d.prompt = nil
			return c.do()
		}).inBar())
	}
	if p.line != nil {
		p.keys = append(p.keys, bind(withHelp(k.Accept, "enter", "accept"), "Prompt", func() tea.Cmd {
			cmd, err := p.accept(strings.TrimSpace(p.line.Value()))
			if err != nil {
				p.err = err.Error()
				return nil
			}
			if d.prompt == p { // accept may have opened the next prompt
				d.prompt = nil
			}
			return cmd
		}).inBar())
	}
	p.keys = append(p.keys, bind(withHelp(k.Back, "esc", "cancel"), "Prompt", func() tea.Cmd {
		d.prompt = nil
		d.e.say("cancelled")
		if p.cancel != nil {
			return p.cancel()
		}
		return nil
	}).inBar())
}

func (p *prompt) key(msg tea.KeyMsg) tea.Cmd {
	if cmd, ok := p.keys.handle(msg); ok {
		return cmd
	}
	if p.line != nil {
		var cmd tea.Cmd
		*p.line, cmd = p.line.Update(msg)
		p.err = ""
		return cmd
	}
	return nil
}

func (p *prompt) help() helpMap { return p.keys.help() }

// view draws the prompt, its sentence wrapped (never cut) to w cells.
func (p *prompt) view(w int) []string {
	st := p.st
	lines := []string{st.Focused.Render(fit("▌"+p.title, w))}
	for _, l := range wrapText(p.body, w-1, 20) {
		lines = append(lines, " "+l)
	}
	if p.line != nil {
		lines = append(lines, p.line.View())
	}
	for _, c := range p.choices {
		lines = append(lines, "  "+st.Key.Render(c.key)+"  "+c.desc)
	}
	if p.err != "" {
		for _, l := range wrapText("✗ "+p.err, w, 4) {
			lines = append(lines, st.Bad.Render(l))
		}
	}
	return lines
}

// askLine opens a one-line prompt with value prefilled; accept applies it.
func (d *designModel) askLine(title, body, value string, accept func(string) (tea.Cmd, error)) tea.Cmd {
	in := newTextInput("› ")
	in.SetValue(value)
	in.CursorEnd()
	_, rw := d.layout()
	in.Width = max(10, rw-4)
	d.prompt = &prompt{title: title, body: body, line: &in, accept: accept}
	d.prompt.build(d)
	return d.prompt.line.Focus()
}
