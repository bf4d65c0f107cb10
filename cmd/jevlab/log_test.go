package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
)

type logJSON struct {
	Revisions []workbench.Revision `json:"revisions"`
}

// TestLogOverEditsAndRuns: three edits with a run each and one edit
// without: jevlab log lists four revisions newest first, each with its
// diff from the one before, the rename of an option as a rename, and the
// metrics of exactly the run that asked it.
func TestLogOverEditsAndRuns(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	set := variantSet(t, dir)
	// No variants for this story: a plain demo-triage set.
	s, err := questionset.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	s.Variants = nil
	if err := s.Save(set); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "runs.db")
	url, _ := countingStandin(t)
	base := []string{"--base-url", url, "--db", db, "--rps", "0", "--fresh", "--json"}
	var runs []string
	evalNow := func(name string) {
		t.Helper()
		code, out, errOut := runJevlab(t, append([]string{"eval", set, "--name", name}, base...)...)
		if code != 0 {
			t.Fatalf("eval %s: exit %d\n%s", name, code, errOut)
		}
		var r evalJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r.Run.ID)
	}
	edit := func(fn func(s *questionset.Set) error) {
		t.Helper()
		s, err := questionset.Load(set)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(s); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(set); err != nil {
			t.Fatal(err)
		}
	}
	evalNow("first")
	edit(func(s *questionset.Set) error {
		return s.SetInstructions("queue", provider.String("Which team should route this message?"))
	})
	evalNow("reworded")
	edit(func(s *questionset.Set) error { return s.RenameOption("queue", "other", "general") })
	evalNow("renamed")
	edit(func(s *questionset.Set) error {
		return s.SetInstructions("queue", provider.String("Which single team should route this message?"))
	})
	// urgency never changed: one revision, used by all three runs.
	code, out, errOut := runJevlab(t, "log", set, "urgency", "--db", db, "--json")
	if code != 0 {
		t.Fatalf("log urgency: exit %d\n%s", code, errOut)
	}
	var lu logJSON
	json.Unmarshal([]byte(out), &lu)
	if len(lu.Revisions) != 1 || len(lu.Revisions[0].Runs) != 3 || !lu.Revisions[0].Current {
		t.Fatalf("urgency history: %s", out)
	}

	code, out, errOut = runJevlab(t, "log", set, "queue", "--db", db, "--json")
	if code != 0 {
		t.Fatalf("log: exit %d\n%s", code, errOut)
	}
	var lg logJSON
	if err := json.Unmarshal([]byte(out), &lg); err != nil {
		t.Fatal(err)
	}
	r := lg.Revisions
	if len(r) != 4 {
		t.Fatalf("%d revisions, want 4:\n%s", len(r), out)
	}
	// Newest first: the unrun edit, the rename, the rewording, the first.
	if !r[0].Current || len(r[0].Runs) != 0 {
		t.Fatalf("newest: %+v", r[0])
	}
	if !strings.Contains(r[0].DiffText, "Which {+single+} team should route this message?") {
		t.Errorf("newest diff: %q", r[0].DiffText)
	}
	if len(r[1].Renames) != 1 || r[1].Renames["other"] != "general" || !strings.Contains(r[1].DiffText, "[-other:-] {+general:+}") {
		t.Errorf("rename revision: renames %v diff %q", r[1].Renames, r[1].DiffText)
	}
	if !strings.Contains(r[2].DiffText, "should [-handle-] {+route+} this message?") || r[2].Renames != nil {
		t.Errorf("reworded revision diff %q renames %v", r[2].DiffText, r[2].Renames)
	}
	if r[3].Diff != nil || !strings.Contains(r[3].Text, "instructions: Which team should handle this message?") {
		t.Errorf("first revision: %+v", r[3])
	}
	for i, want := range []string{runs[2], runs[1], runs[0]} {
		rv := r[i+1]
		if len(rv.Runs) != 1 || rv.Runs[0].RunID != want || rv.Runs[0].N != 10 {
			t.Fatalf("revision %d runs %+v, want %s", i+1, rv.Runs, want)
		}
		if !rv.FirstSeen.Before(r[i].FirstSeen) {
			t.Errorf("revision %d first seen %v not before %v", i+1, rv.FirstSeen, r[i].FirstSeen)
		}
		// The metrics are the run's own (show --json).
		code, sh, _ := runJevlab(t, "show", want, "--db", db, "--json")
		if code != 0 {
			t.Fatal("show")
		}
		var shown struct {
			Questions []struct {
				ID       string          `json:"question"`
				Accuracy json.RawMessage `json:"accuracy"`
				Brier    json.RawMessage `json:"brier"`
			} `json:"questions"`
		}
		json.Unmarshal([]byte(sh), &shown)
		got, _ := json.Marshal(rv.Runs[0].Accuracy)
		for _, q := range shown.Questions {
			if q.ID == "queue" && string(compactJSON(q.Accuracy)) != string(compactJSON(got)) {
				t.Errorf("run %s accuracy %s in log, %s in show", want, got, q.Accuracy)
			}
		}
	}
	// The renamed run has 2 "other" labels excluded as stale: n stays 10,
	// labelled drops to 8.
	if r[1].Runs[0].Labelled != 8 || r[2].Runs[0].Labelled != 10 {
		t.Errorf("labelled %d and %d", r[1].Runs[0].Labelled, r[2].Runs[0].Labelled)
	}
	code, out, _ = runJevlab(t, "log", set, "queue", "--db", db)
	if code != 0 || !strings.Contains(out, "4 revision(s), newest first") || !strings.Contains(out, "renamed option(s): other → general") ||
		!strings.Contains(out, "(current)") || !strings.Contains(out, runs[0]+" (first)  n 10  accuracy ") {
		t.Fatalf("log text:\n%s", out)
	}
	if code, _, errOut := runJevlab(t, "log", set, "nope", "--db", db); code != 2 || !strings.Contains(errOut, `no question "nope"`) {
		t.Fatalf("unknown question: exit %d %s", code, errOut)
	}
}

func compactJSON(b []byte) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	out, _ := json.Marshal(v)
	return out
}
