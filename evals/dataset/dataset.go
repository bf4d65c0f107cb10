// Package dataset reads labelled datasets: JSON Lines
// (`{"id", "state", "labels": {question_id: label}}`) or CSV with a header
// row. Field mapping options let an existing file be used as it is, and
// every label is checked against its question.
//
// Reading streams: a file is never held in memory, whatever its size. The
// only state that grows with the file is the duplicate-id index, 16 bytes
// of hash per item (not the ids themselves).
package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/internal/srcpos"
	"github.com/jevlab/jevlab/provider"
)

// Label is one gold label, resolved against its question.
type Label struct {
	// Index is the choice option's index, the score level's index, or for a
	// noul 1 (true) / 0 (false).
	Index int
	// Text is the canonical text: the option label, the level's text (its
	// string, a structured level's "label", or its compact JSON), or
	// "true"/"false".
	Text string
	// ByIndex says a score label was written as a level index (2, "2"):
	// reordering the levels changes what the file means, so the
	// workbench rewrites such labels when it saves reordered levels.
	ByIndex bool
	// Box is a box question's labelled box (Index 0, Text its canonical
	// JSON; see BoxLabelText).
	Box *provider.Edges
}

// Item is one dataset row.
type Item struct {
	ID string
	// State is compact JSON: a string, object or array.
	State json.RawMessage
	// Labels holds the gold label of each labelled question; unlabelled
	// questions are absent.
	Labels map[string]Label
	// Line is the row's line in the file (1-based; for CSV the line where
	// the record starts).
	Line int
}

// Options map a file's fields onto items. The zero value reads the
// default layout: "id", "state" and a "labels" object (JSONL) or a column
// per question id (CSV).
type Options struct {
	// IDField names the id field or column ("id" when empty). In JSONL it
	// may be a path into nested objects (see ForSet for the forms).
	IDField string
	// StateField names the state field or column ("state" when empty); a
	// path in JSONL ("/input/ticket", "input.ticket").
	StateField string
	// StateFields, when set, builds an object state from several fields
	// instead of StateField: each entry is a field reference or
	// NAME=REF, and the state is {NAME: value, …} in this order (NAME
	// defaults to the reference's last segment).
	StateFields []string
	// LabelFields maps a question id to the field or column holding its
	// label (e.g. {"intent": "gold_label"}, {"queue": "expect.queue"}).
	LabelFields map[string]string
	// LabelValues maps, per question, a value as the file writes it to the
	// label jevlab reads (e.g. a jev-packs score level name to its index:
	// {"urgency": {"low": "0", "high": "2"}}). A value missing from a
	// question's map is an error.
	LabelValues map[string]map[string]string
	// Format forces "jsonl" or "csv"; empty chooses by extension, then by
	// sniffing the first byte.
	Format string

	fromSet bool // some fields came from the set's dataset: mapping
	// KeepStale keeps a well-formed label that names no option or level of
	// the set as it is now (or a question the set no longer has) instead
	// of failing its row: it is kept with Index -1 and its text, for
	// ResolveLabels to report and exclude. Labels of the wrong kind still
	// fail.
	KeepStale bool
	// MaxLineBytes caps one line (JSONL) or one record (CSV) so a single
	// huge line cannot exhaust memory; 0 means DefaultMaxLineBytes. A line
	// over it stops the read with an error naming --max-line-size.
	MaxLineBytes int64
	// MaxDecompressedBytes caps what a .gz dataset may decompress to; 0
	// means DefaultMaxDecompressedBytes (--max-decompressed raises it).
	MaxDecompressedBytes int64
}

// DefaultMaxLineBytes is the default cap on one dataset line: twice the
// largest request the client will send (provider.DefaultMaxRequestBytes),
// so every state that could be asked fits.
const DefaultMaxLineBytes = 16 << 20

// DefaultMaxDecompressedBytes is the default cap on a .gz dataset's
// decompressed size.
const DefaultMaxDecompressedBytes = 4 << 30

func (o Options) maxLine() int64 {
	if o.MaxLineBytes > 0 {
		return o.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

func (o Options) maxDecompressed() int64 {
	if o.MaxDecompressedBytes > 0 {
		return o.MaxDecompressedBytes
	}
	return DefaultMaxDecompressedBytes
}

func (o Options) idField() string {
	if o.IDField == "" {
		return "id"
	}
	return o.IDField
}

func (o Options) stateField() string {
	if o.StateField == "" {
		return "state"
	}
	return o.StateField
}

// ParseLabelFlag parses a --label QUESTION=FIELD flag value into opt.
func (o *Options) ParseLabelFlag(v string) error {
	q, f, ok := strings.Cut(v, "=")
	if !ok || q == "" || f == "" {
		return fmt.Errorf("--label %q: want QUESTION=FIELD, e.g. intent=gold_label", v)
	}
	if o.LabelFields == nil {
		o.LabelFields = map[string]string{}
	}
	o.LabelFields[q] = f
	return nil
}

// maxErrors caps how many problems one read reports.
const maxErrors = 50

// Error is one problem in a dataset file.
type Error struct {
	File     string
	Line     int // 0 when the problem is not on one line
	Col      int // CSV column, when known
	Item     string
	Question string
	Msg      string
}

// Error formats file:line: item "id": question "q": message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(srcpos.Format(e.File, e.Line, e.Col))
	b.WriteString(": ")
	if e.Item != "" {
		fmt.Fprintf(&b, "item %q: ", e.Item)
	}
	if e.Question != "" {
		fmt.Fprintf(&b, "question %q: ", e.Question)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found (up to a cap), in file order.
type ErrorList []*Error

// Error joins the problems one per line.
func (l ErrorList) Error() string {
	return srcpos.Join(l)
}

// Unwrap returns the problems.
func (l ErrorList) Unwrap() []error {
	return srcpos.Unwrap(l)
}

// Load reads every item of the dataset at path.
func Load(path string, opt Options, set *questionset.Set) ([]Item, error) {
	var items []Item
	err := Stream(path, opt, set, func(it Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// Stream reads the dataset at path and calls fn for each valid item, in
// file order, without holding the file in memory. A ".gz" file is
// decompressed on the fly (data.jsonl.gz), up to opt's decompression cap.
// Only a regular file is read: a FIFO, a device or a directory is refused
// at once. See Parse.
func Stream(path string, opt Options, set *questionset.Set, fn func(Item) error) error {
	f, _, err := inputfile.Open(path, "dataset")
	if err != nil {
		return err
	}
	defer f.Close()
	if strings.EqualFold(filepath.Ext(path), ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("read dataset %s: not a gzip file (%w)", path, err)
		}
		defer zr.Close()
		if opt.Format == "" {
			opt.Format = formatFor(strings.TrimSuffix(path, filepath.Ext(path)))
		}
		capped := inputfile.CapReader(zr, opt.maxDecompressed(), &inputfile.TooLargeError{
			What: "decompressed dataset", Path: path, Limit: opt.maxDecompressed(), Setting: "--max-decompressed"})
		return Parse(path, capped, opt, set, fn)
	}
	return Parse(path, f, opt, set, fn)
}

// formatFor chooses a format by file extension, "" when it does not say.
func formatFor(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".ndjson", ".json":
		return "jsonl"
	case ".csv":
		return "csv"
	case ".tsv":
		return "tsv"
	}
	return ""
}

// Parse reads a dataset from r; name is used in messages and its extension
// chooses the format (.jsonl/.ndjson/.json, .csv, .tsv) unless opt.Format
// says; otherwise the first byte decides ('{' = JSONL). Every label is
// checked against set's questions (set may be nil: labels are then kept
// as text with Index -1). fn is called for each valid item; rows with
// problems are skipped and reported together at the end as an ErrorList
// (up to 50), so a caller that must not act on a bad file validates it
// first with a no-op fn. An error returned by fn stops the read and is
// returned as it is.
func Parse(name string, r io.Reader, opt Options, set *questionset.Set, fn func(Item) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	format := opt.Format
	if format == "" {
		format = formatFor(name)
	}
	if format == "" {
		head, _ := br.Peek(512)
		head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
		if len(head) > 0 && head[0] == '{' {
			format = "jsonl"
		} else {
			format = "csv"
		}
	}
	rd := &reader{name: name, opt: opt, set: set, fn: fn, ids: NewIDSet()}
	if err := rd.checkOptions(); err != nil {
		return err
	}
	var err error
	switch format {
	case "jsonl":
		err = rd.jsonl(br)
	case "csv":
		err = rd.csv(br, ',')
	case "tsv":
		err = rd.csv(br, '\t')
	default:
		return fmt.Errorf("dataset %s: unknown format %q; use jsonl or csv", name, format)
	}
	if err != nil {
		var stop *stopError
		if errors.As(err, &stop) {
			return stop.err
		}
		var tooMany *tooManyError
		if !errors.As(err, &tooMany) {
			return err
		}
	}
	if len(rd.errs) > 0 {
		return rd.errs
	}
	if rd.rows == 0 {
		return &Error{File: name, Msg: "no items; a dataset needs at least one row"}
	}
	return nil
}

// tooLong is the problem of a line or record over the line cap.
func (rd *reader) tooLong(line int, what string) *Error {
	return &Error{File: rd.name, Line: line, Msg: fmt.Sprintf("this %s is longer than %s, the limit for one %s (raise it with --max-line-size); stopped reading",
		what, inputfile.FormatSize(rd.opt.maxLine()), what)}
}

// readError wraps a read failure; a size limit passes through as it is,
// since it already names the file and the setting.
func readError(name string, err error) error {
	var tl *inputfile.TooLargeError
	if errors.As(err, &tl) {
		return tl
	}
	return fmt.Errorf("read dataset %s: %w", name, err)
}

// quotedChar is the character encoding/json quotes in a syntax error
// ("invalid character 'A' looking for …").
var quotedChar = regexp.MustCompile(`(?:invalid )?character '(?:\\.|[^'])*'`)

// jsonMessage is a JSON decoding error without the content it quotes: a
// file that does not parse is never echoed, not even one character of it.
func jsonMessage(err error) string {
	return quotedChar.ReplaceAllString(err.Error(), "unexpected character")
}

// stopError carries an error from the caller's fn out of the readers.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

type tooManyError struct{}

func (tooManyError) Error() string { return "too many errors" }

type reader struct {
	name      string
	opt       Options
	set       *questionset.Set
	fn        func(Item) error
	errs      ErrorList
	ids       *IDSet
	rows      int
	fieldSeen map[string]bool // mapped label fields seen at least once (JSONL)
}

func (rd *reader) checkOptions() error {
	var errs ErrorList
	for q, f := range rd.opt.LabelFields {
		if rd.set == nil {
			continue
		}
		if _, ok := rd.set.Questions.Get(q); !ok {
			errs = append(errs, &Error{File: rd.name, Question: q, Msg: fmt.Sprintf("--label %s=%s: no such question in the set (questions: %s)", q, f, strings.Join(rd.set.Questions.IDs(), ", "))})
		}
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Question < errs[j].Question })
		return errs
	}
	return nil
}

// fail records a problem; it returns tooManyError past the cap.
func (rd *reader) fail(e *Error) error {
	e.File = rd.name
	if len(rd.errs) >= maxErrors {
		rd.errs = append(rd.errs, &Error{File: rd.name, Msg: "too many problems; stopped reading"})
		return &tooManyError{}
	}
	rd.errs = append(rd.errs, e)
	return nil
}

// seenID records id and returns the line of an earlier item with the same
// id, or 0.
func (rd *reader) seenID(id string, line int) int {
	first, _ := rd.ids.Add(id, line) // lines start at 1
	return first
}

// IDSet remembers item ids by a 128-bit hash of each (two independently
// seeded maphashes; a false match is a 2⁻¹²⁸ chance per pair), with the
// line each was first seen on: a duplicate check that keeps 24 bytes per
// id instead of the id, for datasets of millions of items.
type IDSet struct {
	seed1, seed2 maphash.Seed
	ids          map[[2]uint64]int
}

// NewIDSet is an empty IDSet.
func NewIDSet() *IDSet {
	return &IDSet{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), ids: map[[2]uint64]int{}}
}

// Add records id, first seen at line; when id was added before, it
// records nothing and returns dup with the line it was first added with.
func (s *IDSet) Add(id string, line int) (first int, dup bool) {
	k := [2]uint64{maphash.String(s.seed1, id), maphash.String(s.seed2, id)}
	if first, ok := s.ids[k]; ok {
		return first, true
	}
	s.ids[k] = line
	return 0, false
}

// emit hands a valid item to fn.
func (rd *reader) emit(it Item) error {
	rd.rows++
	if first := rd.seenID(it.ID, it.Line); first != 0 {
		return rd.fail(&Error{Line: it.Line, Item: it.ID, Msg: fmt.Sprintf("duplicate id (first at line %d); ids must be unique", first)})
	}
	if len(rd.errs) > 0 {
		return nil // keep checking, but do not act on a bad file's rows
	}
	if err := rd.fn(it); err != nil {
		return &stopError{err}
	}
	return nil
}

// jsonl reads JSON Lines.
func (rd *reader) jsonl(br *bufio.Reader) error {
	var long []byte // a line longer than the reader's buffer
	inLong := false
	line := 0
	rd.fieldSeen = map[string]bool{}
	max := rd.opt.maxLine()
	for {
		chunk, err := br.ReadSlice('\n')
		n := len(long) + len(chunk)
		if err == nil {
			n-- // the newline
		}
		if int64(n) > max {
			// Stop at the first line over the cap: skipping to its end
			// could mean reading forever.
			rd.errs = append(rd.errs, rd.tooLong(line+1, "line"))
			return &tooManyError{}
		}
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			inLong = true
			continue
		}
		if err != nil && err != io.EOF {
			return readError(rd.name, err)
		}
		data := chunk
		if inLong {
			long = append(long, chunk...)
			data = long
			inLong = false
		}
		if len(data) > 0 {
			line++
			if line == 1 {
				data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
			}
			if e := rd.jsonlLine(data, line); e != nil {
				return e
			}
		}
		long = long[:0]
		if cap(long) > 1<<20 {
			long = nil // do not keep one huge line's buffer forever
		}
		if err == io.EOF {
			break
		}
	}
	if rd.rows > 0 {
		var missing []string
		for q, f := range rd.opt.LabelFields {
			if !rd.fieldSeen[f] {
				missing = append(missing, fmt.Sprintf("--label %s=%s: no row has a field %q", q, f, f))
			}
		}
		sort.Strings(missing)
		for _, m := range missing {
			if err := rd.fail(&Error{Msg: m}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (rd *reader) jsonlLine(data []byte, line int) error {
	if !utf8.Valid(data) {
		// The text rule of questionset.DecodeText: located, never quoted
		// (encoding/json would have read the bytes as U+FFFD).
		_, te := questionset.DecodeText(data)
		return rd.fail(&Error{Line: line, Col: te.Col, Msg: te.Msg})
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		msg := "invalid JSON: " + jsonMessage(err)
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) || (trimmed[0] != '{' && json.Valid(trimmed)) {
			msg = "each line must be a JSON object like {\"id\": …, \"state\": …, \"labels\": {…}}"
		}
		return rd.fail(&Error{Line: line, Msg: msg})
	}
	if fields == nil {
		return rd.fail(&Error{Line: line, Msg: "each line must be a JSON object like {\"id\": …, \"state\": …, \"labels\": {…}}"})
	}
	it := Item{Line: line}
	row := &rowFields{top: fields}
	idRaw, ok := row.lookup(rd.opt.idField())
	if !ok {
		return rd.fail(&Error{Line: line, Msg: fmt.Sprintf("missing %q; every item needs an id (or name the field with %s)", rd.opt.idField(), rd.flagHint("--id-field"))})
	}
	id, msg := idText(idRaw)
	if msg != "" {
		return rd.fail(&Error{Line: line, Msg: rd.opt.idField() + ": " + msg})
	}
	it.ID = id
	if len(rd.opt.StateFields) > 0 {
		st, msg := rd.combineState(row.lookup)
		if msg != "" {
			return rd.fail(&Error{Line: line, Item: id, Msg: msg})
		}
		it.State = st
	} else {
		stRaw, ok := row.lookup(rd.opt.stateField())
		if !ok {
			return rd.fail(&Error{Line: line, Item: id, Msg: fmt.Sprintf("missing %q; every item needs a state (or name the field with %s)", rd.opt.stateField(), rd.flagHint("--state-field"))})
		}
		if msg := stateProblem(stRaw); msg != "" {
			return rd.fail(&Error{Line: line, Item: id, Msg: rd.opt.stateField() + ": " + msg})
		}
		it.State = provider.Compact(stRaw)
	}
	var labels map[string]json.RawMessage
	if lr, ok := fields["labels"]; ok && !isNull(lr) {
		if err := json.Unmarshal(lr, &labels); err != nil || labels == nil {
			return rd.fail(&Error{Line: line, Item: id, Msg: "labels: must be an object mapping question id to label"})
		}
		for q := range rd.opt.LabelFields {
			delete(labels, q) // a mapped field wins
		}
	}
	for q, f := range rd.opt.LabelFields {
		if v, ok := row.lookup(f); ok {
			rd.fieldSeen[f] = true
			if labels == nil {
				labels = map[string]json.RawMessage{}
			}
			labels[q] = v
		}
	}
	order := rd.labelOrder(labels)
	failed := false
	for _, q := range order {
		raw, msg := rd.mapValue(q, labels[q])
		if msg != "" {
			failed = true
			if err := rd.fail(&Error{Line: line, Item: id, Question: q, Msg: msg}); err != nil {
				return err
			}
			continue
		}
		lab, has, msg := rd.resolve(q, raw, false)
		if msg != "" {
			failed = true
			if err := rd.fail(&Error{Line: line, Item: id, Question: q, Msg: msg}); err != nil {
				return err
			}
			continue
		}
		if has {
			if it.Labels == nil {
				it.Labels = map[string]Label{}
			}
			it.Labels[q] = lab
		}
	}
	if failed {
		rd.rows++
		rd.seenID(id, line)
		return nil
	}
	return rd.emit(it)
}

// labelOrder lists the labelled questions in the set's question order,
// then any others (unknown questions) sorted, so problems are reported in
// a stable order.
func (rd *reader) labelOrder(labels map[string]json.RawMessage) []string {
	if len(labels) == 0 {
		return nil
	}
	order := make([]string, 0, len(labels))
	if rd.set != nil {
		for _, e := range rd.set.Questions {
			if _, ok := labels[e.ID]; ok {
				order = append(order, e.ID)
			}
		}
	}
	if len(order) == len(labels) {
		return order
	}
	var rest []string
	for q := range labels {
		if rd.set == nil {
			rest = append(rest, q)
		} else if _, ok := rd.set.Questions.Get(q); !ok {
			rest = append(rest, q)
		}
	}
	sort.Strings(rest)
	return append(order, rest...)
}

// idText converts an id field to text: a string or a JSON number.
func idText(raw json.RawMessage) (string, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", "missing"
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", "invalid string"
		}
		if strings.TrimSpace(s) == "" {
			return "", "is empty; every item needs an id"
		}
		return s, ""
	case 'n':
		return "", "is null; every item needs an id"
	case 't', 'f':
		return "", "must be a string or number, not a boolean"
	case '{', '[':
		return "", "must be a string or number, not an object or array"
	}
	return string(raw), ""
}

// stateProblem says why raw cannot be a state, or "".
func stateProblem(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "missing"
	}
	switch raw[0] {
	case '"', '{', '[':
		return ""
	case 'n':
		return "is null; give a string, object or array"
	case 't', 'f':
		return "must be a string, object or array, not a boolean"
	}
	return "must be a string, object or array, not a number"
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// resolve checks one label against question q. has is false for an
// unlabelled question (null, or an empty CSV cell). fromText says the value
// is a CSV cell (always text).
func (rd *reader) resolve(q string, raw json.RawMessage, fromText bool) (Label, bool, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return Label{}, false, ""
	}
	if rd.set == nil {
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		return Label{Index: -1, Text: s}, true, ""
	}
	question, ok := rd.set.Questions.Get(q)
	var str string
	isStr := raw[0] == '"' && json.Unmarshal(raw, &str) == nil
	if !ok {
		if rd.opt.KeepStale {
			return staleLabel(raw, str, isStr), true, ""
		}
		msg := fmt.Sprintf("no such question in the set (questions: %s)", strings.Join(rd.set.Questions.IDs(), ", "))
		return Label{}, false, msg
	}
	if isStr && str == "" {
		if fromText {
			return Label{}, false, ""
		}
		return Label{}, false, "empty label; use null or leave the question out for an unlabelled item"
	}
	l, has, msg := ResolveLabel(question, raw)
	if msg != "" && rd.opt.KeepStale && isStale(question, raw, isStr) {
		return staleLabel(raw, str, isStr), true, ""
	}
	return l, has, msg
}

// ResolveLabel checks one raw JSON label against question q and returns
// it resolved. The message is "" when the label is valid. A JSON string
// from a CSV cell is accepted wherever a number or boolean would be.
func ResolveLabel(q *provider.Question, raw json.RawMessage) (Label, bool, string) {
	raw = bytes.TrimSpace(raw)
	var str string
	isStr := len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &str) == nil
	switch q.Type {
	case provider.Choice:
		if !isStr {
			return Label{}, false, fmt.Sprintf("a choice label is an option label (text), not %s", kindOf(raw))
		}
		if i := q.OptionIndex(str); i >= 0 {
			return Label{Index: i, Text: str}, true, ""
		}
		return Label{}, false, unknownOption(q, str)
	case provider.Score:
		n := len(q.Levels)
		if isStr {
			for i, l := range q.Levels {
				if levelText(l) == str {
					return Label{Index: i, Text: str}, true, ""
				}
			}
			if i, err := strconv.Atoi(str); err == nil {
				if i < 0 || i >= n {
					return Label{}, false, fmt.Sprintf("level %d is out of range; the scale has levels 0..%d", i, n-1)
				}
				return Label{Index: i, Text: levelText(q.Levels[i]), ByIndex: true}, true, ""
			}
			return Label{}, false, fmt.Sprintf("%q is neither a level index (0..%d) nor a level's exact text", str, n-1)
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			return Label{}, false, fmt.Sprintf("a score label is a level index (0..%d) or a level's exact text, not %s", n-1, kindOf(raw))
		}
		if f != float64(int(f)) {
			return Label{}, false, fmt.Sprintf("level %s is not a whole number; use 0..%d", raw, n-1)
		}
		i := int(f)
		if i < 0 || i >= n {
			return Label{}, false, fmt.Sprintf("level %d is out of range; the scale has levels 0..%d", i, n-1)
		}
		return Label{Index: i, Text: levelText(q.Levels[i]), ByIndex: true}, true, ""
	case provider.Box:
		return resolveBox(raw)
	case provider.Noul:
		s := string(raw)
		if isStr {
			s = strings.ToLower(str)
		}
		switch s {
		case "true", "yes", "1":
			return Label{Index: 1, Text: "true"}, true, ""
		case "false", "no", "0":
			return Label{Index: 0, Text: "false"}, true, ""
		}
		if isStr {
			return Label{}, false, fmt.Sprintf("%q is not a noul label; use true/false, yes/no or 1/0", str)
		}
		return Label{}, false, fmt.Sprintf("%s is not a noul label; use true/false, yes/no or 1/0", raw)
	}
	return Label{}, false, fmt.Sprintf("question type %q cannot be labelled", q.Type)
}

// levelText is a level's label text: the string itself, a structured
// level's "label" field, or its compact JSON.
func levelText(l json.RawMessage) string {
	if len(l) > 0 && l[0] == '"' {
		return provider.Text(l)
	}
	if len(l) > 0 && l[0] == '{' {
		var v struct {
			Label *string `json:"label"`
		}
		if json.Unmarshal(l, &v) == nil && v.Label != nil {
			return *v.Label
		}
	}
	return string(l)
}

// LevelText returns the text a score level is labelled by: the string
// itself, a structured level's "label" field, or its compact JSON.
func LevelText(l json.RawMessage) string { return levelText(l) }

func unknownOption(q *provider.Question, label string) string {
	if t := strings.TrimSpace(label); t != label && q.OptionIndex(t) >= 0 {
		return fmt.Sprintf("unknown option %q (it has leading or trailing space; the option is %q)", label, t)
	}
	for _, o := range q.Options {
		if strings.EqualFold(o.Label, label) {
			return fmt.Sprintf("unknown option %q; labels are case-sensitive: did you mean %q?", label, o.Label)
		}
	}
	labels := make([]string, 0, 8)
	for i, o := range q.Options {
		if i == 8 {
			labels = append(labels, fmt.Sprintf("… (%d in all)", len(q.Options)))
			break
		}
		labels = append(labels, o.Label)
	}
	return fmt.Sprintf("unknown option %q; options are %s", label, strings.Join(labels, ", "))
}

func kindOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '"':
		return "text"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 'n':
		return "null"
	}
	return "a number"
}
