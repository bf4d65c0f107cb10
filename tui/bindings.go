package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// binding is one row of a screen's key table: which keys, what the help
// says, under which heading the `?` help lists it, whether the key bar
// shows it, when it is enabled and what it does. A screen keeps ONE table
// (bindings) and both its key handling and its key bar/help come from it,
// so what is shown is what works, by construction (as in lazygit and k9s).
type binding struct {
	key   key.Binding
	group string                   // heading in the `?` help ("Navigate", "Evaluate", …)
	bar   bool                     // shown in the key bar
	when  func() bool              // enabled right now; nil: always
	do    func(tea.KeyMsg) tea.Cmd // the action; nil: help-only row (the key is handled elsewhere)
}

// bind makes a binding of k (its keys and help) that runs do, listed under
// group. Chain .inBar() and .enabledWhen(f) to refine it.
func bind(k key.Binding, group string, do func() tea.Cmd) binding {
	b := binding{key: k, group: group}
	if do != nil {
		b.do = func(tea.KeyMsg) tea.Cmd { return do() }
	}
	return b
}

// bindMsg is bind for an action that needs the key itself (a list filter
// typing into its line).
func bindMsg(k key.Binding, group string, do func(tea.KeyMsg) tea.Cmd) binding {
	return binding{key: k, group: group, do: do}
}

// inBar shows the binding in the key bar (when enabled).
func (b binding) inBar() binding { b.bar = true; return b }

// enabledWhen enables the binding only while f reports true: it is then
// neither handled nor shown.
func (b binding) enabledWhen(f func() bool) binding {
	prev := b.when
	b.when = func() bool { return (prev == nil || prev()) && f() }
	return b
}

// withDesc replaces the help text (the keys stay).
func (b binding) withDesc(desc string) binding {
	b.key.SetHelp(b.key.Help().Key, desc)
	return b
}

func (b binding) enabled() bool {
	return b.key.Enabled() && (b.when == nil || b.when())
}

// bindings is a screen's key table, in the order the help lists it; the
// first enabled row that matches a key handles it.
type bindings []binding

// handle runs the first enabled binding matching msg. handled is false
// when none matches (the caller may then pass the key on).
func (t bindings) handle(msg tea.KeyMsg) (cmd tea.Cmd, handled bool) {
	for _, b := range t {
		if !b.enabled() || !key.Matches(msg, b.key) {
			continue
		}
		if b.do == nil {
			return nil, false
		}
		return b.do(msg), true
	}
	return nil, false
}

// help is the table's helpMap: the key bar's enabled bar rows and the
// enabled rows grouped under their headings, groups in order of first
// appearance, each key listed once.
func (t bindings) help() helpMap {
	var hm helpMap
	seen := map[string]bool{}
	index := map[string]int{}
	for _, b := range t {
		if !b.enabled() {
			continue
		}
		id := b.key.Help().Key
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		if b.bar {
			hm.short = append(hm.short, b.key)
		}
		g, ok := index[b.group]
		if !ok {
			g = len(hm.groups)
			index[b.group] = g
			hm.groups = append(hm.groups, helpGroup{title: b.group})
		}
		hm.groups[g].keys = append(hm.groups[g].keys, b.key)
	}
	return hm
}

// helpGroup is one heading of the `?` help with its keys.
type helpGroup struct {
	title string
	keys  []key.Binding
}

// renderGroups lays the groups out as titled blocks side by side, wrapping
// to a new band when the next block does not fit in w cells. A key shown
// in an earlier group is not repeated.
func renderGroups(groups []helpGroup, w int, st *Styles) string {
	seen := map[string]bool{}
	var blocks []string
	for _, g := range groups {
		var rows []string
		kw := 0
		var ks []key.Binding
		for _, k := range g.keys {
			h := k.Help()
			if h.Key == "" || seen[h.Key] {
				continue
			}
			seen[h.Key] = true
			ks = append(ks, k)
			kw = max(kw, ansi.StringWidth(h.Key))
		}
		if len(ks) == 0 {
			continue
		}
		rows = append(rows, st.Focused.Render(g.title))
		for _, k := range ks {
			h := k.Help()
			rows = append(rows, st.Key.Render(padRight(h.Key, kw))+"  "+st.Muted.Render(h.Desc))
		}
		blocks = append(blocks, strings.Join(rows, "\n"))
	}
	var bands []string
	var band []string
	used := 0
	const gap = 4
	for _, b := range blocks {
		bw := lipgloss.Width(b)
		if len(band) > 0 && used+gap+bw > w {
			bands = append(bands, lipgloss.JoinHorizontal(lipgloss.Top, band...))
			band, used = nil, 0
		}
		if len(band) > 0 {
			band = append(band, strings.Repeat(" ", gap))
			used += gap
		}
		band = append(band, b)
		used += bw
	}
	if len(band) > 0 {
		bands = append(bands, lipgloss.JoinHorizontal(lipgloss.Top, band...))
	}
	out := strings.Join(bands, "\n\n")
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = " " + strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}
