package main

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
	"github.com/jevlab/jevlab/tui"
)

// TestBoxGridAskEqualsWorkbench: the workbench's answer view draws a box
// answer with the very grid lines `jevlab ask` prints for it (one drawing,
// workbench.BoxGrid), with its coordinates and confidence.
func TestBoxGridAskEqualsWorkbench(t *testing.T) {
	isolate(t)
	si, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	srv := httptest.NewServer(si)
	defer srv.Close()
	dir := t.TempDir()
	setPath := filepath.Join(dir, "box.yaml")
	body := "name: box\nmodel: jev-1.14.0\ndanger_zone:\n  images: true\nstate:\n  photo: a desk with a mug\nquestions:\n  mug:\n    type: box\n    instructions: the mug in `photo`\n"
	os.WriteFile(setPath, []byte(body), 0o600)
	code, out, errOut := runJevlab(t, "ask", "--db", filepath.Join(dir, "db"), "--base-url", srv.URL, "--fresh", setPath)
	if code != 0 {
		t.Fatalf("ask: %d\n%s\n%s", code, out, errOut)
	}
	var grid []string
	var headline string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, "mug (box)  ") {
			headline = strings.TrimPrefix(l, "mug (box)  ")
			headline = headline[:strings.Index(headline, "  [")]
		}
		if g, ok := strings.CutPrefix(l, "    "); ok {
			grid = append(grid, g)
		}
	}
	if headline == "" || len(grid) < 8 || !strings.HasPrefix(grid[0], "┌────") || !strings.Contains(out, "(left, right)") {
		t.Fatalf("ask drew no grid:\n%s", out)
	}

	set, err := questionset.Parse(setPath, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	client, err := systemone.New(systemone.Config{BaseURL: srv.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	m, err := tui.New(context.Background(), tui.Options{Set: set, Provider: client, Mode: "stand-in", Renderer: r, PollEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 60))
	var seen []byte
	wait := func(s string) {
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			seen = append(seen, b...)
			return bytes.Contains(seen, []byte(s))
		}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	wait("Questions (1)")
	tm.Type("r")
	wait("(left, right)")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	view := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*tui.Model).View()
	if !strings.Contains(view, headline) {
		t.Errorf("the screen lacks the box's coordinates and confidence %q:\n%s", headline, view)
	}
	for _, g := range grid {
		if !strings.Contains(view, g) {
			t.Errorf("the screen lacks ask's grid line %q:\n%s", g, view)
		}
	}
}
