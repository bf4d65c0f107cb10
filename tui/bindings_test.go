package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// One table drives both the keys and the help: a disabled row is neither
// handled nor shown, the first enabled match wins, a key is listed once,
// and groups keep their order of first appearance.
func TestBindingsDriveKeysAndHelp(t *testing.T) {
	k := DefaultKeyMap()
	running := false
	var ran []string
	act := func(s string) func() tea.Cmd { return func() tea.Cmd { ran = append(ran, s); return nil } }
	tab := bindings{
		bind(k.StartEval, "Evaluate", act("start")).inBar().enabledWhen(func() bool { return !running }),
		bind(k.Cancel, "Evaluate", act("cancel")).inBar().enabledWhen(func() bool { return running }),
		bind(k.Up, "Navigate", act("up")),
		bind(k.Run, "Other", act("run")), // same key "r" as StartEval: shadowed while StartEval is enabled
	}
	if _, ok := tab.handle(keyMsg("r")); !ok || strings.Join(ran, ",") != "start" {
		t.Fatalf("r: ran %v", ran)
	}
	if _, ok := tab.handle(keyMsg("x")); ok {
		t.Fatal("x handled while cancel is disabled")
	}
	hm := tab.help()
	if got := helpKeys(hm.short); got != "r" {
		t.Fatalf("bar %q", got)
	}
	if len(hm.groups) != 2 || hm.groups[0].title != "Evaluate" || hm.groups[1].title != "Navigate" {
		t.Fatalf("groups %+v (r must be listed once, Other left empty)", hm.groups)
	}
	running = true
	ran = nil
	tab.handle(keyMsg("x"))
	tab.handle(keyMsg("r"))
	if strings.Join(ran, ",") != "cancel,run" {
		t.Fatalf("running: ran %v", ran)
	}
	if got := helpKeys(tab.help().short); got != "x" {
		t.Fatalf("bar while running %q", got)
	}
	if _, ok := tab.handle(keyMsg("z")); ok {
		t.Fatal("unbound key handled")
	}
}

func TestRenderGroupsHeadingsNoDuplicates(t *testing.T) {
	st := NewStyles(asciiRenderer())
	k := DefaultKeyMap()
	out := renderGroups([]helpGroup{
		{title: "Evaluate", keys: []key.Binding{k.StartEval, k.Resume}},
		{title: "Navigate", keys: []key.Binding{k.Up, k.Down}},
		{title: "Everywhere", keys: []key.Binding{k.Help, k.Up}},
	}, 80, &st)
	for _, want := range []string{"Evaluate", "Navigate", "Everywhere", "start eval", "resume", "help"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "↑/k"); n != 1 {
		t.Errorf("↑/k listed %d times:\n%s", n, out)
	}
	// Narrow: the blocks stack instead of overflowing.
	for _, l := range strings.Split(renderGroups([]helpGroup{{title: "A", keys: []key.Binding{k.StartEval}}, {title: "B", keys: []key.Binding{k.Up}}}, 20, &st), "\n") {
		if lipglossWidth(l) > 21 {
			t.Errorf("line %q wider than 20", l)
		}
	}
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func helpKeys(bs []key.Binding) string {
	var s []string
	for _, b := range bs {
		s = append(s, b.Help().Key)
	}
	return strings.Join(s, " ")
}
