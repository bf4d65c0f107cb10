package lint

import (
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// locator finds the line and column of a question's fields in the set's
// file (YAML, or JSON read as YAML).
type locator struct {
	questions *yaml.Node // the questions mapping, nil if not found
	top       *yaml.Node
	index     map[string]int // question id → index of its key in questions.Content
}

// parseLocator parses src (a set's file form) for a locator.
func parseLocator(src []byte) *locator {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil {
		return &locator{}
	}
	return newLocator(&doc)
}

// newLocator locates in a parsed document (nil: nothing is found).
func newLocator(doc *yaml.Node) *locator {
	l := &locator{}
	if doc == nil || len(doc.Content) == 0 {
		return l
	}
	l.top = deref(doc.Content[0])
	if k, v := mapGet(l.top, "questions"); k != nil {
		l.questions = deref(v)
	}
	return l
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mapGet returns the key and value nodes of key in mapping m.
func mapGet(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// at returns the position of question id's field path (keys, or decimal
// indices into sequences), falling back to the deepest part found. The
// position is the key's for a mapping entry and the item's for a sequence
// entry.
func (l *locator) at(id string, path ...string) (line, col int) {
	k, v := l.question(id)
	if k == nil {
		if l.questions != nil {
			return l.questions.Line, l.questions.Column
		}
		return 0, 0
	}
	line, col = k.Line, k.Column
	cur := deref(v)
	for _, p := range path {
		switch {
		case cur == nil:
			return line, col
		case cur.Kind == yaml.MappingNode:
			pk, pv := mapGet(cur, p)
			if pk == nil {
				return line, col
			}
			line, col = pk.Line, pk.Column
			cur = deref(pv)
		case cur.Kind == yaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(cur.Content) {
				return line, col
			}
			cur = deref(cur.Content[i])
			line, col = cur.Line, cur.Column
		default:
			return line, col
		}
	}
	return line, col
}

// question finds id's key and value in the questions mapping through an
// index built once (a linear scan per finding made lint quadratic).
func (l *locator) question(id string) (*yaml.Node, *yaml.Node) {
	if l.questions == nil || l.questions.Kind != yaml.MappingNode {
		return nil, nil
	}
	if l.index == nil {
		l.index = make(map[string]int, len(l.questions.Content)/2)
		for i := 0; i+1 < len(l.questions.Content); i += 2 {
			if _, dup := l.index[l.questions.Content[i].Value]; !dup {
				l.index[l.questions.Content[i].Value] = i
			}
		}
	}
	i, ok := l.index[id]
	if !ok {
		return nil, nil
	}
	return l.questions.Content[i], l.questions.Content[i+1]
}

// top-level field position (e.g. "state").
func (l *locator) topField(key string) (line, col int) {
	if k, _ := mapGet(l.top, key); k != nil {
		return k.Line, k.Column
	}
	return 0, 0
}
