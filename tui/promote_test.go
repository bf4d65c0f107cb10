package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/fixtures"
	"github.com/jevlab/jevlab/provider"
)

// variantsYAML is queue's variants block added to a demo-triage copy.
const variantsYAML = `    variants:
      terse:
        instructions: Which team owns this message?
      money:
        instructions: Is this message about money, the product, or neither?
        criteria:
          technical: The product misbehaves, fails or needs configuring.
          billing: Charged twice, an extra charge, a refund or the plan.
          unknown: Cannot tell from the message.
          other: Anything else.
`

// demoTriageVariants writes a copy of demo-triage with a variants: block on
// queue and loads it.
func demoTriageVariants(t *testing.T) *questionset.Set {
	t.Helper()
	src, err := fixtures.FS.ReadFile(fixtures.DemoTriageSet)
	if err != nil {
		t.Fatal(err)
	}
	anchor := "      unknown: Cannot tell from the message.\n"
	if !strings.Contains(string(src), anchor) {
		t.Fatalf("demo-triage changed: no %q", anchor)
	}
	text := strings.Replace(string(src), anchor, anchor+variantsYAML, 1)
	// Only the questions: the copy has no dataset or fixtures beside it.
	text = text[:strings.Index(text, "dataset:")]
	path := filepath.Join(t.TempDir(), "questions.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := questionset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Variants["queue"]) != 2 {
		t.Fatalf("queue variants %+v", s.Variants["queue"])
	}
	return s
}

// TestDesignVariants runs the working state of a set whose queue has two
// variants, against the stand-in: one request carries the three questions
// and both variants; each variant's answer is drawn under queue's with the
// difference from it; P then promotes a chosen variant (the old wording is
// kept as variant prev) and u undoes it.
func TestDesignVariants(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			set := demoTriageVariants(t)
			p := &countingProvider{p: standinClient(t)}
			tm := startTM(t, newModel(t, testOptions(set, p, "stand-in")), sz.w, sz.h)
			waitFor(t, tm, "Questions (3)")
			tm.Type("jr") // queue, then run
			waitFor(t, tm, "5 answered", "variant money ·")
			fm, view := finish(t, tm)
			if p.calls != 1 {
				t.Errorf("the stand-in got %d requests, want 1 carrying the variants", p.calls)
			}
			d := fm.design
			base, terse := d.ans.answers["queue"], d.ans.answers["queue~terse"]
			if base == nil || base.cur == nil || terse == nil || terse.cur == nil || d.ans.answers["queue~money"] == nil {
				t.Fatalf("answers %v", d.ans.answers)
			}
			want := workbenchDiff(d, "queue", "terse")
			if !strings.Contains(view, "variant terse · "+want) {
				t.Errorf("view lacks %q:\n%s", "variant terse · "+want, view)
			}
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}

// TestDesignPromote promotes queue's second variant through the prompt,
// checks the set and the moved answers, and undoes it.
func TestDesignPromote(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			set := demoTriageVariants(t)
			oldInstr := string(set.Questions[1].Question.Instructions)
			p := &countingProvider{p: standinClient(t)}
			tm := startTM(t, newModel(t, testOptions(set, p, "stand-in")), sz.w, sz.h)
			waitFor(t, tm, "Questions (3)")
			tm.Type("jr")
			waitFor(t, tm, "5 answered")
			tm.Type("P")
			waitFor(t, tm, "Promote which variant of queue?")
			tm.Type("2")
			waitFor(t, tm, "promoted queue~money")
			fm, view := finish(t, tm)
			q, _ := set.Questions.Get("queue")
			if got := provider.Text(q.Instructions); got != "Is this message about money, the product, or neither?" {
				t.Errorf("queue asks %q after promoting money", got)
			}
			prev, ok := set.Variant("queue", "prev")
			if !ok || string(prev.Instructions) != oldInstr {
				t.Fatalf("old wording not kept as prev: %+v", set.Variants["queue"])
			}
			if _, ok := set.Variant("queue", "money"); ok {
				t.Error("money is still a variant after its promotion")
			}
			d := fm.design
			if x := d.ans.answers["queue"]; x == nil || x.curQ == nil || provider.Text(x.curQ.Instructions) != provider.Text(q.Instructions) {
				t.Errorf("queue's answer is not the promoted wording's")
			}
			if strings.Contains(view, "edited since this answer") {
				t.Errorf("a promoted answer is marked stale:\n%s", view)
			}
			for _, w := range []string{"variant prev ·", "variant terse ·", "● unsaved"} {
				if !strings.Contains(view, w) {
					t.Errorf("view lacks %q:\n%s", w, view)
				}
			}
			golden.RequireEqual(t, []byte(normalize(view)))
			// Undo restores the set exactly.
			d.undoEdit()
			q, _ = set.Questions.Get("queue")
			if string(q.Instructions) != oldInstr || len(set.Variants["queue"]) != 2 {
				t.Errorf("undo left %q with variants %+v", provider.Text(q.Instructions), set.Variants["queue"])
			}
			if _, ok := set.Variant("queue", "money"); !ok {
				t.Error("undo did not bring variant money back")
			}
		})
	}
}

// workbenchDiff is the summary line the pane should show for a variant.
func workbenchDiff(d *designModel, id, name string) string {
	set := d.e.set
	vid := id + questionset.VariantSep + name
	x, y := d.ans.answers[id], d.ans.answers[vid]
	return diffSummary(x.curQ, x.cur, set.Threshold(id), y.curQ, y.cur, set.Threshold(vid))
}

var diffSummary = func(bq *provider.Question, b *provider.Answer, bt float64, vq *provider.Question, v *provider.Answer, vt float64) string {
	return workbench.DiffAnswers(bq, b, bt, vq, v, vt).Summary()
}
