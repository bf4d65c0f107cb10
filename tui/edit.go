package tui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// Question edits used by the editor. They work on a copy-on-write basis:
// each returns a new question so the snapshot an answer was asked with is
// never changed under it.

func cloneQuestion(q provider.Question) provider.Question {
	c := q
	c.Instructions = append(json.RawMessage(nil), q.Instructions...)
	if q.Instructions == nil {
		c.Instructions = nil
	}
	c.Options = append([]provider.Option(nil), q.Options...)
	c.Levels = append([]json.RawMessage(nil), q.Levels...)
	return c
}

// nextType cycles choice → score → noul → choice.
func nextType(t provider.QuestionType) provider.QuestionType {
	switch t {
	case provider.Choice:
		return provider.Score
	case provider.Score:
		return provider.Noul
	}
	return provider.Choice
}

// items is the number of editable criteria (options or levels).
func items(q *provider.Question) int {
	if q.Type == provider.Score {
		return len(q.Levels)
	}
	return len(q.Options)
}

// parseSlot turns editor text into a raw JSON slot. In text mode the text is
// a JSON string (empty → null); in JSON mode it must be valid JSON, and the
// error gives line and column.
func parseSlot(text string, asJSON bool) (json.RawMessage, error) {
	if !asJSON {
		if strings.TrimSpace(text) == "" {
			return json.RawMessage("null"), nil
		}
		return provider.String(text), nil
	}
	if strings.TrimSpace(text) == "" {
		return json.RawMessage("null"), nil
	}
	if err := jsonError([]byte(text)); err != nil {
		return nil, err
	}
	return provider.Compact(json.RawMessage(text)), nil
}

// jsonError validates data as one JSON value and returns an error with line
// and column (1-based) of the first problem, or nil.
func jsonError(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	err := dec.Decode(&v)
	if err == nil {
		off := dec.InputOffset()
		rest := data[off:]
		if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
			l, c := lineCol(data, off+int64(len(rest)-len(trimmed)))
			return fmt.Errorf("%d:%d: unexpected data after the JSON value", l, c)
		}
		return nil
	}
	off := int64(len(data))
	msg := err.Error()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
		if off > 0 && off <= int64(len(data)) {
			off-- // the offset is just past the offending byte
		}
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "unexpected end of input (unclosed bracket or string?)"
	}
	l, c := lineCol(data, off)
	return fmt.Errorf("%d:%d: %s", l, c, msg)
}

// lineCol converts a byte offset to a 1-based line and column (in runes).
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, r := range string(data[:off]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// slotText returns the editor text for a raw slot and whether it is best
// edited as JSON (objects and arrays; strings and null edit as text).
func slotText(v json.RawMessage) (string, bool) {
	if v == nil || string(v) == "null" {
		return "", false
	}
	if v[0] == '"' {
		return provider.Text(v), false
	}
	var b bytes.Buffer
	if json.Indent(&b, v, "", "  ") == nil {
		return b.String(), true
	}
	return string(v), true
}
