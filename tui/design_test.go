package tui

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

func TestDesignInitial(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			tm, _, _ := startTriage(t, sz.w, sz.h)
			_, view := finish(t, tm)
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}

func TestDesignRun(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			tm, _, fp := startTriage(t, sz.w, sz.h)
			tm.Type("r")
			waitFor(t, tm, "3 answered")
			_, view := finish(t, tm)
			if fp.calls != 1 {
				t.Errorf("provider called %d times, want 1", fp.calls)
			}
			for _, want := range []string{"▶ ", "standin-", " tok", "3 answered"} {
				if !strings.Contains(view, want) {
					t.Errorf("view lacks %q", want)
				}
			}
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}

// TestDesignEditOption renames an option and re-runs: the chart shows the
// new distribution with the previous one as ghost rows.
func TestDesignEditOption(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			tm, set, _ := startTriage(t, sz.w, sz.h)
			tm.Type("r")
			waitFor(t, tm, "3 answered")
			tm.Type("e")
			typeKeys(tm, press(tea.KeyDown), press(tea.KeyDown), press(tea.KeyDown)) // orders
			tm.Type("n")
			typeKeys(tm, press(tea.KeyCtrlU)) // clear the line
			tm.Type("fulfilment")
			typeKeys(tm, press(tea.KeyEnter))
			waitFor(t, tm, "fulfilment")
			tm.Type("r")
			waitFor(t, tm, "before")
			fm, view := finish(t, tm)
			if got := set.Questions[0].Question.Options[1].Label; got != "fulfilment" {
				t.Errorf("option 2 label = %q, want fulfilment", got)
			}
			if !fm.e.dirty {
				t.Error("set not marked unsaved after an edit")
			}
			if !strings.Contains(view, "● unsaved") || !strings.Contains(view, "before") {
				t.Errorf("view lacks the unsaved marker or ghost rows:\n%s", view)
			}
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}

// TestDesignEditSave edits an option description and saves: the file on
// disk is exactly what questionset parses back, with the edit.
func TestDesignEditSave(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			tm, set, _ := startTriage(t, sz.w, sz.h)
			tm.Type("e")
			typeKeys(tm, press(tea.KeyDown), press(tea.KeyDown), press(tea.KeyDown), press(tea.KeyDown)) // shipping
			typeKeys(tm, press(tea.KeyEnter))
			typeKeys(tm, press(tea.KeyCtrlK), press(tea.KeyCtrlU))
			tm.Type("Parcels and couriers.")
			typeKeys(tm, press(tea.KeyEsc), press(tea.KeyEsc), press(tea.KeyCtrlS))
			waitFor(t, tm, "saved triage.yaml")
			fm, view := finish(t, tm)
			if fm.e.dirty {
				t.Error("still marked unsaved after saving")
			}
			data, err := os.ReadFile(set.Path)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(triageYAML, "shipping: Parcels, couriers and delivery times.", "shipping: Parcels and couriers.", 1)
			if string(data) != want {
				t.Errorf("saved file:\n%s\nwant:\n%s", data, want)
			}
			back, err := questionset.Parse("saved.yaml", data)
			if err != nil {
				t.Fatalf("saved file does not parse: %v", err)
			}
			if got := provider.Text(back.Questions[0].Question.Options[2].Description); got != "Parcels and couriers." {
				t.Errorf("reloaded description = %q", got)
			}
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}

// TestDesignQuitUnsavedAsks: q with unsaved edits shows the dialog instead
// of quitting; n then quits without writing.
func TestDesignQuitUnsavedAsks(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			m, set, _ := newTriage(t)
			before, _ := os.ReadFile(set.Path)
			tm := startTM(t, m, sz.w, sz.h)
			waitFor(t, tm, "Questions (3)")
			tm.Type("ets") // change the type (asked, answered): an edit
			typeKeys(tm, press(tea.KeyEsc))
			tm.Type("q")
			waitFor(t, tm, "unsaved changes")
			tm.Type("n")
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
			fm := tm.FinalModel(t).(*Model)
			if !fm.confirmQuit {
				t.Error("quit without the dialog")
			}
			after, _ := os.ReadFile(set.Path)
			if !bytes.Equal(before, after) {
				t.Error("quitting without saving changed the file")
			}
			golden.RequireEqual(t, []byte(normalize(fm.View())))
		})
	}
}

// TestDesignBankingOffline opens the shipped Banking77 recording offline
// and runs on start: the 77-way answer is drawn from the recording.
func TestDesignBankingOffline(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			set, p := bankingSet(t)
			opt := testOptions(set, p, "offline")
			opt.RunOnStart = true
			m, err := New(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			tm := startTM(t, m, sz.w, sz.h)
			waitFor(t, tm, "1 answered")
			_, view := finish(t, tm)
			if !strings.Contains(view, "jev-1.13.0") || !strings.Contains(view, "▶ card_arrival") {
				t.Errorf("view lacks the resolved model or the chosen option:\n%s", view)
			}
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}
