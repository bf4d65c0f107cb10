package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// DefaultModel is the model requested when none is named.
const DefaultModel = "jev-latest"

// QuestionEntry is one question under its id.
type QuestionEntry struct {
	ID       string
	Question Question
}

// Questions is the request's question map kept in written order.
type Questions []QuestionEntry

// Get returns the question with id, if present.
func (qs Questions) Get(id string) (*Question, bool) {
	for i := range qs {
		if qs[i].ID == id {
			return &qs[i].Question, true
		}
	}
	return nil, false
}

// IDs returns the question ids in order.
func (qs Questions) IDs() []string {
	ids := make([]string, len(qs))
	for i := range qs {
		ids[i] = qs[i].ID
	}
	return ids
}

// MarshalJSON writes the map in order.
func (qs Questions) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	qs.appendJSON(&b)
	return b.Bytes(), nil
}

func (qs Questions) appendJSON(b *bytes.Buffer) {
	b.WriteByte('{')
	for i := range qs {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, qs[i].ID)
		b.WriteByte(':')
		qs[i].Question.appendJSON(b)
	}
	b.WriteByte('}')
}

// UnmarshalJSON reads the map keeping document order. A question that does
// not decode is reported with its id.
func (qs *Questions) UnmarshalJSON(data []byte) error {
	fields, err := objectFields(data)
	var dup *FieldError
	if errors.As(err, &dup) {
		return &QuestionError{ID: dup.Field, Err: &FieldError{Field: "id", Msg: "duplicate question id"}}
	}
	if err != nil {
		return fmt.Errorf("questions: %w", err)
	}
	out := make(Questions, 0, len(fields))
	for _, f := range fields {
		var q Question
		if err := q.UnmarshalJSON(f.Value); err != nil {
			return &QuestionError{ID: f.Key, Err: err}
		}
		out = append(out, QuestionEntry{ID: f.Key, Question: q})
	}
	*qs = out
	return nil
}

// Request is the body of POST /v1/systemone.
type Request struct {
	// Model is the requested model name or alias.
	Model string
	// State is compact raw JSON: a string, object or array.
	State json.RawMessage
	// Questions are the questions in written order.
	Questions Questions
	// Assets are the request's images (Jev 1.14, box.go), referenced by
	// name from the state or questions; sent only with DangerZone.Images.
	Assets []Asset
	// DangerZone are the experimental opt-ins the request is sent with (as
	// headers, never in the body).
	DangerZone DangerZone
}

// MarshalJSON writes the wire body {"model","state","questions"}.
func (r Request) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(r.State) + 256*len(r.Questions) + 64)
	r.AppendJSON(&b)
	return b.Bytes(), nil
}

// AppendJSON writes the wire body to b.
func (r *Request) AppendJSON(b *bytes.Buffer) {
	b.WriteString(`{"model":`)
	writeJSONString(b, r.Model)
	b.WriteString(`,"state":`)
	if r.State == nil {
		b.WriteString("null")
	} else {
		b.Write(r.State)
	}
	b.WriteString(`,"questions":`)
	r.Questions.appendJSON(b)
	r.appendAssets(b, false)
	b.WriteByte('}')
}

// AppendRecordJSON writes the body as a recording keeps it: each asset by
// its SHA-256 and size instead of its bytes, so fixture files stay small
// and still key the answers to the images asked about.
func (r *Request) AppendRecordJSON(b *bytes.Buffer) {
	b.WriteString(`{"model":`)
	writeJSONString(b, r.Model)
	b.WriteString(`,"state":`)
	if r.State == nil {
		b.WriteString("null")
	} else {
		b.Write(r.State)
	}
	b.WriteString(`,"questions":`)
	r.Questions.appendJSON(b)
	r.appendAssets(b, true)
	b.WriteByte('}')
}

// UnmarshalJSON reads a wire body. Unknown top-level fields are ignored, as
// the TypeSafe server is reported to do; the legacy "document" field is
// accepted as the state when "state" is absent.
func (r *Request) UnmarshalJSON(data []byte) error {
	fields, err := objectFields(data)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	*r = Request{}
	var legacy json.RawMessage
	for _, f := range fields {
		switch f.Key {
		case "model":
			if err := json.Unmarshal(f.Value, &r.Model); err != nil {
				return &FieldError{Field: "model", Msg: "must be a string"}
			}
		case "state":
			r.State = compact(f.Value)
		case "document":
			legacy = compact(f.Value)
		case "questions":
			if err := r.Questions.UnmarshalJSON(f.Value); err != nil {
				return err
			}
		case "assets":
			if isNull(f.Value) {
				continue
			}
			as, err := parseAssets(f.Value)
			if err != nil {
				return err
			}
			r.Assets = as
		}
	}
	if r.State == nil {
		r.State = legacy
	}
	return nil
}

// Subset returns a copy of r asking only the questions whose ids are listed,
// in r's order.
func (r *Request) Subset(ids []string) *Request {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := &Request{Model: r.Model, State: r.State, Assets: r.Assets, DangerZone: r.DangerZone}
	for _, e := range r.Questions {
		if want[e.ID] {
			out.Questions = append(out.Questions, e)
		}
	}
	return out
}
