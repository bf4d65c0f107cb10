package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// convertType returns q converted to type t, keeping what carries over:
// choice descriptions (or labels) become score levels and back; a noul keeps
// only true/false criteria.
func convertType(q provider.Question, t provider.QuestionType) provider.Question {
	c := cloneQuestion(q)
	if q.Type == t {
		return c
	}
	c.Type = t
	switch t {
	case provider.Score:
		c.Levels = nil
		for _, o := range q.Options {
			if o.Description == nil || string(o.Description) == "null" {
				c.Levels = append(c.Levels, provider.String(o.Label))
			} else {
				c.Levels = append(c.Levels, o.Description)
			}
		}
		if len(c.Levels) < 2 {
			c.Levels = []json.RawMessage{provider.String("low"), provider.String("high")}
		}
		c.Options = nil
	case provider.Choice:
		c.Options = nil
		for i, l := range q.Levels {
			label := fmt.Sprintf("level_%d", i)
			if s := provider.Text(l); s != "" && !strings.ContainsAny(s, " \t\n") && len(s) <= 64 {
				label = s
			}
			c.Options = append(c.Options, provider.Option{Label: label, Description: l})
		}
		if q.Type == provider.Noul {
			c.Options = nil
			for _, o := range q.Options {
				c.Options = append(c.Options, provider.Option{Label: map[string]string{"true": "yes", "false": "no"}[o.Label], Description: o.Description})
			}
		}
		if len(c.Options) < 2 {
			c.Options = []provider.Option{{Label: "yes", Description: json.RawMessage("null")}, {Label: "no", Description: json.RawMessage("null")}}
		}
		c.Levels = nil
	case provider.Noul:
		c.Options, c.Levels = nil, nil
	}
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

// moveItem swaps criteria i and j.
func moveItem(q provider.Question, i, j int) provider.Question {
	c := cloneQuestion(q)
	n := items(&c)
	if i < 0 || j < 0 || i >= n || j >= n {
		return c
	}
	if c.Type == provider.Score {
		c.Levels[i], c.Levels[j] = c.Levels[j], c.Levels[i]
	} else {
		c.Options[i], c.Options[j] = c.Options[j], c.Options[i]
	}
	return c
}

// removeItem deletes criterion i.
func removeItem(q provider.Question, i int) provider.Question {
	c := cloneQuestion(q)
	if c.Type == provider.Score {
		if i >= 0 && i < len(c.Levels) {
			c.Levels = append(c.Levels[:i], c.Levels[i+1:]...)
		}
	} else if i >= 0 && i < len(c.Options) {
		c.Options = append(c.Options[:i], c.Options[i+1:]...)
	}
	return c
}

// insertItem adds a criterion after index i (i = -1: at the start) and
// returns its index. New choice options get a fresh unique label.
func insertItem(q provider.Question, i int) (provider.Question, int, error) {
	c := cloneQuestion(q)
	at := i + 1
	switch c.Type {
	case provider.Score:
		at = min(max(at, 0), len(c.Levels))
		c.Levels = append(c.Levels[:at], append([]json.RawMessage{provider.String("new level")}, c.Levels[at:]...)...)
	case provider.Choice:
		label := "option"
		for n := len(c.Options) + 1; c.OptionIndex(label) >= 0; n++ {
			label = fmt.Sprintf("option_%d", n)
		}
		at = min(max(at, 0), len(c.Options))
		c.Options = append(c.Options[:at], append([]provider.Option{{Label: label, Description: json.RawMessage("null")}}, c.Options[at:]...)...)
	case provider.Noul:
		var label string
		switch {
		case c.OptionIndex("true") < 0:
			label = "true"
		case c.OptionIndex("false") < 0:
			label = "false"
		default:
			return c, i, fmt.Errorf("a noul has only the criteria \"true\" and \"false\"")
		}
		at = min(max(at, 0), len(c.Options))
		c.Options = append(c.Options[:at], append([]provider.Option{{Label: label, Description: json.RawMessage("null")}}, c.Options[at:]...)...)
	}
	return c, at, nil
}

// renameItem relabels choice option i.
func renameItem(q provider.Question, i int, label string) (provider.Question, error) {
	c := cloneQuestion(q)
	if c.Type == provider.Score {
		return c, fmt.Errorf("score levels have no labels; edit the level's text instead")
	}
	if i < 0 || i >= len(c.Options) {
		return c, fmt.Errorf("no option %d", i)
	}
	label = strings.TrimSpace(label)
	if label == "" {
		return c, fmt.Errorf("a label cannot be empty")
	}
	if c.Type == provider.Noul && label != "true" && label != "false" {
		return c, fmt.Errorf("a noul's criteria are labelled \"true\" or \"false\"")
	}
	if j := c.OptionIndex(label); j >= 0 && j != i {
		return c, fmt.Errorf("label %q is already used by option %d", label, j+1)
	}
	c.Options[i].Label = label
	return c, nil
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
		if _, err2 := dec.Token(); err2 == nil {
			off := dec.InputOffset()
			l, c := lineCol(data, off)
			return fmt.Errorf("%d:%d: unexpected data after the JSON value", l, c)
		}
		return nil
	}
	var off int64 = int64(len(data))
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	l, c := lineCol(data, off)
	msg := err.Error()
	if err.Error() == "unexpected EOF" {
		msg = "unexpected end of input (unclosed bracket or string?)"
	}
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
