package provider

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func TestKindOfJSON(t *testing.T) {
	tests := []struct {
		in   json.RawMessage
		want JSONKind
		name string
	}{
		{nil, 0, "missing value"},
		{json.RawMessage(`"x"`), 's', "string"},
		{json.RawMessage(` {"a":1}`), 'o', "object"},
		{json.RawMessage("\n[1]"), 'a', "array"},
		{json.RawMessage(`null`), 'n', "null"},
		{json.RawMessage(`true`), 'b', "boolean"},
		{json.RawMessage(`false`), 'b', "boolean"},
		{json.RawMessage(`-1.5e3`), 'd', "number"},
		{json.RawMessage(`[1,`), 'x', "invalid JSON"},
		{json.RawMessage(``), 'x', "invalid JSON"},
		{json.RawMessage(`nul`), 'x', "invalid JSON"},
	}
	for _, tt := range tests {
		got := KindOfJSON(tt.in)
		if got != tt.want {
			t.Errorf("KindOfJSON(%q) = %q, want %q", tt.in, byte(got), byte(tt.want))
		}
		if s := fmt.Sprintf("%s", got); s != tt.name {
			t.Errorf("KindOfJSON(%q) prints %q, want %q", tt.in, s, tt.name)
		}
	}
}

func TestParseRecordedAt(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 in UTC, "" for the zero time
	}{
		{"", ""},
		{"2026-09-17T09:41:39Z", "2026-09-17T09:41:39Z"},
		{"2026-09-17T11:41:39.25+02:00", "2026-09-17T09:41:39.25Z"},
		{"2026-09-17 09:41:39", ""}, // not RFC 3339: unknown
		{"yesterday", ""},
		// A time in the future is unknown, so it cannot outrank every real
		// recording forever.
		{"2999-01-01T00:00:00Z", ""},
		{time.Now().Add(2 * MaxClockSkew).UTC().Format(time.RFC3339), ""},
	}
	for _, tt := range tests {
		got := ParseRecordedAt(tt.in)
		s := ""
		if !got.IsZero() {
			s = got.UTC().Format(time.RFC3339Nano)
		}
		if s != tt.want {
			t.Errorf("ParseRecordedAt(%q) = %q, want %q", tt.in, s, tt.want)
		}
	}
}

func TestQuestionClone(t *testing.T) {
	q := Question{
		Type:         Choice,
		Instructions: json.RawMessage(`"Which team?"`),
		Options:      []Option{{Label: "a", Description: json.RawMessage(`"x"`)}, {Label: "b"}},
		Levels:       []json.RawMessage{{}},
	}
	c := q.Clone()
	c.Instructions[1] = 'X'
	c.Options[0].Label = "changed"
	c.Options[0].Description[1] = 'Y'
	c.Levels[0] = append(c.Levels[0], '1')
	if string(q.Instructions) != `"Which team?"` || q.Options[0].Label != "a" || string(q.Options[0].Description) != `"x"` || len(q.Levels[0]) != 0 {
		t.Errorf("editing the clone changed the original: %+v", q)
	}
	if c.Options[1].Description != nil {
		t.Errorf("absent description became %q, want nil", c.Options[1].Description)
	}
	if c2 := q.Clone(); c2.Levels[0] == nil {
		t.Error("an empty level became nil")
	}
	var empty Question
	if c := empty.Clone(); c.Instructions != nil || c.Options != nil || c.Levels != nil {
		t.Errorf("clone of the zero question = %+v, want all nil", c)
	}
}
