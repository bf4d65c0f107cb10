package dataset

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jevlab/jevlab/internal/inputfile"
)

// LabelEdit is one label to write into a dataset file.
type LabelEdit struct {
	// ItemID is the item's id as the dataset reader reports it (Item.ID).
	ItemID string
	// Question is the question id; its label lives where Options says
	// (a mapped field or column, else labels.{Question} in JSONL and the
	// column named Question in CSV).
	Question string
	// Value is the new label as JSON: a string for an option or a level's
	// text, a number for a level index, true/false for a noul. nil or
	// null removes the label. It is written as given (compacted), so check
	// it first with ResolveLabel against the question it is for.
	Value json.RawMessage
}

// RewriteLabels writes edits into the dataset file at path, read with
// opt's field mapping, in the file's own format, and returns how many
// labels changed (an edit that writes the label already there changes
// nothing and is not counted).
//
// Only the bytes of the changed labels change; every other line (JSONL)
// or record (CSV/TSV) is copied byte for byte, including blank lines,
// \r\n endings, a byte-order mark and a missing final newline. In JSONL a
// changed label's value is replaced in place; a new label is added as the
// last member of the line's "labels" object (created as the line's last
// member when absent), or for a mapped question as the line's last member,
// with the spacing the line already uses; a removed label is deleted from
// "labels", or set to null in a mapped field (so the field stays in every
// row). In CSV/TSV only the label cell changes, quoted only when needed;
// the header is untouched, a question needs a column already (one is
// never added, which would rewrite every row), and a label with a line
// break is refused (it would move every later item to another line).
//
// The file must read cleanly with the package's reader (labels are not
// checked against any set: the point may be to repair them). The new
// content goes to a temporary file beside it; every changed record is
// read back with the package's reader and must carry its new label; the
// file is fsynced and renamed over the original (its mode kept; a
// symlink's target is rewritten), unless the original changed on disk
// meanwhile (size, mtime or identity), which is an error. When no label
// changes the file is not touched. Unknown item ids, duplicate edits and
// any other problem are errors (file:line, item id), and then nothing is
// written. Compressed (.gz) datasets are refused. Two rewrites of one
// file at the same moment are not serialised: the caller (one workbench)
// must not run them concurrently.
func RewriteLabels(path string, opt Options, edits []LabelEdit) (int, error) {
	p := &plan{byID: map[string][]target{}, lines: map[int]string{}}
	seen := map[[2]string]bool{}
	for i, e := range edits {
		where := fmt.Sprintf("edit %d (item %q, question %q)", i+1, e.ItemID, e.Question)
		if e.ItemID == "" {
			return 0, fmt.Errorf("rewrite labels of %s: edit %d: empty item id", path, i+1)
		}
		if e.Question == "" || !utf8.ValidString(e.Question) {
			return 0, fmt.Errorf("rewrite labels of %s: %s: empty or invalid question id", path, where)
		}
		val, err := labelValue(e.Value)
		if err != nil {
			return 0, fmt.Errorf("rewrite labels of %s: %s: %w", path, where, err)
		}
		if k := [2]string{e.ItemID, e.Question}; seen[k] {
			return 0, fmt.Errorf("rewrite labels of %s: %s: a second edit of the same label; give one edit per item and question", path, where)
		} else {
			seen[k] = true
		}
		p.byID[e.ItemID] = append(p.byID[e.ItemID], target{q: e.Question, next: func(json.RawMessage) (json.RawMessage, bool) { return val, true }})
	}
	if len(edits) == 0 {
		return 0, nil
	}
	return rewrite(path, opt, p)
}

// RenameLabels rewrites every label of question q whose text is a key of
// renames to its value (old → new, applied at once, so a swap works): the
// dataset side of an option (or level text) renamed in the editor. A label
// matches by its text exactly as the reader reads it (a JSON string label
// in JSONL, the cell in CSV); level indexes and booleans never match. It
// returns how many labels changed and otherwise behaves as RewriteLabels.
func RenameLabels(path string, opt Options, q string, renames map[string]string) (int, error) {
	if q == "" || !utf8.ValidString(q) {
		return 0, fmt.Errorf("rename labels in %s: empty or invalid question id", path)
	}
	m := map[string]string{}
	var olds [][]byte
	fffd := false
	for old, nw := range renames {
		if old == "" || nw == "" || !utf8.ValidString(nw) {
			return 0, fmt.Errorf("rename labels in %s: question %q: rename %q → %q: labels cannot be empty or invalid UTF-8", path, q, old, nw)
		}
		if old != nw {
			m[old] = nw
			olds = append(olds, []byte(old))
			fffd = fffd || strings.ContainsRune(old, utf8.RuneError)
		}
	}
	if len(m) == 0 {
		return 0, nil
	}
	next := func(cur json.RawMessage) (json.RawMessage, bool) {
		if len(cur) == 0 || cur[0] != '"' {
			return nil, false
		}
		var s string
		if json.Unmarshal(cur, &s) != nil {
			return nil, false
		}
		nw, ok := m[s]
		if !ok {
			return nil, false
		}
		return jsonString(nw), true
	}
	// A JSON line without a backslash holds every string's text as it is,
	// so a line that contains no old label is skipped unscanned (unless
	// an old label has U+FFFD, which invalid UTF-8 decodes to).
	skip := func(line []byte) bool {
		if fffd || bytes.IndexByte(line, '\\') >= 0 {
			return false
		}
		for _, o := range olds {
			if bytes.Contains(line, o) {
				return false
			}
		}
		return true
	}
	return rewrite(path, opt, &plan{all: []target{{q: q, next: next}}, skip: skip})
}

// target is one label to consider on a record: next gets the current label
// (JSON; nil when there is none, and a CSV cell as a JSON string) and
// returns the label to write (nil removes it) and whether to write it.
type target struct {
	q    string
	next func(cur json.RawMessage) (json.RawMessage, bool)
}

// plan says which records to consider: byID for the items named by edits
// (lines holds where the first read found each), or all for every item
// (skip, when set, says a JSON line cannot need a change).
type plan struct {
	byID  map[string][]target
	lines map[int]string // line → item id (byID only)
	all   []target
	skip  func(line []byte) bool
}

// targets returns the labels to consider on the item starting at line, and
// the id that item must have ("" when any will do).
func (p *plan) targets(line int) (string, []target) {
	if p.all != nil {
		return "", p.all
	}
	id, ok := p.lines[line]
	if !ok {
		return "", nil
	}
	return id, p.byID[id]
}

// errChanged is the message when the file moved under the rewrite.
const errChanged = "the file changed while its labels were being rewritten; nothing was written, try again"

func rewrite(path string, opt Options, p *plan) (int, error) {
	if strings.EqualFold(filepath.Ext(path), ".gz") {
		return 0, &Error{File: path, Msg: "a compressed dataset cannot be rewritten in place; gunzip it, point the set at the plain file, and edit that"}
	}
	for _, f := range opt.LabelFields {
		if f == opt.idField() || f == opt.stateField() || f == "labels" {
			return 0, &Error{File: path, Msg: fmt.Sprintf("--label …=%s: labels cannot be written into the %q field", f, f)}
		}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return 0, fmt.Errorf("rewrite labels: %w", err)
	}
	f, _, err := inputfile.Open(real, "dataset")
	if err != nil {
		return 0, fmt.Errorf("rewrite labels: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("rewrite labels: %w", err)
	}
	opt.Format, err = rewriteFormat(path, f, opt.Format)
	if err != nil {
		return 0, err
	}

	// First read: the file must read cleanly, and it says where the edited
	// items are.
	found := map[string]bool{}
	err = Parse(path, f, opt, nil, func(it Item) error {
		if _, ok := p.byID[it.ID]; ok {
			p.lines[it.Line] = it.ID
			found[it.ID] = true
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("rewrite labels: %w", err)
	}
	if missing := missingIDs(p.byID, found); missing != "" {
		return 0, &Error{File: path, Msg: missing + "; nothing was written"}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("rewrite labels: %w", err)
	}

	// Second read: copy, changing only the labels.
	dir := filepath.Dir(real)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(real)+".relabel-*")
	if err != nil {
		return 0, fmt.Errorf("rewrite labels of %s: cannot create a temporary file beside it: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	var changed int
	if opt.Format == "jsonl" {
		changed, err = rewriteJSONL(path, f, bw, opt, p)
	} else {
		comma := ','
		if opt.Format == "tsv" {
			comma = '\t'
		}
		changed, err = rewriteCSV(path, f, bw, comma, opt, p)
	}
	if err != nil {
		return 0, err
	}
	if changed == 0 {
		return 0, nil // the deferred cleanup removes the temporary file
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("rewrite labels of %s: %w", path, err)
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		return 0, fmt.Errorf("rewrite labels of %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return 0, fmt.Errorf("rewrite labels of %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("rewrite labels of %s: %w", path, err)
	}
	if st, err := os.Stat(real); err != nil || !os.SameFile(fi, st) || st.Size() != fi.Size() || !st.ModTime().Equal(fi.ModTime()) {
		return 0, &Error{File: path, Msg: errChanged}
	}
	if err := os.Rename(tmp.Name(), real); err != nil {
		return 0, fmt.Errorf("rewrite labels of %s: %w", path, err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the rename durable; best effort where directories refuse
		d.Close()
	}
	return changed, nil
}

// rewriteFormat chooses the format as Parse does: forced, by extension,
// else by the first byte.
func rewriteFormat(path string, f *os.File, forced string) (string, error) {
	format := forced
	if format == "" {
		format = formatFor(path)
	}
	if format == "" {
		head := make([]byte, 512)
		n, _ := f.ReadAt(head, 0)
		head = bytes.TrimLeft(bytes.TrimPrefix(head[:n], []byte("\xef\xbb\xbf")), " \t\r\n")
		format = "csv"
		if len(head) > 0 && head[0] == '{' {
			format = "jsonl"
		}
	}
	switch format {
	case "jsonl", "csv", "tsv":
		return format, nil
	}
	return "", &Error{File: path, Msg: fmt.Sprintf("unknown format %q; use jsonl, csv or tsv", format)}
}

// missingIDs names the edited ids the file does not have, or "".
func missingIDs(byID map[string][]target, found map[string]bool) string {
	var ids []string
	for id := range byID {
		if !found[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	sort.Strings(ids)
	var b strings.Builder
	if len(ids) == 1 {
		b.WriteString("unknown item id ")
	} else {
		b.WriteString("unknown item ids ")
	}
	for i, id := range ids {
		if i == 10 {
			fmt.Fprintf(&b, ", … (%d in all)", len(ids))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", id)
	}
	b.WriteString(" (not in the dataset)")
	return b.String()
}

// checker reads rewritten records back with the package's reader, in
// batches: each must be one item, with its id and every applied label.
// Every other record is a byte-for-byte copy, so this checks all that a
// rewrite changed.
type checker struct {
	path   string
	opt    Options
	cols   map[string]string // question → the field or column the reader must use
	header []byte            // CSV: the header record, before each batch
	buf    []byte
	recs   []checkRec
}

type checkRec struct {
	line    int
	id      string // "" when any will do
	applied []labelKV
}

// checkBatch is how many bytes of records one read-back takes.
const checkBatch = 1 << 20

// add queues one rewritten record (a JSON line, or a CSV record).
func (c *checker) add(line int, data []byte, id string, applied []labelKV) error {
	if len(c.buf) == 0 {
		c.buf = append(c.buf, c.header...)
	}
	if line == 1 {
		data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	}
	c.buf = append(c.buf, data...)
	if !bytes.HasSuffix(data, []byte("\n")) {
		c.buf = append(c.buf, '\n')
	}
	c.recs = append(c.recs, checkRec{line, id, applied})
	if len(c.buf) >= checkBatch {
		return c.flush()
	}
	return nil
}

// flush reads the queued records back.
func (c *checker) flush() error {
	if len(c.recs) == 0 {
		return nil
	}
	vopt := c.opt
	vopt.LabelFields = map[string]string{}
	for _, r := range c.recs {
		for _, a := range r.applied {
			if col, ok := c.cols[a.key]; ok {
				vopt.LabelFields[a.key] = col
			}
		}
	}
	k := 0
	var bad *Error
	err := Parse(c.path, bytes.NewReader(c.buf), vopt, nil, func(it Item) error {
		if k >= len(c.recs) {
			k++
			return nil
		}
		r := c.recs[k]
		k++
		if r.id != "" && it.ID != r.id {
			bad = &Error{File: c.path, Line: r.line, Item: r.id, Msg: "the rewritten record reads back with another id (a jevlab bug); nothing was written"}
			return bad
		}
		for _, a := range r.applied {
			got, has := it.Labels[a.key]
			if has != (a.val != nil) || (has && got.Text != cellText(a.val)) {
				bad = &Error{File: c.path, Line: r.line, Item: it.ID, Question: a.key, Msg: "the rewritten record does not read back with the new label (a jevlab bug); nothing was written"}
				return bad
			}
		}
		return nil
	})
	if bad != nil {
		return bad
	}
	if err != nil || k != len(c.recs) {
		return &Error{File: c.path, Line: c.recs[0].line, Msg: "a rewritten record does not read back as one item (a jevlab bug); nothing was written"}
	}
	c.buf, c.recs = c.buf[:0], c.recs[:0]
	return nil
}

// checkRecord reads one rewritten record back at once (see checker).
func checkRecord(path string, line int, data []byte, opt Options, cols map[string]string, id string, applied []labelKV) error {
	c := &checker{path: path, opt: opt, cols: cols}
	if err := c.add(line, data, id, applied); err != nil {
		return err
	}
	return c.flush()
}

// labelValue checks and compacts an edit's value; nil means remove.
func labelValue(v json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, t); err != nil {
		return nil, errors.New("the value is not valid JSON; give a JSON string, number, true/false, or null to remove the label")
	}
	c := b.Bytes()
	switch c[0] {
	case '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return nil, errors.New("the value is not a valid JSON string")
		}
		if s == "" {
			return nil, errors.New("an empty label; use null to remove a label")
		}
	case '{', '[':
		return nil, errors.New("a label is a JSON string, number or true/false, not an object or array")
	}
	return c, nil
}

// cellText is a label as text: a string's content, else the JSON itself
// ("" for none). It is what a CSV cell holds and what Parse without a set
// reports as Label.Text.
func cellText(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return string(v)
}

// sameLabel reports whether two labels (JSON, nil for none) are the same:
// strings by content, anything else by spelling.
func sameLabel(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a[0] == '"' && b[0] == '"' {
		return cellText(a) == cellText(b)
	}
	return bytes.Equal(a, b)
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// ---- JSON Lines ----

// rewriteJSONL copies r to w line by line, editing the planned lines.
func rewriteJSONL(path string, r io.Reader, w *bufio.Writer, opt Options, p *plan) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	line, changed := 0, 0
	check := &checker{path: path, opt: opt, cols: opt.LabelFields}
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if int64(len(long)) > opt.maxLine()+1 {
				// The first read held every line under the cap.
				return 0, &Error{File: path, Line: line + 1, Msg: errChanged}
			}
			continue
		}
		if err != nil && err != io.EOF {
			return 0, fmt.Errorf("rewrite labels: read %s: %w", path, err)
		}
		data := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			data = long
		}
		if len(data) > 0 {
			line++
			out := data
			if id, ts := p.targets(line); len(ts) > 0 && (p.skip == nil || !p.skip(data)) {
				var applied []labelKV
				var e error
				out, applied, e = editJSONLLine(data, line == 1, id, ts, opt)
				if e != nil {
					if le, ok := e.(*Error); ok {
						le.File, le.Line = path, line
					}
					return 0, e
				}
				if len(applied) > 0 {
					if err := check.add(line, out, id, applied); err != nil {
						return 0, err
					}
				}
				changed += len(applied)
			}
			if _, err := w.Write(out); err != nil {
				return 0, fmt.Errorf("rewrite labels of %s: %w", path, err)
			}
		}
		long = long[:0]
		if cap(long) > 1<<20 {
			long = nil
		}
		if err == io.EOF {
			return changed, check.flush()
		}
	}
}

// member is one object member: offsets of the key's first byte, the
// byte after the key, and the value's first and past-last bytes.
type member struct {
	key            string
	ks, ke, vs, ve int
}

// object is a scanned JSON object: the offsets of its braces and members.
type object struct {
	open, close int
	members     []member
}

// last returns the index of the last member named key (the one a decoder
// keeps), or -1.
func (o *object) last(key string) int {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return i
		}
	}
	return -1
}

// value returns member i's value bytes.
func (o *object) value(b []byte, i int) []byte { return b[o.members[i].vs:o.members[i].ve] }

// style returns the bytes this object puts between a key and its value
// and between two members, falling back to parent's (then ":" and ",").
func (o *object) style(b []byte, colon, sep []byte) ([]byte, []byte) {
	if n := len(o.members); n > 0 {
		colon = b[o.members[n-1].ke:o.members[n-1].vs]
		if n > 1 {
			sep = b[o.members[n-2].ve:o.members[n-1].ks]
		}
	}
	if colon == nil {
		colon = []byte(":")
	}
	if sep == nil {
		sep = []byte(",")
	}
	return colon, sep
}

// scanObject finds the members of the JSON object in b[start:end], with
// offsets into b, by walking encoding/json's tokens.
func scanObject(b []byte, start, end int) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b[start:end]))
	off := func() int { return start + int(dec.InputOffset()) }
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	o := &object{open: off() - 1}
	for dec.More() {
		prev := off()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("not a JSON object")
		}
		m := member{key: key, ks: skipSep(b, prev, end), ke: off()}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		m.ve = off()
		m.vs = m.ve - len(raw)
		if m.ks >= m.ke || b[m.ks] != '"' || m.vs < m.ke || !bytes.Equal(b[m.vs:m.ve], raw) {
			return nil, errors.New("cannot locate a member") // never with encoding/json's offsets
		}
		o.members = append(o.members, m)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("not a JSON object")
	}
	o.close = off() - 1
	return o, nil
}

// skipSep skips JSON whitespace and commas from i.
func skipSep(b []byte, i, end int) int {
	for i < end {
		switch b[i] {
		case ' ', '\t', '\r', '\n', ',':
			i++
		default:
			return i
		}
	}
	return i
}

// rebuild returns the bytes of object o with values replaced (vals),
// members deleted (del) and members added at the end (ins, each the bytes
// "key": value). Everything else is o's own bytes: with no change the
// result is b[o.open:o.close+1] exactly.
func rebuild(b []byte, o *object, vals map[int][]byte, del map[int]bool, ins [][]byte, sep []byte) []byte {
	var out []byte
	n := 0
	if len(o.members) == 0 {
		out = append(out, b[o.open:o.close]...)
	} else {
		out = append(out, b[o.open:o.members[0].ks]...)
		for i, m := range o.members {
			if del[i] {
				continue
			}
			if n > 0 {
				out = append(out, b[o.members[i-1].ve:m.ks]...)
			}
			out = append(out, b[m.ks:m.vs]...)
			if v, ok := vals[i]; ok {
				out = append(out, v...)
			} else {
				out = append(out, b[m.vs:m.ve]...)
			}
			n++
		}
	}
	for _, m := range ins {
		if n > 0 {
			out = append(out, sep...)
		}
		out = append(out, m...)
		n++
	}
	if len(o.members) == 0 {
		return append(out, '}')
	}
	return append(out, b[o.members[len(o.members)-1].ve:o.close+1]...)
}

// labelKV is a label to add: question id and value.
type labelKV struct {
	key string
	val []byte
}

// newMember returns the bytes "key"<colon>value.
func newMember(key string, colon, val []byte) []byte {
	m := append(jsonString(key), colon...)
	return append(m, val...)
}

// editJSONLLine applies ts to one JSON Lines line (with its line ending)
// and returns the new line and the labels that changed (a nil value:
// removed); with none, the line itself. wantID, when set, is the id the
// line must have. A returned *Error lacks File and Line.
func editJSONLLine(data []byte, first bool, wantID string, ts []target, opt Options) ([]byte, []labelKV, error) {
	body := 0
	if first && bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		body = 3
	}
	// The object, without the spaces the reader trims (bytes.TrimSpace).
	trimmed := bytes.TrimSpace(data[body:])
	if len(trimmed) == 0 {
		return data, nil, nil
	}
	start := len(data) - len(bytes.TrimLeftFunc(data[body:], unicode.IsSpace))
	end := start + len(trimmed)
	top, err := scanObject(data, start, end)
	if err != nil {
		return nil, nil, &Error{Msg: errChanged}
	}
	idIdx := top.last(opt.idField())
	if idIdx < 0 {
		return nil, nil, &Error{Msg: errChanged}
	}
	id, msg := idText(top.value(data, idIdx))
	if msg != "" || (wantID != "" && id != wantID) {
		return nil, nil, &Error{Msg: errChanged}
	}
	colon, sep := top.style(data, nil, nil)

	topVals := map[int][]byte{}
	var topIns [][]byte
	// The labels object, scanned when a target needs it.
	labIdx := -2
	var lab *object
	labVals := map[int][]byte{}
	labDel := map[int]bool{}
	var labAdd []labelKV
	var applied []labelKV
	for _, t := range ts {
		if f, mapped := opt.LabelFields[t.q]; mapped {
			i := top.last(f)
			var cur json.RawMessage
			if i >= 0 && !isNull(top.value(data, i)) {
				cur = top.value(data, i)
			}
			val, write := t.next(cur)
			if !write || sameLabel(cur, val) {
				continue
			}
			switch {
			case val == nil:
				topVals[i] = []byte("null")
			case i >= 0:
				topVals[i] = val
			default:
				topIns = append(topIns, newMember(f, colon, val))
			}
			applied = append(applied, labelKV{t.q, val})
			continue
		}
		if labIdx == -2 {
			labIdx = top.last("labels")
			if labIdx >= 0 && !isNull(top.value(data, labIdx)) {
				m := top.members[labIdx]
				if lab, err = scanObject(data, m.vs, m.ve); err != nil {
					return nil, nil, &Error{Item: id, Msg: errChanged}
				}
			}
		}
		i := -1
		var cur json.RawMessage
		if lab != nil {
			if i = lab.last(t.q); i >= 0 && !isNull(lab.value(data, i)) {
				cur = lab.value(data, i)
			}
		}
		val, write := t.next(cur)
		if !write || sameLabel(cur, val) {
			continue
		}
		switch {
		case val == nil:
			for j, m := range lab.members {
				if m.key == t.q {
					labDel[j] = true // every copy, so no earlier duplicate shows through
				}
			}
		case i >= 0:
			labVals[i] = val
		default:
			labAdd = append(labAdd, labelKV{t.q, val})
		}
		applied = append(applied, labelKV{t.q, val})
	}
	if len(applied) == 0 {
		return data, nil, nil
	}
	if len(labVals)+len(labDel)+len(labAdd) > 0 {
		lcolon, lsep := colon, sep
		if lab != nil {
			lcolon, lsep = lab.style(data, colon, sep)
		}
		labIns := make([][]byte, len(labAdd))
		for k, kv := range labAdd {
			labIns[k] = newMember(kv.key, lcolon, kv.val)
		}
		switch {
		case lab != nil:
			topVals[labIdx] = rebuild(data, lab, labVals, labDel, labIns, lsep)
		case labIdx >= 0: // "labels": null
			topVals[labIdx] = append(append([]byte("{"), bytes.Join(labIns, lsep)...), '}')
		default:
			obj := append(append([]byte("{"), bytes.Join(labIns, lsep)...), '}')
			topIns = append(topIns, newMember("labels", colon, obj))
		}
	}
	out := make([]byte, 0, len(data)+64)
	out = append(out, data[:top.open]...)
	out = append(out, rebuild(data, top, topVals, nil, topIns, sep)...)
	out = append(out, data[top.close+1:]...)
	if !json.Valid(bytes.TrimSpace(out[body:])) {
		return nil, nil, &Error{Item: id, Msg: "the edited line is not valid JSON (a jevlab bug); nothing was written"}
	}
	return out, applied, nil
}

// ---- CSV and TSV ----

// tee keeps every byte read through it until taken, so that the raw bytes
// of each CSV record can be copied.
type tee struct {
	r     io.Reader
	buf   []byte
	limit int64 // most bytes kept at once: the record cap plus read-ahead
}

func (t *tee) Read(p []byte) (int, error) {
	if int64(len(t.buf)) > t.limit {
		// The first read held every record under the cap.
		return 0, errors.New(errChanged)
	}
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// take removes and returns the next n bytes kept.
func (t *tee) take(n int) []byte {
	b := t.buf[:n:n]
	t.buf = t.buf[n:]
	return b
}

// rewriteCSV copies r to w record by record, editing the label cells of
// the planned records.
func rewriteCSV(path string, r io.Reader, w *bufio.Writer, comma rune, opt Options, p *plan) (int, error) {
	br := bufio.NewReader(r)
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		w.WriteString("\xef\xbb\xbf")
	}
	t := &tee{r: br, limit: opt.maxLine() + 128<<10}
	cr := csv.NewReader(t)
	cr.Comma = comma
	fail := func(e error) (int, error) {
		var pe *csv.ParseError
		if errors.As(e, &pe) {
			return 0, &Error{File: path, Line: pe.Line, Col: pe.Column, Msg: errChanged}
		}
		return 0, fmt.Errorf("rewrite labels: read %s: %w", path, e)
	}
	header, err := cr.Read()
	if err != nil {
		return fail(err)
	}
	headerRaw := t.take(int(cr.InputOffset()))
	w.Write(headerRaw)
	line := 1 + bytes.Count(headerRaw, []byte("\n"))
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	idCol, ok := col[opt.idField()]
	stCol, ok2 := col[opt.stateField()]
	if !ok || !ok2 {
		return 0, &Error{File: path, Line: 1, Msg: errChanged}
	}
	// The column of each question a target names.
	colOf := map[string]int{}
	colName := map[string]string{}
	need := func(q string) error {
		if _, ok := colOf[q]; ok {
			return nil
		}
		name := q
		if f, ok := opt.LabelFields[q]; ok {
			name = f
		}
		i, ok := col[name]
		if !ok {
			return &Error{File: path, Line: 1, Question: q, Msg: fmt.Sprintf("no %q column in the header; add the column (empty cells are unlabelled) and label again", name)}
		}
		if i == idCol || i == stCol {
			return &Error{File: path, Line: 1, Question: q, Msg: fmt.Sprintf("column %q is the id or state column; labels cannot be written there", name)}
		}
		colOf[q], colName[q] = i, name
		return nil
	}
	for _, ts := range p.byID {
		for _, tg := range ts {
			if err := need(tg.q); err != nil {
				return 0, err
			}
		}
	}
	for _, tg := range p.all {
		if err := need(tg.q); err != nil {
			return 0, err
		}
	}
	var cellBuf bytes.Buffer
	changed := 0
	check := &checker{path: path, opt: opt, cols: colName, header: headerRaw}
	for {
		prev := cr.InputOffset()
		rec, err := cr.Read()
		if err == io.EOF {
			return changed, check.flush()
		}
		if err != nil {
			return fail(err)
		}
		raw := t.take(int(cr.InputOffset() - prev))
		l0, _ := cr.FieldPos(0)
		out := raw
		wantID, ts := p.targets(l0)
		blank := len(rec) == 1 && strings.TrimSpace(rec[0]) == "" && len(header) > 1
		if len(ts) > 0 && !blank {
			if len(rec) != len(header) {
				return 0, &Error{File: path, Line: l0, Msg: errChanged}
			}
			id := strings.TrimSpace(rec[idCol])
			if wantID != "" && id != wantID {
				return 0, &Error{File: path, Line: l0, Msg: errChanged}
			}
			cells := map[int]string{}
			var applied []labelKV
			for _, tg := range ts {
				c := colOf[tg.q]
				val, write := tg.next(textJSON(rec[c]))
				if !write {
					continue
				}
				if nc := cellText(val); nc != rec[c] {
					if strings.ContainsAny(nc, "\r\n") {
						// \r\n would read back as \n, and a line break moves
						// every later item to another line.
						return 0, &Error{File: path, Line: l0, Item: id, Question: tg.q, Msg: "a label with a line break cannot be written to a CSV file (label a score by its level index instead); nothing was written"}
					}
					cells[c] = nc
					applied = append(applied, labelKV{tg.q, val})
				}
			}
			if len(cells) > 0 {
				out, err = editCSVRecord(raw, line, l0, rec, cr, comma, cells, &cellBuf)
				if err != nil {
					return 0, &Error{File: path, Line: l0, Item: id, Msg: err.Error()}
				}
				if err := check.add(l0, out, id, applied); err != nil {
					return 0, err
				}
				changed += len(applied)
			}
		}
		if _, err := w.Write(out); err != nil {
			return 0, fmt.Errorf("rewrite labels of %s: %w", path, err)
		}
		line += bytes.Count(raw, []byte("\n"))
	}
}

// editCSVRecord replaces the cells of one record's raw bytes. raw starts
// at physical line `line` (blank lines the reader skipped come first) and
// the record itself at line l0; cr has just read it.
func editCSVRecord(raw []byte, line, l0 int, rec []string, cr *csv.Reader, comma rune, cells map[int]string, buf *bytes.Buffer) ([]byte, error) {
	pos := 0
	for k := line; k < l0; k++ {
		i := bytes.IndexByte(raw[pos:], '\n')
		if i < 0 {
			return nil, errors.New(errChanged)
		}
		pos += i + 1
	}
	recBytes := raw[pos:]
	starts := []int{0}
	for i, c := range recBytes {
		if c == '\n' && i+1 < len(recBytes) {
			starts = append(starts, i+1)
		}
	}
	end := len(recBytes)
	crlf := false
	if bytes.HasSuffix(recBytes, []byte("\r\n")) {
		end -= 2
		crlf = true
	} else if bytes.HasSuffix(recBytes, []byte("\n")) {
		end--
	}
	fieldStart := func(i int) (int, error) {
		l, c := cr.FieldPos(i)
		if l < l0 || l-l0 >= len(starts) {
			return 0, errors.New(errChanged)
		}
		s := starts[l-l0] + c - 1
		if s < 0 || s > end {
			return 0, errors.New(errChanged)
		}
		return s, nil
	}
	idx := make([]int, 0, len(cells))
	for c := range cells {
		idx = append(idx, c)
	}
	sort.Ints(idx)
	out := append([]byte(nil), raw[:pos]...)
	at := 0
	for _, c := range idx {
		s, err := fieldStart(c)
		if err != nil {
			return nil, err
		}
		e := end
		if c+1 < len(rec) {
			if e, err = fieldStart(c + 1); err != nil {
				return nil, err
			}
			e -= utf8.RuneLen(comma)
		}
		if e < s || e < at {
			return nil, errors.New(errChanged)
		}
		out = append(out, recBytes[at:s]...)
		out = append(out, csvCell(cells[c], comma, crlf, buf)...)
		at = e
	}
	return append(out, recBytes[at:]...), nil
}

// csvCell encodes one cell as encoding/csv writes it: quoted only when
// needed.
func csvCell(s string, comma rune, crlf bool, buf *bytes.Buffer) []byte {
	buf.Reset()
	w := csv.NewWriter(buf)
	w.Comma = comma
	w.UseCRLF = crlf
	if s == "" {
		return nil // an empty cell (unlabelled), never `""`
	}
	w.Write([]string{s}) // writing to a buffer cannot fail
	w.Flush()
	b := buf.Bytes()
	if crlf {
		b = bytes.TrimSuffix(b, []byte("\r\n"))
	} else {
		b = bytes.TrimSuffix(b, []byte("\n"))
	}
	return append([]byte(nil), b...)
}
