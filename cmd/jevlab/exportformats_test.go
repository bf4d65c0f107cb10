package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// jevlRecords are formats.md's JEVL example twice over (the same request
// recorded twice: duplicate ids), plus a second state carrying tags, meta
// and a key the spec does not name.
var jevlRecords = []string{
	`{"v": 1, "id": "sha256:9f", "ts": "2026-10-01T09:00:00Z", "model": "jev-1.13.0", "request": {"state": "Refund me", "questions": {"r": {"type": "noul", "instructions": "Refund asked?"}}}, "answers": {"r": {"type": "noul", "noul": 0.97}}, "label": {"r": true}}`,
	`{"v": 1, "id": "sha256:9f", "ts": "2026-10-01T09:05:00Z", "model": "jev-1.13.0", "request": {"state": "Refund me", "questions": {"r": {"type": "noul", "instructions": "Refund asked?"}}}, "answers": {"r": {"type": "noul", "noul": 0.95}}, "label": {"r": true}}`,
	`{"v": 1, "id": "sha256:a1", "ts": "2026-10-01T09:01:00Z", "model": "jev-1.13.0", "request": {"state": "Where is my parcel", "questions": {"r": {"type": "noul", "instructions": "Refund asked?"}}}, "answers": {"r": {"type": "noul", "noul": 0.40}}, "usage": {"input_tokens": 30, "output_tokens": 5}, "label": {"r": false}, "tags": ["smoke"], "meta": {"requested_model": "jev-latest"}, "x_seed": 7}`,
	`{"v": 1, "id": "sha256:a1", "ts": "2026-10-01T09:06:00Z", "model": "jev-1.13.0", "request": {"state": "Where is my parcel", "questions": {"r": {"type": "noul", "instructions": "Refund asked?"}}}, "answers": {"r": {"type": "noul", "noul": 0.62}}, "usage": {"input_tokens": 30, "output_tokens": 5}, "label": {"r": false}, "tags": ["smoke"], "meta": {"requested_model": "jev-latest"}, "x_seed": 8}`,
}

// TestJEVLRoundTrip: JEVL → import (fixtures, dataset, a run whose
// duplicate records are repeats) → export --to jevl of the fixtures gives
// back every record, unknown keys included; the stored run exports too.
func TestJEVLRoundTrip(t *testing.T) {
	isolate(t)
	src := filepath.Join(t.TempDir(), "cassette.jevl")
	if err := os.WriteFile(src, []byte(strings.Join(jevlRecords, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "j.db")
	dir := filepath.Join(t.TempDir(), "j")
	code, _, errOut := runJevlab(t, "import", "--from", "jevl", "--db", db, "-o", dir, src)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"unknown top-level keys (x_seed) are kept", "meta (requested_model) has no slot", "tags are kept on 1 dataset row", "(cassette, 2 round(s))", "4 of 4 record ids do not recompute"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Two request models (jev-1.13.0 inferred, jev-latest from meta): the
	// records of the first model replay under the set's model.
	code, out, errOut := runJevlab(t, "export", "--to", "jevl", filepath.Join(dir, "recorded.jsonl"))
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	if len(got) != len(jevlRecords) {
		t.Fatalf("%d records back, want %d:\n%s", len(got), len(jevlRecords), out)
	}
	for i := range got {
		if !jsonEqual(got[i], jevlRecords[i]) {
			t.Errorf("record %d changed:\n%s\n%s", i+1, got[i], jevlRecords[i])
		}
	}
	// The stored run: 2 items × 2 repeats, exported with labels.
	code, out, errOut = runJevlab(t, "export", "--to", "jevl", "--db", db, "latest")
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.Contains(out, `"label": {"r": false}`) || !strings.Contains(out, `"jevlab_repeat": 1`) || !strings.Contains(out, `"noul": 0.62`) {
		t.Errorf("export run: exit %d\n%s\n%s", code, out, errOut)
	}
	// A newer version is refused with its line, and nothing is written.
	bad := filepath.Join(t.TempDir(), "new.jevl")
	if err := os.WriteFile(bad, []byte(jevlRecords[0]+"\n"+strings.Replace(jevlRecords[1], `"v": 1`, `"v": 2`, 1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runJevlab(t, "import", "--from", "jevl", "-o", filepath.Join(t.TempDir(), "n"), bad)
	if code != 2 || !strings.Contains(errOut, "new.jevl:2: v 2: this reader knows JEVL record format v1") {
		t.Errorf("v2: exit %d\n%s", code, errOut)
	}
}

// TestExportJevPacksRoundTrip: a jevassert import exported back as a pack
// gives predictions.jsonl byte for byte, and the pack imports again with
// the same questions and accuracies.
func TestExportJevPacksRoundTrip(t *testing.T) {
	isolate(t)
	src := testutil.Testdata(t, "demo-triage")
	dir := filepath.Join(t.TempDir(), "dt")
	if code, _, errOut := runJevlab(t, "import", "--from", "jev-packs", src, "-o", dir); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	pack := filepath.Join(t.TempDir(), "demo-triage")
	code, _, errOut := runJevlab(t, "export", "--to", "jev-packs", filepath.Join(dir, "questions.yaml"), "-o", pack)
	if code != 0 || !strings.Contains(errOut, "license is NOASSERTION") {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	want, _ := os.ReadFile(filepath.Join(src, "predictions.jsonl"))
	got, _ := os.ReadFile(filepath.Join(pack, "predictions.jsonl"))
	if string(got) != string(want) {
		t.Errorf("predictions.jsonl differs after the round trip")
	}
	again := filepath.Join(t.TempDir(), "again")
	if code, _, errOut := runJevlab(t, "import", "--from", "jev-packs", pack, "-o", again); code != 0 {
		t.Fatalf("re-import: exit %d\n%s", code, errOut)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "questions.yaml"))
	b, _ := os.ReadFile(filepath.Join(again, "questions.yaml"))
	qa, qb := a[strings.Index(string(a), "questions:"):strings.Index(string(a), "dataset:")], b[strings.Index(string(b), "questions:"):strings.Index(string(b), "dataset:")]
	if string(qa) != string(qb) {
		t.Errorf("questions changed:\n%s\n%s", qa, qb)
	}
	code, out, _ := runJevlab(t, "eval", "--offline", "--db", filepath.Join(t.TempDir(), "e.db"), filepath.Join(again, "questions.yaml"))
	if code != 0 || !strings.Contains(out, "(8/10)") || strings.Count(out, "(10/10)") < 2 {
		t.Errorf("eval: exit %d\n%s", code, out)
	}
	// A set the pack format cannot hold fails naming the question.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(a), "      unknown: Cannot tell from the message.\n", "", 1)
	if err := os.WriteFile(filepath.Join(dir, "noun.yaml"), []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runJevlab(t, "export", "--to", "jev-packs", filepath.Join(dir, "noun.yaml"), "-o", filepath.Join(bad, "x-pack"))
	if code != 2 || !strings.Contains(errOut, "question queue: a jev-packs choice must have an unknown option") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}

// TestJevEvalRoundTrip builds a jev-eval run from formats.md's example
// (config, labelled rows, cache): the stored run and an eval --offline
// of the imported folder agree answer for answer.
func TestJevEvalRoundTrip(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := write("config.json", `{"model": "jev-latest", "questions": {"team": {"kind": "choice", "instructions": "Which team?", "options": ["billing", "orders"]}}}`)
	data := write("rows.jsonl", `{"state": "Charged twice", "labels": {"team": "billing"}}
{"state": "Where is my parcel?", "labels": {"team": "orders"}, "meta": {"source": "mail"}}
{"state": "Thanks!"}
`)
	cache := write("run.jsonl", `{"answer": {"type": "choice", "choice": "billing", "confidence": 0.9, "probabilities": {"billing": 0.9, "orders": 0.1}}, "call": 1, "gold": "billing", "id": "team", "input_tokens": 40, "model": "jev-latest", "question": {}, "question_hash": "x", "row": 0, "state_chars": 13, "state_hash": "74d2b03f3d8e9fd3", "type": "choice"}
{"answer": {"type": "choice", "choice": "billing", "confidence": 0.6, "probabilities": {"billing": 0.6, "orders": 0.4}}, "call": 2, "gold": "orders", "id": "team", "input_tokens": 42, "meta": {"source": "mail"}, "model": "jev-latest", "question": {}, "question_hash": "x", "row": 1, "state_chars": 19, "state_hash": "8d3c38f887a4817d", "type": "choice"}
`)
	db := filepath.Join(t.TempDir(), "je.db")
	out := filepath.Join(t.TempDir(), "je")
	code, _, errOut := runJevlab(t, "import", "--from", "jev-eval", "--config", cfg, "--data", data, "--db", db, "-o", out, cache)
	if code != 0 || !strings.Contains(errOut, "keeps the requested model, not the one that answered") {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	rows, _ := os.ReadFile(filepath.Join(out, "dataset.jsonl"))
	if !strings.Contains(string(rows), `{"id": "row-1", "state": "Where is my parcel?", "labels": {"team": "orders"}, "meta": {"source":"mail"}}`) {
		t.Errorf("dataset:\n%s", rows)
	}
	code, show, _ := runJevlab(t, "show", "--db", db, "latest")
	if code != 0 || !strings.Contains(show, "(1/2)") {
		t.Errorf("show: exit %d\n%s", code, show)
	}
	code, ev, errOut := runJevlab(t, "eval", "--offline", "--db", db, filepath.Join(out, "questions.yaml"))
	if code != 0 || !strings.Contains(ev, "(1/2)") {
		t.Fatalf("eval: exit %d\n%s\n%s", code, ev, errOut)
	}
	s := compareJSON(t, db, "latest~1", "latest")
	if s.flips != 0 || s.changed != 0 {
		t.Errorf("imported run vs replay: %+v", s)
	}
}
