package questionset

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

func mustParse(t *testing.T, name, in string) *Set {
	t.Helper()
	s, err := Parse(name, []byte(in))
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return s
}

func requestJSON(t *testing.T, s *Set) string {
	t.Helper()
	b, err := s.Request(nil).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUnchangedSaveIsIdentical: load → save of an unchanged file writes
// the same bytes, whoever wrote it.
func TestUnchangedSaveIsIdentical(t *testing.T) {
	for name, in := range map[string]string{
		"design.yaml": designExample,
		"wire.json":   `{"model": "jev-latest", "state": "hi", "questions": {"a": {"type": "noul", "instructions": "Is it?"}}}`,
		"odd.yaml":    "questions:\n    a:   {type: noul}   # odd spacing\n",
	} {
		s := mustParse(t, name, in)
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("%s: unchanged save differs:\n%s", name, out)
		}
	}
}

// TestEmitterFixedPoint: a file jevlab wrote, re-encoded from its node
// tree without the unchanged-file shortcut, gives the same bytes; and
// parsing it gives the same set.
func TestEmitterFixedPoint(t *testing.T) {
	s := mustParse(t, "design.yaml", designExample)
	s.doc, s.orig = nil, nil // as if built in memory
	first, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `name: support-triage
model: jev-latest
state:
  message: I was charged twice for order A-104
questions:
  team:
    type: choice
    instructions: Which team should handle this ticket?
    criteria:
      billing:
        what: charges, refunds, invoices
        not_for: delivery
      orders: null
  urgent:
    type: noul
    instructions: Does this need attention today?
    threshold: 0.7
  anger:
    type: score
    instructions: How upset is the customer?
    criteria:
      - calm
      - annoyed
      - furious
dataset: support.jsonl
`
	if string(first) != want {
		t.Fatalf("emitter output:\n%s\nwant:\n%s", first, want)
	}
	again := mustParse(t, "x.yaml", string(first))
	again.orig = nil // force a re-encode of the parsed tree
	second, err := again.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("not a fixed point:\n%s\n---\n%s", first, second)
	}
	if requestJSON(t, again) != requestJSON(t, s) || again.Threshold("urgent") != 0.7 {
		t.Error("re-parsed set differs")
	}
}

// TestEmitterQuotesOnlyWhenNeeded: strings that would read as something
// else are quoted; plain text is not.
func TestEmitterQuotesOnlyWhenNeeded(t *testing.T) {
	s := New("quoting")
	q := provider.Question{Type: provider.Choice, Options: []provider.Option{
		{Label: "true", Description: provider.String("yes")},
		{Label: "12", Description: provider.String("null")},
		{Label: "plain words", Description: provider.String("two\nlines")},
		{Label: "a: b", Description: json.RawMessage(`{"n":1.50,"list":[1,"2",true,null]}`)},
	}}
	if err := s.AddQuestion("q", q, -1); err != nil {
		t.Fatal(err)
	}
	s.State = provider.String("")
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back := mustParse(t, "q.yaml", string(out))
	if requestJSON(t, back) != requestJSON(t, s) {
		t.Errorf("round trip changed the request:\n%s\n%s\nfile:\n%s", requestJSON(t, back), requestJSON(t, s), out)
	}
	for _, frag := range []string{`"true": yes`, `"12": "null"`, "plain words: |-\n        two\n        lines", `'a: b':`, "n: 1.50", `- "2"`, `state: ""`} {
		if !strings.Contains(string(out), frag) {
			t.Errorf("output lacks %q:\n%s", frag, out)
		}
	}
}

// TestEditKeepsComments: after edits, comments of unchanged parts stay,
// a renamed option keeps its comment, and the file loads to the edited set.
func TestEditKeepsComments(t *testing.T) {
	in := `# Support triage
name: support-triage
state:                       # the working state
  message: "I was charged twice"
questions:
  team:
    type: choice
    criteria:
      billing: {what: "charges"}   # money things
      orders: null                 # parcels
  urgent:
    type: noul
    threshold: 0.7           # caller-side
dataset: support.jsonl       # default data
`
	s := mustParse(t, "s.yaml", in)
	th := 0.9
	if err := s.SetThreshold("urgent", &th); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameOption("team", "orders", "shipping"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddOption("team", "other", nil, -1); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `# Support triage
name: support-triage
state: # the working state
  message: "I was charged twice"
questions:
  team:
    type: choice
    criteria:
      billing: {what: "charges"} # money things
      shipping: null # parcels
      other: null
  urgent:
    type: noul
    threshold: 0.9 # caller-side
dataset: support.jsonl # default data
`
	if string(out) != want {
		t.Errorf("edited file:\n%s\nwant:\n%s", out, want)
	}
	back := mustParse(t, "s.yaml", string(out))
	if requestJSON(t, back) != requestJSON(t, s) || back.Threshold("urgent") != 0.9 {
		t.Error("edited file does not load to the edited set")
	}
}

// TestSaveLoadSameSet: load → save → load gives the same set for every
// shape of value, and a second save of the saved file is byte-identical.
func TestSaveLoadSameSet(t *testing.T) {
	in := `name: shapes
model: jev-1.13.0
state: {ticket: {messages: [{text: "hi", n: 1.0}]}, flag: true}
questions:
  structured:
    type: choice
    instructions: {task: route, rules: [first, second]}
    criteria:
      a: &desc {what: "x", examples: [1, 2.50, -3e2]}
      b: *desc
      c: [one, two]
  levels:
    type: score
    criteria: [{label: low, summary: calm}, mid, [nested, list]]
    min_confidence: 0.25
  gate:
    type: noul
    criteria: {true: "yes it is", false: null}
    threshold: 0.35
dataset: data/items.csv
fixtures: rec.jsonl
gates:
  "*": {min_accuracy: 0.8}
  levels: {max_ece: 0.1, min_within_one: 0.9}
`
	dir := t.TempDir()
	src := filepath.Join(dir, "set.yaml")
	if err := os.WriteFile(src, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	wantReq := `{"model":"jev-1.13.0","state":{"ticket":{"messages":[{"text":"hi","n":1.0}]},"flag":true},"questions":{"structured":{"type":"choice","instructions":{"task":"route","rules":["first","second"]},"criteria":{"a":{"what":"x","examples":[1,2.50,-3e2]},"b":{"what":"x","examples":[1,2.50,-3e2]},"c":["one","two"]}},"levels":{"type":"score","criteria":[{"label":"low","summary":"calm"},"mid",["nested","list"]]},"gate":{"type":"noul","criteria":{"true":"yes it is","false":null}}}}`
	if got := requestJSON(t, s); got != wantReq {
		t.Errorf("request\n got %s\nwant %s", got, wantReq)
	}
	if c, ok := s.MinConfidence("levels"); !ok || c != 0.25 {
		t.Errorf("min_confidence %v %v", c, ok)
	}
	if np, err := s.DatasetPath(nil); err != nil || np.Path != filepath.Join(dir, "data/items.csv") || !np.Inside || len(s.Fixtures) != 1 {
		t.Errorf("resolve %+v %v fixtures %v", np, err, s.Fixtures)
	}
	if g := s.GateFor("levels"); *g.MinAccuracy != 0.8 || *g.MaxECE != 0.1 || *g.MinWithinOne != 0.9 {
		t.Errorf("gate %+v", g)
	}
	// A change forces a real re-encode through the node tree.
	s.Name = "shapes2"
	out := filepath.Join(dir, "out.yaml")
	if err := s.Save(out); err != nil {
		t.Fatal(err)
	}
	s2, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s2.canonicalJSON(), s.canonicalJSON()) {
		t.Errorf("load → save → load changed the set:\n%s\n%s", s2.canonicalJSON(), s.canonicalJSON())
	}
	first, _ := os.ReadFile(out)
	if err := s2.Save(out); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(out)
	if !bytes.Equal(first, second) {
		t.Error("second save changed bytes")
	}
	if !strings.Contains(string(first), "b: *desc") {
		t.Errorf("the alias did not survive an unrelated edit:\n%s", first)
	}
	// Save keeps the mode of the file it replaces.
	if err := os.WriteFile(out, first, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, 0o600); err != nil {
		t.Fatal(err)
	}
	s2.Name = "shapes3"
	if err := s2.Save(out); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestJSONSetSavesAsJSON: a wire request file stays JSON when edited.
func TestJSONSetSavesAsJSON(t *testing.T) {
	s := mustParse(t, "wire.json", `{"model":"jev-latest","state":"hi","questions":{"a":{"type":"noul"}}}`)
	if !s.IsJSON() {
		t.Fatal("not JSON")
	}
	th := 0.6
	if err := s.SetThreshold("a", &th); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "model": "jev-latest",
  "state": "hi",
  "questions": {
    "a": {
      "type": "noul",
      "threshold": 0.6
    }
  }
}
`
	if string(out) != want {
		t.Errorf("got\n%s", out)
	}
	if back := mustParse(t, "wire.json", string(out)); back.Threshold("a") != 0.6 {
		t.Error("threshold lost")
	}
}

// TestYAMLValuesBecomeJSON pins the YAML → JSON conversion of scalars.
func TestYAMLValuesBecomeJSON(t *testing.T) {
	s := mustParse(t, "v.yaml", `questions:
  a:
    type: noul
    instructions: {hex: 0x1F, oct: 0o17, plus: +5, float: .5, exp: 1e3, big: 18446744073709551615, yes: yes, on: on, t: True, n: ~, date: 2001-12-14, s: '007'}
`)
	q, _ := s.Question("a")
	want := `{"hex":31,"oct":15,"plus":5,"float":0.5,"exp":1e3,"big":18446744073709551615,"yes":"yes","on":"on","t":true,"n":null,"date":"2001-12-14","s":"007"}`
	if string(q.Instructions) != want {
		t.Errorf("\n got %s\nwant %s", q.Instructions, want)
	}
}

// TestRequestStripsCallerSettings: settings never reach the wire body.
func TestRequestStripsCallerSettings(t *testing.T) {
	s := mustParse(t, "s.yaml", designExample)
	body := requestJSON(t, s)
	for _, w := range []string{"threshold", "dataset", "gates", "fixtures", "support-triage"} {
		if strings.Contains(body, w) {
			t.Errorf("request carries %q: %s", w, body)
		}
	}
	r := s.Request(json.RawMessage(`{ "message" : "other" }`))
	if string(r.State) != `{"message":"other"}` {
		t.Errorf("state not compact: %s", r.State)
	}
	if s2 := mustParse(t, "s.yaml", "questions: {a: {type: noul}}\n"); s2.Request(nil).Model != provider.DefaultModel {
		t.Error("default model not applied")
	}
}

// TestEditInsideFlowStyle: entries added to a flow mapping or list are
// written in flow style too.
func TestEditInsideFlowStyle(t *testing.T) {
	s := mustParse(t, "f.yaml", "questions:\n  a: {type: choice, criteria: {x: null, y: null}}  # compact\n  b: {type: score, criteria: [lo, hi]}\n")
	if err := s.AddOption("a", "z", json.RawMessage(`{"what":"zed","ex":[1,2]}`), -1); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLevel("b", 1, provider.String("mid")); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "questions:\n  a: {type: choice, criteria: {x: null, y: null, z: {what: zed, ex: [1, 2]}}} # compact\n  b: {type: score, criteria: [lo, mid, hi]}\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestBareQuestionMap: a bare question map (banking77's questions.json
// shape) loads as a set and stays bare when edited, until it gains set
// fields.
func TestBareQuestionMap(t *testing.T) {
	in := "{\n  \"q\": {\"type\": \"choice\", \"criteria\": {\"a\": null, \"b\": \"bee\"}}\n}\n"
	s := mustParse(t, "questions.json", in)
	if out, _ := s.Marshal(); string(out) != in {
		t.Errorf("unchanged bare map: %s", out)
	}
	if err := s.RemoveOption("q", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddOption("q", "c", nil, -1); err != nil {
		t.Fatal(err)
	}
	out, _ := s.Marshal()
	want := "{\n  \"q\": {\n    \"type\": \"choice\",\n    \"criteria\": {\n      \"b\": \"bee\",\n      \"c\": null\n    }\n  }\n}\n"
	if string(out) != want {
		t.Errorf("edited bare map:\n%s", out)
	}
	s.Name = "now a set"
	out, _ = s.Marshal()
	if back := mustParse(t, "questions.json", string(out)); back.Name != "now a set" || len(back.Questions) != 1 {
		t.Errorf("bare map with a name:\n%s", out)
	}
	y := mustParse(t, "q.yaml", "# my questions\nq:   # the only one\n  type: noul\n")
	th := 0.6
	if err := y.SetThreshold("q", &th); err != nil {
		t.Fatal(err)
	}
	if out, _ := y.Marshal(); string(out) != "# my questions\nq: # the only one\n  type: noul\n  threshold: 0.6\n" {
		t.Errorf("bare YAML:\n%s", out)
	}
	// Not bare: a mapping whose values lack a type is still an error.
	if _, err := Parse("x.yaml", []byte("intent: {kind: choice}\n")); err == nil || !strings.Contains(err.Error(), "intent: unknown field") {
		t.Errorf("got %v", err)
	}
}

// TestSharedQuestionsJSON loads banking77's upstream questions.json (a
// bare question map) and checks it equals the shipped example's question.
func TestSharedQuestionsJSON(t *testing.T) {
	s, err := Load(filepath.Join(testutil.Testdata(t, "banking77"), "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Load(filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Question("intent")
	b, _ := ex.Question("intent")
	if provider.KeyFor("m", []byte(`"s"`), a) != provider.KeyFor("m", []byte(`"s"`), b) || len(a.Options) != 77 {
		t.Error("questions.json and the shipped set differ")
	}
}

// TestShippedExamplesAreFixedPoints: the example files jevlab wrote
// re-encode, through the node tree, to exactly their bytes.
func TestShippedExamplesAreFixedPoints(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "fixtures", "*", "questions.yaml"))
	if err != nil || len(paths) < 4 {
		t.Fatalf("examples: %v %v", paths, err)
	}
	for _, p := range paths {
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		s.orig = nil // bypass the unchanged-file shortcut
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) {
			t.Errorf("%s is not a fixed point of the emitter:\n%s", p, out)
		}
	}
}

// TestLevelCommentsFollowTheirLevel: inserting a level keeps each old
// level's comment on that level.
func TestLevelCommentsFollowTheirLevel(t *testing.T) {
	s := mustParse(t, "l.yaml", "questions:\n  a:\n    type: score\n    criteria:\n      - calm # no signs\n      - furious # shouting\n")
	if err := s.AddLevel("a", 1, provider.String("annoyed")); err != nil {
		t.Fatal(err)
	}
	out, _ := s.Marshal()
	want := "questions:\n  a:\n    type: score\n    criteria:\n      - calm # no signs\n      - annoyed\n      - furious # shouting\n"
	if string(out) != want {
		t.Errorf("got\n%s", out)
	}
	if err := s.SetLevel("a", 2, provider.String("livid")); err != nil {
		t.Fatal(err)
	}
	out, _ = s.Marshal()
	want = "questions:\n  a:\n    type: score\n    criteria:\n      - calm # no signs\n      - annoyed\n      - livid # shouting\n"
	if string(out) != want {
		t.Errorf("edit in place: got\n%s", out)
	}
}
