package questionset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jevlab/jevlab/provider"
	yaml "go.yaml.in/yaml/v3"
)

// maxExpanded caps what a YAML document may expand to through aliases and
// merge keys ("billion laughs"), beyond what its own text spells out: a
// question set is never this large.
const maxExpanded = 16 << 20

// plainFactor bounds the JSON a document's own text can spell without
// aliases, per byte of it: `{a,b}` is 8 bytes of JSON ("a":null) for 2 of
// YAML, and nothing spells more. A converter for a whole document allows
// that much on top of maxExpanded, so a long plain text is never taken for
// alias expansion (its size is the file size cap's business).
const plainFactor = 4

// maxDepth caps nesting so a hostile file cannot exhaust the stack.
const maxDepth = 512

// posError is a conversion problem at a node.
type posError struct {
	node *yaml.Node
	msg  string
}

func (e *posError) Error() string { return e.msg }

// converter turns yaml.Node trees into compact JSON, keeping key order and
// number spelling, resolving aliases and merge keys. One converter reads a
// whole document, so its budget bounds the expansion across every field:
// a thousand questions that each alias one large anchor are charged for
// each copy.
type converter struct {
	budget int // bytes of output (and merged entries) still allowed
}

// newConverter returns a converter for a document of size bytes.
func newConverter(size int) *converter {
	return &converter{budget: maxExpanded + plainFactor*size}
}

// toJSON converts n to compact JSON with a budget of its own.
func toJSON(n *yaml.Node) (json.RawMessage, error) {
	return (&converter{budget: maxExpanded}).toJSON(n)
}

// toJSON converts n to compact JSON, charging c's budget.
func (c *converter) toJSON(n *yaml.Node) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := c.write(&b, n, 0); err != nil {
		return nil, err
	}
	return json.RawMessage(b.Bytes()), nil
}

// YAMLNodeJSON converts a YAML node tree, as yaml.Unmarshal fills a
// yaml.Node, to compact JSON the way Parse reads a question set: key order
// and number spelling kept, aliases and merge keys (<<) resolved, duplicate
// keys and keys that are not text rejected, and the expansion through
// aliases (16 MB) and the nesting (512 levels) capped. Other readers of
// YAML-written JSON documents (the dialect importers) use it so the two
// read YAML alike. A problem is an *Error with the Line and Col of the node
// at fault; File is left for the caller.
func YAMLNodeJSON(n *yaml.Node) (json.RawMessage, error) {
	raw, err := toJSON(n)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return nil, &Error{Line: pe.node.Line, Col: pe.node.Column, Msg: pe.msg}
		}
		return nil, err
	}
	return raw, nil
}

func (c *converter) charge(n int, at *yaml.Node) error {
	c.budget -= n
	if c.budget < 0 {
		return &posError{at, fmt.Sprintf("the document expands to more than %d MB through aliases (*name) and merge keys (<<); spell the repeated parts out once", maxExpanded>>20)}
	}
	return nil
}

func (c *converter) write(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return &posError{n, fmt.Sprintf("nested more than %d levels deep", maxDepth)}
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
			return &posError{n, "alias to an unknown anchor"}
		}
		return c.write(b, n.Alias, depth+1)
	case yaml.ScalarNode:
		s, err := scalarJSON(n)
		if err != nil {
			return err
		}
		if err := c.charge(len(s), n); err != nil {
			return err
		}
		b.WriteString(s)
		return nil
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
		return c.charge(2+len(n.Content), n)
	case yaml.MappingNode:
		pairs, err := c.pairs(n, depth)
		if err != nil {
			return err
		}
		b.WriteByte('{')
		for i, p := range pairs {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, p.key)
			b.WriteByte(':')
			if err := c.write(b, p.value, depth+1); err != nil {
				return err
			}
			if err := c.charge(len(p.key)+3, p.keyNode); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	return &posError{n, "unsupported YAML node"}
}

// pair is one resolved mapping entry.
type pair struct {
	key     string
	keyNode *yaml.Node
	value   *yaml.Node
}

// mappingPairs returns the entries of a mapping in document order, with
// merge keys (<<) expanded and duplicate keys rejected, with a budget of
// its own.
func mappingPairs(n *yaml.Node, depth int) ([]pair, error) {
	return (&converter{budget: maxExpanded}).pairs(n, depth)
}

// pairs is mappingPairs charging c's budget for every entry a merge key
// brings in (merging is alias expansion). A mapping merged twice into one
// mapping (<<: [*a, *a], or through two paths) is read once: its keys are
// already there, and reading it again made `a1: {<<: [*a0, *a0, *a0,
// *a0]}` nested 14 deep take a minute.
func (c *converter) pairs(n *yaml.Node, depth int) ([]pair, error) {
	return c.mappingPairs(n, depth, nil)
}

func (c *converter) mappingPairs(n *yaml.Node, depth int, merging map[*yaml.Node]bool) ([]pair, error) {
	if depth > maxDepth {
		return nil, &posError{n, fmt.Sprintf("nested more than %d levels deep", maxDepth)}
	}
	var out []pair
	seen := map[string]*yaml.Node{}
	var merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if merging == nil {
				merging = map[*yaml.Node]bool{n: true}
			}
			m, err := c.mergeSources(v, depth+1, merging)
			if err != nil {
				return nil, err
			}
			merged = append(merged, m...)
			continue
		}
		key, err := keyString(k)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[key]; dup {
			return nil, &posError{k, fmt.Sprintf("duplicate key %q (first at line %d)", key, first.Line)}
		}
		seen[key] = k
		out = append(out, pair{key, k, v})
	}
	for _, m := range merged {
		if _, dup := seen[m.key]; dup {
			continue
		}
		seen[m.key] = m.keyNode
		out = append(out, m)
	}
	return out, nil
}

func (c *converter) mergeSources(v *yaml.Node, depth int, merging map[*yaml.Node]bool) ([]pair, error) {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		if merging[v] {
			return nil, nil
		}
		merging[v] = true
		ps, err := c.mappingPairs(v, depth, merging)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if err := c.charge(len(p.key)+3, p.keyNode); err != nil {
				return nil, err
			}
		}
		return ps, nil
	case yaml.SequenceNode:
		var out []pair
		for _, e := range v.Content {
			p, err := c.mergeSources(e, depth+1, merging)
			if err != nil {
				return nil, err
			}
			out = append(out, p...)
		}
		return out, nil
	}
	return nil, &posError{v, "a merge key (<<) needs a mapping or a list of mappings"}
}

// keyString returns a mapping key as text. Booleans become "true"/"false"
// (a noul's `true:`/`false:` criteria keys); numbers, null and collection
// keys are rejected, so `1:` never silently becomes a label.
func keyString(k *yaml.Node) (string, error) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", &posError{k, "a key must be text, not a list or mapping"}
	}
	switch k.ShortTag() {
	case "!!null":
		return "", &posError{k, "a key must be text, not null; quote it if you mean the word"}
	case "!!bool":
		// `true:`/`false:` are how YAML users write a noul's criteria.
		if strings.EqualFold(k.Value, "true") {
			return "true", nil
		}
		return "false", nil
	case "!!int", "!!float":
		return "", &posError{k, fmt.Sprintf("a key must be text, not a number; quote it: %q", k.Value)}
	case "!!str", "!!timestamp":
		return k.Value, nil
	}
	return "", &posError{k, fmt.Sprintf("a key must be text; %s is not supported here", k.Tag)}
}

// scalarJSON returns the JSON for one scalar.
func scalarJSON(n *yaml.Node) (string, error) {
	switch n.ShortTag() {
	case "!!null":
		return "null", nil
	case "!!bool":
		if strings.EqualFold(n.Value, "true") {
			return "true", nil
		}
		return "false", nil
	case "!!int":
		if isJSONNumber(n.Value) {
			return n.Value, nil
		}
		v := strings.ReplaceAll(n.Value, "_", "")
		neg := strings.HasPrefix(v, "-")
		v = strings.TrimLeft(v, "+-")
		if strings.HasPrefix(v, "0o") {
			v = "0" + v[2:]
		}
		u, err := strconv.ParseUint(v, 0, 64)
		if errors.Is(err, strconv.ErrRange) {
			return "", &posError{n, fmt.Sprintf("integer %s cannot be represented in JSON", n.Value)}
		}
		if err != nil {
			return "", &posError{n, fmt.Sprintf("%s is tagged !!int but is not an integer", strconv.Quote(n.Value))}
		}
		s := strconv.FormatUint(u, 10)
		if neg && s != "0" {
			s = "-" + s
		}
		return s, nil
	case "!!float":
		if isJSONNumber(n.Value) {
			return n.Value, nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if errors.Is(err, strconv.ErrSyntax) && !yamlInfNaN(n.Value) {
			return "", &posError{n, fmt.Sprintf("%s is tagged !!float but is not a number", strconv.Quote(n.Value))}
		}
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", &posError{n, fmt.Sprintf("number %s cannot be represented in JSON (no infinities or NaN)", n.Value)}
		}
		out, _ := json.Marshal(f)
		return string(out), nil
	case "!!str", "!!binary", "!!timestamp", "":
		if !utf8.ValidString(n.Value) {
			return "", &posError{n, "text is not valid UTF-8"}
		}
		var b bytes.Buffer
		writeString(&b, n.Value)
		return b.String(), nil
	}
	return "", &posError{n, fmt.Sprintf("unsupported tag %s; use plain JSON-compatible values", n.Tag)}
}

// yamlInfNaN reports whether s is YAML's spelling of an infinity or NaN.
func yamlInfNaN(s string) bool {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case ".inf", ".nan":
		return true
	}
	return false
}

// isJSONNumber reports whether s is spelled as a JSON number.
func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// writeString writes s as a JSON string without HTML escaping, the same
// spelling provider uses on the wire.
func writeString(b *bytes.Buffer, s string) {
	b.Write(provider.String(s))
}

// fromJSON builds a yaml.Node tree for raw JSON, keeping key order and
// number spelling. Collections use block style.
func fromJSON(raw json.RawMessage) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec, nil, 0)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// decodeNode reads one JSON value from dec. When pt is non-nil, node
// positions (line, column) are computed from offsets into its data.
func decodeNode(dec *json.Decoder, pt *posTracker, depth int) (*yaml.Node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	var line, col int
	if pt != nil {
		line, col = pt.at(skipSpace(pt.data, int(dec.InputOffset())))
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line, Column: col}
			for dec.More() {
				var kl, kc int
				if pt != nil {
					kl, kc = pt.at(skipSpace(pt.data, int(dec.InputOffset())))
				}
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := decodeNode(dec, pt, depth+1)
				if err != nil {
					return nil, err
				}
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: kl, Column: kc}
				if pt == nil && needsDoubleQuotes(key) {
					k.Style = yaml.DoubleQuotedStyle
				}
				n.Content = append(n.Content, k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line, Column: col}
			for dec.More() {
				v, err := decodeNode(dec, pt, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t, Line: line, Column: col}
		if pt == nil && needsDoubleQuotes(t) {
			n.Style = yaml.DoubleQuotedStyle
		}
		return n, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t), Line: line, Column: col}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t), Line: line, Column: col}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line, Column: col}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// skipSpace returns the offset of the next significant byte at or after
// off, skipping JSON whitespace and the separators the decoder has not yet
// consumed.
func skipSpace(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// posTracker converts increasing byte offsets into lines and columns in
// time linear in the data (position would rescan from the start).
type posTracker struct {
	data []byte
	off  int // offsets before this are accounted for
	line int // line at off
	col  int // characters between the start of that line and off
}

func (p *posTracker) at(off int) (line, col int) {
	if off > len(p.data) {
		off = len(p.data)
	}
	if off < p.off {
		return position(p.data, off)
	}
	for i := p.off; i < off; i++ {
		switch c := p.data[i]; {
		case c == '\n':
			p.line++
			p.col = 0
		case c&0xC0 != 0x80: // not a UTF-8 continuation byte
			p.col++
		}
	}
	p.off = off
	return p.line, p.col + 1
}

// position converts a byte offset into a 1-based line and column (in
// characters).
func position(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	col = 1 + utf8.RuneCount(data[start:off])
	return line, col
}

// parseJSONDocument parses a JSON file into a yaml document node with
// positions, so JSON and YAML files share one loader. It rejects trailing
// data after the value.
func parseJSONDocument(data []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := decodeNode(dec, &posTracker{data: data, line: 1}, 0)
	if err != nil {
		return nil, jsonSyntaxError(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := position(data, skipSpace(data, int(dec.InputOffset())))
		return nil, &Error{Line: line, Col: col, Msg: "unexpected data after the JSON value"}
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}, Line: 1, Column: 1}, nil
}

func jsonSyntaxError(data []byte, dec *json.Decoder, err error) error {
	off := int(dec.InputOffset())
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		off = len(data)
		err = errors.New("unexpected end of JSON")
	}
	line, col := position(data, off)
	return &Error{Line: line, Col: col, Msg: "invalid JSON: " + jsonMessage(err)}
}

// quotedChar is the character encoding/json quotes in a syntax error
// ("invalid character 'A' looking for …").
var quotedChar = regexp.MustCompile(`(?:invalid )?character '(?:\\.|[^'])*'`)

// jsonMessage is a JSON decoding error without the content it quotes: a
// file that does not parse is never echoed, not even one character of it.
func jsonMessage(err error) string {
	return quotedChar.ReplaceAllString(err.Error(), "unexpected character")
}

// needsDoubleQuotes reports whether the YAML encoder's own choice for s (a
// literal block for multi-line text) would not read back as s: lines that
// start or end with blanks, carriage returns and other control characters
// are only safe double-quoted.
func needsDoubleQuotes(s string) bool {
	for _, r := range s {
		if r != '\n' && (r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff) {
			return true
		}
	}
	if !strings.Contains(s, "\n") {
		return false
	}
	for _, line := range strings.Split(s, "\n") {
		if line != "" && (line[0] == ' ' || line[len(line)-1] == ' ') {
			return true
		}
	}
	return false
}
