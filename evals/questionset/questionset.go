// Package questionset loads, validates, edits and saves question-set files:
// the YAML (or JSON) documents a prompt engineer iterates on.
//
// A question set holds the wire questions of a System One request in file
// order, plus caller-side settings that are never sent: a noul's
// `threshold`, a question's `min_confidence`, evaluation `gates`, the
// default `dataset` and the `fixtures` to replay. A plain wire request
// (`{"model", "state", "questions"}`) is also a valid question set, and so
// is a bare question map (`{"intent": {"type": "choice", …}}`).
//
// Errors point at file:line:column and name the question id and field.
// Saving keeps the parsed YAML node tree and patches it, so comments and
// layout survive edits, and saving an unchanged set writes the original
// bytes back.
package questionset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/internal/pathguard"
	"github.com/jevlab/jevlab/internal/srcpos"
	"github.com/jevlab/jevlab/provider"
	yaml "go.yaml.in/yaml/v3"
)

// Set is one question set.
type Set struct {
	// Name is the set's name as written ("" when the file has none; see Title).
	Name string
	// Model is the requested model; "" means provider.DefaultModel.
	Model string
	// State is the working state used while designing (compact JSON), nil
	// when absent.
	State json.RawMessage
	// Questions are the wire questions in file order.
	Questions provider.Questions
	// Settings are caller-side settings per question id; never sent.
	Settings map[string]Settings
	// Gates are evaluation gates per question id; "*" applies to every
	// question.
	Gates map[string]Gate
	// Dataset is the default dataset path as written (relative to the file).
	Dataset string
	// DatasetMap is the field mapping of the mapping form of `dataset:`
	// ({path, id, state, state_fields, labels}); nil for a plain path.
	DatasetMap *DatasetMapping
	// Fixtures are fixture files as written (relative to the file).
	Fixtures []string
	// Split is the hold-out split of the set's dataset (nil: none yet).
	Split *SplitSpec
	// Variants are each question's named variants in file order
	// (caller-side: never sent as such; see VariantID).
	Variants map[string][]Variant
	// Assets are the set's images (`assets:`, assets.go), read when sent.
	Assets []AssetRef
	// DangerZone is the set's own opt-in to Jev's experimental features
	// (`danger_zone:`).
	DangerZone provider.DangerZone
	// Path is the file the set came from ("" for embedded or new sets).
	Path string

	doc      *yaml.Node // parsed document, patched on save (nil for new sets)
	orig     []byte     // bytes the set was parsed from or last saved as
	snapshot []byte     // canonical JSON of the set when orig was current
	isJSON   bool       // the file is JSON: save as JSON
	fixScal  bool       // fixtures was written as one string, not a list

	datasetAt  [2]int   // line, column of dataset: (0, 0 when unknown)
	fixturesAt [][2]int // line, column of each fixtures entry
	bare       bool     // the file is a bare question map (no set fields)
}

// Settings are caller-side settings of one question. They are never sent
// to the provider.
type Settings struct {
	// Threshold turns a noul's p into a yes/no decision for accuracy
	// metrics (default 0.5). Only nouls have one.
	Threshold *float64
	// MinConfidence abstains below this confidence (choice and score only;
	// a noul has no confidence field).
	MinConfidence *float64
	// Negation is a noul's negated wording, the user's own (compact JSON,
	// like instructions): the negation probe asks it in place of the
	// instructions and checks P(X) + P(¬X) against 1. Nil when unset.
	Negation json.RawMessage
	// Costs are a noul's decision costs (nil: none), for the
	// cost-optimal thresholds (evals/costs).
	Costs *Costs
}

// Costs are what a question's outcomes cost; right decisions cost 0.
// A noul's: a false positive, a false negative and (when set) an
// abstention. A choice's (Choice true): deciding option d when t is true
// costs Matrix[t][d], else FalseChoice[d], else Other (the parser makes
// sure one of them gives every wrong pair its cost), and abstaining
// (below the confidence cut-point) costs Abstain.
type Costs struct {
	FalsePositive, FalseNegative float64
	Abstain                      *float64
	Choice                       bool
	Matrix                       map[string]map[string]float64
	FalseChoice                  map[string]float64
	Other                        *float64
}

// Of returns the cost of deciding option decided when truth is true for
// a choice's costs, and whether it is given.
func (c *Costs) Of(truth, decided string) (float64, bool) {
	if truth == decided {
		return 0, true
	}
	if v, ok := c.Matrix[truth][decided]; ok {
		return v, true
	}
	if v, ok := c.FalseChoice[decided]; ok {
		return v, true
	}
	if c.Other != nil {
		return *c.Other, true
	}
	return 0, false
}

// MatrixFor returns the dense cost matrix of a choice's costs over q's
// options, m[t][d] the cost of deciding option d when t is true.
func (c *Costs) MatrixFor(q *provider.Question) [][]float64 {
	m := make([][]float64, len(q.Options))
	for t, ot := range q.Options {
		m[t] = make([]float64, len(q.Options))
		for d, od := range q.Options {
			m[t][d], _ = c.Of(ot.Label, od.Label)
		}
	}
	return m
}

// missing names the first wrong (true, decided) pair of q's options
// without a cost ("" when every pair has one).
func (c *Costs) missing(q *provider.Question) string {
	for _, ot := range q.Options {
		for _, od := range q.Options {
			if _, ok := c.Of(ot.Label, od.Label); !ok {
				return fmt.Sprintf("%s decided as %s", ot.Label, od.Label)
			}
		}
	}
	return ""
}

// empty reports whether no setting is set.
func (st Settings) empty() bool {
	return st.Threshold == nil && st.MinConfidence == nil && st.Negation == nil && st.Costs == nil
}

// Gate is a pass/fail condition on evaluation metrics; nil fields are not
// checked.
type Gate struct {
	MinAccuracy  *float64
	MaxECE       *float64
	MaxBrier     *float64
	MinMacroF1   *float64
	MaxLogLoss   *float64
	MinWithinOne *float64 // score questions: share within one level
	MaxErrorRate *float64 // share of items whose call failed
	// Probe gates (jevlab probe; evaluated by evals/probe): the share of
	// decisions that change when the choice options are reordered, or
	// between identical requests; the mean |P(X) + P(¬X) − 1|; the mean
	// probability an added distractor draws; the share of decisions that
	// follow an injected instruction; the share of items a harmless edit
	// flips.
	MaxShuffleFlipRate *float64
	MaxRepeatFlipRate  *float64
	MaxNegationGap     *float64
	MaxDistractorMass  *float64
	MaxInjectionFollow *float64
	MaxPerturbFlipRate *float64
	MinNoulChoiceAgree *float64
}

// gateFields lists Gate's file fields in their written order.
var gateFields = []struct {
	name string
	get  func(*Gate) **float64
	max  float64 // upper bound (0 = unbounded)
}{
	{"min_accuracy", func(g *Gate) **float64 { return &g.MinAccuracy }, 1},
	{"max_ece", func(g *Gate) **float64 { return &g.MaxECE }, 1},
	{"max_brier", func(g *Gate) **float64 { return &g.MaxBrier }, 2},
	{"min_macro_f1", func(g *Gate) **float64 { return &g.MinMacroF1 }, 1},
	{"max_log_loss", func(g *Gate) **float64 { return &g.MaxLogLoss }, 0},
	{"min_within_one", func(g *Gate) **float64 { return &g.MinWithinOne }, 1},
	{"max_error_rate", func(g *Gate) **float64 { return &g.MaxErrorRate }, 1},
	{"max_shuffle_flip_rate", func(g *Gate) **float64 { return &g.MaxShuffleFlipRate }, 1},
	{"max_repeat_flip_rate", func(g *Gate) **float64 { return &g.MaxRepeatFlipRate }, 1},
	{"max_negation_gap", func(g *Gate) **float64 { return &g.MaxNegationGap }, 1},
	{"max_distractor_mass", func(g *Gate) **float64 { return &g.MaxDistractorMass }, 1},
	{"max_injection_follow_rate", func(g *Gate) **float64 { return &g.MaxInjectionFollow }, 1},
	{"max_perturb_flip_rate", func(g *Gate) **float64 { return &g.MaxPerturbFlipRate }, 1},
	{"min_noul_choice_agreement", func(g *Gate) **float64 { return &g.MinNoulChoiceAgree }, 1},
}

// Negation returns noul id's negated wording, nil when none is set.
func (s *Set) Negation(id string) json.RawMessage {
	if st, ok := s.Settings[id]; ok {
		return st.Negation
	}
	return nil
}

// DefaultThreshold is a noul's decision threshold when none is set.
const DefaultThreshold = 0.5

// DefaultMaxFileBytes caps a question-set file's size by default: a real
// set is kilobytes (Banking77's 77 options are 12 KB); this is also the
// most its aliases may expand to.
const DefaultMaxFileBytes = 16 << 20

// Limits bound the work of reading a set file.
type Limits struct {
	// MaxFileBytes caps the file's size (0 = DefaultMaxFileBytes); a
	// larger file is refused with a message naming --max-set-size.
	MaxFileBytes int64
}

func (l Limits) maxFile() int64 {
	if l.MaxFileBytes > 0 {
		return l.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

// ReadFile reads a question-set file's bytes within lim: a regular file
// only (a FIFO, a device or a directory is refused at once, never read),
// of at most lim's size.
func ReadFile(path string, lim Limits) ([]byte, error) {
	return inputfile.ReadFile(path, "question set", lim.maxFile(), "--max-set-size")
}

// Load reads and validates the question set at path with the default
// limits.
func Load(path string) (*Set, error) { return LoadLimited(path, Limits{}) }

// LoadLimited reads and validates the question set at path within lim.
func LoadLimited(path string, lim Limits) (*Set, error) {
	data, err := ReadFile(path, lim)
	if err != nil {
		return nil, err
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	s.Path = path
	return s, nil
}

// Parse reads and validates a question set from data; name is used in
// error messages and to choose JSON for a ".json" name. The returned error
// is an ErrorList of *Error, sorted by position.
func Parse(name string, data []byte) (*Set, error) {
	p := &parser{file: name, conv: newConverter(len(data))}
	data, e := DecodeText(data)
	if e != nil {
		e.File = name
		return nil, ErrorList{e}
	}
	s := p.parse(data)
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool {
			a, b := p.errs[i], p.errs[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Col < b.Col
		})
		return nil, p.errs
	}
	s.orig = append([]byte(nil), data...)
	s.snapshot = s.canonicalJSON()
	return s, nil
}

// utf8BOM is the UTF-8 byte-order mark some editors write first.
var utf8BOM = []byte("\xef\xbb\xbf")

// DecodeText applies the text rule for files from strangers, the same for YAML
// and JSON sets and for datasets: a leading UTF-8 byte-order mark is
// skipped (positions then count from the text after it, as editors show
// it), and bytes that are not UTF-8 are refused at the line and column
// (in characters) of the first one, without quoting them; a UTF-16 file is
// named as such. The *Error's File is left for the caller.
func DecodeText(data []byte) ([]byte, *Error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	if utf8.Valid(data) {
		return data, nil
	}
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return nil, &Error{Line: 1, Col: 1, Msg: "the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8"}
	}
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	line, col := position(data, off)
	return nil, &Error{Line: line, Col: col, Msg: "not valid UTF-8 from here on; save the file as UTF-8"}
}

// Title returns the set's name, or its file name without extension, or
// "untitled".
func (s *Set) Title() string {
	if s.Name != "" {
		return s.Name
	}
	if s.Path != "" {
		b := filepath.Base(s.Path)
		return strings.TrimSuffix(b, filepath.Ext(b))
	}
	return "untitled"
}

// Request builds the wire request for state (nil → the working state).
// Caller-side settings never appear in it.
func (s *Set) Request(state json.RawMessage) *provider.Request {
	if state == nil {
		state = s.State
	}
	if state != nil {
		state = provider.Compact(state)
	}
	qs := make(provider.Questions, len(s.Questions))
	copy(qs, s.Questions)
	return &provider.Request{Model: s.ModelName(), State: state, Questions: qs, DangerZone: s.DangerZone}
}

// ModelName returns the requested model, provider.DefaultModel when unset.
func (s *Set) ModelName() string {
	if s.Model == "" {
		return provider.DefaultModel
	}
	return s.Model
}

// Question returns the question with id.
func (s *Set) Question(id string) (*provider.Question, bool) {
	return s.Questions.Get(id)
}

// Threshold returns the decision threshold of noul id (DefaultThreshold
// unless set). For a variant's derived id it is the variant's, else its
// question's.
func (s *Set) Threshold(id string) float64 {
	if st, ok := s.Settings[id]; ok && st.Threshold != nil {
		return *st.Threshold
	}
	if _, _, ok := SplitVariantID(id); ok {
		if t, _ := s.variantSetting(id, func(st Settings) *float64 { return st.Threshold }, func(v *Variant) *float64 { return v.Threshold }); t != nil {
			return *t
		}
	}
	return DefaultThreshold
}

// MinConfidence returns question id's minimum confidence and whether one is
// set (for a variant's derived id: the variant's, else its question's).
func (s *Set) MinConfidence(id string) (float64, bool) {
	if st, ok := s.Settings[id]; ok && st.MinConfidence != nil {
		return *st.MinConfidence, true
	}
	if _, _, ok := SplitVariantID(id); ok {
		if m, _ := s.variantSetting(id, func(st Settings) *float64 { return st.MinConfidence }, func(v *Variant) *float64 { return v.MinConfidence }); m != nil {
			return *m, true
		}
	}
	return 0, false
}

// GateFor returns the gate for question id: the "*" gate with the
// question's own gate fields laid over it.
func (s *Set) GateFor(id string) Gate {
	g := s.Gates["*"]
	if own, ok := s.Gates[id]; ok {
		for _, f := range gateFields {
			if v := *f.get(&own); v != nil {
				*f.get(&g) = v
			}
		}
	}
	return g
}

// NamedPath is a path the set names (dataset:, fixtures:) resolved against
// the set's folder.
type NamedPath struct {
	// Field is "dataset" or "fixtures".
	Field string
	// Written is the path as the file writes it.
	Written string
	// Path is the path to open (relative to the working directory or
	// absolute).
	Path string
	// Inside says the path resolves inside the set's folder (symlinks
	// followed). Only such a fixture file is recorded to by default.
	Inside bool
	// Line and Col locate the path in the file (0 when unknown).
	Line, Col int
}

// DatasetPath resolves the set's dataset: within its folder or one of
// the allowed roots (--allow-path). It returns "" for a set without one,
// and a located *Error naming --allow-path for a path that leaves.
func (s *Set) DatasetPath(allow []string) (NamedPath, error) {
	if s.Dataset == "" {
		return NamedPath{}, nil
	}
	return s.namedPath("dataset", s.Dataset, s.datasetAt, allow)
}

// FixturePaths resolves the set's fixtures: like DatasetPath, one per
// entry; the error lists every entry that leaves.
func (s *Set) FixturePaths(allow []string) ([]NamedPath, error) {
	var out []NamedPath
	var errs ErrorList
	for i, f := range s.Fixtures {
		var at [2]int
		if i < len(s.fixturesAt) {
			at = s.fixturesAt[i]
		}
		np, err := s.namedPath("fixtures", f, at, allow)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				errs = append(errs, e)
				continue
			}
			return nil, err
		}
		out = append(out, np)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func (s *Set) namedPath(field, p string, at [2]int, allow []string) (NamedPath, error) {
	np := NamedPath{Field: field, Written: p, Path: p, Line: at[0], Col: at[1]}
	if s.Path == "" {
		// An embedded or new set names paths in its own file system.
		np.Inside = !filepath.IsAbs(p) && filepath.IsLocal(p)
		return np, nil
	}
	dir := filepath.Dir(s.Path)
	r, err := pathguard.Resolve(dir, p, allow)
	if err != nil {
		return np, fmt.Errorf("%s: %s %q: %w", s.Path, field, p, err)
	}
	np.Path, np.Inside = r.Path, r.Inside
	if !r.Allowed() {
		var how string
		switch {
		case filepath.IsAbs(p):
			how = "is an absolute path outside the question set's folder"
		case !filepath.IsLocal(p):
			how = "climbs out of the question set's folder"
		default:
			how = "leads out of the question set's folder through a symlink"
		}
		return np, &Error{File: s.Path, Line: at[0], Col: at[1], Field: field,
			Msg: fmt.Sprintf("%q %s (%s); a set may name only files inside its folder. If you trust this set, allow the folder with --allow-path %s",
				p, how, dir, shellWord(filepath.Dir(r.Path)))}
	}
	return np, nil
}

// shellWord quotes p for a command line when it needs it.
func shellWord(p string) string {
	if p != "" && !strings.ContainsAny(p, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// Validate checks the set as it is now (after edits) with the provider's
// limits. Errors carry positions only for parts unchanged since loading.
func (s *Set) Validate() error {
	data, err := s.Marshal()
	if err != nil {
		return err
	}
	name := s.Path
	if name == "" {
		name = s.Title()
		if s.isJSON {
			name += ".json"
		}
	}
	_, err = Parse(name, data)
	return err
}

// Error is one problem in a question-set or dataset file.
type Error struct {
	File      string
	Line, Col int // 1-based; 0 when unknown
	Question  string
	Field     string
	Msg       string
}

// Error formats file:line:col: question "id": field: message, leaving out
// the parts that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	if pos := srcpos.Format(e.File, e.Line, e.Col); pos != "" {
		b.WriteString(pos)
		b.WriteString(": ")
	}
	if e.Question != "" {
		fmt.Fprintf(&b, "question %q: ", e.Question)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in one file, in position order.
type ErrorList []*Error

// Error joins the problems one per line.
func (l ErrorList) Error() string {
	return srcpos.Join(l)
}

// Unwrap returns the problems.
func (l ErrorList) Unwrap() []error {
	return srcpos.Unwrap(l)
}

// QuestionsJSON returns the questions as the compact JSON object of the
// file layout: each id, in file order, mapped to its wire question with its
// caller-side threshold and min_confidence added. It is the part of a set
// both the change detector and a run's stored snapshot are made of, so the
// two spell it alike (byte for byte: snapshots are hashed).
func (s *Set) QuestionsJSON() []byte {
	var b bytes.Buffer
	s.writeQuestions(&b)
	return b.Bytes()
}

func (s *Set) writeQuestions(b *bytes.Buffer) {
	b.WriteByte('{')
	for i, e := range s.Questions {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, e.ID)
		b.WriteByte(':')
		s.writeQuestion(b, e)
	}
	b.WriteByte('}')
}

// writeQuestion writes one question in the file layout: its wire form
// with its caller-side settings and variants.
func (s *Set) writeQuestion(b *bytes.Buffer, e provider.QuestionEntry) {
	body, _ := e.Question.MarshalJSON()
	st, ok := s.Settings[e.ID]
	if (ok && !st.empty()) || len(s.Variants[e.ID]) > 0 {
		b.Write(body[:len(body)-1])
		if st.Threshold != nil {
			b.WriteString(`,"threshold":`)
			b.WriteString(formatFloat(*st.Threshold))
		}
		if st.MinConfidence != nil {
			b.WriteString(`,"min_confidence":`)
			b.WriteString(formatFloat(*st.MinConfidence))
		}
		if st.Negation != nil {
			b.WriteString(`,"negation":`)
			b.Write(st.Negation)
		}
		if c := st.Costs; c != nil && c.Choice {
			b.WriteString(`,"costs":`)
			writeChoiceCosts(b, c)
		} else if c != nil {
			b.WriteString(`,"costs":{"false_positive":`)
			b.WriteString(formatFloat(c.FalsePositive))
			b.WriteString(`,"false_negative":`)
			b.WriteString(formatFloat(c.FalseNegative))
			if c.Abstain != nil {
				b.WriteString(`,"abstain":`)
				b.WriteString(formatFloat(*c.Abstain))
			}
			b.WriteByte('}')
		}
		s.writeVariants(b, e.ID, e.Question.Type)
		b.WriteByte('}')
	} else {
		b.Write(body)
	}
}

// QuestionBody is question id's revision body: {"id": …, "question": …}
// with the question in the file layout (wire form, caller-side settings,
// variants) as compact JSON; nil when there is no such question. Two
// bodies are equal exactly when the question, its id and its variants
// are.
func (s *Set) QuestionBody(id string) []byte {
	for _, e := range s.Questions {
		if e.ID == id {
			var b bytes.Buffer
			b.WriteString(`{"id":`)
			writeString(&b, id)
			b.WriteString(`,"question":`)
			s.writeQuestion(&b, e)
			b.WriteByte('}')
			return b.Bytes()
		}
	}
	return nil
}

// canonicalJSON is the whole set (wire questions and settings) as compact
// JSON in the file layout: the emitter's input and the change detector.
func (s *Set) canonicalJSON() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	field := func(k string) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeString(&b, k)
		b.WriteByte(':')
	}
	if s.Name != "" {
		field("name")
		writeString(&b, s.Name)
	}
	if s.Model != "" {
		field("model")
		writeString(&b, s.Model)
	}
	if s.State != nil {
		field("state")
		b.Write(s.State)
	}
	field("questions")
	s.writeQuestions(&b)
	if s.Dataset != "" {
		field("dataset")
		s.writeDataset(&b)
	}
	if s.Split != nil {
		field("split")
		b.WriteString(`{"seed":`)
		b.WriteString(strconv.FormatUint(s.Split.Seed, 10))
		b.WriteString(`,"test":`)
		b.WriteString(formatFloat(s.Split.Test))
		b.WriteByte('}')
	}
	if len(s.Fixtures) > 0 {
		field("fixtures")
		if s.fixScal && len(s.Fixtures) == 1 {
			writeString(&b, s.Fixtures[0])
		} else {
			b.WriteByte('[')
			for i, f := range s.Fixtures {
				if i > 0 {
					b.WriteByte(',')
				}
				writeString(&b, f)
			}
			b.WriteByte(']')
		}
	}
	if len(s.Gates) > 0 {
		field("gates")
		b.WriteByte('{')
		for i, id := range s.gateOrder() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, id)
			b.WriteString(":{")
			g := s.Gates[id]
			m := 0
			for _, f := range gateFields {
				if v := *f.get(&g); v != nil {
					if m > 0 {
						b.WriteByte(',')
					}
					m++
					writeString(&b, f.name)
					b.WriteByte(':')
					b.WriteString(formatFloat(*v))
				}
			}
			b.WriteByte('}')
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// gateOrder is "*" first, then question order, then any other ids sorted.
func (s *Set) gateOrder() []string {
	var out []string
	done := map[string]bool{}
	if _, ok := s.Gates["*"]; ok {
		out = append(out, "*")
		done["*"] = true
	}
	for _, e := range s.Questions {
		if _, ok := s.Gates[e.ID]; ok && !done[e.ID] {
			out = append(out, e.ID)
			done[e.ID] = true
		}
	}
	var rest []string
	for id := range s.Gates {
		if !done[id] {
			rest = append(rest, id)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// New returns an empty set named name, to be filled by the edit helpers
// and saved with the deterministic emitter.
func New(name string) *Set { return &Set{Name: name} }

// FromRequest returns a set holding a wire request's model, state and
// questions (copied).
func FromRequest(req *provider.Request) *Set {
	s := &Set{Model: req.Model, State: cloneRaw(req.State)}
	for _, e := range req.Questions {
		s.Questions = append(s.Questions, provider.QuestionEntry{ID: e.ID, Question: e.Question.Clone()})
	}
	return s
}

// Document returns the YAML node tree the set was read from (a JSON file's
// as YAML nodes, with the file's lines and columns), or nil for a set made
// in code. It is the set's own tree, shared to save building a second one
// (lint locates its findings in it): read it, never change it. Positions
// match the file only until the set is edited and saved.
func (s *Set) Document() *yaml.Node { return s.doc }

// IsJSON reports whether the set was loaded from JSON (and saves as JSON).
func (s *Set) IsJSON() bool { return s.isJSON }

// onlyQuestions reports whether the set has nothing but questions (and
// their settings), so a bare question map can be saved as one.
func (s *Set) onlyQuestions() bool {
	return s.Name == "" && s.Model == "" && s.State == nil && s.Dataset == "" && len(s.Fixtures) == 0 && len(s.Gates) == 0 && s.Split == nil
}

// Changed reports whether the set differs from what was loaded or last
// saved (always true for a set never saved).
func (s *Set) Changed() bool {
	return s.orig == nil || !bytes.Equal(s.canonicalJSON(), s.snapshot)
}

// writeChoiceCosts writes a choice's costs as JSON, keys sorted, so a
// revision's body does not depend on the order they were written in.
func writeChoiceCosts(b *bytes.Buffer, c *Costs) {
	b.WriteByte('{')
	sep := ""
	field := func(name string) {
		b.WriteString(sep)
		sep = ","
		b.WriteString(strconv.Quote(name))
		b.WriteByte(':')
	}
	writeRow := func(row map[string]float64) {
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(row)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			b.WriteString(formatFloat(row[k]))
		}
		b.WriteByte('}')
	}
	if c.Abstain != nil {
		field("abstain")
		b.WriteString(formatFloat(*c.Abstain))
	}
	if c.FalseChoice != nil {
		field("false_choice")
		writeRow(c.FalseChoice)
	}
	if c.Matrix != nil {
		field("matrix")
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(c.Matrix)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeRow(c.Matrix[k])
		}
		b.WriteByte('}')
	}
	if c.Other != nil {
		field("other")
		b.WriteString(formatFloat(*c.Other))
	}
	b.WriteByte('}')
}
