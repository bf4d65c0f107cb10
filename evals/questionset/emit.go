package questionset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/provider"
	yaml "go.yaml.in/yaml/v3"
)

// Marshal returns the file form of the set.
//
// An unchanged set (compared by content with what was loaded or last
// saved) returns the original bytes exactly. Otherwise a set loaded from
// YAML is written by patching the parsed node tree: every node whose
// content did not change is kept as it was (its comments, quoting and
// flow/block style), changed scalars are rewritten in place, and new parts
// are emitted in block style. The YAML library re-indents the whole file to
// two spaces, so a hand-written file with other indentation changes layout
// on its first save (never meaning); a file jevlab wrote is a fixed point.
// A set loaded from JSON is written as indented JSON. Marshal does not
// validate: a half-edited set can be saved; Validate says what is wrong.
func (s *Set) Marshal() ([]byte, error) {
	canon := s.canonicalJSON()
	if s.orig != nil && bytes.Equal(canon, s.snapshot) {
		return append([]byte(nil), s.orig...), nil
	}
	bare := s.bare && s.onlyQuestions()
	if bare {
		// Keep a bare question map bare: write only the questions object.
		var top struct {
			Questions json.RawMessage `json:"questions"`
		}
		if err := json.Unmarshal(canon, &top); err != nil {
			return nil, fmt.Errorf("marshal question set: %w", err)
		}
		canon = provider.Compact(top.Questions)
	}
	if s.isJSON {
		var b bytes.Buffer
		if err := json.Indent(&b, canon, "", "  "); err != nil {
			return nil, fmt.Errorf("marshal question set: %w", err)
		}
		b.WriteByte('\n')
		return b.Bytes(), nil
	}
	want, err := fromJSON(canon)
	if err != nil {
		return nil, fmt.Errorf("marshal question set: %w", err)
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{want}}
	if s.doc != nil && len(s.doc.Content) == 1 && deref(s.doc.Content[0]).Kind == yaml.MappingNode {
		switch {
		case bare:
			s.doc.Content[0] = syncNode(s.doc.Content[0], want, lvQuestions)
		case s.bare:
			// A bare question map gained set fields: it becomes a full set;
			// only the comment at the top is kept.
			carryComments(s.doc.Content[0], want)
			s.doc.Content[0] = want
			s.bare = false
		default:
			s.doc.Content[0] = syncNode(s.doc.Content[0], want, lvTop)
		}
		doc = s.doc
	}
	return encodeYAML(doc)
}

// encodeYAML writes doc with two-space indentation and no line wrapping.
func encodeYAML(doc *yaml.Node) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("marshal question set: %v", r)
		}
	}()
	fixFlowNulls(doc, false, 0)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("marshal question set: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("marshal question set: %w", err)
	}
	return b.Bytes(), nil
}

// Save writes the set to path atomically (a temporary file in the same
// directory, fsynced, then renamed over path), keeping an existing file's
// mode. Afterwards the set remembers path and the written bytes, so a
// second Save of an unchanged set writes the same bytes.
func (s *Set) Save(path string) error {
	data, err := s.Marshal()
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("save question set: %w", err)
	}
	s.Path = path
	s.orig = data
	s.snapshot = s.canonicalJSON()
	if !s.isJSON && s.doc == nil {
		// Adopt the tree of what was written, so later saves patch it.
		var n yaml.Node
		if yaml.Unmarshal(data, &n) == nil && len(n.Content) == 1 {
			s.doc = &n
		}
	}
	return nil
}

// Saved tells the set that data (its Marshal output) was written to path
// by someone else, e.g. the workbench writing in the background: later
// Marshal calls return data unchanged while the set still matches it.
func (s *Set) Saved(path string, data []byte) {
	back, err := Parse(path, data)
	if err != nil {
		return // not a file this set can adopt; keep diffing against the old one
	}
	s.Path = path
	s.orig = append([]byte(nil), data...)
	s.snapshot = back.snapshot
	if s.doc == nil && !s.isJSON {
		s.doc = back.doc
	}
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory that is fsynced and renamed over path. An existing file's mode
// is kept; perm applies to a new file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the rename durable; best effort on systems that refuse
		d.Close()
	}
	return nil
}

// level says where in the document a node sits, which decides whether key
// order is meaning (questions, criteria, JSON values) or layout (the top
// level, a question's fields, gates), and whether numbers compare by value
// (caller-side settings) or by spelling (wire JSON).
type level int

const (
	lvTop level = iota
	lvQuestions
	lvQuestion
	lvGates
	lvGate
	lvData
	lvNum
	lvVariants
	lvVariant
)

func (l level) ordered() bool { return l == lvQuestions || l == lvData || l == lvVariants }

func (l level) child(key string) level {
	switch l {
	case lvTop:
		switch key {
		case "questions":
			return lvQuestions
		case "gates":
			return lvGates
		}
		return lvData
	case lvQuestions:
		return lvQuestion
	case lvQuestion:
		if key == "threshold" || key == "min_confidence" {
			return lvNum
		}
		if key == "variants" {
			return lvVariants
		}
		if key == "costs" {
			return lvGate // numbers compare by value
		}
		return lvData
	case lvVariants:
		return lvVariant
	case lvVariant:
		if key == "threshold" || key == "min_confidence" {
			return lvNum
		}
		return lvData
	case lvGates:
		return lvGate
	case lvGate:
		return lvNum
	}
	return lvData
}

// sameContent reports whether two nodes mean the same JSON.
func sameContent(a, b *yaml.Node, lv level) bool {
	ja, err1 := toJSON(a)
	jb, err2 := toJSON(b)
	if err1 != nil || err2 != nil {
		return false
	}
	if bytes.Equal(ja, jb) {
		return true
	}
	if lv == lvNum {
		x, e1 := strconv.ParseFloat(string(ja), 64)
		y, e2 := strconv.ParseFloat(string(jb), 64)
		return e1 == nil && e2 == nil && x == y
	}
	return false
}

// syncNode returns a node with want's content, reusing old (and so its
// comments and style) as far as the content allows.
func syncNode(old, want *yaml.Node, lv level) *yaml.Node {
	// Collections of the same kind are compared by descending into them
	// (an unchanged one comes out unchanged), so the whole sync stays
	// linear; aliases, merge keys and scalars are compared by content.
	descend := old.Kind == want.Kind && (old.Kind == yaml.SequenceNode || (old.Kind == yaml.MappingNode && !hasMerge(old)))
	if !descend && sameContent(old, want, lv) {
		return old
	}
	if old.Kind == yaml.AliasNode || old.Kind != want.Kind {
		// An alias shares its anchor's node: never patch through it.
		carryComments(old, want)
		return want
	}
	switch old.Kind {
	case yaml.ScalarNode:
		if old.Tag != want.Tag || old.Style&(yaml.TaggedStyle) != 0 {
			old.Style &^= yaml.TaggedStyle
		}
		// Keep the old quoting where the encoder writes it faithfully:
		// quotes for one line, a literal block or double quotes for several.
		// A folded block (which the encoder mis-writes with trailing
		// newlines) or a block for one line gives way to the default.
		multi := strings.Contains(want.Value, "\n")
		switch {
		case want.Tag != "!!str":
			old.Style = 0 // numbers, booleans and null are plain
		case want.Style == yaml.DoubleQuotedStyle:
			old.Style = yaml.DoubleQuotedStyle // the text is only safe quoted
		case multi && old.Style&(yaml.LiteralStyle|yaml.DoubleQuotedStyle) == 0:
			old.Style = 0
		case !multi && old.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			old.Style = 0
		}
		old.Tag = want.Tag
		old.Value = want.Value
		return old
	case yaml.SequenceNode:
		old.Content = syncSequence(old.Content, want.Content, lv.child(""))
		return old
	case yaml.MappingNode:
		if hasMerge(old) {
			carryComments(old, want)
			return want
		}
		syncMapping(old, want, lv)
		return old
	}
	return want
}

func hasMerge(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].ShortTag() == "!!merge" {
			return true
		}
	}
	return false
}

func carryComments(from, to *yaml.Node) {
	if to.HeadComment == "" {
		to.HeadComment = from.HeadComment
	}
	if to.LineComment == "" {
		to.LineComment = from.LineComment
	}
	if to.FootComment == "" {
		to.FootComment = from.FootComment
	}
}

// syncMapping patches old's entries to want's. Entries are matched by key;
// a new key that takes the place (same index) of a vanished one reuses its
// nodes, so a renamed option or question keeps its comments. At levels
// where order is meaning the result has want's order; elsewhere the old
// order is kept and new keys go after their predecessor in want.
func syncMapping(old, want *yaml.Node, lv level) {
	type entry struct{ k, v *yaml.Node }
	var olds []entry
	oldIdx := map[string]int{}
	for i := 0; i+1 < len(old.Content); i += 2 {
		k, err := keyString(old.Content[i])
		if err != nil {
			k = old.Content[i].Value
		}
		oldIdx[k] = len(olds)
		olds = append(olds, entry{old.Content[i], old.Content[i+1]})
	}
	var wants []entry
	for i := 0; i+1 < len(want.Content); i += 2 {
		wants = append(wants, entry{want.Content[i], want.Content[i+1]})
	}
	used := make([]bool, len(olds))
	match := make([]int, len(wants)) // index into olds, -1 = new
	wantKeys := map[string]bool{}
	for i, w := range wants {
		wantKeys[w.k.Value] = true
		match[i] = -1
		if j, ok := oldIdx[w.k.Value]; ok {
			match[i] = j
			used[j] = true
		}
	}
	// Renames: an unmatched new entry takes over an unmatched old one with
	// the same content; then, when as many entries vanished as appeared,
	// the rest pair up in order.
	var freeOld, freeNew []int
	for j := range olds {
		if ok, _ := keyString(olds[j].k); !used[j] && !wantKeys[ok] {
			freeOld = append(freeOld, j)
		}
	}
	for i := range wants {
		if match[i] >= 0 {
			continue
		}
		for _, j := range freeOld {
			if !used[j] && sameContent(olds[j].v, wants[i].v, lv.child(wants[i].k.Value)) {
				match[i], used[j] = j, true
				break
			}
		}
		if match[i] < 0 {
			freeNew = append(freeNew, i)
		}
	}
	var left []int
	for _, j := range freeOld {
		if !used[j] {
			left = append(left, j)
		}
	}
	if len(left) == len(freeNew) {
		for k, i := range freeNew {
			match[i], used[left[k]] = left[k], true
		}
	}
	result := make([]entry, len(wants))
	for i, w := range wants {
		if j := match[i]; j >= 0 {
			k := olds[j].k
			if kk, _ := keyString(k); kk != w.k.Value || k.Kind != yaml.ScalarNode {
				if k.Kind != yaml.ScalarNode {
					k = w.k
				} else {
					k.Value, k.Tag, k.Style = w.k.Value, "!!str", k.Style&^yaml.TaggedStyle
					if w.k.Style == yaml.DoubleQuotedStyle {
						k.Style = yaml.DoubleQuotedStyle
					}
				}
			}
			result[i] = entry{k, syncNode(olds[j].v, w.v, lv.child(w.k.Value))}
		} else {
			result[i] = entry{w.k, w.v}
		}
	}
	if !lv.ordered() {
		// Keep the file's order for kept entries; place new ones after the
		// entry that precedes them in want.
		var ordered []entry
		pos := map[int]int{} // old index → position in ordered
		order := make([]int, 0, len(wants))
		for j := range olds {
			for i := range wants {
				if match[i] == j {
					order = append(order, i)
				}
			}
		}
		for _, i := range order {
			pos[i] = len(ordered)
			ordered = append(ordered, result[i])
		}
		for i := range wants {
			if match[i] >= 0 {
				continue
			}
			at := 0
			for p := i - 1; p >= 0; p-- {
				if q, ok := pos[p]; ok {
					at = q + 1
					break
				}
			}
			ordered = append(ordered, entry{})
			copy(ordered[at+1:], ordered[at:])
			ordered[at] = result[i]
			for k, v := range pos {
				if v >= at {
					pos[k] = v + 1
				}
			}
			pos[i] = at
		}
		result = ordered
	}
	old.Content = old.Content[:0]
	for _, e := range result {
		old.Content = append(old.Content, e.k, e.v)
	}
}

// syncSequence matches list items by content first (so an inserted,
// removed or moved level leaves the others' nodes and comments alone),
// then pairs the leftovers in order as edits in place.
func syncSequence(olds, wants []*yaml.Node, lv level) []*yaml.Node {
	out := make([]*yaml.Node, len(wants))
	used := make([]bool, len(olds))
	for i, w := range wants {
		// Cheap first guess: the same position.
		if i < len(olds) && !used[i] && sameContent(olds[i], w, lv) {
			out[i], used[i] = olds[i], true
			continue
		}
		for j, o := range olds {
			if !used[j] && sameContent(o, w, lv) {
				out[i], used[j] = o, true
				break
			}
		}
	}
	j := 0
	for i, w := range wants {
		if out[i] != nil {
			continue
		}
		for j < len(olds) && used[j] {
			j++
		}
		if j < len(olds) {
			out[i], used[j] = syncNode(olds[j], w, lv), true
		} else {
			out[i] = w
		}
	}
	return out
}

// fixFlowNulls spells implicit nulls inside flow collections ({a, b} or
// {a: }) as null: the YAML encoder would write them as ” (text).
func fixFlowNulls(n *yaml.Node, inFlow bool, depth int) {
	if n == nil || depth > maxDepth {
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if inFlow && n.Value == "" && n.ShortTag() == "!!null" {
			n.Value = "null"
		}
	case yaml.MappingNode, yaml.SequenceNode, yaml.DocumentNode:
		flow := inFlow || n.Style&yaml.FlowStyle != 0
		for _, c := range n.Content {
			fixFlowNulls(c, flow, depth+1)
		}
	}
}
