package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/questionset"
)

// largeChoiceSet is a set with one 255-option choice question.
func largeChoiceSet(tb testing.TB) *questionset.Set {
	tb.Helper()
	var b strings.Builder
	b.WriteString(`{"name":"large","state":"a long customer message about many things","questions":{"intent":{"type":"choice","instructions":"Which one?","criteria":{`)
	for i := 0; i < 255; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"option_%03d":"Description of option number %d, long enough to matter."`, i, i)
	}
	b.WriteString(`}}}}`)
	s, err := questionset.Parse("large.json", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkViewLargeChoice measures one View of the design screen at
// 200×60 showing a 255-option choice answer with ghost bars (two runs).
// Target: ≤ 2 ms per View.
func BenchmarkViewLargeChoice(b *testing.B) {
	set := largeChoiceSet(b)
	m, err := New(context.Background(), testOptions(set, &fakeProvider{}, "stand-in"))
	if err != nil {
		b.Fatal(err)
	}
	drive(m, tea.WindowSizeMsg{Width: 200, Height: 60})
	drive(m, keys("r")...)
	set.State = []byte(`"another message"`)
	drive(m, keys("r")...)
	view := m.View()
	if !strings.Contains(view, "before") || strings.Count(view, "\n") != 59 {
		b.Fatalf("unexpected frame:\n%s", view)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}
