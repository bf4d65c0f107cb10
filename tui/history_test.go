package tui

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
)

var reSeconds = regexp.MustCompile(`hh:mm:\d\d`)

// TestDesignHistory opens queue's history (h) over a store with a run of
// demo-triage's wording and one of a reworded queue: the pane's lines are the
// text `jevlab log FILE queue` prints for the same DB (both are
// workbench.WriteHistory of workbench.QuestionHistory), newest first,
// with the word diff; h closes it.
func TestDesignHistory(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			opt := demoTriage(t)
			db := withDB(&opt, openDB(t))
			ctx := context.Background()
			raw, err := workbench.LoadItems(ctx, opt.Session.Set, opt.Session.Dataset)
			if err != nil {
				t.Fatal(err)
			}
			items, _ := opt.Session.Labelled(raw)
			// One run per revision: the store lists a revision's runs by
			// run id, and two runs started in the same second tie on it.
			if _, err := runner.Run(ctx, runner.Config{Set: opt.Set, Items: items, Provider: opt.Provider, DB: db, Name: "recorded", Concurrency: 1}, nil); err != nil {
				t.Fatal(err)
			}
			q, _ := opt.Set.Questions.Get("queue")
			q.Instructions = provider.String("Which single team should handle this message first?")
			if _, err := runner.Run(ctx, runner.Config{Set: opt.Set, Items: items, Provider: &fakeProvider{}, DB: db, Name: "reworded", Concurrency: 1}, nil); err != nil {
				t.Fatal(err)
			}
			tm := startTM(t, newModel(t, opt), sz.w, sz.h)
			waitFor(t, tm, "Questions (3)")
			tm.Type("jh")
			waitFor(t, tm, "revision(s)")
			fm, view := finish(t, tm)
			h := fm.design.hist
			revs, err := workbench.QuestionHistory(ctx, db, opt.Set, "queue", nil)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			workbench.WriteHistory(&b, opt.Set.Title(), "queue", revs)
			if got, want := strings.Join(h.lines, "\n"), strings.TrimRight(b.String(), "\n"); got != want {
				t.Fatalf("pane lines differ from jevlab log's text:\n--- pane\n%s\n--- log\n%s", got, want)
			}
			if len(revs) != 2 || len(revs[0].Runs) != 1 || len(revs[1].Runs) != 1 || !revs[0].Current {
				t.Fatalf("revisions %+v", revs)
			}
			for _, w := range []string{"History · queue", "{+single+}", "(reworded)", "(current)"} {
				if !strings.Contains(view, w) {
					t.Errorf("view lacks %q:\n%s", w, view)
				}
			}
			golden.RequireEqual(t, []byte(reSeconds.ReplaceAllString(normalize(view), "hh:mm:ss")))
			fm.design.key(keyMsg("h"))
			if fm.design.hist.open || fm.design.focus != paneList {
				t.Error("h did not close the history")
			}
		})
	}
}
