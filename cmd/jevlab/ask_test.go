package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
)

// recordedLine returns the n-th (1-based) line of banking77/recorded.jsonl
// decoded as state and intent answer.
func recordedLine(t *testing.T, n int) (state json.RawMessage, probs map[string]float64, choice string, confidence float64) {
	t.Helper()
	found := false
	testutil.EachLine(t, filepath.Join(testutil.Testdata(t, "banking77"), "recorded.jsonl"), func(i int, data []byte) bool {
		if i != n {
			return true
		}
		var ex struct {
			Request struct {
				State json.RawMessage `json:"state"`
			} `json:"request"`
			Response struct {
				Answers struct {
					Intent struct {
						Choice        string             `json:"choice"`
						Confidence    float64            `json:"confidence"`
						Probabilities map[string]float64 `json:"probabilities"`
					} `json:"intent"`
				} `json:"answers"`
			} `json:"response"`
		}
		if err := json.Unmarshal(data, &ex); err != nil {
			t.Fatal(err)
		}
		in := ex.Response.Answers.Intent
		state, probs, choice, confidence = ex.Request.State, in.Probabilities, in.Choice, in.Confidence
		found = true
		return false
	})
	if !found {
		t.Fatalf("no line %d", n)
	}
	return
}

// banking77Set writes a question set built from banking77/questions.json
// with the given working state and returns its path.
func banking77Set(t *testing.T, dir string, state json.RawMessage) string {
	t.Helper()
	q, err := os.ReadFile(filepath.Join(testutil.Testdata(t, "banking77"), "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"name": "banking77", "model": "jev-latest", "state": ` + string(state) + `, "questions": ` + string(q) + "}\n"
	path := filepath.Join(dir, "banking77.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAskOfflinePrintsRecordedDistribution(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	// Line 372 ("Is my salary eligible for this?") spreads over 13 options.
	state, probs, choice, confidence := recordedLine(t, 372)
	set := banking77Set(t, dir, state)
	fixtures := filepath.Join(testutil.Testdata(t, "banking77"), "recorded.jsonl")
	db := filepath.Join(dir, "jevlab.db")

	code, out, errOut := runJevlab(t, "ask", "--offline", "--db", db, "--fixtures", fixtures, set)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"model     jev-latest → jev-1.13.0",
		"source    cache (" + fixtures + ":372, recorded 2026-09-17T09:41:39Z)",
		"mode offline",
		"intent (choice)  → verify_source_of_funds  confidence 0.55  top prob 0.57",
		"tokens 0 in / 0 out   cost $0.000000",
		"… 64 more options under 0.005 each (largest 0.00)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Bars in probability order, the chosen one marked: 0.57 is 182.4 →
	// 182 eighths = 22 full cells and ▊; 0.15 is 48 eighths = 6 cells.
	rows := regexp.MustCompile(`(?m)^  ([ ▶]) (\S+)\s+([█▏▎▍▌▋▊▉]*)\s+([0-9.]+)$`).FindAllStringSubmatch(out, -1)
	// Every option at 0.005 or more is drawn (13 here); the rest fold
	// into one line, as in the workbench.
	if len(rows) != 13 {
		t.Fatalf("%d option rows, want 13:\n%s", len(rows), out)
	}
	if rows[0][1] != "▶" || rows[0][2] != choice || rows[0][3] != strings.Repeat("█", 22)+"▊" || rows[0][4] != "0.57" {
		t.Errorf("first row %q", rows[0][0])
	}
	if rows[1][2] != "country_support" || rows[1][3] != strings.Repeat("█", 6) || rows[1][4] != "0.15" || rows[1][1] != " " {
		t.Errorf("second row %q", rows[1][0])
	}
	for _, r := range rows {
		if p, ok := probs[r[2]]; !ok || formatP(p) != r[4] {
			t.Errorf("row %s shows %s, recorded %v", r[2], r[4], p)
		}
	}

	// --json carries the checked answer bit for bit.
	code, out, errOut = runJevlab(t, "ask", "--offline", "--json", "--db", db, "--fixtures", fixtures, set)
	if code != 0 {
		t.Fatalf("--json exit %d: %s", code, errOut)
	}
	var got struct {
		RequestedModel string `json:"requested_model"`
		Mode           string `json:"mode"`
		Model          string `json:"model"`
		Answers        []struct {
			ID         string    `json:"id"`
			Choice     string    `json:"choice"`
			Confidence float64   `json:"confidence"`
			Probs      []float64 `json:"probabilities"`
			Provenance struct {
				Source string `json:"source"`
				Origin string `json:"origin"`
			} `json:"provenance"`
		} `json:"answers"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if got.RequestedModel != "jev-latest" || got.Model != "jev-1.13.0" || got.Mode != "offline" || len(got.Answers) != 1 {
		t.Fatalf("json header %+v", got)
	}
	a := got.Answers[0]
	if a.Choice != choice || math.Float64bits(a.Confidence) != math.Float64bits(confidence) || a.Provenance.Source != "cache" {
		t.Fatalf("json answer %+v", a)
	}
	labels := optionLabels(t)
	if len(a.Probs) != 77 || len(labels) != 77 {
		t.Fatalf("%d probabilities", len(a.Probs))
	}
	for i, l := range labels {
		if math.Float64bits(a.Probs[i]) != math.Float64bits(probs[l]) {
			t.Errorf("P(%s) = %v, recorded %v", l, a.Probs[i], probs[l])
		}
	}
}

// formatP is the two-decimal spelling ask uses for Jev's probabilities.
func formatP(p float64) string {
	b, _ := json.Marshal(math.Round(p*100) / 100)
	s := string(b)
	if !strings.Contains(s, ".") {
		s += "."
	}
	for len(s)-strings.Index(s, ".")-1 < 2 {
		s += "0"
	}
	return s
}

// optionLabels returns banking77's 77 labels in questions.json order.
func optionLabels(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.Testdata(t, "banking77"), "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	var labels []string
	depth := 0
	inCriteria := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
				if inCriteria && depth == 2 {
					inCriteria = false
				}
			}
		case string:
			if depth == 2 && v == "criteria" {
				inCriteria = true
				continue
			}
			if inCriteria && depth == 3 {
				labels = append(labels, v)
				var desc json.RawMessage
				if err := dec.Decode(&desc); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return labels
}

func TestAskOfflineMissExits2(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	set := banking77Set(t, dir, json.RawMessage(`"Where is the nearest branch on the moon?"`))
	fixtures := filepath.Join(testutil.Testdata(t, "banking77"), "recorded.jsonl")
	code, out, errOut := runJevlab(t, "ask", "--offline", "--db", filepath.Join(dir, "db"), "--fixtures", fixtures, set)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stdout %s", code, out)
	}
	for _, want := range []string{`question "intent"`, "run again without --offline (with TYPESAFE_API_KEY set) to record them", fixtures} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %s", want, errOut)
		}
	}
}

func TestAskWithoutKeyFallsBackOffline(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	state, _, _, _ := recordedLine(t, 1)
	set := banking77Set(t, dir, json.RawMessage(`"never recorded"`))
	fixtures := filepath.Join(testutil.Testdata(t, "banking77"), "recorded.jsonl")
	db := filepath.Join(dir, "db")
	code, out, errOut := runJevlab(t, "ask", "--db", db, "--fixtures", fixtures, "--state", string(state), set)
	if code != 0 || !strings.Contains(errOut, "$TYPESAFE_API_KEY is not set: answering offline") || !strings.Contains(out, "▶ card_arrival") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, _, errOut = runJevlab(t, "ask", "--db", db, "--fixtures", fixtures, set)
	if code != 2 || !strings.Contains(errOut, "set TYPESAFE_API_KEY and run again to record them") {
		t.Fatalf("miss without key: exit %d: %s", code, errOut)
	}
}

func TestAskInputErrors(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nstate: hi\nquestions:\n  q:\n    type: choise\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := banking77Set(t, dir, json.RawMessage(`"hi"`))
	db := filepath.Join(dir, "db")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"invalid set names file:line", []string{"ask", "--offline", "--db", db, bad}, []string{"bad.yaml:5"}},
		{"missing set", []string{"ask", "--offline", "--db", db, filepath.Join(dir, "nope.yaml")}, []string{"nope.yaml"}},
		{"state not JSON", []string{"ask", "--offline", "--db", db, "--state", "hello", good}, []string{"--state: not valid JSON"}},
		{"state a number", []string{"ask", "--offline", "--db", db, "--state", "42", good}, []string{"string, object or array"}},
		{"state file missing", []string{"ask", "--offline", "--db", db, "--state", "@" + filepath.Join(dir, "none.json"), good}, []string{"none.json"}},
		{"fixture file missing", []string{"ask", "--offline", "--db", db, "--fixtures", filepath.Join(dir, "none.jsonl"), good}, []string{"none.jsonl"}},
		{"models offline", []string{"models", "--offline"}, []string{"without --offline"}},
		{"models without key", []string{"models"}, []string{"$TYPESAFE_API_KEY is not set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runJevlab(t, tt.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

func TestAskStateFromFileAndTornFixtureWarning(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	state, _, _, _ := recordedLine(t, 1)
	stateFile := filepath.Join(dir, "state.json")
	if err := os.WriteFile(stateFile, append([]byte("  "), state...), 0o600); err != nil {
		t.Fatal(err)
	}
	// A fixture file holding line 1 and a torn copy of line 2.
	src, err := os.ReadFile(filepath.Join(testutil.Testdata(t, "banking77"), "recorded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	fx := filepath.Join(dir, "torn.jsonl")
	if err := os.WriteFile(fx, []byte(lines[0]+lines[1][:100]), 0o600); err != nil {
		t.Fatal(err)
	}
	set := banking77Set(t, dir, json.RawMessage(`"other"`))
	code, out, errOut := runJevlab(t, "ask", "--offline", "--db", filepath.Join(dir, "db"), "--fixtures", fx, "--state", "@"+stateFile, set)
	if code != 0 || !strings.Contains(out, "▶ card_arrival") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "warning: "+fx+":2: torn last line") {
		t.Fatalf("stderr lacks the torn-line warning: %s", errOut)
	}
}

// TestAskPartialHitSendsOnlyMissing asks a recorded demo-triage request
// plus one new question through the whole stack (cache, live client,
// stand-in over HTTP) and counts the question ids the server received.
func TestAskPartialHitSendsOnlyMissing(t *testing.T) {
	isolate(t)
	t.Setenv("TYPESAFE_API_KEY", canaryKey)
	si, err := standin.New(standin.Config{Synthetic: true, APIKey: canaryKey})
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	var mu sync.Mutex
	var asked [][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.URL.Path == "/v1/systemone" {
			var req provider.Request
			if err := json.Unmarshal(body, &req); err != nil {
				t.Error(err)
			}
			mu.Lock()
			asked = append(asked, req.Questions.IDs())
			mu.Unlock()
		}
		si.ServeHTTP(w, r)
	}))
	defer srv.Close()

	dir := t.TempDir()
	src := filepath.Join(testutil.Testdata(t, "demo-triage"), "recorded.jsonl")
	exs, _, err := fixtures.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		State     json.RawMessage `json:"state"`
		Questions json.RawMessage `json:"questions"`
	}
	if err := json.Unmarshal(exs[0].Request, &rec); err != nil {
		t.Fatal(err)
	}
	// The recorded questions plus a new noul "spam", renaming "queue" to
	// "team" on the way (ids are not part of the cache key).
	qs := strings.Replace(string(rec.Questions), `"queue":`, `"team":`, 1)
	qs = strings.TrimSuffix(qs, "}") + `,"spam":{"type":"noul","instructions":"Is this message spam?"}}`
	set := filepath.Join(dir, "triage.json")
	body := fmt.Sprintf(`{"name":"triage","state":%s,"questions":%s,"fixtures":[%q]}`, rec.State, qs, src)
	if err := os.WriteFile(set, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	newRec := filepath.Join(dir, "new.jsonl")
	db := filepath.Join(dir, "db")
	// The set names a fixture outside its folder: allowed explicitly.
	allow := filepath.Dir(src)
	code, out, errOut := runJevlab(t, "ask", "--allow-path", allow, "--db", db, "--fixtures", newRec, "--base-url", srv.URL, set)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(asked) != 1 || strings.Join(asked[0], ",") != "spam" {
		t.Fatalf("server was asked %v, want exactly [[spam]]", asked)
	}
	for _, want := range []string{"source    cache 3, live 1   (mode stand-in)", "jev-1.13.0+" + standin.SyntheticModel, "(mixed:", "team (choice)  → billing", "spam (noul)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The new answer is the stand-in's (standin-…): it is never recorded
	// to --fixtures (issue 10 item 10), so offline it is still missing.
	got, _, err := fixtures.ReadFile(newRec)
	if err == nil && len(got) != 0 {
		t.Fatalf("recorded %d stand-in exchanges to %s, want none", len(got), newRec)
	}
	code, out, errOut = runJevlab(t, "ask", "--allow-path", allow, "--offline", "--db", filepath.Join(dir, "other-db"), "--fixtures", src, set)
	if code != 2 || !strings.Contains(errOut, `"spam"`) || len(asked) != 1 {
		t.Fatalf("offline replay: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runJevlab(t, "ask", "--offline", "--fresh", "--db", db, set); code != 2 || !strings.Contains(errOut, "nothing could answer") {
		t.Fatalf("--offline --fresh: exit %d: %s", code, errOut)
	}
}

// An edited question has no recorded answer offline: ask still answers
// the others (the workbench's per-question fallback), names the miss and
// what to do, and exits 2.
func TestAskAnswersTheRestWhenOneQuestionMisses(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	src := testutil.Testdata(t, "demo-triage")
	for _, f := range []string{"recorded.jsonl", "dataset.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "demo-triage", "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(set), "Which team should handle this message?", "Which team should own this message?", 1)
	edited = strings.Replace(edited, "  - recorded-run2.jsonl\n  - recorded-shuffled.jsonl\n", "", 1)
	path := filepath.Join(dir, "questions.yaml")
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runJevlab(t, "ask", "--offline", "--db", filepath.Join(dir, "db"), path)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s\n%s", code, out, errOut)
	}
	for _, want := range []string{"refund_request (noul)  → true", "urgency (score)  → 2 ", "queue: not answered: no recorded answer for this question as it is now"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "1 of 3 questions not answered (queue)") {
		t.Errorf("stderr: %s", errOut)
	}
	code, out, _ = runJevlab(t, "ask", "--offline", "--json", "--db", filepath.Join(dir, "db"), path)
	if code != 2 || !strings.Contains(out, `"failed": [`) || !strings.Contains(out, `"id": "queue"`) || !strings.Contains(out, `"kind": "cache_miss"`) {
		t.Errorf("--json exit %d:\n%s", code, out)
	}
}
