package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// The example pack of formats.md §1 (its description quoted: as printed
// there, "Non-goals: replies." is not valid YAML).
const tinyPack = `spec: 0
id: tiny-triage
version: 0.1.0
license: CC0-1.0
tested: null
description: "Route one message. Non-goals: replies."
state: {description: One message., fields: [message]}
questions:
  queue: {type: choice, instructions: "Which team owns ` + "`message`" + `?",
          options: {billing: Charges and refunds., unknown: Cannot tell.}}
thresholds: {queue: {billing: 0.8}}
`

// TestPackRules: each loader rule of spec v0 fails with file:line.
func TestPackRules(t *testing.T) {
	if pk, err := ParsePack("pack.yaml", []byte(tinyPack), "tiny-triage"); err != nil || len(pk.Questions) != 1 || pk.Thresholds["queue"][0].Min != 0.8 {
		t.Fatalf("example pack: %v %+v", err, pk)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"newer spec refused", "spec: 0", "spec: 1", "pack.yaml:1: spec 1: this reader knows jev-packs spec 0 only"},
		{"unknown key", "license: CC0-1.0", "license: CC0-1.0\nlicence: x", `pack.yaml:5: unknown key "licence" (typo? not part of spec v0`},
		{"id must equal the folder", "id: tiny-triage", "id: other-pack", `pack.yaml:2: id "other-pack" must equal the pack folder's name "tiny-triage"`},
		{"kebab id", "id: tiny-triage", "id: Tiny_Triage", `pack.yaml:2: id "Tiny_Triage" must be kebab-case`},
		{"plain semver", "version: 0.1.0", "version: 0.1.0-rc1", `pack.yaml:3: version "0.1.0-rc1" must be MAJOR.MINOR.PATCH`},
		{"tested is a model id", "tested: null", "tested: latest", `pack.yaml:5: tested "latest" must be null or a model id jev-X.Y.Z`},
		{"choice needs unknown", "unknown: Cannot tell.", "other: Cannot tell.", "pack.yaml:10: question queue: options must include unknown"},
		{"YAML 1.1 boolean label", "billing: Charges", "yes: Charges", `pack.yaml:10: question queue: option "yes" is a YAML 1.1 boolean to jevassert's reader (PyYAML)`},
		{"closed key set", "type: choice,", "type: choice, levels: [a, b],", `question queue: choice has no key "levels"`},
		{"threshold label", "{billing: 0.8}", "{biling: 0.8}", `pack.yaml:11: thresholds.queue: "biling" is not a label of the question`},
		{"threshold range", "{billing: 0.8}", "{billing: 1.5}", "thresholds.queue.billing = 1.5 must be in (0, 1]"},
	} {
		in := strings.Replace(tinyPack, c.from, c.to, 1)
		if in == tinyPack {
			t.Fatalf("%s: %q not in the pack", c.name, c.from)
		}
		_, err := ParsePack("pack.yaml", []byte(in), "tiny-triage")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// A quoted "yes" is a label to both readers.
	if _, err := ParsePack("pack.yaml", []byte(strings.Replace(tinyPack, "unknown: Cannot tell.}", `unknown: Cannot tell., "yes": Agreed.}`, 1)), "tiny-triage"); err != nil {
		t.Errorf("quoted yes: %v", err)
	}
}

// TestCaseRules: cases.jsonl's loader rules, each with its line.
func TestCaseRules(t *testing.T) {
	pk, err := ParsePack("pack.yaml", []byte(tinyPack), "")
	if err != nil {
		t.Fatal(err)
	}
	good := `{"id": "tt-0001", "state": {"message": "Refund me"}, "expect": {"queue": "billing"}}`
	if cs, err := pk.LoadCases("cases.jsonl", []byte(good+"\n")); err != nil || len(cs) != 1 {
		t.Fatalf("example case: %v", err)
	}
	for _, c := range []struct{ in, want string }{
		{good + "\n\n" + good + "\n", "cases.jsonl:2: blank line"},
		{good + "\n" + good + "\n", `cases.jsonl:2: duplicate case id "tt-0001" (first at line 1)`},
		{`{"id": "a", "state": {"message": "x"}}` + "\n", "cases.jsonl:1: a case has exactly the keys id, state and expect, not id, state"},
		{`{"id": "a", "state": {"msg": "x"}, "expect": {"queue": "billing"}}` + "\n", "cases.jsonl:1: case a: state has msg; the pack's state.fields are message"},
		{`{"id": "a", "state": {"message": "x"}, "expect": {"queue": 1}}` + "\n", "cases.jsonl:1: case a: expect.queue: a choice gold is a label (string), not 1"},
		{`{"id": "", "state": {"message": "x"}, "expect": {"queue": "billing"}}` + "\n", "cases.jsonl:1: id must be a non-empty string"},
		{"{oops\n", "cases.jsonl:1: invalid JSON"},
	} {
		_, err := pk.LoadCases("cases.jsonl", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

// TestPredictionAndGateRules: jevassert's load_predictions and gates.yaml
// rules.
func TestPredictionAndGateRules(t *testing.T) {
	ok := `{"case_id": "a", "model": "jev-1.13.0", "latency_ms": 301.0, "usage": {"input_tokens": 3, "output_tokens": 1}, "answers": {}, "error": null}`
	preds, extra, err := LoadPredictions("p.jsonl", []byte(ok+"\n\n"+strings.Replace(ok, `"a"`, `"b"`, 1)+"\n"))
	if err != nil || len(preds) != 2 || len(extra) != 0 || string(preds[0].LatencyRaw) != "301.0" {
		t.Fatalf("%v %+v", err, preds)
	}
	for _, c := range []struct{ in, want string }{
		{ok + "\n" + ok + "\n", `p.jsonl:2: duplicate case_id "a" (first at line 1)`},
		{strings.Replace(ok, `"case_id": "a"`, `"case_id": ""`, 1) + "\n", "p.jsonl:1: case_id missing or empty"},
		{"{\n", "p.jsonl:1: invalid JSON"},
	} {
		if _, _, err := LoadPredictions("p.jsonl", []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	if _, extra, _ := LoadPredictions("p.jsonl", []byte(strings.Replace(ok, `"error"`, `"seed": 3, "error"`, 1))); len(extra) != 1 || extra[0] != "seed" {
		t.Errorf("extra %v", extra)
	}
	pk, _ := ParsePack("pack.yaml", []byte(tinyPack), "")
	for _, c := range []struct{ in, want string }{
		{"min_acuracy: 0.8\n", `gates.yaml:1: unknown gate "min_acuracy"`},
		{"min_accuracy: true\n", "gates.yaml:1: min_accuracy must be a number"},
		{"per_question: {urgency: {min_accuracy: 0.5}}\n", `gates.yaml:1: per_question: no question "urgency" in the pack`},
	} {
		if _, err := ParseGates("gates.yaml", []byte(c.in), pk); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	if g, err := ParseGates("gates.yaml", nil, pk); err != nil || g.MinAccuracy != nil {
		t.Errorf("empty gates: %v", err)
	}
}

// TestImportPackFixtures: the shipped demo-triage pack becomes a set whose
// gates, min_confidence and dataset mapping are as documented.
func TestImportPackFixtures(t *testing.T) {
	dir := testutil.Testdata(t, "demo-triage")
	f, err := ImportPack(dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Set
	if s.Model != "" || *s.Settings["queue"].MinConfidence != 0.6 || *s.Gates["*"].MinAccuracy != 0.8 || s.DatasetMap.Labels[2].Values["high"] != "2" {
		t.Errorf("set %+v", s)
	}
	if _, ok := s.Settings["refund_request"]; ok {
		t.Error("a noul's floor became a setting")
	}
	out, err := f.Marshal()
	if err != nil || !strings.Contains(string(out), "# Note: thresholds.refund_request") {
		t.Errorf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "predictions.jsonl")); err == nil && len(f.Files["recorded.jsonl"]) == 0 {
		t.Error("predictions.jsonl not converted")
	}
}

// TestImportRefusesPipes: a FIFO where a pack's cases.jsonl should be is
// refused at once instead of blocking the import.
func TestImportRefusesPipes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny-triage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(strings.Replace(tinyPack, "Non-goals: replies.", "No replies.", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(dir, "cases.jsonl")); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	_, err := ImportPack(dir, PackOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
}
