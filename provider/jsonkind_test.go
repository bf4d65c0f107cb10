package provider

import (
	"encoding/json"
	"fmt"
	"testing"
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
