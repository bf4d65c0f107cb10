package questionset

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func opts(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "      o%d: null\n", i)
	}
	return b.String()
}

func levels(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "      - l%d\n", i)
	}
	return b.String()
}

// malformedSets are question sets with one kind of mistake each, and the
// exact message (with file:line:col) the loader must give. "" = valid.
var malformedSets = []struct{ name, file, in, want string }{
	{"bad yaml", "s.yaml", "questions:\n  a: [\n", "s.yaml:2: invalid YAML: did not find expected node content"},
	{"tab indent", "s.yaml", "questions:\n\ta:\n", "s.yaml:2: invalid YAML: found character that cannot start any token"},
	{"root list", "s.yaml", "- a\n- b\n", "s.yaml:1:1: a question set is a mapping with name, model, state and questions, not a list"},
	{"root scalar", "s.yaml", "hello\n", "s.yaml:1:1: a question set is a mapping with name, model, state and questions, not text"},
	{"empty", "s.yaml", "\n\n", "s.yaml:1:1: empty file; a question set needs questions:"},
	{"two docs", "s.yaml", "questions: {a: {type: noul}}\n---\nname: x\n", "s.yaml:2: more than one YAML document; a question set is one document"},
	{"no questions", "s.yaml", "name: x\n", "s.yaml:1:1: questions: missing; a question set needs at least one question"},
	{"questions empty", "s.yaml", "questions:\n", "s.yaml:1:11: questions: is empty; a question set needs at least one question"},
	{"questions list", "s.yaml", "questions:\n  - a\n", "s.yaml:2:3: questions: must be a mapping of question id to question, not a list"},
	{"questions empty map", "s.yaml", "questions: {}\n", "s.yaml:1:12: questions: is empty; a question set needs at least one question"},
	{"unknown top", "s.yaml", "qestions: {}\nquestions:\n  a: {type: noul}\n", "s.yaml:1:1: qestions: unknown field; did you mean questions?"},
	{"unknown top far", "s.yaml", "questions:\n  a: {type: noul}\ncolour: red\n", "s.yaml:3:1: colour: unknown field; a question set has name, model, state, questions, dataset, split, fixtures, gates, assets and danger_zone"},
	{"unknown question field", "s.yaml", "questions:\n  a:\n    type: choice\n    options: {x: null, y: null}\n", "s.yaml:4:5: question \"a\": options: unknown field; did you mean criteria?"},
	{"typo question field", "s.yaml", "questions:\n  a:\n    type: noul\n    instructons: hi\n", "s.yaml:4:5: question \"a\": instructons: unknown field; did you mean instructions?"},
	{"missing type", "s.yaml", "questions:\n  a:\n    instructions: hi\n", "s.yaml:2:3: question \"a\": type: missing; use noul, choice, score or box"},
	{"bad type", "s.yaml", "questions:\n  a:\n    type: boolean\n", "s.yaml:3:11: question \"a\": type: \"boolean\" is not a question type; use noul, choice, score or box"},
	{"typo type", "s.yaml", "questions:\n  a:\n    type: chioce\n", "s.yaml:3:11: question \"a\": type: \"chioce\" is not a question type; did you mean choice?"},
	{"type number", "s.yaml", "questions:\n  a:\n    type: 3\n", "s.yaml:3:11: question \"a\": type: must be text, not a number"},
	{"question scalar", "s.yaml", "questions:\n  a: noul\n", "s.yaml:2:6: question \"a\": must be a mapping with type, instructions and criteria, not text"},
	{"one option", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      only: null\n", "s.yaml:4:5: question \"a\": criteria: has 1 option(s); a choice needs at least 2"},
	{"256 options", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n" + opts(256), "s.yaml:4:5: question \"a\": criteria: has 256 options; a choice allows at most 255"},
	{"11 levels", "s.yaml", "questions:\n  a:\n    type: score\n    criteria:\n" + levels(11), "s.yaml:4:5: question \"a\": criteria: has 11 levels; a score allows at most 10"},
	{"1 level", "s.yaml", "questions:\n  a:\n    type: score\n    criteria: [only]\n", "s.yaml:4:5: question \"a\": criteria: has 1 level(s); a score needs at least 2"},
	{"empty label", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      \"\": null\n      b: null\n", "s.yaml:5:7: question \"a\": criteria[0]: option label is empty"},
	{"trailing space label", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      \"b \": null\n      c: null\n", "s.yaml:5:7: question \"a\": criteria.\"b \": option label has leading or trailing whitespace"},
	{"control label", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      \"b\\tc\": null\n      c: null\n", "s.yaml:5:7: question \"a\": criteria.\"b\\tc\": option label contains a control character"},
	{"dup question", "s.yaml", "questions:\n  a: {type: noul}\n  a: {type: noul}\n", "s.yaml:3:3: questions: duplicate question id \"a\" (first at line 2)"},
	{"dup option", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      x: null\n      x: one\n", "s.yaml:6:7: question \"a\": criteria: duplicate key \"x\" (first at line 5)"},
	{"dup top", "s.yaml", "name: a\nname: b\nquestions: {a: {type: noul}}\n", "s.yaml:2:1: duplicate key \"name\" (first at line 1)"},
	{"choice list criteria", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria: [x, y]\n", "s.yaml:4:5: question \"a\": criteria: a choice's criteria is an object mapping option labels to descriptions, not a list"},
	{"score map criteria", "s.yaml", "questions:\n  a:\n    type: score\n    criteria: {x: 1, y: 2}\n", "s.yaml:4:5: question \"a\": criteria: a score's criteria is an array of levels, lowest first, not an object"},
	{"criteria text", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria: billing\n", "s.yaml:4:15: question \"a\": criteria: must be a mapping of option label to description, not text"},
	{"noul maybe", "s.yaml", "questions:\n  a:\n    type: noul\n    criteria:\n      true: yes it is\n      maybe: unsure\n", "s.yaml:6:7: question \"a\": criteria.maybe: a noul's criteria keys are only \"true\" and \"false\""},
	{"noul list", "s.yaml", "questions:\n  a:\n    type: noul\n    criteria: [a, b]\n", "s.yaml:4:5: question \"a\": criteria: a noul's criteria is an object with keys \"true\"/\"false\", not a list"},
	{"null level", "s.yaml", "questions:\n  a:\n    type: score\n    criteria: [low, null, high]\n", "s.yaml:4:21: question \"a\": criteria[1]: is null; give text, an object or an array"},
	{"number level", "s.yaml", "questions:\n  a:\n    type: score\n    criteria: [low, 3]\n", "s.yaml:4:21: question \"a\": criteria[1]: must be a string, object or array, not a number"},
	{"bool instructions", "s.yaml", "questions:\n  a:\n    type: noul\n    instructions: true\n", "s.yaml:4:19: question \"a\": instructions: must be a string, object or array, not a boolean"},
	{"number description", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria: {x: 1, y: null}\n", "s.yaml:4:16: question \"a\": criteria.x: must be a string, object or array, not a number"},
	{"state number", "s.yaml", "state: 42\nquestions: {a: {type: noul}}\n", "s.yaml:1:8: state: must be a string, object or array, not a number"},
	{"state bool", "s.yaml", "state: true\nquestions: {a: {type: noul}}\n", "s.yaml:1:8: state: must be a string, object or array, not a boolean"},
	{"threshold high", "s.yaml", "questions:\n  a:\n    type: noul\n    threshold: 1.5\n", "s.yaml:4:16: question \"a\": threshold: 1.5 is outside [0, 1]"},
	{"threshold negative", "s.yaml", "questions:\n  a:\n    type: noul\n    threshold: -0.1\n", "s.yaml:4:16: question \"a\": threshold: -0.1 is outside [0, 1]"},
	{"threshold text", "s.yaml", "questions:\n  a:\n    type: noul\n    threshold: high\n", "s.yaml:4:16: question \"a\": threshold: must be a number, not text"},
	{"threshold on choice", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria: {x: null, y: null}\n    threshold: 0.5\n", "s.yaml:5:5: question \"a\": threshold: only a noul has a threshold; a choice's decision is its top option"},
	{"min_confidence on noul", "s.yaml", "questions:\n  a:\n    type: noul\n    min_confidence: 0.5\n", "s.yaml:4:5: question \"a\": min_confidence: a noul has no confidence; use threshold instead"},
	{"model number", "s.yaml", "model: 7\nquestions: {a: {type: noul}}\n", "s.yaml:1:8: model: must be text, not a number"},
	{"model empty", "s.yaml", "model: \"\"\nquestions: {a: {type: noul}}\n", "s.yaml:1:8: model: is empty; name a model such as jev-latest, or remove the field"},
	{"name list", "s.yaml", "name: [a]\nquestions: {a: {type: noul}}\n", "s.yaml:1:7: name: must be text, not a list"},
	{"fixtures map", "s.yaml", "fixtures: {a: b}\nquestions: {a: {type: noul}}\n", "s.yaml:1:11: fixtures: must be a path or a list of paths"},
	{"gates unknown question", "s.yaml", "questions: {queue: {type: noul}}\ngates:\n  queu: {min_accuracy: 0.8}\n", "s.yaml:3:3: gates: no question \"queu\"; did you mean queue?"},
	{"gates unknown field", "s.yaml", "questions: {a: {type: noul}}\ngates:\n  \"*\": {min_acuracy: 0.8}\n", "s.yaml:3:9: gates.*.min_acuracy: unknown field; did you mean min_accuracy?"},
	{"gates out of range", "s.yaml", "questions: {a: {type: noul}}\ngates:\n  \"*\": {max_ece: 2}\n", "s.yaml:3:18: gates.*.max_ece: 2 is outside [0, 1]"},
	{"null key", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      ~: x\n      b: y\n", "s.yaml:5:7: question \"a\": criteria: a key must be text, not null; quote it if you mean the word"},
	{"list key", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      ? [x]\n      : y\n      b: z\n", "s.yaml:5:9: question \"a\": criteria: a key must be text, not a list or mapping"},
	{"number key", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria:\n      1: one\n      2: two\n", "s.yaml:5:7: question \"a\": criteria: a key must be text, not a number; quote it: \"1\""},
	{"star id", "s.yaml", "questions:\n  \"*\": {type: noul}\n", "s.yaml:2:3: questions: \"*\" cannot be a question id: it means every question in gates"},
	{"base url", "s.yaml", "base_url: http://evil.example\nquestions: {a: {type: noul}}\n", "s.yaml:1:1: base_url: a question set cannot choose the server or the key (your API key goes only where you send it); use --base-url and TYPESAFE_API_KEY"},
	{"only a comment", "s.yaml", "# nothing yet\n", "s.yaml:1:1: empty file; a question set needs questions:"},
	{"infinity", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria: {x: .inf, y: null}\n", "s.yaml:4:19: question \"a\": criteria.x: number .inf cannot be represented in JSON (no infinities or NaN)"},
	{"empty id", "s.yaml", "questions:\n  \"\": {type: noul}\n", "s.yaml:2:3: questions: a question id must not be empty"},
	{"custom tag", "s.yaml", "questions:\n  a:\n    type: noul\n    instructions: !foo bar\n", "s.yaml:4:19: question \"a\": instructions: unsupported tag !foo; use plain JSON-compatible values"},
	{"json syntax", "s.json", "{\"questions\": {\"a\": {\"type\": \"noul\",}}}", "s.json:1:37: invalid JSON: unexpected character looking for beginning of object key string"},
	{"json trailing", "s.json", "{\"questions\": {\"a\": {\"type\": \"noul\"}}} x", "s.json:1:40: unexpected data after the JSON value"},
	{"json truncated", "s.json", "{\"questions\": {\"a\": {\"type\": \"noul\"}", "s.json:1:37: invalid JSON: unexpected end of JSON"},
	{"json wire extra field", "s.json", "{\"model\": \"jev-latest\", \"state\": \"x\", \"questions\": {\"a\": {\"type\": \"noul\"}}, \"temperature\": 0}", "s.json:1:77: temperature: unknown field; a question set has name, model, state, questions, dataset, split, fixtures, gates, assets and danger_zone"},
	{"json one option", "s.json", "{\n  \"questions\": {\n    \"a\": {\"type\": \"choice\", \"criteria\": {\"x\": null}}\n  }\n}\n", "s.json:3:29: question \"a\": criteria: has 1 option(s); a choice needs at least 2"},
	{"json dup id", "s.json", "{\"questions\": {\"a\": {\"type\": \"noul\"},\n \"a\": {\"type\": \"noul\"}}}", "s.json:2:2: questions: duplicate question id \"a\" (first at line 1)"},
	{"json state null", "s.json", "{\"state\": null, \"questions\": {\"a\": {\"type\": \"noul\"}}}", ""},
	{"multiple errors", "s.yaml", "questions:\n  a:\n    type: choice\n    criteria: {x: null}\n  b:\n    type: score\n    criteria: [a]\n", "s.yaml:4:5: question \"a\": criteria: has 1 option(s); a choice needs at least 2\ns.yaml:7:5: question \"b\": criteria: has 1 level(s); a score needs at least 2"},
}

func TestMalformedSets(t *testing.T) {
	for _, c := range malformedSets {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.file, []byte(c.in))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("\n got %q\nwant %q", got, c.want)
			}
			if c.want != "" {
				var el ErrorList
				if !errors.As(err, &el) || len(el) == 0 || el[0].File != c.file {
					t.Errorf("error is not an ErrorList naming %s: %#v", c.file, err)
				}
			}
		})
	}
}

// TestAliasBomb: aliases that expand past any sendable size are refused
// quickly instead of exhausting memory.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [\"" + strings.Repeat("x", 64) + "\"]\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1)
	}
	in := "questions:\n  q:\n    type: noul\n    instructions:\n      " + strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", "\n      ") + "\n"
	_, err := Parse("bomb.yaml", []byte(in))
	if err == nil || !strings.Contains(err.Error(), "expands to more than 16 MB through aliases") {
		t.Fatalf("got %v", err)
	}
}
