package provider

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// checkReq asks a noul "n", a choice "c" over a, b, c and a score "s" over
// three levels.
func checkReq(t testing.TB) *Request {
	t.Helper()
	var r Request
	body := `{"model":"jev-latest","state":"s","questions":{
		"n":{"type":"noul","instructions":"Is it?"},
		"c":{"type":"choice","criteria":{"a":null,"b":null,"c":null}},
		"s":{"type":"score","criteria":["low","mid","high"]}}}`
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

var validAnswers = map[string]string{
	"n": `{"type":"noul","noul":0.73}`,
	"c": `{"type":"choice","choice":"b","confidence":0.61,"probabilities":{"c":0.1,"a":0.2,"b":0.7}}`,
	"s": `{"type":"score","score":1.05,"confidence":0.92,"legend":{"0":"low","1":"mid","2":"high"},"probabilities":{"0":0.0,"1":0.95,"2":0.05}}`,
}

// respWith returns the valid response with the answer for id replaced by
// raw ("" removes it).
func respWith(id, raw string) *Response {
	r := &Response{Model: "jev-1.13.0", Answers: map[string]json.RawMessage{}}
	for k, v := range validAnswers {
		r.Answers[k] = json.RawMessage(v)
	}
	if id != "" {
		if raw == "" {
			delete(r.Answers, id)
		} else {
			r.Answers[id] = json.RawMessage(raw)
		}
	}
	return r
}

func TestCheckValid(t *testing.T) {
	req := checkReq(t)
	resp := respWith("", "")
	resp.Answers["unasked"] = json.RawMessage(`{"type":"noul","noul":2}`) // dropped, never checked
	ans, err := Check(req, resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(ans) != 3 || ans[0].ID != "n" || ans[1].ID != "c" || ans[2].ID != "s" {
		t.Fatalf("answers %+v", ans)
	}
	n, c, s := ans[0], ans[1], ans[2]
	if n.Type != Noul || n.P != 0.73 || n.HasConfidence || n.Probs != nil {
		t.Errorf("noul %+v", n)
	}
	if c.Type != Choice || c.Choice != "b" || !c.HasConfidence || c.Confidence != 0.61 {
		t.Errorf("choice %+v", c)
	}
	// Probabilities come back in option order (a, b, c), not wire order.
	if len(c.Probs) != 3 || c.Probs[0] != 0.2 || c.Probs[1] != 0.7 || c.Probs[2] != 0.1 {
		t.Errorf("choice probs %v", c.Probs)
	}
	if s.Type != Score || s.Score != 1.05 || s.Confidence != 0.92 || len(s.Probs) != 3 || s.Probs[1] != 0.95 {
		t.Errorf("score %+v", s)
	}
	for _, a := range ans {
		if string(a.Raw) != validAnswers[a.ID] {
			t.Errorf("%s raw %s", a.ID, a.Raw)
		}
		if a.Provenance.Model != "jev-1.13.0" {
			t.Errorf("%s provenance %+v", a.ID, a.Provenance)
		}
	}
}

// TestCheckKeepsValuesBitIdentical: no renormalising, no rounding.
func TestCheckKeepsValuesBitIdentical(t *testing.T) {
	spell := []string{"0.33", "0.33000000000000007", "0.3299999999999999", "3.3e-1"}
	req := checkReq(t)
	raw := `{"type":"choice","choice":"a","confidence":0.0,"probabilities":{"a":` + spell[0] + `,"b":` + spell[1] + `,"c":` + spell[2] + `}}`
	ans, err := Check(req, respWith("c", raw))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		want, _ := strconv.ParseFloat(spell[i], 64)
		if math.Float64bits(ans[1].Probs[i]) != math.Float64bits(want) {
			t.Errorf("prob %d = %v, want %v exactly", i, ans[1].Probs[i], want)
		}
	}
	if string(ans[1].Raw) != raw {
		t.Errorf("raw changed: %s", ans[1].Raw)
	}
	// A score of 3.99 with rounded probabilities all on the top level is
	// real Jev behaviour; nothing is recomputed.
	req2 := &Request{Model: "m", State: json.RawMessage(`"s"`), Questions: Questions{{"s", Question{Type: Score, Levels: []json.RawMessage{
		json.RawMessage(`"0"`), json.RawMessage(`"1"`), json.RawMessage(`"2"`), json.RawMessage(`"3"`), json.RawMessage(`"4"`)}}}}}
	resp2 := &Response{Answers: map[string]json.RawMessage{"s": json.RawMessage(`{"type":"score","score":3.99,"confidence":1.0,"probabilities":{"4":1.0,"3":0.0,"2":0.0,"1":0.0,"0":0.0}}`)}}
	ans, err = Check(req2, resp2)
	if err != nil || ans[0].Score != 3.99 || ans[0].Probs[4] != 1 {
		t.Fatalf("score %+v err %v", ans, err)
	}
}

func TestCheckTable(t *testing.T) {
	cases := []struct {
		name string
		id   string // the question whose answer is replaced
		raw  string // "" removes the answer
		want []string
	}{
		// accepted
		{"noul 0", "n", `{"type":"noul","noul":0}`, nil},
		{"noul 1", "n", `{"type":"noul","noul":1}`, nil},
		{"noul exponent", "n", `{"type":"noul","noul":5e-1}`, nil},
		{"noul stray confidence ignored", "n", `{"type":"noul","noul":0.5,"confidence":7}`, nil},
		{"unknown field kept", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.5,"c":0},"reasoning":{"x":1}}`, nil},
		{"sum 0.98", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.38,"c":0.1}}`, nil},
		{"sum 1.02", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.42,"c":0.1}}`, nil},
		// Rounded near-ties are real (entity-merge em-0289 chose 0.33 over 0.34).
		{"choice within rounding of argmax", "c", `{"type":"choice","choice":"b","confidence":0.5,"probabilities":{"a":0.34,"b":0.33,"c":0.33}}`, nil},
		{"choice on exact tie", "c", `{"type":"choice","choice":"c","confidence":0.5,"probabilities":{"a":0.5,"b":0,"c":0.5}}`, nil},
		{"score from unrounded probabilities", "s", `{"type":"score","score":1.99,"confidence":1,"probabilities":{"0":0,"1":0,"2":1}}`, nil},
		{"score within rounding", "s", `{"type":"score","score":1.0,"confidence":0.9,"probabilities":{"0":0.01,"1":0.97,"2":0.01}}`, nil},
		{"legend escaped and reordered", "s", `{"type":"score","score":1,"confidence":1,"legend":{"2":"h\u0069gh","0":"low","1":"mid"},"probabilities":{"0":0,"1":1,"2":0}}`, nil},
		{"legend null", "s", `{"type":"score","score":1,"confidence":1,"legend":null,"probabilities":{"0":0,"1":1,"2":0}}`, nil},
		{"confidence 0 and 1", "s", `{"type":"score","score":0,"confidence":1,"probabilities":{"0":1,"1":0,"2":0}}`, nil},
		{"score at top", "s", `{"type":"score","score":2,"confidence":0,"probabilities":{"0":0,"1":0,"2":1}}`, nil},
		{"choice without confidence", "c", `{"type":"choice","choice":"a","probabilities":{"a":0.5,"b":0.5,"c":0}}`, nil},

		// missing answer and wrong shapes
		{"missing answer", "c", "", []string{`question "c": no answer`}},
		{"answer null", "c", `null`, []string{`question "c": type: missing`}},
		{"answer not an object", "c", `"b"`, []string{`question "c": answer: not a JSON object`}},
		{"answer array", "n", `[0.5]`, []string{`question "n": answer: not a JSON object`}},
		{"type missing", "n", `{"noul":0.5}`, []string{`question "n": type: missing`}},
		{"wrong type", "n", `{"type":"choice","choice":"a"}`, []string{`question "n": type: is "choice" but the question is a noul`}},
		{"type not a string", "n", `{"type":1,"noul":0.5}`, []string{`question "n": answer: not a JSON object`}},

		// noul
		{"noul missing", "n", `{"type":"noul"}`, []string{`question "n": noul: missing`}},
		{"noul null", "n", `{"type":"noul","noul":null}`, []string{`question "n": noul: missing`}},
		{"noul negative", "n", `{"type":"noul","noul":-0.01}`, []string{`question "n": noul: -0.01 is outside [0, 1]`}},
		{"noul above 1", "n", `{"type":"noul","noul":1.01}`, []string{`question "n": noul: 1.01 is outside [0, 1]`}},
		{"noul a string", "n", `{"type":"noul","noul":"0.5"}`, []string{`question "n": answer: not a JSON object`}},
		{"noul overflows", "n", `{"type":"noul","noul":1e400}`, []string{`question "n": answer: not a JSON object`}},

		// choice
		{"choice missing", "c", `{"type":"choice","confidence":0.5,"probabilities":{"a":0.5,"b":0.5,"c":0}}`, []string{`question "c": choice: missing`}},
		{"choice not an option", "c", `{"type":"choice","choice":"d","confidence":0.5,"probabilities":{"a":0.5,"b":0.5,"c":0}}`, []string{`question "c": choice: "d" is not an option that was asked`}},
		{"choice wrong case", "c", `{"type":"choice","choice":"A","confidence":0.5,"probabilities":{"a":0.5,"b":0.5,"c":0}}`, []string{`choice: "A" is not an option`}},
		{"probabilities missing", "c", `{"type":"choice","choice":"a","confidence":0.5}`, []string{`question "c": probabilities: missing`}},
		{"probabilities missing a key", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.5}}`, []string{`question "c": probabilities: no probability for "c"`}},
		{"probabilities extra key", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.5,"c":0,"d":0}}`, []string{`question "c": probabilities: has "d", which was not asked`}},
		{"probabilities key swapped", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.5,"x":0}}`, []string{`no probability for "c"`}},
		{"probability null", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.5,"c":null}}`, []string{`question "c": probabilities.c: is null`}},
		{"probability negative", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.6,"b":0.5,"c":-0.1}}`, []string{`question "c": probabilities.c: -0.1 is outside [0, 1]`}},
		{"probability above 1", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":1.5,"b":0,"c":0}}`, []string{`question "c": probabilities.a: 1.5 is outside [0, 1]`}},
		{"sum 0.97", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.37,"c":0.1}}`, []string{`question "c": probabilities: sum to 0.9700; expected 1 within 0.02`}},
		{"sum 1.03", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.43,"c":0.1}}`, []string{`question "c": probabilities: sum to 1.0300`}},
		{"sum 0", "c", `{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0,"b":0,"c":0}}`, []string{`sum to 0.0000`}},
		{"confidence above 1", "c", `{"type":"choice","choice":"a","confidence":1.2,"probabilities":{"a":0.5,"b":0.5,"c":0}}`, []string{`question "c": confidence: 1.2 is outside [0, 1]`}},
		{"confidence negative", "c", `{"type":"choice","choice":"a","confidence":-1,"probabilities":{"a":0.5,"b":0.5,"c":0}}`, []string{`question "c": confidence: -1 is outside [0, 1]`}},
		{"probabilities a list", "c", `{"type":"choice","choice":"a","probabilities":[0.5,0.5,0]}`, []string{`question "c": answer: not a JSON object`}},

		// score
		{"score missing", "s", `{"type":"score","confidence":0.5,"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": score: missing`}},
		{"score negative", "s", `{"type":"score","score":-0.5,"confidence":0.5,"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": score: -0.5 is outside [0, 2]`}},
		{"score above top", "s", `{"type":"score","score":2.0001,"confidence":0.5,"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": score: 2.0001 is outside [0, 2]`}},
		{"score level key missing", "s", `{"type":"score","score":1,"confidence":0.5,"probabilities":{"0":0,"1":1}}`, []string{`question "s": probabilities: no probability for "2"`}},
		{"score label keys", "s", `{"type":"score","score":1,"confidence":0.5,"probabilities":{"low":0,"mid":1,"high":0}}`, []string{`no probability for "0"`}},
		{"score extra level", "s", `{"type":"score","score":1,"confidence":0.5,"probabilities":{"0":0,"1":1,"2":0,"3":0}}`, []string{`question "s": probabilities: has "3", which was not asked`}},
		{"score confidence above 1", "s", `{"type":"score","score":1,"confidence":3,"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": confidence: 3 is outside [0, 1]`}},
		{"choice not argmax", "c", `{"type":"choice","choice":"c","confidence":0.5,"probabilities":{"a":0.5,"b":0.49,"c":0.01}}`, []string{`question "c": choice: "c" has probability 0.01 but "a" has 0.5; the choice must be the most probable option`}},
		{"choice 0.02 behind", "c", `{"type":"choice","choice":"b","confidence":0.5,"probabilities":{"a":0.35,"b":0.33,"c":0.32}}`, []string{`choice: "b" has probability 0.33 but "a" has 0.35`}},
		{"score not the mean", "s", `{"type":"score","score":2,"confidence":0.5,"probabilities":{"0":1,"1":0,"2":0}}`, []string{`question "s": score: 2 is not the probability-weighted mean of its probabilities (which allow 0.000 to 0.010 after rounding)`}},
		{"score just outside rounding", "s", `{"type":"score","score":1.03,"confidence":0.5,"probabilities":{"0":0,"1":1,"2":0}}`, []string{`score: 1.03 is not the probability-weighted mean`}},
		{"legend wrong text", "s", `{"type":"score","score":1,"confidence":1,"legend":{"0":"low","1":"medium","2":"high"},"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": legend.1: does not match level 1 as asked`}},
		{"legend missing a level", "s", `{"type":"score","score":1,"confidence":1,"legend":{"0":"low","1":"mid"},"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": legend: has no entry for level 2`}},
		{"legend extra level", "s", `{"type":"score","score":1,"confidence":1,"legend":{"0":"low","1":"mid","2":"high","3":"x"},"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": legend: has "3", which is not a level that was asked (0 to 2)`}},
		{"legend not an object", "s", `{"type":"score","score":1,"confidence":1,"legend":["low","mid","high"],"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": legend: must be an object`}},
		{"legend repeated key", "s", `{"type":"score","score":1,"confidence":1,"legend":{"0":"low","1":"mid","1":"mid","2":"high"},"probabilities":{"0":0,"1":1,"2":0}}`, []string{`question "s": legend: must be an object`}},
		{"score sum bad", "s", `{"type":"score","score":1,"confidence":0.5,"probabilities":{"0":0.5,"1":0.9,"2":0}}`, []string{`question "s": probabilities: sum to 1.4000`}},

		// several problems in one answer are all reported
		{"every problem listed", "c", `{"type":"choice","choice":"z","confidence":2,"probabilities":{"a":-1,"b":null}}`,
			[]string{`confidence: 2 is outside`, `choice: "z" is not an option`, `probabilities.a: -1 is outside`, `probabilities.b: is null`, `no probability for "c"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := checkReq(t)
			resp := respWith(tc.id, tc.raw)
			ans, err := Check(req, resp)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				a := ans[map[string]int{"n": 0, "c": 1, "s": 2}[tc.id]]
				if string(a.Raw) != tc.raw {
					t.Errorf("raw %s, want %s", a.Raw, tc.raw)
				}
				return
			}
			if err == nil || ans != nil {
				t.Fatalf("answers %v err %v; a malformed answer must be an error, never an answer", ans, err)
			}
			if KindOf(err) != KindMalformed {
				t.Errorf("kind %q", KindOf(err))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("not a *CheckError: %T", err)
			}
			for _, p := range ce.Problems {
				var qe *QuestionError
				if !errors.As(p, &qe) || qe.ID != tc.id {
					t.Errorf("problem %v does not name question %q", p, tc.id)
				}
			}
		})
	}
}

func TestCheckAnswerSingle(t *testing.T) {
	req := checkReq(t)
	q, _ := req.Questions.Get("c")
	a, err := CheckAnswer("c", q, json.RawMessage(validAnswers["c"]))
	if err != nil || a.Choice != "b" {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := CheckAnswer("c", q, json.RawMessage(`{"type":"choice"}`)); err == nil || !strings.Contains(err.Error(), `question "c": choice: missing`) {
		t.Fatalf("err %v", err)
	}
}

func TestShortDecimalMatchesParseFloat(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "0.07", "0.1", "0.33", "0.7000000000000001", "1.0", "-2.5", "123456789012345", "0.123456789012345", "99.99", "0.00000000000001"} {
		got, ok := shortDecimal([]byte(s))
		want, _ := strconv.ParseFloat(s, 64)
		if !ok && len(strings.TrimLeft(s, "-0123456789.")) == 0 && len(strings.Trim(s, "-.")) <= 15 {
			t.Errorf("%s: not handled", s)
		}
		if ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%s: got %v (%x), want %v (%x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
	for _, s := range []string{"1e2", "0.1234567890123456", "", "-"} {
		if _, ok := shortDecimal([]byte(s)); ok {
			t.Errorf("%s: handled, want the strconv path", s)
		}
	}
}

func TestLabelTableFindsEveryOption(t *testing.T) {
	for _, n := range []int{9, 22, 77, 255} {
		q := &Question{Type: Choice}
		for i := 0; i < n; i++ {
			q.Options = append(q.Options, Option{Label: strconv.Itoa(i) + "_x"})
		}
		tab := newLabelTable(q)
		for i := 0; i < n; i++ {
			if got := tab.find(q, []byte(q.Options[i].Label)); got != i {
				t.Fatalf("n=%d: %q found at %d", n, q.Options[i].Label, got)
			}
		}
		for _, miss := range []string{"", "x", "0_y", "1000_x"} {
			if got := tab.find(q, []byte(miss)); got != -1 {
				t.Fatalf("n=%d: %q found at %d", n, miss, got)
			}
		}
	}
}
