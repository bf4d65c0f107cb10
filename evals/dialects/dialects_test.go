package dialects

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/lzstring"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func f(x float64) *float64 { return &x }

// wire returns the set's request body with the working state.
func wire(t *testing.T, s *questionset.Set) string {
	t.Helper()
	b, err := s.Request(nil).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// importCase is one successful import with its hand-written expectation.
type importCase struct {
	name     string
	dialect  Dialect
	file     string // under testdata
	input    string // used when file is ""
	wantWire string // compact request body (model defaults to jev-latest)
	wantName string
	wantSet  map[string]questionset.Settings
	notes    []string // substrings, one per note, in order
}

var importCases = []importCase{
	{
		name: "dialects.md §1 Standard Agents example", dialect: StandardAgents, file: "standard-agents.json",
		wantWire: `{"model":"jev-latest","state":{"ticket":"My card was charged twice"},"questions":{` +
			`"team":{"type":"choice","instructions":"Which team handles this?","criteria":{"billing":"Charges and refunds","orders":null}},` +
			`"anger":{"type":"score","instructions":"How upset is the customer?","criteria":["calm",{"summary":"annoyed"},"furious"]},` +
			`"refund":{"type":"noul","instructions":"Does the customer ask for a refund?","criteria":{"true":"asks for money back"}}}}`,
	},
	{
		name: "Standard Agents string context, option order kept", dialect: StandardAgents,
		input: `{"context":"late again","questions":{"q":{"type":"choice","instructions":["pick",{"focus":"x"}],` +
			`"options":{"zeta":null,"alpha":"first letter","mid":{"what":"m"}}}}}`,
		wantWire: `{"model":"jev-latest","state":"late again","questions":{"q":{"type":"choice","instructions":["pick",{"focus":"x"}],` +
			`"criteria":{"zeta":null,"alpha":"first letter","mid":{"what":"m"}}}}}`,
	},
	{
		name: "dialects.md §2 assistant-runtime example", dialect: AssistantRuntime, file: "assistant-runtime.json",
		wantWire: `{"model":"jev-latest","state":{"conversation":[{"speaker":"user","text":"can you clap"}],"body":"at rest"},"questions":{` +
			`"intent":{"type":"choice","instructions":"Is the latest user line a request for a movement?","criteria":{"explicit":{"what":"asks for a movement","examples":["can you wave"]},"incidental":{"what":"mentions a movement in passing"},"none":null}},` +
			`"start":{"type":"noul","instructions":"Should a new gesture start now?","criteria":{"true":{"examples":["wave please"]},"false":{"examples":["hello there"]}}},` +
			`"energy":{"type":"score","instructions":"How much energy does the moment call for?","criteria":["still","calm","lively","playful"]}}}`,
		notes: []string{`profile "robot" is the runtime's own and is not sent to the provider`},
	},
	{
		name: "dialects.md §3 Noetic routeSwitch example", dialect: Noetic, file: "noetic-routeswitch.json",
		wantWire: `{"model":"jev-latest","state":null,"questions":{` +
			`"team":{"type":"choice","instructions":{"context":"You are triaging support tickets.","question":"Which team?"},"criteria":{"billing":"Charges and refunds","orders":"Delivery"}},` +
			`"tier":{"type":"score","instructions":{"context":"You are triaging support tickets."},"criteria":[{"label":"low","description":"can wait"},{"label":"high","description":"today"}]},` +
			`"refund":{"type":"noul","instructions":{"context":"You are triaging support tickets."},"criteria":{"true":"asks for money back"}}}}`,
		wantName: "triage",
		wantSet: map[string]questionset.Settings{
			"team":   {MinConfidence: f(0.6)},
			"refund": {Threshold: f(0.7)},
		},
		notes: []string{
			`decide node "ask" has its own instructions ("You are triaging support tickets."), which frame every question; the System One API has no slot for them, so each question's instructions here is {"context": <the node's instructions>, "question": <the question's own instructions>}`,
			`routeSwitch "triage" routes on the outcome of question "team": billing → runCode "b"; orders → runCode "o"; uncertain (the answer is refused, or its confidence is under 0.6: kept as min_confidence on "team") → runCode "human"`,
		},
	},
	{
		name: "Noetic DecideQuestions map: choices array, plain levels, boolean with criteria only", dialect: Noetic,
		input: `{"c":{"type":"choice","choices":["yes","no","unsure"]},` +
			`"s":{"type":"score","instructions":"rate","levels":["lo",{"label":"mid"},{"label":"hi","description":"very"}]},` +
			`"b":{"type":"boolean","criteria":{"false":"nothing is asked"}}}`,
		wantWire: `{"model":"jev-latest","state":null,"questions":{` +
			`"c":{"type":"choice","criteria":{"yes":null,"no":null,"unsure":null}},` +
			`"s":{"type":"score","instructions":"rate","criteria":["lo","mid",{"label":"hi","description":"very"}]},` +
			`"b":{"type":"noul","criteria":{"false":"nothing is asked"}}}}`,
	},
	{
		name: "Noetic decide node with model, samples and structured instructions", dialect: Noetic,
		input: `{"kind":"decide","id":"d","model":"jev-1.13.0","samples":5,"instructions":{"role":"triage"},` +
			`"questions":{"b":{"type":"boolean","instructions":"Urgent?","threshold":0.25}}}`,
		wantWire: `{"model":"jev-1.13.0","state":null,"questions":{"b":{"type":"noul","instructions":{"context":{"role":"triage"},"question":"Urgent?"}}}}`,
		wantName: "d",
		wantSet:  map[string]questionset.Settings{"b": {Threshold: f(0.25)}},
		notes:    []string{`sets samples 5; samples apply only when a chat model estimates the probabilities`, `decide node "d" has its own instructions ("{\"role\":\"triage\"}")`},
	},
	{
		name: "Noetic routeSwitch on a boolean with minConfidence", dialect: Noetic,
		input: `{"kind":"routeSwitch","id":"r","decide":{"kind":"decide","questions":{"b":{"type":"boolean","instructions":"Urgent?"}}},` +
			`"on":"b","minConfidence":0.8,"cases":{"true":{"kind":"runCode","id":"page"},"false":{"kind":"runCode","id":"queue","retries":2}}}`,
		wantWire: `{"model":"jev-latest","state":null,"questions":{"b":{"type":"noul","instructions":"Urgent?"}}}`,
		wantName: "r",
		notes:    []string{`routeSwitch "r" routes on the outcome of question "b": true → runCode "page"; false → runCode "queue" (with retries); the uncertain branch (the answer is refused, or its confidence is under 0.8: this cannot apply, because a System One noul answer has no confidence, so jevlab keeps no min_confidence for "b") has no node.`},
	},
}

func TestImport(t *testing.T) {
	for _, c := range importCases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.input)
			if c.file != "" {
				data = readFile(t, c.file)
			}
			im, err := Import(c.dialect, "in.json", data)
			if err != nil {
				t.Fatal(err)
			}
			if got := wire(t, im.Set); got != c.wantWire {
				t.Errorf("wire request\n got %s\nwant %s", got, c.wantWire)
			}
			if im.Set.Name != c.wantName {
				t.Errorf("name %q, want %q", im.Set.Name, c.wantName)
			}
			checkSettings(t, im.Set.Settings, c.wantSet)
			if len(im.Notes) != len(c.notes) {
				t.Fatalf("notes %q, want %d", im.Notes, len(c.notes))
			}
			for i, n := range c.notes {
				if !strings.Contains(im.Notes[i], n) {
					t.Errorf("note %d\n got %s\nwant it to contain %s", i, im.Notes[i], n)
				}
			}
			checkFileRoundTrip(t, im, c.dialect)
		})
	}
}

func checkSettings(t *testing.T, got, want map[string]questionset.Settings) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("settings %v, want %v", got, want)
		return
	}
	for id, w := range want {
		g := got[id]
		if !eqp(g.Threshold, w.Threshold) || !eqp(g.MinConfidence, w.MinConfidence) {
			t.Errorf("settings[%s] = %s, want %s", id, fmtSettings(g), fmtSettings(w))
		}
	}
}

func eqp(a, b *float64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

func fmtSettings(s questionset.Settings) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// checkFileRoundTrip writes the imported file and loads it back as a
// question set: same wire request, same settings, notes kept as comments.
func checkFileRoundTrip(t *testing.T, im *Imported, d Dialect) {
	t.Helper()
	out, err := im.Marshal(d, "in.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "# Imported by jevlab from in.json ("+string(d)+").\n") {
		t.Errorf("no provenance header:\n%s", out)
	}
	for _, n := range im.Notes {
		if !strings.Contains(string(out), "# Note: "+n) {
			t.Errorf("note missing from the file: %s", n)
		}
	}
	back, err := questionset.Parse("imported.yaml", out)
	if err != nil {
		t.Fatalf("imported file does not load: %v\n%s", err, out)
	}
	if g, w := wire(t, back), wire(t, im.Set); g != w {
		t.Errorf("reloaded wire request differs\n got %s\nwant %s", g, w)
	}
	checkSettings(t, back.Settings, im.Set.Settings)
	again, err := back.Marshal()
	if err != nil || string(again) != string(out) {
		t.Errorf("load-then-save changed the file (err %v)", err)
	}
}

// failCase is an import that must fail with a message naming the problem.
type failCase struct {
	name    string
	dialect Dialect
	input   string
	want    string // the whole error message
}

var failCases = []failCase{
	// Standard Agents
	{"SA instructions missing", StandardAgents,
		`{"questions":{"q":{"type":"boolean"}}}`,
		`in.json: standard-agents: questions.q.instructions: missing; the Standard Agents spec requires instructions for every question`},
	{"SA noul type", StandardAgents,
		`{"questions":{"q":{"type":"noul","instructions":"x"}}}`,
		`in.json: standard-agents: questions.q.type: "noul" is the System One name; the Standard Agents spec calls it "boolean" (or import this file with --from assistant-runtime)`},
	{"SA criteria on a choice", StandardAgents,
		`{"questions":{"q":{"type":"choice","instructions":"x","criteria":{"a":null,"b":null}}}}`,
		`in.json: standard-agents: questions.q.criteria: unknown field of a Standard Agents choice question; it has no equivalent in a jevlab question set (known fields: instructions, options, type)`},
	{"SA numeric context", StandardAgents,
		`{"context":42,"questions":{"q":{"type":"boolean","instructions":"x"}}}`,
		`in.json: standard-agents: context: must be a string, object or array (System One state), not a number`},
	{"SA eleven levels", StandardAgents,
		`{"questions":{"q":{"type":"score","instructions":"x","levels":["0","1","2","3","4","5","6","7","8","9","10"]}}}`,
		`in.json: standard-agents: questions.q: cannot be sent to a System One server: criteria: has 11 levels; a score allows at most 10`},
	{"SA unknown top-level field", StandardAgents,
		`{"questions":{},"temperature":0}`,
		`in.json: standard-agents: temperature: unknown field of a DecisionQuestions request; it has no equivalent in a jevlab question set (known fields: context, model, questions)`},
	{"SA duplicate question id", StandardAgents,
		`{"questions":{"q":{"type":"boolean","instructions":"x"},"q":{"type":"boolean","instructions":"y"}}}`,
		`in.json: standard-agents: questions.q: duplicate key; one of the two values would be lost`},
	// assistant-runtime
	{"runtime single-option choice", AssistantRuntime,
		`{"state":"s","questions":{"c":{"type":"choice","criteria":{"only":null}}}}`,
		`in.json: assistant-runtime: questions.c: cannot be sent to a System One server: criteria: has 1 option(s); a choice needs at least 2`},
	{"runtime caller-side field in a question", AssistantRuntime,
		`{"state":"s","questions":{"n":{"type":"noul","threshold":0.7}}}`,
		`in.json: assistant-runtime: questions.n: threshold: unknown field; a question has only type, instructions and criteria`},
	{"runtime model field", AssistantRuntime,
		`{"model":"jev-latest","state":"s","questions":{}}`,
		`in.json: assistant-runtime: model: unknown field of an assistant-runtime /api/decisions body; it has no equivalent in a jevlab question set (known fields: profile, questions, state)`},
	{"runtime not an object", AssistantRuntime,
		`["state"]`,
		`in.json: assistant-runtime: must be a JSON object, not a array`},
	// Noetic
	{"Noetic single-value choice (array)", Noetic,
		`{"c":{"type":"choice","instructions":"x","choices":["only"]}}`,
		`in.json: noetic: c.choices: has a single value ("only"); Noetic allows that, but a System One server needs at least two options; add one (for example "other") and import again`},
	{"Noetic single-value choice (record) in a decide node", Noetic,
		`{"kind":"decide","id":"d","questions":{"c":{"type":"choice","choices":{"only":"the one"}}}}`,
		`in.json: noetic: questions.c.choices: has a single value ("only"); Noetic allows that, but a System One server needs at least two options; add one (for example "other") and import again`},
	{"Noetic duplicate choice", Noetic,
		`{"c":{"type":"choice","choices":["a","b","a"]}}`,
		`in.json: noetic: c.choices[2]: duplicate choice "a"; Noetic choices are unique`},
	{"Noetic duplicate level label", Noetic,
		`{"s":{"type":"score","levels":[{"label":"low"},"low"]}}`,
		`in.json: noetic: s.levels[1]: duplicate level label "low"; Noetic level labels are unique`},
	{"Noetic bare boolean", Noetic,
		`{"b":{"type":"boolean","criteria":{"true":""}}}`,
		`in.json: noetic: b: a Noetic boolean needs instructions or a criteria description, and this one has neither`},
	{"Noetic threshold on a choice", Noetic,
		`{"c":{"type":"choice","choices":["a","b"],"threshold":0.5}}`,
		`in.json: noetic: c.threshold: unknown field of a Noetic choice question; it has no equivalent in a jevlab question set (known fields: choices, instructions, type)`},
	{"Noetic threshold out of range", Noetic,
		`{"b":{"type":"boolean","instructions":"x","threshold":1.5}}`,
		`in.json: noetic: b.threshold: 1.5 is outside [0, 1]`},
	{"Noetic routeSwitch on an unknown question", Noetic,
		`{"kind":"routeSwitch","id":"r","decide":{"kind":"decide","questions":{"b":{"type":"boolean","instructions":"x"}}},"on":"team"}`,
		`in.json: noetic: on: names question "team", which the decide node does not ask (it asks b)`},
	{"Noetic routeSwitch case that is not an outcome", Noetic,
		`{"kind":"routeSwitch","decide":{"kind":"decide","questions":{"s":{"type":"score","levels":[{"label":"low","description":"d"},"high"]}}},"on":"s","cases":{"medium":{"kind":"runCode"}}}`,
		`in.json: noetic: cases.medium: is not an outcome of question "s" (its outcomes are low, high)`},
	{"Noetic node without questions", Noetic,
		`{"kind":"runCode","id":"x"}`,
		`in.json: noetic: kind: a Noetic "runCode" node asks no questions; import a decide or routeSwitch node, or a DecideQuestions map`},
	{"Noetic level without a label", Noetic,
		`{"s":{"type":"score","levels":[{"description":"d"},"high"]}}`,
		`in.json: noetic: s.levels[0].label: missing; every Noetic level has a label`},
	{"Noetic empty question id", Noetic,
		`{"":{"type":"choice","choices":["a","b"]}}`,
		`in.json: noetic: [""]: a question id must not be empty; give the question a name`},
	// Playground
	{"Playground link without a share fragment", Playground,
		`https://console.typesafe.ai/playground`,
		`in.json: playground: "https://console.typesafe.ai/playground" is a link without a #share/ fragment; copy the Playground's share link`},
	{"Playground truncated payload", Playground,
		`https://console.typesafe.ai/playground#share/N4IgJg9gxgrgtgUwHYBcAqCAeKQC4AEIwAOiFADYCGAlnKQSSAA`,
		`in.json: playground: decode share payload (is the link complete?): lz-string payload is corrupt: stream ends without its end marker (truncated link?)`},
	{"Playground character outside the alphabet", Playground,
		`#share/abc*def`,
		`in.json: playground: decode share payload (is the link complete?): lz-string payload is corrupt: character '*' at offset 3 is not in the URI-safe alphabet`},
}

func TestImportFailures(t *testing.T) {
	// Payloads built here: the codec is tested against npm separately.
	share := func(json string) string { return PlaygroundURL + lzstring.CompressToEncodedURIComponent(json) }
	cases := append([]failCase(nil), failCases...)
	cases = append(cases,
		failCase{"Playground apiVersion v2", Playground, share(`{"apiVersion":"v2","documentText":"","promptsText":"{}"}`),
			`in.json: playground: payload.apiVersion: "v2": jevlab reads apiVersion v1 share links only`},
		failCase{"Playground invalid question", Playground, share(`{"apiVersion":"v1","documentText":"x","promptsText":"{\"q\":{\"type\":\"boolean\"}}"}`),
			`in.json: playground: promptsText.q: type: "boolean" is not a question type; use noul, choice, score or box`},
		failCase{"Playground promptsText not JSON", Playground, share(`{"apiVersion":"v1","documentText":"x","promptsText":"[1,"}`),
			`in.json: playground: payload.promptsText: invalid JSON: unexpected end of JSON input`},
		failCase{"Playground promptsText an array", Playground, share(`{"apiVersion":"v1","documentText":"x","promptsText":"[1]"}`),
			`in.json: playground: payload.promptsText: must be a JSON object, not a array`},
		failCase{"Playground no questions", Playground, share(`{"apiVersion":"v1","documentText":"x","promptsText":"{}"}`),
			`in.json: playground: payload.promptsText: holds no questions; a System One request needs at least one`},
		failCase{"Playground unknown payload field", Playground, share(`{"apiVersion":"v1","promptsText":"{}","temperature":1}`),
			`in.json: playground: payload.temperature: unknown field of a Playground share payload; it has no equivalent in a jevlab question set (known fields: apiVersion, documentText, promptsText, selectedModels)`},
	)
	seen := map[Dialect]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import(c.dialect, "in.json", []byte(c.input))
			if err == nil {
				t.Fatal("import succeeded")
			}
			var ie *Error
			if !errors.As(err, &ie) || ie.Dialect != c.dialect {
				t.Errorf("error %T %v is not a *dialects.Error for %s", err, err, c.dialect)
			}
			if err.Error() != c.want {
				t.Errorf("error\n got %s\nwant %s", err, c.want)
			}
		})
		seen[c.dialect]++
	}
	for _, d := range Dialects() {
		if seen[d] == 0 {
			t.Errorf("no failure case for %s", d)
		}
	}
}

func TestParseDialect(t *testing.T) {
	for _, d := range Dialects() {
		if got, err := ParseDialect(string(d)); err != nil || got != d {
			t.Errorf("ParseDialect(%q) = %q, %v", d, got, err)
		}
	}
	_, err := ParseDialect("langchain")
	want := `unknown dialect "langchain"; use one of standard-agents, assistant-runtime, noetic, playground`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestLevelLabel(t *testing.T) {
	cases := map[string]string{
		`"calm"`: "calm",
		`{"label":"low","description":"can wait"}`: "low",
		`{"summary":"annoyed"}`:                    `{"summary":"annoyed"}`,
		`["a","b"]`:                                `["a","b"]`,
	}
	for in, want := range cases {
		if got := LevelLabel(json.RawMessage(in)); got != want {
			t.Errorf("LevelLabel(%s) = %q, want %q", in, got, want)
		}
	}
}

// YAML sources are read with key order and number spelling kept.
func TestImportYAMLSource(t *testing.T) {
	src := `# a Noetic decide node written in YAML
kind: decide
id: ask
questions:
  tier:
    type: score
    levels:
      - {label: low, description: can wait}
      - label: high
  refund:
    type: boolean
    instructions: Refund?
    threshold: 0.70
  team:
    type: choice
    choices: [zeta, alpha]
`
	im, err := Import(Noetic, "node.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"jev-latest","state":null,"questions":{` +
		`"tier":{"type":"score","criteria":[{"label":"low","description":"can wait"},"high"]},` +
		`"refund":{"type":"noul","instructions":"Refund?"},` +
		`"team":{"type":"choice","criteria":{"zeta":null,"alpha":null}}}}`
	if got := wire(t, im.Set); got != want {
		t.Errorf("wire\n got %s\nwant %s", got, want)
	}
	checkSettings(t, im.Set.Settings, map[string]questionset.Settings{"refund": {Threshold: f(0.7)}})

	bad := []struct{ in, want string }{
		{"a: [1, 2\n", "in.yaml: noetic: neither JSON nor YAML: yaml: line 1: did not find expected ',' or ']'"},
		{"{\"a\": [}", `in.yaml: noetic: invalid JSON: invalid character '}' looking for beginning of value`},
		{"a: {type: boolean, instructions: x}\na: {type: boolean, instructions: y}\n", `in.yaml: noetic: line 2: duplicate key "a" (first at line 1)`},
		{"1: {type: boolean, instructions: x}\n", `in.yaml: noetic: line 1: a key must be text, not a number; quote it: "1"`},
		{"a: &x [*x]\n", "in.yaml: noetic: line 1: nested more than 512 levels deep"},
		{"   \n", "in.yaml: noetic: the source is empty"},
	}
	for _, c := range bad {
		_, err := Import(Noetic, "in.yaml", []byte(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("Import(%q) error\n got %v\nwant %s", c.in, err, c.want)
		}
	}
}

// A YAML source may share fields through an anchor and a merge key (<<),
// as question-set files may: the question's own fields come first, then the
// merged ones it does not set.
func TestImportYAMLMergeKeys(t *testing.T) {
	src := `urgent: &base
  type: boolean
  instructions: Is it urgent?
angry:
  <<: *base
  instructions: Is the customer angry?
`
	im, err := Import(Noetic, "node.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"jev-latest","state":null,"questions":{` +
		`"urgent":{"type":"noul","instructions":"Is it urgent?"},` +
		`"angry":{"type":"noul","instructions":"Is the customer angry?"}}}`
	if got := wire(t, im.Set); got != want {
		t.Errorf("wire\n got %s\nwant %s", got, want)
	}
}
