package systemone

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

// TestEncoderMatchesMarshal: the cached encoding is byte for byte what
// Request.MarshalJSON writes, for every real recorded request, asked twice
// (miss, then hit).
func TestEncoderMatchesMarshal(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t), "testdata", "*", "recorded*.jsonl"))
	e := newEncoder(provider.Limits{})
	n := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ex provider.Exchange
			var req provider.Request
			if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(ex.Request, &req); err != nil {
				t.Fatal(err)
			}
			want, _ := req.MarshalJSON()
			for pass := 0; pass < 2; pass++ {
				got, err := e.encode(&req)
				if err != nil || string(got) != string(want) {
					t.Fatalf("%s pass %d: %v\n got %s\nwant %s", f, pass, err, got, want)
				}
			}
			n++
		}
		fh.Close()
	}
	if n == 0 {
		t.Skip("no recordings")
	}
}

// TestEncoderSeesInPlaceEdits: a question edited in place after it was
// cached is validated and encoded again.
func TestEncoderSeesInPlaceEdits(t *testing.T) {
	edits := []struct {
		name string
		edit func(r *provider.Request)
		want string // error substring, or "" for a new valid body
	}{
		{"description bytes", func(r *provider.Request) { r.Questions[1].Question.Options[0].Description[1] = 'M' }, ""},
		{"description to a number", func(r *provider.Request) {
			r.Questions[1].Question.Options[0].Description = json.RawMessage(`42`)
		}, `question "team": criteria.billing: must be a string`},
		{"label", func(r *provider.Request) { r.Questions[1].Question.Options[1].Label = "orders " }, `question "team": criteria.orders : option label has leading or trailing whitespace`},
		{"option dropped", func(r *provider.Request) {
			q := &r.Questions[1].Question
			q.Options = q.Options[:1]
		}, `question "team": criteria: has 1 option(s)`},
		{"levels on a choice", func(r *provider.Request) {
			r.Questions[1].Question.Levels = []json.RawMessage{json.RawMessage(`"x"`)}
		}, `question "team": criteria: a choice's criteria is an object`},
		{"instructions removed", func(r *provider.Request) { r.Questions[0].Question.Instructions = nil }, ""},
		{"instructions emptied", func(r *provider.Request) { r.Questions[0].Question.Instructions = json.RawMessage{} }, `question "urgent": instructions`},
		{"level edited", func(r *provider.Request) { r.Questions[2].Question.Levels[2] = nil }, `question "anger": criteria[2]: is null`},
		{"type", func(r *provider.Request) { r.Questions[0].Question.Type = "yesno" }, `question "urgent": type`},
		{"duplicate id", func(r *provider.Request) { r.Questions[2].ID = "urgent" }, `question "urgent": id: duplicate question id`},
		{"state", func(r *provider.Request) { r.State = json.RawMessage(`7`) }, `state: must be a string, object or array, not a number`},
		{"state bytes in place", func(r *provider.Request) { r.State[1] = 'X' }, ""},
		{"state made invalid in place", func(r *provider.Request) { r.State[len(r.State)-1] = ' ' }, `state: is not valid JSON`},
		{"id renamed", func(r *provider.Request) { r.Questions[0].ID = "urgent2" }, ""},
		{"model", func(r *provider.Request) { r.Model = "jev-1.13.0" }, ""},
		{"size", func(r *provider.Request) { r.State = json.RawMessage(`"` + strings.Repeat("x", 800) + `"`) }, `exceeds the limit of 1000 bytes`},
	}
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			e := newEncoder(provider.Limits{MaxRequestBytes: 1000})
			req := testRequest(t)
			for i := 0; i < 2; i++ { // cache and memo both filled
				if _, err := e.encode(req); err != nil {
					t.Fatal(err)
				}
			}
			tc.edit(req)
			got, err := e.encode(req)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				return
			}
			want, _ := req.MarshalJSON()
			if err != nil || string(got) != string(want) {
				t.Fatalf("err %v\n got %s\nwant %s", err, got, want)
			}
		})
	}
}

// TestEncoderCautiousPaths: inputs the fast checks do not accept are still
// encoded when provider's validation passes them.
func TestEncoderCautiousPaths(t *testing.T) {
	e := newEncoder(provider.Limits{})
	req := testRequest(t)
	req.State = json.RawMessage(" \"spaced\" ")
	req.Questions[0].ID = "naïve \"id\""
	got, err := e.encode(req)
	want, _ := req.MarshalJSON()
	if err != nil || string(got) != string(want) {
		t.Fatalf("err %v\n got %s\nwant %s", err, got, want)
	}
}
