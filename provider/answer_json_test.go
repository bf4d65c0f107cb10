package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAnswerJSONKeepsZeroValues: what ask --json prints keeps every value
// the answer's type has, zeros included. Before, omitempty dropped a
// noul's P = 0, a score of 0 and a confidence of 0.
func TestAnswerJSONKeepsZeroValues(t *testing.T) {
	cases := []struct {
		a    Answer
		want []string
		not  []string
	}{
		{Answer{ID: "n", Type: Noul, P: 0}, []string{`"p":0`}, []string{`"confidence"`, `"choice"`, `"score"`}},
		{Answer{ID: "s", Type: Score, Score: 0, Confidence: 0, HasConfidence: true, Probs: []float64{1, 0}}, []string{`"score":0`, `"confidence":0`, `"probabilities":[1,0]`}, []string{`"p"`}},
		{Answer{ID: "c", Type: Choice, Choice: "a", Probs: []float64{0.5, 0.5}}, []string{`"choice":"a"`, `"probabilities":[0.5,0.5]`}, []string{`"confidence"`, `"p"`}},
	}
	for _, tc := range cases {
		b, err := json.Marshal(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: %s lacks %s", tc.a.ID, b, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(string(b), w) {
				t.Errorf("%s: %s has %s", tc.a.ID, b, w)
			}
		}
		var back Answer
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.ID != tc.a.ID || back.Type != tc.a.Type || back.P != tc.a.P || back.Score != tc.a.Score || back.HasConfidence != tc.a.HasConfidence || len(back.Probs) != len(tc.a.Probs) {
			t.Errorf("round trip %+v, want %+v", back, tc.a)
		}
	}
}
