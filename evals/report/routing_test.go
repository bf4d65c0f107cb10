package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/metrics/metricstest"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/store"
)

// TestRoutingFromSet: Build passes each question's min_confidence from the
// set, and every writer shows the routing line. On the demo-triage base
// run (testdata README, and the recorded answers):
//   - queue: every answer right; only dt-008 (top probability 0.82) is under
//     0.9 → 1/10 routed, the rest 9/9 right.
//   - urgency routes on the provider's confidence: dt-003 and dt-004 (0.89)
//     and dt-008 (0.63) → 3/10 routed; of the seven kept only dt-006
//     (label 0, decided 1) is wrong → 6/7.
//   - refund_request has no min_confidence: no routing.
func TestRoutingFromSet(t *testing.T) {
	r := metricstest.Load(t, "demo-triage", "recorded.jsonl")
	set := &questionset.Set{Name: "demo-triage", Questions: r.Questions, Settings: map[string]questionset.Settings{
		"queue":   {MinConfidence: f(0.9)},
		"urgency": {MinConfidence: f(0.9)},
	}}
	run := &store.Run{ID: "r-route", SetName: "demo-triage", Model: "jev-latest", Status: "done", Done: 10, Total: 10}
	rep := Build(run, set, r.Obs, metrics.Options{Seed: 3, Bootstrap: 200}, questionset.Gate{})
	byID := map[string]*metrics.QuestionReport{}
	for _, q := range rep.Questions {
		byID[q.ID] = q
	}
	if rt := byID["refund_request"].Selective.Routing; rt != nil {
		t.Errorf("refund_request routed without min_confidence: %+v", *rt)
	}
	tests := []struct {
		id                                  string
		routed, answered, correct, labelled int
		conf                                string
	}{
		{"queue", 1, 10, 9, 9, "max prob"},
		{"urgency", 3, 10, 6, 7, "provider confidence"},
	}
	for _, tc := range tests {
		rt := byID[tc.id].Selective.Routing
		if rt == nil {
			t.Fatalf("%s: no routing", tc.id)
		}
		if rt.Routed != tc.routed || rt.Answered != tc.answered || rt.KeptCorrect != tc.correct || rt.KeptLabelled != tc.labelled || rt.Confidence != tc.conf || rt.MinConfidence != 0.9 {
			t.Errorf("%s: %+v, want routed %d/%d, kept %d/%d on %s", tc.id, *rt, tc.routed, tc.answered, tc.correct, tc.labelled, tc.conf)
		}
	}
	queueLine := "min_confidence 0.90: 10.0% routed to uncertain (1/10) · accuracy of the rest 1.000 [0.701, 1.000] Wilson (9/9)"
	if got := byID["queue"].Selective.Routing.String(); got != queueLine {
		t.Errorf("queue line\n got %q\nwant %q", got, queueLine)
	}
	urgencyPrefix := "min_confidence 0.90: 30.0% routed to uncertain (3/10) · accuracy of the rest 0.857 ["
	if got := byID["urgency"].Selective.Routing.String(); !strings.HasPrefix(got, urgencyPrefix) || !strings.HasSuffix(got, "(6/7)") {
		t.Errorf("urgency line %q", got)
	}

	var txt, md, js bytes.Buffer
	if err := WriteText(&txt, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "  routing              "+queueLine+"\n") {
		t.Errorf("text report lacks the queue routing row:\n%s", txt.String())
	}
	if !strings.Contains(md.String(), "\n- `queue` "+queueLine+"\n") || !strings.Contains(md.String(), "\n- `urgency` "+urgencyPrefix) {
		t.Errorf("markdown lacks the routing list:\n%s", md.String())
	}
	if strings.Count(txt.String(), "routing  ") != 2 {
		t.Errorf("text report: want exactly two routing rows:\n%s", txt.String())
	}
	var back struct {
		Questions []struct {
			ID        string `json:"question"`
			Selective struct {
				Routing *metrics.Routing `json:"routing"`
			} `json:"selective"`
		} `json:"questions"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, q := range back.Questions {
		if (q.Selective.Routing != nil) != (q.ID != "refund_request") {
			t.Errorf("json %s routing %+v", q.ID, q.Selective.Routing)
		}
		if q.ID == "queue" && (q.Selective.Routing.Routed != 1 || q.Selective.Routing.RoutedShare.Value != 0.1) {
			t.Errorf("json queue routing %+v", *q.Selective.Routing)
		}
	}
}
