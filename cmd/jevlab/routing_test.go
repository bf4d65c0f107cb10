package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// TestEvalShowMinConfidenceRouting evaluates a copy of the demo-triage set
// whose queue has min_confidence: 0.9, offline. queue's recorded answers
// are all right and only dt-008's top probability (0.82) is under 0.9
// (testdata/demo-triage/recorded.jsonl): 1 of 10 routed, 9/9 right. eval,
// show (text, JSON, Markdown) and eval --markdown all carry the line; the
// questions without min_confidence carry none.
func TestEvalShowMinConfidenceRouting(t *testing.T) {
	t.Setenv("TYPESAFE_API_KEY", "")
	t.Setenv("TYPESAFE_BASE_URL", "")
	t.Setenv("JEVLAB_DB", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := t.TempDir()
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "questions.yaml" {
			s := string(b)
			const at = "  queue:\n    type: choice\n"
			if !strings.Contains(s, at) {
				t.Fatalf("fixtures/demo-triage/questions.yaml changed: no %q", at)
			}
			b = []byte(strings.Replace(s, at, at+"    min_confidence: 0.9\n", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "runs.db")
	set := filepath.Join(dir, "questions.yaml")
	md := filepath.Join(dir, "report.md")
	const line = "queue min_confidence 0.90: 10.0% routed to uncertain (1/10) · accuracy of the rest 1.000 [0.701, 1.000] Wilson (9/9)\n"

	code, out, errOut := runJevlab(t, "eval", "--offline", "--db", db, "--markdown", md, set)
	if code != 0 {
		t.Fatalf("eval exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "\n"+line) || strings.Count(out, "min_confidence") != 1 {
		t.Errorf("eval output: want exactly the queue line %q:\n%s", line, out)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "- `queue` min_confidence 0.90: 10.0% routed to uncertain (1/10)") ||
		!strings.Contains(string(b), "  routing              min_confidence 0.90: 10.0% routed") {
		t.Errorf("eval --markdown lacks the routing line:\n%s", b)
	}

	code, out, errOut = runJevlab(t, "show", "--db", db, "latest")
	if code != 0 || !strings.Contains(out, "\n"+line) {
		t.Errorf("show exit %d, want the line %q:\n%s\n%s", code, line, out, errOut)
	}
	code, out, errOut = runJevlab(t, "show", "--db", db, "latest", "--markdown")
	if code != 0 || !strings.Contains(out, "- `queue` min_confidence 0.90: 10.0% routed to uncertain (1/10)") {
		t.Errorf("show --markdown exit %d:\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runJevlab(t, "show", "--db", db, "latest", "--json")
	if code != 0 {
		t.Fatalf("show --json exit %d\n%s", code, errOut)
	}
	var rep struct {
		Questions []struct {
			ID        string `json:"question"`
			Selective struct {
				Routing *struct {
					MinConfidence float64 `json:"min_confidence"`
					Routed        int     `json:"routed"`
					Answered      int     `json:"answered"`
					KeptCorrect   int     `json:"kept_correct"`
					KeptLabelled  int     `json:"kept_labelled"`
				} `json:"routing"`
			} `json:"selective"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	for _, q := range rep.Questions {
		r := q.Selective.Routing
		switch {
		case q.ID == "queue" && (r == nil || r.MinConfidence != 0.9 || r.Routed != 1 || r.Answered != 10 || r.KeptCorrect != 9 || r.KeptLabelled != 9):
			t.Errorf("queue routing %+v", r)
		case q.ID != "queue" && r != nil:
			t.Errorf("%s has routing without min_confidence: %+v", q.ID, r)
		}
	}
}
