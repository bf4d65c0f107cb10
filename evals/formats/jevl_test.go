package formats

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The example record of formats.md §3 (id shortened there; kept opaque).
const jevlExample = `{"v": 1, "id": "sha256:9f", "ts": "2026-10-01T09:00:00Z", "model": "jev-1.13.0", "request": {"state": "Refund me", "questions": {"r": {"type": "noul", "instructions": "Refund asked?"}}}, "answers": {"r": {"type": "noul", "noul": 0.97}}, "label": {"r": true}}`

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJEVLRules: one test per rule of the record format's spec.
func TestJEVLRules(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"parse failure is an error, never a skip", jevlExample + "\n{\"v\": 1, \"id\"\n", "r.jevl:2: invalid JSON"},
		{"newer version refused", strings.Replace(jevlExample, `"v": 1`, `"v": 2`, 1), "r.jevl:1: v 2: this reader knows JEVL record format v1; a newer version needs a newer jevlab"},
		{"missing version", strings.Replace(jevlExample, `"v": 1, `, ``, 1), "r.jevl:1: missing v"},
		{"non-integer version", strings.Replace(jevlExample, `"v": 1`, `"v": "1"`, 1), `r.jevl:1: v must be an integer, not "1"`},
		{"missing required key", strings.Replace(jevlExample, `"ts": "2026-10-01T09:00:00Z", `, ``, 1), "r.jevl:1: ts must be a non-empty string"},
		{"request needs questions", strings.Replace(jevlExample, `"questions"`, `"qs"`, 1), "r.jevl:1: request.questions must be an object"},
		{"not an object", "[1]\n", "r.jevl:1: each line must be a JSON object"},
	} {
		_, err := ParseJEVL("r.jevl", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// Blank lines skipped; duplicate ids allowed; state may be absent.
	in := jevlExample + "\n\n" + jevlExample + "\n" + strings.Replace(jevlExample, `"state": "Refund me", `, ``, 1) + "\n"
	recs, err := ParseJEVL("r.jevl", []byte(in))
	if err != nil || len(recs) != 3 || recs[0].ID != recs[1].ID || recs[1].Line != 3 || recs[2].State != nil {
		t.Fatalf("recs %+v err %v", recs, err)
	}
}

// TestJEVLUnknownKeysKept: unknown top-level and request keys survive a
// read and a write; the known keys come back in the spec's order.
func TestJEVLUnknownKeysKept(t *testing.T) {
	in := strings.Replace(jevlExample, `"label"`, `"x_run": {"seed": 7}, "tags": ["smoke"], "meta": {"requested_model": "jev-latest"}, "label"`, 1)
	in = strings.Replace(in, `"questions"`, `"headers_seen": false, "questions"`, 1)
	recs, err := ParseJEVL("r.jevl", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(recs[0].Extra["x_run"]) != `{"seed": 7}` || string(recs[0].ReqExtra["headers_seen"]) != "false" {
		t.Fatalf("extra %v %v", recs[0].Extra, recs[0].ReqExtra)
	}
	var b bytes.Buffer
	WriteJEVL(&b, &recs[0])
	if !jsonSame(t, b.String(), in) {
		t.Errorf("rewrite differs:\n%s\n%s", b.String(), in)
	}
	if !strings.HasPrefix(b.String(), `{"v": 1, "id": "sha256:9f", "ts": "2026-10-01T09:00:00Z", "model": "jev-1.13.0", "request": {"state": "Refund me", "questions"`) {
		t.Errorf("order: %s", b.String())
	}
}

// TestImportJEVLLabels: labels become a dataset; a noul label that is not
// a JSON boolean and a fractional score label fail with file:line;
// records of one request become repeats.
func TestImportJEVLLabels(t *testing.T) {
	p := writeTemp(t, "r.jevl", jevlExample+"\n"+strings.Replace(jevlExample, `0.97`, `0.91`, 1)+"\n")
	f, err := ImportJEVL([]string{p}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(f.Files["dataset.jsonl"]); got != `{"id": "9f", "state": "Refund me", "labels": {"r": true}}`+"\n" {
		t.Errorf("dataset %q", got)
	}
	if len(f.Runs) != 1 || len(f.Runs[0].Rounds) != 2 || string(f.Runs[0].Rounds[1][0].Answers) != `{"r": {"type": "noul", "noul": 0.91}}` {
		t.Errorf("runs %+v", f.Runs)
	}
	if !strings.Contains(strings.Join(f.Notes, "\n"), "2 of 2 record ids do not recompute") {
		t.Errorf("notes %q", f.Notes)
	}
	for _, c := range []struct{ in, want string }{
		{strings.Replace(jevlExample, `"r": true`, `"r": "false"`, 1), `r.jevl:1: label.r: a noul label must be a JSON boolean, not "false"`},
		{strings.Replace(strings.Replace(jevlExample, `{"type": "noul", "instructions": "Refund asked?"}`, `{"type": "score", "instructions": "How much?", "criteria": ["lo", "mid", "hi"]}`, 1), `"r": true`, `"r": 2.7`, 1), "r.jevl:1: label.r: score label 2.7 is not a whole level"},
		{strings.Replace(jevlExample, `"r": true`, `"q": true`, 1), `r.jevl:1: label.q: no question "q" in request.questions`},
	} {
		_, err := ImportJEVL([]string{writeTemp(t, "r.jevl", c.in+"\n")}, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

// TestJEVLDigest pins the digest of the canonical payload: keys sorted,
// compact, numbers as written.
func TestJEVLDigest(t *testing.T) {
	a := JEVLDigest("m", json.RawMessage(`{"r": {"type": "noul", "instructions": "x"}}`), json.RawMessage(`"s"`))
	b := JEVLDigest("m", json.RawMessage(`{"r":{"instructions":"x","type":"noul"}}`), json.RawMessage(`"s"`))
	if a != b || !strings.HasPrefix(a, "sha256:") || len(a) != 71 {
		t.Errorf("%s vs %s", a, b)
	}
	// sha256 of {"model":"m","questions":{"r":{"instructions":"x","type":"noul"}},"state":"s"}
	if want := "sha256:" + sha256Hex(`{"model":"m","questions":{"r":{"instructions":"x","type":"noul"}},"state":"s"}`); a != want {
		t.Errorf("digest %s, want %s", a, want)
	}
}

func jsonSame(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
