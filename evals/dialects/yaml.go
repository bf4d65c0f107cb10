package dialects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// maxYAMLDepth bounds nesting (and alias recursion) of a YAML source.
const maxYAMLDepth = 200

// maxYAMLExpanded bounds the JSON a YAML source may expand to through
// aliases.
const maxYAMLExpanded = 32 << 20

// sourceJSON returns data as JSON: JSON as it is, YAML (as people also
// write these documents) converted with key order kept. The result is
// checked by the dialect's own reader.
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
	c := yamlConv{budget: maxYAMLExpanded}
	var b bytes.Buffer
	if err := c.write(&b, doc.Content[0], 0); err != nil {
		return nil, im.fail("", "%v", err)
	}
	return b.Bytes(), nil
}

type yamlConv struct{ budget int }

func (c *yamlConv) write(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxYAMLDepth {
		return fmt.Errorf("line %d: nested more than %d levels deep", n.Line, maxYAMLDepth)
	}
	if b.Len() > c.budget {
		return fmt.Errorf("the YAML expands to more than %d MB through aliases", maxYAMLExpanded>>20)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return c.write(b, n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return fmt.Errorf("line %d: alias to an unknown anchor", n.Line)
		}
		return c.write(b, n.Alias, depth+1)
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := c.write(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key must be a plain value", k.Line)
			}
			if k.Tag == "!!merge" {
				return fmt.Errorf("line %d: merge keys (<<) are not supported in an import source; write the fields out", k.Line)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsString(k.Value))
			b.WriteByte(':')
			if err := c.write(b, v, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.ScalarNode:
		s, err := yamlScalar(n)
		if err != nil {
			return err
		}
		b.WriteString(s)
		return nil
	}
	return fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// yamlScalar renders a resolved YAML scalar as JSON, keeping a number's
// spelling when it is already valid JSON.
func yamlScalar(n *yaml.Node) (string, error) {
	switch n.ShortTag() {
	case "!!null":
		return "null", nil
	case "!!bool":
		v, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return "", fmt.Errorf("line %d: %q is not a boolean", n.Line, n.Value)
		}
		return strconv.FormatBool(v), nil
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) && !strings.HasPrefix(n.Value, "+") {
			return n.Value, nil
		}
		var f float64
		var err error
		if n.ShortTag() == "!!int" {
			var i int64
			i, err = strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
			f = float64(i)
			if err == nil {
				return strconv.FormatInt(i, 10), nil
			}
		}
		f, err = strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("line %d: %q is not a number JSON can hold", n.Line, n.Value)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case "!!str", "!!binary", "!!timestamp":
		return string(jsString(n.Value)), nil
	}
	return string(jsString(n.Value)), nil
}
