package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/store"
)

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

func TestRenderPeek(t *testing.T) {
	if testing.Short() || !testing.Verbose() {
		t.Skip("peek only with -v")
	}
	opt := demoTriage(t)
	db, err := store.Open(filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	opt.DB = db
	seedRuns(t, opt, db)
	m, err := New(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(discard{}), tea.WithoutRenderer())
	go p.Run()
	defer p.Kill()
	p.Send(tea.WindowSizeMsg{Width: 100, Height: 40})
	time.Sleep(300 * time.Millisecond)
	for _, k := range keys("4 j ") {
		p.Send(k)
	}
	time.Sleep(2 * time.Second)
	t.Log("\n" + m.View())
	p.Send(tea.KeyMsg{Type: tea.KeyEnter})
	time.Sleep(100 * time.Millisecond)
	p.Quit()
	time.Sleep(100 * time.Millisecond)
	t.Log("\n" + m.View())
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
