package formats

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJevEvalStateHash pins state_hash against Python's json.dumps
// (sort_keys, compact separators, ensure_ascii=False), computed once with
// python3: key order, non-ASCII, U+2028, "<" and a newline escape.
func TestJevEvalStateHash(t *testing.T) {
	for state, want := range map[string]string{
		`"Charged twice"`:                            "74d2b03f3d8e9fd3",
		`"Where is my parcel?"`:                      "8d3c38f887a4817d",
		`{"b": "é \u2028 <x>", "a": [1, 2.5, "\n"]}`: "09dd6d8bade9d326",
	} {
		if got := JevEvalStateHash(json.RawMessage(state)); got != want {
			t.Errorf("state_hash(%s) = %s, want %s", state, got, want)
		}
	}
}

// TestJevEvalConfig normalises as jev-eval does and names what it drops.
func TestJevEvalConfig(t *testing.T) {
	cfg, err := ParseJevEvalConfig("c.json", []byte(`{"model": "jev-latest", "questions": {
		"team": {"kind": "choice", "instructions": "Which team?", "options": ["billing", "orders"]},
		"urgent": {"type": "noul", "criteria": {"true": "today"}},
		"anger": {"kind": "score", "levels": ["calm", "annoyed", "furious"], "weight": 2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := cfg.Questions.MarshalJSON()
	want := `{"team":{"type":"choice","instructions":"Which team?","criteria":{"billing":"billing","orders":"orders"}},"urgent":{"type":"noul","instructions":"urgent"},"anger":{"type":"score","instructions":"anger","criteria":["calm","annoyed","furious"]}}`
	if string(got) != want {
		t.Errorf("questions\n got %s\nwant %s", got, want)
	}
	notes := strings.Join(cfg.Notes, "\n")
	for _, w := range []string{"urgent: jev-eval drops a noul's criteria", `urgent: no instructions; jev-eval sends the question id "urgent"`, "anger: weight dropped"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if _, err := ParseJevEvalConfig("c.json", []byte(`{"questions": {"q": {"kind": "rank"}}}`)); err == nil || !strings.Contains(err.Error(), `kind/type must be noul, choice or score, not "rank"`) {
		t.Errorf("err = %v", err)
	}
}

// TestJevEvalRules: rows and cache lines that break jev-eval's rules fail
// with file:line.
func TestJevEvalRules(t *testing.T) {
	cfgText := `{"questions": {"team": {"kind": "choice", "instructions": "Which team?", "options": ["billing", "orders"]}}}`
	cfg := writeTemp(t, "c.json", cfgText)
	data := writeTemp(t, "d.jsonl", `{"state": "Charged twice", "labels": {"team": "billing"}}`+"\n")
	line := `{"answer": {"type": "choice", "choice": "billing", "confidence": 0.9, "probabilities": {"billing": 0.9, "orders": 0.1}}, "gold": "billing", "id": "team", "model": "jev-latest", "question": {}, "question_hash": "x", "row": 0, "state_chars": 13, "state_hash": "74d2b03f3d8e9fd3", "type": "choice"}`
	if f, err := ImportJevEval(JevEvalFiles{Config: cfg, Data: data, Cache: writeTemp(t, "k.jsonl", line+"\n")}, true); err != nil || len(f.Runs) != 1 || len(f.Runs[0].Rounds[0]) != 1 {
		t.Fatalf("example: %v", err)
	}
	for _, c := range []struct{ data, cache, want string }{
		{"", strings.Replace(line, `"state_hash": "74d2b03f3d8e9fd3", `, ``, 1), "k.jsonl:1: state_hash missing"},
		{"", strings.Replace(line, `"id": "team", `, ``, 1), "k.jsonl:1: id (the question id) missing"},
		{"", strings.Replace(line, `74d2b03f3d8e9fd3`, `0000000000000000`, 1), "k.jsonl:1: state_hash 0000000000000000 does not match row 0's state"},
		{"", strings.Replace(line, `"row": 0`, `"row": 3`, 1), "k.jsonl:1: row 3, but d.jsonl has 1 rows"},
		{"", line + "\n" + line, "k.jsonl:2: row 0 question team is cached twice (first at line 1)"},
		{"", "{bad", "k.jsonl:1: invalid JSON"},
		{`{"state": "x", "labels": {"team": "Billing"}}`, line, `d.jsonl:1: labels.team: "Billing" is not a criterion key of the question`},
		{`{"state": 3}`, line, "d.jsonl:1: state must be a string or an object"},
		{`{"state": "x", "meta": [1]}`, line, "d.jsonl:1: meta must be an object"},
	} {
		d := data
		if c.data != "" {
			d = writeTemp(t, "d.jsonl", c.data+"\n")
		}
		_, err := ImportJevEval(JevEvalFiles{Config: cfg, Data: d, Cache: writeTemp(t, "k.jsonl", c.cache+"\n")}, true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}
