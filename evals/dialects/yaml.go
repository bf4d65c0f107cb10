package dialects

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/jevlab/jevlab/evals/questionset"
	yaml "go.yaml.in/yaml/v3"
)

// sourceObject reads a whole import source, JSON or YAML, as the top-level
// object every text dialect has.
func (im *importer) sourceObject(data []byte) (*object, error) {
	js, err := im.sourceJSON(data)
	if err != nil {
		return nil, err
	}
	return im.parseObject("", js)
}

// sourceJSON returns data as JSON: JSON as it is, YAML (as people also
// write these documents) converted with key order kept by the converter
// question-set files use (aliases and merge keys resolved, duplicate keys
// and keys that are not text rejected). The result is checked by the
// dialect's own reader.
func (im *importer) sourceJSON(data []byte) ([]byte, error) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, im.fail("", "the source is empty")
	}
	if t[0] == '{' || t[0] == '[' {
		if json.Valid(t) {
			return t, nil
		}
		// Flow-style YAML starts the same way; fall through to YAML, but
		// report JSON syntax if YAML cannot read it either.
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if t[0] == '{' || t[0] == '[' {
			var v any
			jerr := json.Unmarshal(t, &v)
			return nil, im.fail("", "invalid JSON: %v", jerr)
		}
		return nil, im.fail("", "neither JSON nor YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil, im.fail("", "the source is empty")
	}
	js, err := questionset.YAMLNodeJSON(doc.Content[0])
	if err != nil {
		var e *questionset.Error
		if errors.As(err, &e) && e.Line > 0 {
			return nil, im.fail("", "line %d: %s", e.Line, e.Msg)
		}
		return nil, im.fail("", "%v", err)
	}
	return js, nil
}
