package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// decodeValidate decodes body as a request and validates it with lim.
func decodeValidate(body string, lim Limits) error {
	var r Request
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return err
	}
	return r.ValidateWith(lim)
}

// reqWith wraps one question body under id "q" in a request.
func reqWith(q string) string {
	return `{"model":"jev-latest","state":"s","questions":{"q":` + q + `}}`
}

// options returns a choice criteria object with n options o0..o(n-1).
func options(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"o%d":null`, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// levels returns a score criteria array of n levels.
func levels(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"level %d"`, i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestValidateTable(t *testing.T) {
	cases := []struct {
		name string
		body string
		lim  Limits
		// want lists substrings of the error; empty means valid.
		want []string
	}{
		// at least one question
		{"one question", reqWith(`{"type":"noul"}`), Limits{}, nil},
		{"empty questions", `{"model":"m","state":"s","questions":{}}`, Limits{}, []string{"questions: at least one question is required"}},
		{"absent questions", `{"model":"m","state":"s"}`, Limits{}, []string{"questions: at least one question is required"}},
		{"model missing", `{"state":"s","questions":{"q":{"type":"noul"}}}`, Limits{}, []string{"model: missing"}},

		// state
		{"state string", `{"model":"m","state":"text","questions":{"q":{"type":"noul"}}}`, Limits{}, nil},
		{"state empty string", `{"model":"m","state":"","questions":{"q":{"type":"noul"}}}`, Limits{}, nil},
		{"state object", `{"model":"m","state":{"a":{"b":[1,2]}},"questions":{"q":{"type":"noul"}}}`, Limits{}, nil},
		{"state array", `{"model":"m","state":["a","b"],"questions":{"q":{"type":"noul"}}}`, Limits{}, nil},
		{"legacy document", `{"model":"m","document":"text","questions":{"q":{"type":"noul"}}}`, Limits{}, nil},
		{"state null", `{"model":"m","state":null,"questions":{"q":{"type":"noul"}}}`, Limits{}, []string{"state: is null"}},
		{"state number", `{"model":"m","state":42,"questions":{"q":{"type":"noul"}}}`, Limits{}, []string{"state: must be a string, object or array, not a number"}},
		{"state bool", `{"model":"m","state":true,"questions":{"q":{"type":"noul"}}}`, Limits{}, []string{"state: must be a string, object or array, not a boolean"}},
		{"state absent", `{"model":"m","questions":{"q":{"type":"noul"}}}`, Limits{}, []string{"state: missing"}},

		// instructions
		{"instructions string", reqWith(`{"type":"noul","instructions":"Is it?"}`), Limits{}, nil},
		{"instructions object", reqWith(`{"type":"noul","instructions":{"question":"Is it?","focus":"x"}}`), Limits{}, nil},
		{"instructions array", reqWith(`{"type":"noul","instructions":["a","b"]}`), Limits{}, nil},
		{"instructions null", reqWith(`{"type":"noul","instructions":null}`), Limits{}, nil},
		{"instructions number", reqWith(`{"type":"noul","instructions":3}`), Limits{}, []string{`question "q": instructions: must be a string, object or array, not a number`}},
		{"instructions bool", reqWith(`{"type":"noul","instructions":false}`), Limits{}, []string{`question "q": instructions: must be a string, object or array, not a boolean`}},

		// choice options 2..255
		{"choice 2 options", reqWith(`{"type":"choice","criteria":` + options(2) + `}`), Limits{}, nil},
		{"choice 255 options", reqWith(`{"type":"choice","criteria":` + options(255) + `}`), Limits{}, nil},
		{"choice 1 option", reqWith(`{"type":"choice","criteria":` + options(1) + `}`), Limits{}, []string{`question "q": criteria: has 1 option(s); a choice needs at least 2`}},
		{"choice 0 options", reqWith(`{"type":"choice","criteria":{}}`), Limits{}, []string{`question "q": criteria: has 0 option(s)`}},
		{"choice no criteria", reqWith(`{"type":"choice","instructions":"x"}`), Limits{}, []string{`question "q": criteria: has 0 option(s)`}},
		{"choice null criteria", reqWith(`{"type":"choice","criteria":null}`), Limits{}, []string{`question "q": criteria: has 0 option(s)`}},
		{"choice 256 options", reqWith(`{"type":"choice","criteria":` + options(256) + `}`), Limits{}, []string{`question "q": criteria: has 256 options; a choice allows at most 255`}},
		{"choice descriptions", reqWith(`{"type":"choice","criteria":{"a":"text","b":{"what":"x","not_for":"y"},"c":["e1"],"d":null}}`), Limits{}, nil},
		{"choice description number", reqWith(`{"type":"choice","criteria":{"a":1,"b":null}}`), Limits{}, []string{`question "q": criteria.a: must be a string, object or array, not a number`}},

		// labels
		{"label inner space and unicode", reqWith(`{"type":"choice","criteria":{"two words":null,"café ☕":null}}`), Limits{}, nil},
		{"label empty", reqWith(`{"type":"choice","criteria":{"":null,"b":null}}`), Limits{}, []string{`question "q": criteria[0]: option label is empty`}},
		{"label leading space", reqWith(`{"type":"choice","criteria":{" a":null,"b":null}}`), Limits{}, []string{`question "q": criteria. a: option label has leading or trailing whitespace`}},
		{"label trailing space", reqWith(`{"type":"choice","criteria":{"a":null,"b ":null}}`), Limits{}, []string{`question "q": criteria.b : option label has leading or trailing whitespace`}},
		{"label trailing nbsp", reqWith(`{"type":"choice","criteria":{"a\u00a0":null,"b":null}}`), Limits{}, []string{`option label has leading or trailing whitespace`}},
		{"label newline inside", reqWith(`{"type":"choice","criteria":{"a\nb":null,"b":null}}`), Limits{}, []string{`question "q": criteria.a` + "\n" + `b: option label contains a control character`}},
		{"label escape char", reqWith(`{"type":"choice","criteria":{"a\u001bb":null,"b":null}}`), Limits{}, []string{`option label contains a control character`}},
		{"label C1 control", reqWith(`{"type":"choice","criteria":{"a\u0080b":null,"b":null}}`), Limits{}, []string{`option label contains a control character`}},
		{"label duplicate", reqWith(`{"type":"choice","criteria":{"a":null,"a":"again"}}`), Limits{}, []string{`question "q": criteria.a: duplicate option label`}},

		// score levels 2..10
		{"score 2 levels", reqWith(`{"type":"score","criteria":` + levels(2) + `}`), Limits{}, nil},
		{"score 10 levels", reqWith(`{"type":"score","criteria":` + levels(10) + `}`), Limits{}, nil},
		{"score structured levels", reqWith(`{"type":"score","criteria":[{"summary":"low"},["a"],"high"]}`), Limits{}, nil},
		{"score 1 level", reqWith(`{"type":"score","criteria":` + levels(1) + `}`), Limits{}, []string{`question "q": criteria: has 1 level(s); a score needs at least 2`}},
		{"score 11 levels", reqWith(`{"type":"score","criteria":` + levels(11) + `}`), Limits{}, []string{`question "q": criteria: has 11 levels; a score allows at most 10`}},
		{"score no criteria", reqWith(`{"type":"score"}`), Limits{}, []string{`question "q": criteria: has 0 level(s)`}},
		{"score null level", reqWith(`{"type":"score","criteria":["low",null,"high"]}`), Limits{}, []string{`question "q": criteria[1]: is null`}},
		{"score number level", reqWith(`{"type":"score","criteria":["low",2]}`), Limits{}, []string{`question "q": criteria[1]: must be a string, object or array, not a number`}},
		{"score object criteria", reqWith(`{"type":"score","criteria":{"0":"low","1":"high"}}`), Limits{}, []string{`question "q": criteria: must be an array of levels`}},

		// noul criteria keys only true/false
		{"noul both criteria", reqWith(`{"type":"noul","criteria":{"true":"yes","false":{"what":"no"}}}`), Limits{}, nil},
		{"noul one criterion", reqWith(`{"type":"noul","criteria":{"false":"no"}}`), Limits{}, nil},
		{"noul null criteria entries", reqWith(`{"type":"noul","criteria":{"true":null,"false":null}}`), Limits{}, nil},
		{"noul null criteria", reqWith(`{"type":"noul","criteria":null}`), Limits{}, nil},
		{"noul other key", reqWith(`{"type":"noul","criteria":{"true":"y","yes":"y"}}`), Limits{}, []string{`question "q": criteria.yes: a noul's criteria keys are only "true" and "false"`}},
		{"noul capitalised key", reqWith(`{"type":"noul","criteria":{"True":"y"}}`), Limits{}, []string{`question "q": criteria.True: a noul's criteria keys are only`}},
		{"noul entry number", reqWith(`{"type":"noul","criteria":{"true":1}}`), Limits{}, []string{`question "q": criteria.true: must be a string, object or array, not a number`}},
		{"noul criteria list", reqWith(`{"type":"noul","criteria":["a","b"]}`), Limits{}, []string{`question "q": criteria: must be an object mapping "true"/"false"`}},
		{"noul duplicate key", reqWith(`{"type":"noul","criteria":{"true":"a","true":"b"}}`), Limits{}, []string{`question "q": criteria.true: duplicate key`}},

		// types and fields, rejected at decode
		{"type missing", reqWith(`{"instructions":"x"}`), Limits{}, []string{`question "q": type: missing`}},
		{"type unknown", reqWith(`{"type":"bbox"}`), Limits{}, []string{`question "q": type: "bbox" is not a question type`}},
		{"type not a string", reqWith(`{"type":1}`), Limits{}, []string{`question "q": type: must be a string`}},
		{"unknown question field", reqWith(`{"type":"noul","threshold":0.7}`), Limits{}, []string{`question "q": threshold: unknown field`}},
		{"duplicate question field", reqWith(`{"type":"noul","type":"choice"}`), Limits{}, []string{`question "q": type: duplicate key`}},
		{"question not an object", reqWith(`"noul"`), Limits{}, []string{`question "q": must be a JSON object`}},
		{"duplicate question id", `{"model":"m","state":"s","questions":{"q":{"type":"noul"},"q":{"type":"noul"}}}`, Limits{}, []string{`question "q": id: duplicate question id`}},
		{"questions not an object", `{"model":"m","state":"s","questions":[]}`, Limits{}, []string{`questions: must be a JSON object`}},
		{"model not a string", `{"model":1,"state":"s","questions":{"q":{"type":"noul"}}}`, Limits{}, []string{`model: must be a string`}},

		// several problems are all reported, each with its question
		{"every problem listed", `{"model":"m","state":1,"questions":{"a":{"type":"choice","criteria":{"x":null}},"b":{"type":"score","criteria":["one"]}}}`, Limits{},
			[]string{"3 problems", `state: must be`, `question "a": criteria: has 1 option(s)`, `question "b": criteria: has 1 level(s)`}},

		// size ceiling: this body serialises to exactly 101 bytes
		{"size at the ceiling", `{"model":"jev-latest","state":"0123456789","questions":{"q":{"type":"noul","instructions":"Is it?"}}}`, Limits{MaxRequestBytes: 101}, nil},
		{"size over the ceiling", `{"model":"jev-latest","state":"0123456789","questions":{"q":{"type":"noul","instructions":"Is it?"}}}`, Limits{MaxRequestBytes: 100}, []string{"request: serialized size 101 bytes exceeds the limit of 100 bytes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeValidate(tc.body, tc.lim)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestValidateConstructed covers requests built in code, which can hold
// what JSON decoding never produces.
func TestValidateConstructed(t *testing.T) {
	noul := Question{Type: Noul}
	two := []Option{{Label: "a", Description: json.RawMessage(`null`)}, {Label: "b"}}
	cases := []struct {
		name string
		req  Request
		want []string
	}{
		{"valid", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Choice, Options: two}}}}, nil},
		{"nil descriptions are null", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Choice, Options: []Option{{Label: "a"}, {Label: "b"}}}}}}, nil},
		{"duplicate ids", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", noul}, {"q", noul}}}, []string{`question "q": id: duplicate question id`}},
		{"duplicate labels", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Choice, Options: []Option{{Label: "a"}, {Label: "a"}}}}}}, []string{`question "q": criteria.a: duplicate option label`}},
		{"invalid utf-8 label", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Choice, Options: []Option{{Label: "a\xff"}, {Label: "b"}}}}}}, []string{`question "q": criteria.a` + "\xff" + `: option label is not valid UTF-8`}},
		{"choice with levels", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Choice, Levels: []json.RawMessage{json.RawMessage(`"x"`)}}}}}, []string{`question "q": criteria: a choice's criteria is an object`}},
		{"score with options", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Score, Options: two}}}}, []string{`question "q": criteria: a score's criteria is an array`}},
		{"score nil level", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Score, Levels: []json.RawMessage{json.RawMessage(`"a"`), nil}}}}}, []string{`question "q": criteria[1]: is null`}},
		{"noul with levels", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Noul, Levels: []json.RawMessage{json.RawMessage(`"x"`)}}}}}, []string{`question "q": criteria: a noul's criteria is an object`}},
		{"noul duplicate", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Noul, Options: []Option{{Label: "true"}, {Label: "true"}}}}}}, []string{`question "q": criteria.true: duplicate key`}},
		{"bad type", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: "yesno"}}}}, []string{`question "q": type: "yesno" is not a question type`}},
		{"invalid state JSON", Request{Model: "m", State: json.RawMessage(`{"a":`), Questions: Questions{{"q", noul}}}, []string{"state: is not valid JSON"}},
		{"invalid instructions JSON", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Noul, Instructions: json.RawMessage(`"open`)}}}}, []string{`question "q": instructions: is not valid JSON`}},
		{"invalid description JSON", Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"q", Question{Type: Choice, Options: []Option{{Label: "a", Description: json.RawMessage(`{`)}, {Label: "b"}}}}}}, []string{`question "q": criteria.a: is not valid JSON`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			if KindOf(err) != KindInvalid {
				t.Errorf("kind %q", KindOf(err))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestValidationErrorsNameQuestionAndField checks the structure behind the
// messages: every per-question problem is a *QuestionError holding a
// *FieldError.
func TestValidationErrorsNameQuestionAndField(t *testing.T) {
	err := decodeValidate(`{"model":"m","state":"s","questions":{"team":{"type":"choice","criteria":{" a":null}},"anger":{"type":"score","criteria":["x",null]}}}`, Limits{})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err %v is not a *ValidationError", err)
	}
	want := map[string][]string{"team": {"criteria", "criteria. a"}, "anger": {"criteria[1]"}}
	got := map[string][]string{}
	for _, p := range ve.Problems {
		var qe *QuestionError
		var fe *FieldError
		if !errors.As(p, &qe) || !errors.As(p, &fe) {
			t.Fatalf("problem %v lacks a question id or a field", p)
		}
		got[qe.ID] = append(got[qe.ID], fe.Field)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("problems by question %v, want %v", got, want)
	}
}

// TestRequestRoundTrip checks that decoding and re-encoding keeps order,
// structure and number spelling, and that Size is the encoded length.
func TestRequestRoundTrip(t *testing.T) {
	in := `{"model":"jev-1.13.0","state":{"z":1.50,"a":[1e2,"x"]},"questions":{"zeta":{"type":"choice","instructions":{"q":"which?"},"criteria":{"zz":{"what":"last","not_for":"first"},"aa":null,"<&>":"html"}},"alpha":{"type":"score","criteria":[{"summary":"low"},"high"]},"n":{"type":"noul","criteria":{"false":"no","true":"yes"}},"naïve \"q\"":{"type":"choice","criteria":{"café":null,"a\\b":"x"}}}}`
	var r Request
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	out, err := r.MarshalJSON() // json.Marshal would HTML-escape "<&>"
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip\n got %s\nwant %s", out, in)
	}
	if r.Size() != len(in) {
		t.Errorf("Size %d, want %d", r.Size(), len(in))
	}
	spaced := "{ \"model\" : \"m\",\n \"state\" : { \"a\" : [ 1 , 2 ] },\n \"questions\" : { \"q\" : { \"type\" : \"noul\" , \"instructions\" : \"x\" } } }"
	if err := json.Unmarshal([]byte(spaced), &r); err != nil {
		t.Fatal(err)
	}
	out, _ = r.MarshalJSON()
	if want := `{"model":"m","state":{"a":[1,2]},"questions":{"q":{"type":"noul","instructions":"x"}}}`; string(out) != want {
		t.Errorf("compacted\n got %s\nwant %s", out, want)
	}
}
