package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

type splitJSON struct {
	Run struct {
		ID    string `json:"id"`
		Total int    `json:"total"`
	} `json:"run"`
	Split   string               `json:"split"`
	Holdout []report.HoldoutNote `json:"holdout"`
}

func holdoutOf(t *testing.T, r splitJSON, q string) int {
	t.Helper()
	for _, h := range r.Holdout {
		if h.Question == q {
			return h.Revisions
		}
	}
	return -1
}

// TestHoldoutLedger: the first --split writes the split into the set;
// evaluating test with one revision, again with the same, then with a
// reworded question makes the report say 1, 1, then 2 for that question
// (1 for the others); dev runs are not counted; an old run's report says
// what had seen test by then; the split cannot be changed.
func TestHoldoutLedger(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	set := variantSet(t, dir)
	s, _ := questionset.Load(set)
	s.Variants = nil
	s.Save(set)
	db := filepath.Join(dir, "runs.db")
	url, _ := countingStandin(t)
	base := []string{"--base-url", url, "--db", db, "--rps", "0", "--fresh", "--json"}
	eval := func(extra ...string) splitJSON {
		t.Helper()
		code, out, errOut := runJevlab(t, append(append([]string{"eval", set}, extra...), base...)...)
		if code != 0 {
			t.Fatalf("eval %v: exit %d\n%s\n%s", extra, code, out, errOut)
		}
		var r splitJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r1 := eval("--split", "test", "--split-ratio", "0.5", "--split-seed", "4")
	s, err := questionset.Load(set)
	if err != nil || s.Split == nil || *s.Split != (questionset.SplitSpec{Seed: 4, Test: 0.5}) {
		t.Fatalf("split not written: %v %+v", err, s.Split)
	}
	// The test items are exactly those the split names.
	data, _ := os.ReadFile(filepath.Join(dir, "dataset.jsonl"))
	nTest := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var it struct {
			ID string `json:"id"`
		}
		json.Unmarshal([]byte(line), &it)
		if s.Split.Of(it.ID) == questionset.SplitTest {
			nTest++
		}
	}
	if nTest == 0 || nTest == 10 || r1.Run.Total != nTest || r1.Split != "test" {
		t.Fatalf("test items %d, run total %d, split %q", nTest, r1.Run.Total, r1.Split)
	}
	if holdoutOf(t, r1, "queue") != 1 || !strings.Contains(r1.Holdout[0].Message, "test seen by 1 revision of") {
		t.Fatalf("first test run: %+v", r1.Holdout)
	}
	if r := eval("--split", "test"); holdoutOf(t, r, "queue") != 1 {
		t.Fatalf("same revision again: %+v", r.Holdout)
	}
	if r := eval("--split", "dev"); len(r.Holdout) != 0 || r.Run.Total != 10-nTest {
		t.Fatalf("dev run: total %d holdout %+v", r.Run.Total, r.Holdout)
	}
	s.SetInstructions("queue", provider.String("Which team should route this message?"))
	if err := s.Save(set); err != nil {
		t.Fatal(err)
	}
	r3 := eval("--split", "test")
	if holdoutOf(t, r3, "queue") != 2 || holdoutOf(t, r3, "urgency") != 1 {
		t.Fatalf("second revision on test: %+v", r3.Holdout)
	}
	code, out, _ := runJevlab(t, "show", r3.Run.ID, "--db", db)
	if code != 0 || !strings.Contains(out, "test seen by 2 revisions of queue: its accuracy is optimistic") {
		t.Fatalf("show:\n%s", out)
	}
	// The first run's report still says what had seen test by then.
	code, out, _ = runJevlab(t, "show", r1.Run.ID, "--db", db, "--json")
	var old splitJSON
	json.Unmarshal([]byte(out), &old)
	if code != 0 || holdoutOf(t, old, "queue") != 1 {
		t.Fatalf("old run: %s", out)
	}
	if code, out, errOut := runJevlab(t, "show", r3.Run.ID, "--db", db, "--markdown"); code != 0 || !strings.Contains(out, "test seen by 2 revisions of queue: its accuracy is optimistic") {
		t.Fatalf("markdown: exit %d\n%s\n%s", code, out, errOut)
	}
	// A label of queue changed in the workbench after test was seen is in
	// the ledger: the next run on test says so, r3's report (run before
	// the edit) does not; urgency was not relabelled.
	var testItem string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var it struct {
			ID string `json:"id"`
		}
		json.Unmarshal([]byte(line), &it)
		if s.Split.Of(it.ID) == questionset.SplitTest {
			testItem = it.ID
			break
		}
	}
	sdb, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := questionset.Load(set)
	sess := workbench.NewSession(ws, workbench.DatasetSource{Path: filepath.Join(dir, "dataset.jsonl")}, &workbench.RunTemplate{DB: sdb})
	if err := sess.SetLabel(testItem, "queue", []byte(`"other"`)); err != nil {
		t.Fatal(err)
	}
	// The same label again changes nothing; the edit is not counted for r3,
	// which ran before it.
	if err := sess.SetLabel(testItem, "queue", []byte(`"other"`)); err != nil {
		t.Fatal(err)
	}
	if n, _, err := sdb.RelabelsBefore(context.Background(), s.Title(), "queue", r3.Run.ID); err != nil || n != 0 {
		t.Fatalf("relabels before r3: %d %v", n, err)
	}
	sdb.Close()
	r4 := eval("--split", "test")
	var q4, u4 report.HoldoutNote
	for _, h := range r4.Holdout {
		switch h.Question {
		case "queue":
			q4 = h
		case "urgency":
			u4 = h
		}
	}
	if q4.Relabelled != 1 || q4.RelabelledOnTest != 1 || !strings.Contains(q4.Message, "1 label of queue changed after test was seen (1 on test items") || u4.Relabelled != 0 {
		t.Fatalf("after a relabel: %+v", r4.Holdout)
	}
	if code, out, _ := runJevlab(t, "show", r4.Run.ID, "--db", db); code != 0 || !strings.Contains(out, "1 label of queue changed after test was seen") {
		t.Fatalf("show after a relabel:\n%s", out)
	}
	if code, out, _ := runJevlab(t, "show", r3.Run.ID, "--db", db); code != 0 || strings.Contains(out, "changed after test was seen") {
		t.Fatalf("a run before the relabel:\n%s", out)
	}
	// The split never changes.
	code, _, errOut := runJevlab(t, append([]string{"eval", set, "--split", "test", "--split-ratio", "0.3"}, base...)...)
	if code != 2 || !strings.Contains(errOut, "would move items between dev and test") {
		t.Fatalf("changed split: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runJevlab(t, append([]string{"eval", set, "--split", "holdout"}, base...)...); code != 2 || !strings.Contains(errOut, "want dev or test") {
		t.Fatalf("bad split: exit %d\n%s", code, errOut)
	}
}
