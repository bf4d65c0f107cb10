package standin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
)

// post sends body to the handler and returns status, headers and body.
func post(t testing.TB, h http.Handler, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/systemone", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header(), w.Body.Bytes()
}

func newServer(t testing.TB, cfg standin.Config) *standin.Server {
	t.Helper()
	s, err := standin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func readExchanges(t testing.TB, path string) []provider.Exchange {
	t.Helper()
	exs, warns, err := fixtures.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Fatalf("%s: %v", path, warns)
	}
	return exs
}

type wantDetail struct {
	loc  string // loc joined with "/"
	msg  string // substring of msg
	typ  string
	more int // extra entries allowed beyond the first
}

func decodeDetails(t *testing.T, body []byte) []struct {
	Loc  []any
	Msg  string
	Type string
} {
	t.Helper()
	var v struct {
		Detail []struct {
			Loc  []any
			Msg  string
			Type string
		}
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("422 body is not the FastAPI shape: %v: %s", err, body)
	}
	return v.Detail
}

func joinLoc(loc []any) string {
	parts := make([]string, len(loc))
	for i, l := range loc {
		parts[i] = fmt.Sprint(l)
	}
	return strings.Join(parts, "/")
}

func TestValidation422(t *testing.T) {
	s := newServer(t, standin.Config{Synthetic: true})
	const okQ = `{"q":{"type":"noul","instructions":"Is it urgent?"}}`
	tests := []struct {
		name string
		body string
		want []wantDetail
	}{
		{"not JSON", `{"model":`, []wantDetail{{loc: "body/9", msg: "JSON decode error", typ: "json_invalid"}}},
		{"array body", `[]`, []wantDetail{{loc: "body", msg: "valid dictionary", typ: "model_attributes_type"}}},
		{"no model", `{"state":"x","questions":` + okQ + `}`, []wantDetail{{loc: "body/model", msg: "missing", typ: "missing"}}},
		{"model not string", `{"model":3,"state":"x","questions":` + okQ + `}`, []wantDetail{{loc: "body/model", msg: "must be a string", typ: "value_error"}}},
		{"no state", `{"model":"m","questions":` + okQ + `}`, []wantDetail{{loc: "body/state", msg: "missing", typ: "missing"}}},
		{"null state", `{"model":"m","state":null,"questions":` + okQ + `}`, []wantDetail{{loc: "body/state", msg: "is null"}}},
		{"number state", `{"model":"m","state":4,"questions":` + okQ + `}`, []wantDetail{{loc: "body/state", msg: "not a number"}}},
		{"no questions", `{"model":"m","state":"x","questions":{}}`, []wantDetail{{loc: "body/questions", msg: "at least one question"}}},
		{"questions not object", `{"model":"m","state":"x","questions":[1]}`, []wantDetail{{loc: "body/questions", msg: "must be a JSON object"}}},
		{"duplicate question id", `{"model":"m","state":"x","questions":{"a":{"type":"noul"},"a":{"type":"noul"}}}`,
			[]wantDetail{{loc: "body/questions/a", msg: "duplicate question id"}}},
		{"duplicate option label", `{"model":"m","state":"x","questions":{"c":{"type":"choice","criteria":{"a":null,"a":null}}}}`,
			[]wantDetail{{loc: "body/questions/c/choice/criteria/a", msg: "duplicate option label"}}},
		{"unknown type", `{"model":"m","state":"x","questions":{"q":{"type":"maybe"}}}`,
			[]wantDetail{{loc: "body/questions/q", msg: "not a question type", typ: "union_tag_invalid"}}},
		{"missing type", `{"model":"m","state":"x","questions":{"q":{"instructions":"x"}}}`,
			[]wantDetail{{loc: "body/questions/q", msg: "missing", typ: "union_tag_not_found"}}},
		{"unknown question field", `{"model":"m","state":"x","questions":{"q":{"type":"noul","prompt":"x"}}}`,
			[]wantDetail{{loc: "body/questions/q/noul/prompt", msg: "unknown field"}}},
		{"choice one option", `{"model":"m","state":"x","questions":{"team":{"type":"choice","criteria":{"a":null}}}}`,
			[]wantDetail{{loc: "body/questions/team/choice/criteria", msg: "has 1 option(s); a choice needs at least 2"}}},
		{"choice no criteria", `{"model":"m","state":"x","questions":{"team":{"type":"choice"}}}`,
			[]wantDetail{{loc: "body/questions/team/choice/criteria", msg: "has 0 option(s)"}}},
		{"choice label space", `{"model":"m","state":"x","questions":{"team":{"type":"choice","criteria":{" a":null,"b":null}}}}`,
			[]wantDetail{{loc: "body/questions/team/choice/criteria/ a", msg: "leading or trailing whitespace"}}},
		{"choice empty label", `{"model":"m","state":"x","questions":{"team":{"type":"choice","criteria":{"":null,"b":null}}}}`,
			[]wantDetail{{loc: "body/questions/team/choice/criteria/0", msg: "option label is empty"}}},
		{"choice criteria list", `{"model":"m","state":"x","questions":{"team":{"type":"choice","criteria":["a","b"]}}}`,
			[]wantDetail{{loc: "body/questions/team/choice/criteria", msg: "must be an object"}}},
		{"score one level", `{"model":"m","state":"x","questions":{"u":{"type":"score","criteria":["low"]}}}`,
			[]wantDetail{{loc: "body/questions/u/score/criteria", msg: "has 1 level(s); a score needs at least 2"}}},
		{"score eleven levels", `{"model":"m","state":"x","questions":{"u":{"type":"score","criteria":[0,1,2,3,4,5,6,7,8,9,10]}}}`,
			[]wantDetail{{loc: "body/questions/u/score/criteria", msg: "at most 10", more: 11}}},
		{"score null level", `{"model":"m","state":"x","questions":{"u":{"type":"score","criteria":["low",null]}}}`,
			[]wantDetail{{loc: "body/questions/u/score/criteria/1", msg: "is null"}}},
		{"noul bad key", `{"model":"m","state":"x","questions":{"n":{"type":"noul","criteria":{"maybe":"x"}}}}`,
			[]wantDetail{{loc: "body/questions/n/noul/criteria/maybe", msg: `only "true" and "false"`}}},
		{"instructions number", `{"model":"m","state":"x","questions":{"n":{"type":"noul","instructions":5}}}`,
			[]wantDetail{{loc: "body/questions/n/noul/instructions", msg: "not a number"}}},
		{"two problems", `{"model":"m","state":true,"questions":{"a":{"type":"score","criteria":["x"]},"b":{"type":"noul"}}}`,
			[]wantDetail{{loc: "body/state", msg: "not a boolean"}, {loc: "body/questions/a/score/criteria", msg: "needs at least 2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := post(t, s, tt.body)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", code, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			got := decodeDetails(t, body)
			if len(got) < len(tt.want) || len(got) > len(tt.want)+tt.want[0].more {
				t.Fatalf("got %d detail entries, want %d: %s", len(got), len(tt.want), body)
			}
			for i, w := range tt.want {
				if l := joinLoc(got[i].Loc); l != w.loc {
					t.Errorf("entry %d loc %q, want %q", i, l, w.loc)
				}
				if !strings.Contains(got[i].Msg, w.msg) {
					t.Errorf("entry %d msg %q, want it to contain %q", i, got[i].Msg, w.msg)
				}
				typ := w.typ
				if typ == "" {
					typ = "value_error"
				}
				if got[i].Type != typ {
					t.Errorf("entry %d type %q, want %q", i, got[i].Type, typ)
				}
			}
		})
	}
	if st := s.Stats(); st.Invalid != int64(len(tests)) || st.Requests != st.Outcomes() {
		t.Errorf("stats %+v: want %d invalid and outcomes = requests", st, len(tests))
	}
}

func TestAuth(t *testing.T) {
	const key = "sk-test-fake-0123456789"
	s := newServer(t, standin.Config{Synthetic: true, APIKey: key})
	body := `{"model":"m","state":"x","questions":{"q":{"type":"noul"}}}`
	tests := []struct {
		name, auth string
		code       int
		msg        string
	}{
		{"missing", "", 403, "Must supply an API key!"},
		{"not bearer", "Basic " + key, 403, "Must supply an API key!"},
		{"empty bearer", "Bearer ", 403, "Must supply an API key!"},
		{"wrong key", "Bearer sk-wrong-key", 401, "Cannot authenticate"},
		{"key prefix", "Bearer " + key[:len(key)-1], 401, "Cannot authenticate"},
		{"right key", "Bearer " + key, 200, ""},
		{"scheme case", "bearer " + key, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.auth != "" {
				hdr = []string{"Authorization", tt.auth}
			}
			code, _, got := post(t, s, body, hdr...)
			if code != tt.code {
				t.Fatalf("status %d, want %d: %s", code, tt.code, got)
			}
			if bytes.Contains(got, []byte("sk-")) {
				t.Errorf("response echoes the key: %s", got)
			}
			if tt.code == 200 {
				return
			}
			var v struct {
				Detail struct {
					Message   string `json:"message"`
					ErrorType string `json:"error_type"`
				} `json:"detail"`
			}
			if err := json.Unmarshal(got, &v); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(v.Detail.Message, tt.msg) || v.Detail.ErrorType != "authentication_error" {
				t.Errorf("detail %+v, want message %q and authentication_error", v.Detail, tt.msg)
			}
		})
	}
	// The models endpoint is authenticated too.
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	if w.Code != 403 {
		t.Errorf("GET /v1/models without a key: %d, want 403", w.Code)
	}
	if st := s.Stats(); st.Auth != 6 || st.OK != 2 {
		t.Errorf("stats %+v, want 6 auth and 2 ok", st)
	}
}

// answersOf decodes a response body's answers as generic JSON per id.
func answersOf(t testing.TB, body []byte) (string, map[string]any) {
	t.Helper()
	var v struct {
		Model   string                     `json:"model"`
		Answers map[string]json.RawMessage `json:"answers"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("response: %v: %.300s", err, body)
	}
	out := map[string]any{}
	for id, raw := range v.Answers {
		var a any
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		out[id] = a
	}
	return v.Model, out
}

// TestReplayRecorded replays every exchange of every recorded*.jsonl under
// ../shared/testdata and gets exactly the recorded answers back.
func TestReplayRecorded(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t), "testdata", "*", "recorded*.jsonl"))
	if len(files) == 0 {
		t.Skip("no recorded fixtures")
	}
	total := 0
	for _, f := range files {
		exs := readExchanges(t, f)
		s := newServer(t, standin.Config{Exchanges: exs})
		for i, ex := range exs {
			code, _, body := post(t, s, string(ex.Request))
			if code != 200 {
				t.Fatalf("%s:%d: status %d: %s", f, i+1, code, body)
			}
			gotModel, got := answersOf(t, body)
			wantModel, want := answersOf(t, ex.Response)
			if gotModel != wantModel || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:%d: replay differs\n got %s %v\nwant %s %v", f, i+1, gotModel, got, wantModel, want)
			}
			var resp provider.Response
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatal(err)
			}
			var rec provider.Response
			_ = json.Unmarshal(ex.Response, &rec)
			if resp.Usage != rec.Usage {
				t.Errorf("%s:%d: usage %+v, want the recorded %+v", f, i+1, resp.Usage, rec.Usage)
			}
			total++
		}
		if st := s.Stats(); st.OK != int64(len(exs)) {
			t.Errorf("%s: stats %+v", f, st)
		}
	}
	if total < 500 {
		t.Fatalf("replayed only %d exchanges", total)
	}
}

// TestReplayPartialRenamedReordered asks a subset of a recorded exchange's
// questions under new ids and in another order: answers are found by
// content, not by id or position.
func TestReplayPartialRenamedReordered(t *testing.T) {
	exs := readExchanges(t, filepath.Join(testutil.Testdata(t, "demo-triage"), "recorded.jsonl"))
	s := newServer(t, standin.Config{Exchanges: exs})
	ex := exs[3]
	var req provider.Request
	if err := json.Unmarshal(ex.Request, &req); err != nil {
		t.Fatal(err)
	}
	_, want := answersOf(t, ex.Response)
	// Reverse, drop the first, rename.
	var sub provider.Request
	sub.Model, sub.State = req.Model, req.State
	for i := len(req.Questions) - 1; i >= 1; i-- {
		e := req.Questions[i]
		sub.Questions = append(sub.Questions, provider.QuestionEntry{ID: "renamed_" + e.ID, Question: e.Question})
	}
	b, _ := json.Marshal(sub)
	code, _, body := post(t, s, string(b))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	model, got := answersOf(t, body)
	if model != "jev-1.13.0" {
		t.Errorf("model %q, want the recorded jev-1.13.0", model)
	}
	if len(got) != len(sub.Questions) {
		t.Fatalf("%d answers for %d questions", len(got), len(sub.Questions))
	}
	for _, e := range sub.Questions {
		orig := strings.TrimPrefix(e.ID, "renamed_")
		if !reflect.DeepEqual(got[e.ID], want[orig]) {
			t.Errorf("%s: got %v, want %v", e.ID, got[e.ID], want[orig])
		}
	}
	// A request that is not a whole exchange estimates usage from its size.
	var resp provider.Response
	_ = json.Unmarshal(body, &resp)
	if resp.Usage.InputTokens != int64(len(b)/4+1) {
		t.Errorf("input tokens %d, want %d", resp.Usage.InputTokens, len(b)/4+1)
	}
}

func TestUnrecordedWithoutSynthetic(t *testing.T) {
	exs := readExchanges(t, filepath.Join(testutil.Testdata(t, "demo-triage"), "recorded.jsonl"))
	s := newServer(t, standin.Config{Exchanges: exs})
	var req provider.Request
	if err := json.Unmarshal(exs[0].Request, &req); err != nil {
		t.Fatal(err)
	}
	// One recorded question plus one that never was.
	req.Questions = append(req.Questions[:1:1], provider.QuestionEntry{ID: "new_one", Question: provider.Question{Type: provider.Noul, Instructions: provider.String("Is it new?")}})
	b, _ := json.Marshal(req)
	code, _, body := post(t, s, string(b))
	if code != 422 {
		t.Fatalf("status %d: %s", code, body)
	}
	ds := decodeDetails(t, body)
	if len(ds) != 1 || joinLoc(ds[0].Loc) != "body/questions/new_one" || ds[0].Type != "not_recorded" ||
		!strings.Contains(ds[0].Msg, "--synthetic") {
		t.Errorf("details %+v", ds)
	}
	// The same request with another model misses every question.
	req.Model = "jev-9.9.9"
	b, _ = json.Marshal(req)
	if code, _, body = post(t, s, string(b)); code != 422 || len(decodeDetails(t, body)) != 2 {
		t.Errorf("status %d: %s", code, body)
	}
	if st := s.Stats(); st.Unrecorded != 2 || st.Invalid != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestMixedReplayAndSyntheticIsNotJev(t *testing.T) {
	exs := readExchanges(t, filepath.Join(testutil.Testdata(t, "demo-triage"), "recorded.jsonl"))
	s := newServer(t, standin.Config{Exchanges: exs, Synthetic: true})
	var req provider.Request
	if err := json.Unmarshal(exs[0].Request, &req); err != nil {
		t.Fatal(err)
	}
	_, want := answersOf(t, exs[0].Response)
	first := req.Questions[0].ID
	req.Questions = append(req.Questions[:1:1], provider.QuestionEntry{ID: "new_one", Question: provider.Question{Type: provider.Noul}})
	b, _ := json.Marshal(req)
	code, _, body := post(t, s, string(b))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	model, got := answersOf(t, body)
	if model != standin.SyntheticModel {
		t.Errorf("model %q: a response holding synthetic answers must not carry Jev's name", model)
	}
	if !reflect.DeepEqual(got[first], want[first]) {
		t.Errorf("recorded answer changed: %v vs %v", got[first], want[first])
	}
}

func TestModelsAndRouting(t *testing.T) {
	exs := readExchanges(t, filepath.Join(testutil.Testdata(t, "demo-triage"), "recorded.jsonl"))
	s := newServer(t, standin.Config{Exchanges: exs, Synthetic: true})
	tests := []struct {
		method, path string
		code         int
		body         string // substring
	}{
		{"GET", "/v1/models", 200, `"name":"jev-latest"`},
		{"GET", "/v1/models", 200, `"name":"standin-synthetic-1"`},
		{"POST", "/v1/models", 405, `{"detail":"Method Not Allowed"}`},
		{"GET", "/v1/systemone", 405, `{"detail":"Method Not Allowed"}`},
		{"GET", "/", 404, `{"detail":"Not Found"}`},
		{"POST", "/v1/decisions", 404, `{"detail":"Not Found"}`},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, strings.NewReader("{}")))
		if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%s %s: %d %s; want %d with %s", tt.method, tt.path, w.Code, w.Body, tt.code, tt.body)
		}
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/v1/models", nil))
	var list struct {
		Models []provider.Model `json:"models"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	want := []provider.Model{
		{Name: "jev-latest"},
		{Name: "standin-synthetic-1", ReleaseDate: "2026-12-01"},
	}
	if len(list.Models) != len(want) {
		t.Fatalf("models %+v", list.Models)
	}
	for i, m := range list.Models {
		if m.Name != want[i].Name || m.Description == "" || m.ReleaseDate == "" {
			t.Errorf("model %d: %+v, want name %s and every field set", i, m, want[i].Name)
		}
	}
	if st := s.Stats(); st.NotFound != 4 || st.OK != 3 {
		t.Errorf("stats %+v", st)
	}
}

// TestOverHTTP runs the stand-in behind a real loopback server, as the
// client tests and `jevlab serve` do.
func TestOverHTTP(t *testing.T) {
	s := newServer(t, standin.Config{Synthetic: true, APIKey: "fake-key"})
	srv := httptest.NewServer(s)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/systemone",
		strings.NewReader(`{"model":"jev-latest","state":"refund please","questions":{"r":{"type":"noul","instructions":"refund?"}}}`))
	req.Header.Set("Authorization", "Bearer fake-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Typesafe-Request-Id") == "" {
		t.Fatalf("status %d, headers %v: %s", resp.StatusCode, resp.Header, body)
	}
}

// FuzzStandin: no body makes the handler panic, and every answer is either a
// 200 that passes provider.Check or a 422 in the FastAPI shape.
func FuzzStandin(f *testing.F) {
	for _, c := range []string{
		``, ` `, `{}`, `[]`, `"x"`, `null`, `{"model":"m","state":"x","questions":{"q":{"type":"noul"}}}`,
		`{"model":"m","state":{"a":[1,2]},"questions":{"c":{"type":"choice","criteria":{"a":null,"b":{"what":"x"}}}}}`,
		`{"model":"m","state":"x","questions":{"s":{"type":"score","criteria":["a","b","c"]}}}`,
		`{"model":"m","state":"x","questions":{"s":{"type":"score","criteria":{"a":1}}}}`,
	} {
		f.Add(c)
	}
	s, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		code, _, got := post(t, s, body)
		switch code {
		case 200:
			var req provider.Request
			if err := json.Unmarshal([]byte(body), &req); err != nil {
				t.Fatalf("200 for a body that does not decode: %v", err)
			}
			var resp provider.Response
			if err := json.Unmarshal(got, &resp); err != nil {
				t.Fatalf("200 body is not JSON: %v", err)
			}
			if _, err := provider.Check(&req, &resp); err != nil {
				t.Fatalf("synthetic answer fails Check: %v\n%s", err, got)
			}
		case 422, 413:
			if len(decodeDetailsTB(t, got)) == 0 && code == 422 {
				t.Fatalf("422 without detail entries: %s", got)
			}
		default:
			t.Fatalf("status %d: %s", code, got)
		}
	})
}

func decodeDetailsTB(t *testing.T, body []byte) []any {
	var v struct {
		Detail []any `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	return v.Detail
}

func TestBadExchangesAreSkippedWithWarnings(t *testing.T) {
	good := provider.Exchange{ID: "ok",
		Request:  json.RawMessage(`{"model":"m","state":"s","questions":{"q":{"type":"noul"}}}`),
		Response: json.RawMessage(`{"model":"m-1","answers":{"q":{"type":"noul","noul":0.7}},"usage":{"input_tokens":5,"output_tokens":1}}`)}
	exs := []provider.Exchange{
		{ID: "bad-request", Request: json.RawMessage(`{"model":"m","state":"s","questions":{"q":{"type":"noul","extra":1}}}`), Response: good.Response},
		{ID: "bad-response", Request: good.Request, Response: json.RawMessage(`{"answers":[]}`)},
		good,
	}
	s := newServer(t, standin.Config{Exchanges: exs})
	ws := s.Warnings()
	if len(ws) != 2 || !strings.Contains(ws[0].Error(), `exchange 1 (id "bad-request"): request:`) ||
		!strings.Contains(ws[1].Error(), `exchange 2 (id "bad-response"): response:`) {
		t.Fatalf("warnings %v", ws)
	}
	code, _, body := post(t, s, string(good.Request))
	if code != 200 || string(body) != `{"model":"m-1","answers":{"q":{"type":"noul","noul":0.7}},"usage":{"input_tokens":5,"output_tokens":1}}` {
		t.Errorf("%d %s", code, body)
	}
}

// TestTimeoutOverHTTPEndsWhenClientGivesUp: over a real connection, a
// hanging request ends as soon as the client closes it, so the server can
// shut down without waiting for TimeoutAfter.
func TestTimeoutOverHTTPEndsWhenClientGivesUp(t *testing.T) {
	s := newServer(t, standin.Config{Synthetic: true, Faults: standin.Faults{TimeoutRate: 1}})
	srv := httptest.NewServer(s)
	c := &http.Client{Timeout: 50 * time.Millisecond}
	_, err := c.Post(srv.URL+"/v1/systemone", "application/json", strings.NewReader(`{"model":"m","state":"s","questions":{"q":{"type":"noul"}}}`))
	if err == nil {
		t.Fatal("the request did not time out")
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }() // waits for in-flight handlers
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler kept hanging after the client went away")
	}
	if st := s.Stats(); st.Timeout != 1 || st.Outcomes() != st.Requests {
		t.Errorf("stats %+v", st)
	}
}
