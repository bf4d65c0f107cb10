package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jevlab/jevlab/internal/termsafe"
)

// The frame every screen is drawn in: the header, the screen tabs, the
// status line, the key bar, the full help and the quit dialog.

func (m *Model) header(w int) string {
	e, st := m.e, &m.e.st
	name := termsafe.String(e.set.Title()) // from the file: never drives the terminal
	parts := []string{st.Title.Render(name)}
	if e.dirty {
		parts = append(parts, st.Dirty.Render("● unsaved"))
	}
	mode := e.mode
	switch {
	case e.prov == nil && e.connErr != nil:
		mode = "no provider"
	case e.prov == nil && mode != "":
		mode += " (loading answers…)"
	case e.prov == nil:
		mode = "connecting…"
	case mode == "":
		mode = "unknown"
	}
	parts = append(parts, st.Mode.Render(mode))
	model := e.requestedModel()
	if e.resolved != "" && e.resolved != model {
		model += " → " + e.resolved
	} else if e.resolved == "" {
		model += " → ?"
	}
	parts = append(parts, st.Muted.Render("model ")+model)
	return ansi.Truncate(" "+strings.Join(parts, st.Faint.Render(" │ ")), w, "…")
}

func (m *Model) tabs(w int) string {
	st := &m.e.st
	var parts []string
	for i, n := range screenNames {
		label := fmt.Sprintf("%d %s", i+1, n)
		if screenID(i) == m.active {
			parts = append(parts, st.TabActive.Render(label))
		} else {
			parts = append(parts, st.Tab.Render(label))
		}
	}
	return ansi.Truncate(" "+strings.Join(parts, "  "), w, "…")
}

func (m *Model) statusLine(w int) string {
	e, st := m.e, &m.e.st
	var parts []string
	if e.confident != "" {
		parts = append(parts, e.confident)
	}
	switch {
	case e.resolved != "" && e.latency == 0 && e.tokens == 0:
		parts = append(parts, "from cache: no latency, no tokens, $0")
	case e.resolved != "" || e.latency > 0:
		parts = append(parts, "latency "+e.latency.Round(time.Millisecond).String())
		parts = append(parts, fmt.Sprintf("%d tok", e.tokens))
		parts = append(parts, fmt.Sprintf("$%.6f", e.costUSD))
	}
	left := " "
	if e.flash != "" {
		if e.flashBad {
			left += st.Bad.Render(e.flash)
		} else {
			left += st.Good.Render(e.flash)
		}
		if len(parts) > 0 {
			left += st.Faint.Render("  │  ")
		}
	}
	left += strings.Join(parts, st.Faint.Render(" · "))
	return ansi.Truncate(left, w, "…")
}

func (m *Model) keyBar(w int) string {
	if m.confirmQuit {
		return m.help.ShortHelpView([]key.Binding{
			key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "save & quit")),
			key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "quit without saving")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stay")),
		})
	}
	if m.showHelp {
		return m.help.ShortHelpView([]key.Binding{m.e.keys.Back})
	}
	hm := m.screens[m.active].help()
	short := hm.short
	if !m.screens[m.active].capturing() {
		short = append(append([]key.Binding(nil), short...), m.e.keys.Help, m.e.keys.Quit)
	}
	return ansi.Truncate(" "+m.help.ShortHelpView(short), w, "…")
}

func (m *Model) fullHelp(w, h int) string {
	hm := m.screens[m.active].help()
	title := m.e.st.Focused.Render(fmt.Sprintf(" Keys — %s screen", screenNames[m.active]))
	if len(hm.groups) > 0 {
		// Grouped by context with headings; a key listed by the screen
		// is not listed again under Everywhere.
		groups := append(append([]helpGroup(nil), hm.groups...), m.e.keys.globalGroup())
		return title + "\n\n" + renderGroups(groups, w-2, &m.e.st)
	}
	groups := append([][]key.Binding(nil), hm.full...)
	groups = append(groups, m.e.keys.globalKeys())
	hp := m.help
	hp.Width = w
	return title + "\n\n" + hp.FullHelpView(groups)
}

func (m *Model) quitDialog(w, h int) string {
	e := m.e
	path := filepath.Base(e.set.Path)
	switch {
	case e.set.Path == "" && e.opt.SaveNewDesc != "":
		path = e.opt.SaveNewDesc
	case e.set.Path == "":
		path = defaultSavePath(e.set)
	}
	text := fmt.Sprintf("%s has unsaved changes.\n\nSave to %s before quitting?\n\n  y    save and quit\n  n    quit without saving\n  esc  keep working",
		termsafe.String(e.set.Title()), termsafe.String(path))
	box := e.st.Dialog.Width(min(60, w-4)).Render(text)
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
}

// clampBlock cuts s to at most h lines of at most w cells and pads it to h
// lines, so a screen can never push the status line off.
func clampBlock(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
