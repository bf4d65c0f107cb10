package tui

import (
	"context"
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

func TestRenderPeek(t *testing.T) {
	set := triageSet(t)
	m, err := New(context.Background(), Options{Set: set, Provider: &fakeProvider{}, Mode: "stand-in", Renderer: asciiRenderer()})
	if err != nil {
		t.Fatal(err)
	}
	drive(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	t.Log("\n" + m.View())
	drive(m, keys("r")...)
	t.Log("\n" + m.View())
	drive(m, keys("je")...)
	drive(m, press(tea.KeyDown), press(tea.KeyDown))
	drive(m, keys("a")...)
	t.Log("\n" + m.View())
	drive(m, keys("x")...)
	drive(m, press(tea.KeyEnter))
	drive(m, keys("r")...)
	t.Log("\n" + m.View())
	bs, bp := bankingSet(t)
	m, _ = New(context.Background(), Options{Set: bs, Provider: bp, Mode: "offline", Renderer: asciiRenderer(), RunOnStart: true})
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 30})
	runCmd(m, m.Init(), 0)
	t.Log("\n" + m.View())
}
