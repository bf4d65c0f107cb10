package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// Pack is a jev-packs pack (spec v0) as pack.yaml declares it.
type Pack struct {
	Spec        int
	ID          string
	Version     string
	License     string
	Tested      string // "" when null
	Description string
	StateDesc   string
	StateFields []string
	Questions   []PackQuestion
	// Thresholds maps question id → label → minimum probability, in file
	// order of questions.
	Thresholds map[string][]LabelFloor
	// Dir is the pack folder.
	Dir string
}

// PackQuestion is one pack question.
type PackQuestion struct {
	ID           string
	Type         provider.QuestionType
	Instructions string
	// Options are a choice's label → meaning pairs in file order.
	Options []provider.Option
	// Levels are a score's level labels, low → high; LevelDesc their
	// descriptions (label → text, may be partial).
	Levels    []string
	LevelDesc map[string]string
}

// LabelFloor is one threshold: a label and its minimum probability.
type LabelFloor struct {
	Label string
	Min   float64
}

// Case is one line of cases.jsonl.
type Case struct {
	ID     string
	State  json.RawMessage
	Expect map[string]json.RawMessage
	Line   int
}

var (
	kebab  = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	snake  = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	jevID  = regexp.MustCompile(`^jev-[0-9]+\.[0-9]+\.[0-9]+$`)
)

// yaml11Bool lists the plain scalars PyYAML (YAML 1.1, what jevassert
// reads packs with) turns into booleans; a Go YAML 1.2 reader sees text.
var yaml11Bool = map[string]bool{}

func init() {
	for _, w := range []string{"yes", "no", "on", "off", "true", "false", "y", "n"} {
		for _, v := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			yaml11Bool[v] = w != "y" && w != "n" // PyYAML does not read y/n as booleans
		}
	}
}

var packKeys = []string{"spec", "id", "version", "license", "tested", "description", "state", "questions", "thresholds"}

type packParser struct {
	file string
	errs []error
}

func (p *packParser) fail(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, errAt(p.file, line, format, args...))
}

// pairs returns a mapping node's key/value pairs, refusing duplicates and
// merge keys (jev-packs files are plain YAML).
func (p *packParser) pairs(n *yaml.Node, what string) [][2]*yaml.Node {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s must be a mapping", what)
		return nil
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			p.fail(k, "%s: duplicate key %q", what, k.Value)
			continue
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out
}

func (p *packParser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.fail(n, "%s must be a string", what)
		return ""
	}
	return n.Value
}

// label checks a snake_case label or id as jevassert does, including the
// YAML 1.1 booleans PyYAML would have read (so a pack jevassert refuses is
// refused here too).
func (p *packParser) label(n *yaml.Node, what string) string {
	if n.Kind == yaml.ScalarNode && n.Style == 0 && yaml11Bool[n.Value] {
		p.fail(n, "%s %q is a YAML 1.1 boolean to jevassert's reader (PyYAML), not a label; quote it or rename it", what, n.Value)
		return ""
	}
	s := p.str(n, what)
	if s != "" && !snake.MatchString(s) {
		p.fail(n, "%s %q must be snake_case (a-z, 0-9, single underscores)", what, s)
		return ""
	}
	return s
}

// LoadPack reads dir/pack.yaml and checks every rule of spec v0 that
// jevassert's loader enforces; errors are file:line.
func LoadPack(dir string) (*Pack, error) {
	file := filepath.Join(dir, "pack.yaml")
	data, err := readFile(file, "jev-packs pack.yaml")
	if err != nil {
		return nil, fmt.Errorf("jev-packs: %w (a pack folder holds pack.yaml and cases.jsonl)", err)
	}
	return ParsePack(file, data, filepath.Base(filepath.Clean(dir)))
}

// ParsePack parses pack.yaml content; folder is the pack folder's name
// (the id must equal it; "" skips that check).
func ParsePack(file string, data []byte, folder string) (*Pack, error) {
	p := &packParser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errAt(file, yamlLine(err), "invalid YAML: %v", err)
	}
	if len(doc.Content) != 1 {
		return nil, errAt(file, 1, "empty file; pack.yaml is a mapping with %s", strings.Join(packKeys, ", "))
	}
	pk := &Pack{Dir: filepath.Dir(file), Spec: -1}
	root := doc.Content[0]
	seen := map[string]*yaml.Node{}
	for _, kv := range p.pairs(root, "pack.yaml") {
		k, v := kv[0], kv[1]
		seen[k.Value] = v
		switch k.Value {
		case "spec":
			if v.ShortTag() != "!!int" {
				p.fail(v, "spec must be the integer 0")
				continue
			}
			n, _ := strconv.Atoi(v.Value)
			pk.Spec = n
			if n != 0 {
				p.fail(v, "spec %d: this reader knows jev-packs spec 0 only; a newer spec needs a newer jevlab", n)
			}
		case "id":
			pk.ID = p.str(v, "id")
			if pk.ID != "" && !kebab.MatchString(pk.ID) {
				p.fail(v, "id %q must be kebab-case (a-z, 0-9, single hyphens)", pk.ID)
			} else if folder != "" && pk.ID != "" && pk.ID != folder {
				p.fail(v, "id %q must equal the pack folder's name %q", pk.ID, folder)
			}
		case "version":
			pk.Version = p.str(v, "version")
			if pk.Version != "" && !semver.MatchString(pk.Version) {
				p.fail(v, "version %q must be MAJOR.MINOR.PATCH (no pre-release part)", pk.Version)
			}
		case "license":
			pk.License = p.str(v, "license")
		case "tested":
			if v.ShortTag() == "!!null" {
				continue
			}
			pk.Tested = p.str(v, "tested")
			if pk.Tested != "" && !jevID.MatchString(pk.Tested) {
				p.fail(v, "tested %q must be null or a model id jev-X.Y.Z", pk.Tested)
			}
		case "description":
			pk.Description = p.str(v, "description")
		case "state":
			p.state(pk, v)
		case "questions":
			p.questions(pk, v)
		case "thresholds":
			// after the questions, which it refers to
		default:
			p.fail(k, "unknown key %q (typo? not part of spec v0; keys are %s)", k.Value, strings.Join(packKeys, ", "))
		}
	}
	for _, k := range packKeys {
		if _, ok := seen[k]; !ok && k != "thresholds" && len(p.errs) == 0 {
			p.fail(root, "missing %s (spec v0 requires %s)", k, strings.Join(packKeys[:8], ", "))
		}
	}
	if v, ok := seen["thresholds"]; ok && len(p.errs) == 0 {
		p.thresholds(pk, v)
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return pk, nil
}

func (p *packParser) state(pk *Pack, n *yaml.Node) {
	for _, kv := range p.pairs(n, "state") {
		switch kv[0].Value {
		case "description":
			pk.StateDesc = p.str(kv[1], "state.description")
		case "fields":
			if kv[1].Kind != yaml.SequenceNode || len(kv[1].Content) == 0 {
				p.fail(kv[1], "state.fields must be a non-empty list of snake_case names")
				continue
			}
			seen := map[string]bool{}
			for _, e := range kv[1].Content {
				f := p.label(e, "state field")
				if seen[f] && f != "" {
					p.fail(e, "state field %q is listed twice", f)
				}
				seen[f] = true
				pk.StateFields = append(pk.StateFields, f)
			}
		default:
			p.fail(kv[0], "state: unknown key %q (state has description and fields)", kv[0].Value)
		}
	}
	if pk.StateFields == nil && len(p.errs) == 0 {
		p.fail(n, "state.fields is missing")
	}
}

var questionKeys = map[provider.QuestionType][]string{
	provider.Noul:   {"type", "instructions"},
	provider.Choice: {"type", "instructions", "options"},
	provider.Score:  {"type", "instructions", "levels", "level_descriptions"},
}

func (p *packParser) questions(pk *Pack, n *yaml.Node) {
	pairs := p.pairs(n, "questions")
	if len(pairs) == 0 && n.Kind == yaml.MappingNode {
		p.fail(n, "questions must not be empty")
	}
	for _, kv := range pairs {
		id := p.label(kv[0], "question id")
		q := PackQuestion{ID: id}
		fields := map[string]*yaml.Node{}
		for _, f := range p.pairs(kv[1], "question "+id) {
			fields[f[0].Value] = f[1]
		}
		if t, ok := fields["type"]; ok {
			q.Type = provider.QuestionType(p.str(t, "question "+id+": type"))
		}
		allowed, ok := questionKeys[q.Type]
		if !ok {
			p.fail(kv[0], "question %s: type must be noul, choice or score", id)
			continue
		}
		for _, f := range p.pairs(kv[1], "question "+id) {
			if !contains(allowed, f[0].Value) {
				p.fail(f[0], "question %s: %s has no key %q (keys: %s)", id, q.Type, f[0].Value, strings.Join(allowed, ", "))
			}
		}
		in, ok := fields["instructions"]
		if !ok {
			p.fail(kv[0], "question %s: instructions missing", id)
			continue
		}
		q.Instructions = p.str(in, "question "+id+": instructions")
		switch q.Type {
		case provider.Choice:
			o, ok := fields["options"]
			if !ok {
				p.fail(kv[0], "question %s: options missing", id)
				continue
			}
			for _, e := range p.pairs(o, "question "+id+": options") {
				l := p.label(e[0], "question "+id+": option")
				m := p.str(e[1], "question "+id+": option "+l)
				if m == "" && e[1].ShortTag() == "!!str" {
					p.fail(e[1], "question %s: option %s: the meaning must be a non-empty string", id, l)
				}
				q.Options = append(q.Options, provider.Option{Label: l, Description: provider.String(m)})
			}
			if len(q.Options) < 2 {
				p.fail(o, "question %s: a choice needs at least 2 options", id)
			} else if q.optionIndex("unknown") < 0 {
				p.fail(o, "question %s: options must include unknown (Jev cannot abstain)", id)
			}
		case provider.Score:
			lv, ok := fields["levels"]
			if !ok || lv.Kind != yaml.SequenceNode {
				p.fail(kv[0], "question %s: levels must be a list of snake_case labels, low → high", id)
				continue
			}
			seen := map[string]bool{}
			for _, e := range lv.Content {
				l := p.label(e, "question "+id+": level")
				if seen[l] && l != "" {
					p.fail(e, "question %s: level %q is listed twice", id, l)
				}
				seen[l] = true
				q.Levels = append(q.Levels, l)
			}
			if len(q.Levels) < 2 || len(q.Levels) > 10 {
				p.fail(lv, "question %s: a score needs 2 to 10 levels, not %d", id, len(q.Levels))
			} else if !seen["unknown"] {
				p.fail(lv, "question %s: levels must include unknown (Jev cannot abstain)", id)
			}
			if d, ok := fields["level_descriptions"]; ok {
				q.LevelDesc = map[string]string{}
				for _, e := range p.pairs(d, "question "+id+": level_descriptions") {
					if !seen[e[0].Value] {
						p.fail(e[0], "question %s: level_descriptions names %q, which is not a level", id, e[0].Value)
						continue
					}
					t := p.str(e[1], "question "+id+": level_descriptions."+e[0].Value)
					if t == "" && e[1].ShortTag() == "!!str" {
						p.fail(e[1], "question %s: level_descriptions.%s must not be empty", id, e[0].Value)
					}
					q.LevelDesc[e[0].Value] = t
				}
			}
		}
		pk.Questions = append(pk.Questions, q)
	}
}

func (p *packParser) thresholds(pk *Pack, n *yaml.Node) {
	pk.Thresholds = map[string][]LabelFloor{}
	for _, kv := range p.pairs(n, "thresholds") {
		q := pk.Question(kv[0].Value)
		if q == nil {
			p.fail(kv[0], "thresholds: no question %q", kv[0].Value)
			continue
		}
		for _, e := range p.pairs(kv[1], "thresholds."+q.ID) {
			l := e[0].Value
			if q.Type == provider.Noul && e[0].Style == 0 && yaml11Bool[l] {
				switch strings.ToLower(l) {
				case "true", "yes", "on":
					l = "true"
				default:
					l = "false"
				}
			}
			if !q.hasLabel(l) {
				p.fail(e[0], "thresholds.%s: %q is not a label of the question (%s)", q.ID, e[0].Value, strings.Join(q.labels(), ", "))
				continue
			}
			if e[1].ShortTag() != "!!int" && e[1].ShortTag() != "!!float" {
				p.fail(e[1], "thresholds.%s.%s must be a number in (0, 1]", q.ID, l)
				continue
			}
			x, err := strconv.ParseFloat(e[1].Value, 64)
			if err != nil || x <= 0 || x > 1 {
				p.fail(e[1], "thresholds.%s.%s = %s must be in (0, 1]", q.ID, l, e[1].Value)
				continue
			}
			pk.Thresholds[q.ID] = append(pk.Thresholds[q.ID], LabelFloor{Label: l, Min: x})
		}
	}
}

// Question returns the pack question with id, or nil.
func (pk *Pack) Question(id string) *PackQuestion {
	for i := range pk.Questions {
		if pk.Questions[i].ID == id {
			return &pk.Questions[i]
		}
	}
	return nil
}

func (q *PackQuestion) optionIndex(l string) int {
	for i, o := range q.Options {
		if o.Label == l {
			return i
		}
	}
	return -1
}

func (q *PackQuestion) labels() []string {
	switch q.Type {
	case provider.Noul:
		return []string{"true", "false"}
	case provider.Choice:
		out := make([]string, len(q.Options))
		for i, o := range q.Options {
			out[i] = o.Label
		}
		return out
	}
	return q.Levels
}

func (q *PackQuestion) hasLabel(l string) bool { return contains(q.labels(), l) }

// Wire returns the question as jevassert sends it (Pack.to_api_questions):
// noul with no criteria; choice criteria = the options map in file order;
// score criteria = each level's description, else its bare label.
func (q *PackQuestion) Wire() provider.Question {
	w := provider.Question{Type: q.Type, Instructions: provider.String(q.Instructions)}
	switch q.Type {
	case provider.Choice:
		for _, o := range q.Options {
			w.Options = append(w.Options, provider.Option{Label: o.Label, Description: o.Description})
		}
	case provider.Score:
		for _, l := range q.Levels {
			t := l
			if d, ok := q.LevelDesc[l]; ok {
				t = d
			}
			w.Levels = append(w.Levels, provider.String(t))
		}
	}
	return w
}

// Set returns the pack's questions as a jevlab question set in pack order,
// requesting model (jevassert's default: tested, else jev-latest).
func (pk *Pack) Set() *questionset.Set {
	s := &questionset.Set{Name: pk.ID, Model: pk.Tested}
	for i := range pk.Questions {
		s.Questions = append(s.Questions, provider.QuestionEntry{ID: pk.Questions[i].ID, Question: pk.Questions[i].Wire()})
	}
	return s
}

// LoadCases reads cases.jsonl against the pack with every rule of
// jevassert's loader: no blank lines, objects with exactly id, state and
// expect, unique non-empty ids, states with exactly the pack's state
// fields, one gold of the right type per question.
func (pk *Pack) LoadCases(file string, data []byte) ([]Case, error) {
	var out []Case
	seen := map[string]int{}
	err := jsonLines(data, func(line int, text []byte) error {
		if len(bytes.TrimSpace(text)) == 0 {
			if line > 1 && len(out) > 0 && isLastLine(data, line) {
				return nil
			}
			return errAt(file, line, "blank line (jev-packs cases.jsonl has one case per line, no blank lines)")
		}
		m, keys, err := object(file, line, text)
		if err != nil {
			return err
		}
		if strings.Join(keys, ",") != "expect,id,state" {
			return errAt(file, line, "a case has exactly the keys id, state and expect, not %s", strings.Join(keys, ", "))
		}
		id, ok := jsonString(m["id"])
		if !ok || id == "" {
			return errAt(file, line, "id must be a non-empty string")
		}
		if first, dup := seen[id]; dup {
			return errAt(file, line, "duplicate case id %q (first at line %d)", id, first)
		}
		seen[id] = line
		st, skeys, err := object(file, line, m["state"])
		if err != nil || st == nil {
			return errAt(file, line, "case %s: state must be an object with the fields %s", id, strings.Join(pk.StateFields, ", "))
		}
		if !sameSet(skeys, pk.StateFields) {
			return errAt(file, line, "case %s: state has %s; the pack's state.fields are %s", id, strings.Join(skeys, ", "), strings.Join(pk.StateFields, ", "))
		}
		ex, ekeys, err := object(file, line, m["expect"])
		if err != nil {
			return errAt(file, line, "case %s: expect must be an object with one gold per question", id)
		}
		ids := make([]string, len(pk.Questions))
		for i, q := range pk.Questions {
			ids[i] = q.ID
		}
		if !sameSet(ekeys, ids) {
			return errAt(file, line, "case %s: expect has %s; it needs exactly one gold per question (%s)", id, strings.Join(ekeys, ", "), strings.Join(ids, ", "))
		}
		for _, q := range pk.Questions {
			if msg := q.goldProblem(ex[q.ID]); msg != "" {
				return errAt(file, line, "case %s: expect.%s: %s", id, q.ID, msg)
			}
		}
		out = append(out, Case{ID: id, State: provider.Compact(m["state"]), Expect: ex, Line: line})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errAt(file, 0, "no cases")
	}
	return out, nil
}

// isLastLine reports whether line is the file's final (empty) line after a
// trailing newline, which is not a blank case line.
func isLastLine(data []byte, line int) bool {
	return bytes.Count(data, []byte("\n"))+1 == line
}

func (q *PackQuestion) goldProblem(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch q.Type {
	case provider.Noul:
		if string(raw) != "true" && string(raw) != "false" {
			return "a noul gold is a JSON boolean, not " + string(raw)
		}
	default:
		s, ok := jsonString(raw)
		if !ok {
			return fmt.Sprintf("a %s gold is a label (string), not %s", q.Type, raw)
		}
		if !q.hasLabel(s) {
			return fmt.Sprintf("%q is not a label of the question (%s)", s, strings.Join(q.labels(), ", "))
		}
	}
	return ""
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var yamlLineRE = regexp.MustCompile(`line ([0-9]+)`)

func yamlLine(err error) int {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
