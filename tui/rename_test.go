package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/lint"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider/fixtures"
)

// demoCopy copies demo-triage into a temporary folder and opens it as
// `jevlab questions.yaml` would: the set, its dataset from disk, a run
// database, and its recordings in front of the stand-in (edited questions
// have no recording, so the stand-in answers them for the whole story).
func demoCopy(t *testing.T) (Options, string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "fixtures", "demo-triage")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name(), "recorded") {
			recs = append(recs, filepath.Join(dir, e.Name()))
		}
	}
	setPath := filepath.Join(dir, "questions.yaml")
	set, err := questionset.Load(setPath)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := fixtures.NewCache(fixtures.CacheConfig{Files: recs})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := workbench.StandIn(cache, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	opt := testOptions(set, p, workbench.StandInMode)
	ds, err := workbench.DatasetFor(set, "", dataset.Options{}.ForSet(set), nil)
	if err != nil {
		t.Fatal(err)
	}
	opt.Session = workbench.NewSession(set, ds, nil)
	withDB(&opt, openDB(t))
	opt.Session.Template.Provider = p
	return opt, setPath
}

// staleLint is what `jevlab lint` reports as stale labels for the set.
func staleLint(t *testing.T, setPath string) []lint.Finding {
	t.Helper()
	fs, err := lint.LintFile(setPath, lint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []lint.Finding
	for _, f := range fs {
		if f.ID == lint.IDStaleLabel {
			out = append(out, f)
		}
	}
	return out
}

// evalSession is `jevlab eval` over the files on disk: a fresh session,
// the labels as the dataset now says, the stale ones it prints.
func evalSession(t *testing.T, setPath string) (*workbench.Session, []workbench.Item, []workbench.StaleLabel) {
	t.Helper()
	set, err := questionset.Load(setPath)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := workbench.DatasetFor(set, "", dataset.Options{}.ForSet(set), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := workbench.NewSession(set, ds, nil)
	raw, err := workbench.LoadItems(context.Background(), set, s.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	items, stale := s.Labelled(raw)
	return s, items, stale
}

// openQueueRow opens the editor on queue (the second question) with the
// cursor on its option row n (0 billing, 1 technical, 2 other, 3 unknown).
func openQueueRow(tm *teatest.TestModel, n int) {
	typeKeys(tm, press(tea.KeyDown))
	tm.Type("e")
	for i := 0; i < 2+n; i++ {
		typeKeys(tm, press(tea.KeyDown))
	}
}

// evaluate starts an evaluation on the evaluate screen through its keys,
// waits for it to finish and ends the program; then ] (the screen's next
// question key) moves to queue. It returns the final model and frame.
func evaluate(t *testing.T, tm *teatest.TestModel) (*Model, string) {
	t.Helper()
	tm.Type("3")
	waitFor(t, tm, "r evaluates the working set")
	tm.Type("r")
	waitFor(t, tm, "Metrics", "10/10 items")
	fm, view := finish(t, tm)
	for i := 0; i < 3 && !strings.Contains(confusion(view), "billing"); i++ {
		drive(fm, keys("]")...)
		view = fm.View()
	}
	return fm, view
}

// confusion is the confusion block of a frame.
func confusion(view string) string {
	i := strings.Index(view, "Confusion")
	if i < 0 {
		return ""
	}
	return view[i:]
}

// TestRenameStory: rename other → general in the editor, evaluate (the
// confusion matrix counts the `other` labels as general), then save with
// the dataset rewrite (lint clean, a fresh eval session reads general with
// no stale label) — and, on a second copy, save keeping the labels: the
// workbench, lint and eval all report the same 2 labels.
func TestRenameStory(t *testing.T) {
	for _, rewrite := range []bool{true, false} {
		name := map[bool]string{true: "rewrite", false: "keep"}[rewrite]
		t.Run(name, func(t *testing.T) {
			opt, setPath := demoCopy(t)
			tm := startTM(t, newModel(t, opt), 160, 48)
			waitFor(t, tm, "Questions (3)")
			openQueueRow(tm, 2)
			tm.Type("n")
			typeKeys(tm, press(tea.KeyCtrlU))
			tm.Type("general")
			typeKeys(tm, press(tea.KeyEnter))
			waitFor(t, tm, "general:")
			typeKeys(tm, press(tea.KeyEsc))
			fm, view := evaluate(t, tm)
			c := confusion(view)
			if !strings.Contains(c, "general") || strings.Contains(c, " other") {
				t.Fatalf("confusion does not count other as general:\n%s", c)
			}
			if strings.Contains(view, "name nothing") {
				t.Errorf("renamed labels reported stale within the session:\n%s", view)
			}
			// Save from the design screen: asked whether to rewrite.
			drive(fm, keys("1")...)
			drive(fm, press(tea.KeyCtrlS))
			if v := fm.View(); !strings.Contains(v, "2 labels use an option name renamed") || !strings.Contains(v, "queue: other → general") {
				t.Fatalf("no rewrite prompt:\n%s", v)
			}
			if rewrite {
				drive(fm, keys("w")...)
			} else {
				drive(fm, keys("k")...)
			}
			lintStale := staleLint(t, setPath)
			_, evalItems, evalStale := evalSession(t, setPath)
			raw, err := workbench.LoadItems(context.Background(), opt.Set, opt.Session.Dataset)
			if err != nil {
				t.Fatal(err)
			}
			v := fm.View()
			if rewrite {
				if countLabel(raw, "queue", "general") != 2 || countLabel(raw, "queue", "other") != 0 || countLabel(evalItems, "queue", "general") != 2 {
					t.Errorf("dataset not rewritten: %d general, %d other", countLabel(raw, "queue", "general"), countLabel(raw, "queue", "other"))
				}
				if len(lintStale) != 0 || len(evalStale) != 0 {
					t.Errorf("after the rewrite lint reports %v, eval %v", lintStale, evalStale)
				}
				if !strings.Contains(v, "rewrote 2 label(s)") || strings.Contains(v, "name nothing") {
					t.Errorf("status after the rewrite:\n%s", v)
				}
				return
			}
			if countLabel(raw, "queue", "other") != 2 {
				t.Errorf("kept labels changed: %d other", countLabel(raw, "queue", "other"))
			}
			if len(lintStale) != 2 || len(evalStale) != 2 {
				t.Fatalf("lint reports %d stale labels, eval %d; want 2", len(lintStale), len(evalStale))
			}
			for i, f := range lintStale {
				if f.Line != evalStale[i].Line || f.Question != "queue" {
					t.Errorf("lint and eval name different labels: %+v vs %+v", f, evalStale[i])
				}
			}
			// The workbench says the sentence eval prints (wrapped).
			want := workbench.StaleSummary(evalStale, 5)
			if flat := strings.Join(strings.Fields(stripFrame(v)), " "); !strings.Contains(flat, strings.Join(strings.Fields(want), " ")) {
				t.Errorf("the workbench does not say %q:\n%s", want, v)
			}
		})
	}
}

// stripFrame drops the list pane and its separator from a design frame,
// keeping the right pane's text.
func stripFrame(v string) string {
	var b strings.Builder
	for _, l := range strings.Split(v, "\n") {
		if i := strings.Index(l, "│"); i >= 0 {
			l = l[i+len("│"):]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// TestInsertAndDeleteOption: an option inserted before `other` leaves the
// `other` labels on other (resolved by text, never a shifted index), and
// deleting `other` makes its 2 labels stale — the workbench, lint and eval
// report the same 2.
func TestInsertAndDeleteOption(t *testing.T) {
	t.Run("insert", func(t *testing.T) {
		opt, setPath := demoCopy(t)
		tm := startTM(t, newModel(t, opt), 160, 48)
		waitFor(t, tm, "Questions (3)")
		openQueueRow(tm, 1) // technical: a adds after it, before other
		tm.Type("a")
		typeKeys(tm, press(tea.KeyCtrlU))
		tm.Type("docs")
		typeKeys(tm, press(tea.KeyEnter))
		waitFor(t, tm, "docs:")
		typeKeys(tm, press(tea.KeyEsc))
		fm, view := evaluate(t, tm)
		c := confusion(view)
		if !strings.Contains(c, "other") {
			t.Fatalf("confusion after the insert:\n%s", c)
		}
		if q, _ := opt.Set.Questions.Get("queue"); q.OptionIndex("docs") != 2 || q.OptionIndex("other") != 3 {
			t.Fatalf("options: %v", q.Options)
		}
		drive(fm, keys("1")...)
		drive(fm, press(tea.KeyCtrlS)) // no rename: no prompt
		if len(staleLint(t, setPath)) != 0 {
			t.Error("lint reports stale labels after an insert")
		}
		if _, items, stale := evalSession(t, setPath); len(stale) != 0 || countLabel(items, "queue", "other") != 2 {
			t.Errorf("eval: %d stale, %d other labels", len(stale), countLabel(items, "queue", "other"))
		}
	})
	t.Run("delete", func(t *testing.T) {
		opt, setPath := demoCopy(t)
		m := newModel(t, opt)
		drive(m, tea.WindowSizeMsg{Width: 160, Height: 48})
		runCmd(m, m.Init(), 0)
		drive(m, press(tea.KeyDown))
		drive(m, keys("e")...)
		for i := 0; i < 4; i++ {
			drive(m, press(tea.KeyDown))
		}
		drive(m, keys("d")...)
		if q, _ := opt.Set.Questions.Get("queue"); q.OptionIndex("other") >= 0 {
			t.Fatal("other not deleted")
		}
		drive(m, press(tea.KeyEsc), press(tea.KeyCtrlS))
		lintStale := staleLint(t, setPath)
		_, _, evalStale := evalSession(t, setPath)
		if len(lintStale) != 2 || len(evalStale) != 2 {
			t.Fatalf("lint %d, eval %d stale labels; want 2", len(lintStale), len(evalStale))
		}
		want := strings.Join(strings.Fields(workbench.StaleSummary(evalStale, 5)), " ")
		if flat := strings.Join(strings.Fields(stripFrame(m.View())), " "); !strings.Contains(flat, want) {
			t.Errorf("the workbench does not say %q:\n%s", want, m.View())
		}
	})
}

func countLabel(items []workbench.Item, q, text string) int {
	n := 0
	for _, it := range items {
		if l, ok := it.Labels[q]; ok && l.Text == text {
			n++
		}
	}
	return n
}
