package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key binding of the workbench, defined once. Screens match
// against these bindings and the key bar and the `?` help are generated from
// them, so what is shown is what works.
type KeyMap struct {
	// Global.
	Help, Quit, Save, Back      key.Binding
	Design, Dataset, Eval, Runs key.Binding
	Compare, Focus              key.Binding
	// Navigation.
	Up, Down, PageUp, PageDown, Top, Bottom, Open key.Binding
	// Design screen.
	Run, Cancel, EditQuestion, EditState key.Binding
	// Question editor.
	Add, Delete, Rename, MoveUp, MoveDown, Type, AsJSON, Undo key.Binding
	// Lists.
	Filter, Cycle, Mark, Swap key.Binding
	// Evaluation screen.
	StartEval, Resume, CutDown, CutUp, PrevQ, NextQ key.Binding
	// The cost view's noul threshold (evaluation screen).
	ThresholdDown, ThresholdUp key.Binding
	// Probes on the evaluation screen.
	Probe, Worst key.Binding
	// The design loop: item order and label edits (dataset), variants
	// (design, evaluate) and a question's history.
	Sort, Label, Promote, History key.Binding
	// Prompts.
	Yes, No, Accept key.Binding
}

// DefaultKeyMap returns the workbench's key bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		Help:    b([]string{"?"}, "?", "help"),
		Quit:    b([]string{"q", "ctrl+c"}, "q", "quit"),
		Save:    b([]string{"ctrl+s"}, "ctrl+s", "save"),
		Back:    b([]string{"esc"}, "esc", "back"),
		Design:  b([]string{"1"}, "1", "design"),
		Dataset: b([]string{"2"}, "2", "dataset"),
		Eval:    b([]string{"3"}, "3", "evaluate"),
		Runs:    b([]string{"4"}, "4", "runs"),
		Compare: b([]string{"5"}, "5", "compare"),
		Focus:   b([]string{"tab"}, "tab", "next pane"),

		Up:       b([]string{"up", "k"}, "↑/k", "up"),
		Down:     b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:   b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown: b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Top:      b([]string{"home", "g"}, "g", "top"),
		Bottom:   b([]string{"end", "G"}, "G", "bottom"),
		Open:     b([]string{"enter"}, "enter", "open"),

		Run:          b([]string{"r"}, "r", "run"),
		Cancel:       b([]string{"x"}, "x", "cancel"),
		EditQuestion: b([]string{"e"}, "e", "edit question"),
		EditState:    b([]string{"s"}, "s", "edit state"),

		Add:      b([]string{"a"}, "a", "add"),
		Delete:   b([]string{"d"}, "d", "delete"),
		Rename:   b([]string{"n"}, "n", "rename"),
		MoveUp:   b([]string{"K", "shift+up"}, "K", "move up"),
		MoveDown: b([]string{"J", "shift+down"}, "J", "move down"),
		Type:     b([]string{"t"}, "t", "change type"),
		AsJSON:   b([]string{"ctrl+j"}, "ctrl+j", "text/JSON"),
		Undo:     b([]string{"u", "ctrl+z"}, "u", "undo"),

		Filter: b([]string{"/"}, "/", "filter"),
		Cycle:  b([]string{"f"}, "f", "wrong/low-conf"),
		Mark:   b([]string{" ", "space"}, "space", "pick"),
		Swap:   b([]string{"s"}, "s", "swap A/B"),

		StartEval:     b([]string{"r"}, "r", "start eval"),
		Resume:        b([]string{"R"}, "R", "resume"),
		CutDown:       b([]string{"left", "-"}, "←/-", "cut-point down"),
		CutUp:         b([]string{"right", "+", "="}, "→/+", "cut-point up"),
		PrevQ:         b([]string{"["}, "[", "prev question"),
		NextQ:         b([]string{"]"}, "]", "next question"),
		ThresholdDown: b([]string{",", "<"}, ",/<", "noul threshold down"),
		ThresholdUp:   b([]string{".", ">"}, "./>", "noul threshold up"),
		Probe:         b([]string{"p"}, "p", "probe question"),
		Worst:         b([]string{"w"}, "w", "worst items"),

		Yes:    b([]string{"y"}, "y", "yes"),
		No:     b([]string{"n", "esc"}, "n", "no"),
		Accept: b([]string{"enter"}, "enter", "accept"),

		Sort:    b([]string{"o"}, "o", "order"),
		Label:   b([]string{"l"}, "l", "edit label"),
		Promote: b([]string{"P"}, "P", "promote variant"),
		History: b([]string{"h"}, "h", "history"),
	}
}

// helpMap adapts a context's bindings to bubbles/help. A screen built on a
// key table (bindings.help) fills short and groups; full is the older,
// untitled column form, drawn only when groups is empty.
type helpMap struct {
	short  []key.Binding
	full   [][]key.Binding
	groups []helpGroup
}

// ShortHelp is the key bar's bindings.
func (h helpMap) ShortHelp() []key.Binding { return h.short }

// FullHelp is the `?` screen's bindings, in columns.
func (h helpMap) FullHelp() [][]key.Binding { return h.full }

// globalKeys are shown in every context's full help.
func (k KeyMap) globalKeys() []key.Binding {
	return []key.Binding{k.Design, k.Dataset, k.Eval, k.Runs, k.Compare, k.Save, k.Help, k.Quit}
}

// globalGroup is the `?` help's heading for the keys that work on every
// screen.
func (k KeyMap) globalGroup() helpGroup {
	return helpGroup{title: "Everywhere", keys: k.globalKeys()}
}

func (k KeyMap) navKeys() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Open, k.Back}
}
