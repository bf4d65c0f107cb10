package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStandardAgentsAnswers: answers in the Standard Agents result shape
// are read as their System One equivalents — a boolean's probability as
// the noul's P(true), a choice or score without confidence as having none,
// a score's legend checked — by both readers (the fast scanner, and
// encoding/json when a key is spelled with an escape), and CheckResponse
// agrees with Check.
func TestStandardAgentsAnswers(t *testing.T) {
	req := checkReq(t)
	sa := map[string]string{
		"n": `{"type":"boolean","probability":0.27}`,
		"c": `{"type":"choice","choice":"b","probabilities":{"a":0.2,"b":0.7,"c":0.1}}`,
		"s": `{"type":"score","score":1.05,"probabilities":{"0":0.0,"1":0.95,"2":0.05},"legend":{"0":"low","1":"mid","2":"high"}}`,
	}
	slow := map[string]string{ // \u0070 is "p": only encoding/json reads it
		"n": `{"type":"boolean","\u0070robability":0.27}`,
	}
	for name, answers := range map[string]map[string]string{"fast": sa, "slow": {"n": slow["n"], "c": sa["c"], "s": sa["s"]}} {
		t.Run(name, func(t *testing.T) {
			resp := &Response{Model: "sa-1", Answers: map[string]json.RawMessage{}}
			for k, v := range answers {
				resp.Answers[k] = json.RawMessage(v)
			}
			ans, err := Check(req, resp)
			if err != nil {
				t.Fatal(err)
			}
			n, c, s := ans[0], ans[1], ans[2]
			if n.Type != Noul || n.P != 0.27 || n.HasConfidence || string(n.Raw) != answers["n"] {
				t.Errorf("boolean → noul: %+v", n)
			}
			if c.Choice != "b" || c.HasConfidence || c.Probs[1] != 0.7 {
				t.Errorf("choice without confidence: %+v", c)
			}
			if s.Score != 1.05 || s.HasConfidence || s.Probs[1] != 0.95 {
				t.Errorf("score with legend, no confidence: %+v", s)
			}
			body, _ := json.Marshal(map[string]any{"model": "sa-1", "answers": resp.Answers})
			res, err := CheckResponse(req, body)
			if err != nil {
				t.Fatal(err)
			}
			if res.Answers[0].P != 0.27 || res.Answers[0].Type != Noul {
				t.Errorf("CheckResponse: %+v", res.Answers[0])
			}
		})
	}
}

// TestStandardAgentsAnswerRules: the spec's rules hold — a boolean
// probability is a number in [0, 1], never a boolean coerced; a boolean
// answers only a noul; a noul answer still needs its own "noul" field; a
// wrong legend is refused.
func TestStandardAgentsAnswerRules(t *testing.T) {
	req := checkReq(t)
	for _, c := range []struct{ id, raw, want string }{
		{"n", `{"type":"boolean"}`, "probability: missing"},
		{"n", `{"type":"boolean","noul":0.3}`, "probability: missing"},
		{"n", `{"type":"boolean","probability":1.2}`, "outside [0, 1]"},
		{"n", `{"type":"boolean","probability":true}`, "not a JSON object of the answer shape"},
		{"n", `{"type":"noul","probability":0.3}`, "noul: missing"},
		{"c", `{"type":"boolean","probability":0.3}`, `is "boolean" but the question is a choice`},
		{"s", `{"type":"score","score":1.05,"probabilities":{"0":0.0,"1":0.95,"2":0.05},"legend":{"0":"low","1":"MID","2":"high"}}`, "legend"},
	} {
		_, err := Check(req, respWith(c.id, c.raw))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: err = %v, want %q", c.id, c.raw, err, c.want)
		}
	}
}
