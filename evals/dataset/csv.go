package dataset

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jevlab/jevlab/provider"
)

// csv reads a CSV (or TSV) file with a header row. The state column holds
// JSON (an object or array) or plain text; label columns are the columns
// named by LabelFields and, for other questions, a column named after the
// question id. An empty label cell means unlabelled.
func (rd *reader) csv(br *bufio.Reader, comma rune) error {
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	// The CSV reader holds a whole record in memory, however many lines
	// its quoted fields span: a budget per record bounds it.
	budget := &recordBudget{r: br, max: rd.opt.maxLine() + int64(br.Size())}
	cr := csv.NewReader(bufio.NewReaderSize(budget, 4096))
	cr.Comma = comma
	cr.ReuseRecord = true
	nextLine := 1 // where the next record starts
	startRecord := func() { budget.startAt(cr.InputOffset()) }
	header, err := cr.Read()
	if err == io.EOF {
		return rd.fail(&Error{Line: 1, Msg: "empty file; a CSV dataset needs a header row and at least one row"})
	}
	if err != nil {
		return rd.csvError(err, nextLine)
	}
	nextLine = recordEnd(cr, header) + 1
	startRecord()
	if e := rd.csvUTF8(cr, header); e != nil {
		return rd.fail(e)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, dup := col[h]; dup {
			// Column names are quoted only once the header is known to be
			// a dataset's (an id and a state column): a file that is not
			// a dataset (a .env, a key file) must not be echoed.
			if rd.looksLikeHeader(header) {
				return rd.fail(&Error{Line: 1, Msg: fmt.Sprintf("duplicate column %q in the header", h)})
			}
			return rd.fail(&Error{Line: 1, Msg: fmt.Sprintf("column %d repeats an earlier column's name; this does not look like a CSV dataset (want a header row with %q and %q columns)", i+1, rd.opt.idField(), rd.opt.stateField())})
		}
		col[h] = i
	}
	columns := rd.describeColumns(header)
	idCol, ok := col[rd.opt.idField()]
	if !ok {
		return rd.fail(&Error{Line: 1, Msg: fmt.Sprintf("no %q column; name the id column with --id-field (%s)", rd.opt.idField(), columns)})
	}
	stCol := -1
	var stCols []int // --state-fields: the columns combined into an object state
	if len(rd.opt.StateFields) > 0 {
		for _, e := range rd.opt.StateFields {
			_, ref := stateKey(e)
			i, ok := col[ref]
			if !ok {
				return rd.fail(&Error{Line: 1, Msg: fmt.Sprintf("no %q column for the state fields; CSV columns are flat, name them as in the header (%s)", ref, columns)})
			}
			stCols = append(stCols, i)
		}
	} else {
		i, ok := col[rd.opt.stateField()]
		if !ok {
			return rd.fail(&Error{Line: 1, Msg: fmt.Sprintf("no %q column; name the state column with %s (%s)", rd.opt.stateField(), rd.flagHint("--state-field"), columns)})
		}
		stCol = i
	}
	type labelCol struct {
		q   string
		idx int
	}
	var labels []labelCol
	for _, q := range slices.Sorted(maps.Keys(rd.opt.LabelFields)) {
		f := rd.opt.LabelFields[q]
		i, ok := col[f]
		if !ok {
			return rd.fail(&Error{Line: 1, Msg: fmt.Sprintf("--label %s=%s: no %q column (%s)", q, f, f, columns)})
		}
		labels = append(labels, labelCol{q, i})
	}
	if rd.set != nil {
		for _, e := range rd.set.Questions {
			if _, mapped := rd.opt.LabelFields[e.ID]; mapped {
				continue
			}
			if i, ok := col[e.ID]; ok && i != idCol && i != stCol && !slices.Contains(stCols, i) {
				labels = append(labels, labelCol{e.ID, i})
			}
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, csv.ErrFieldCount) {
			if err := rd.csvError(err, nextLine); err != nil {
				return err
			}
			nextLine = recordEnd(cr, rec) + 1
			startRecord()
			continue
		}
		if err != nil {
			return rd.csvError(err, nextLine)
		}
		nextLine = recordEnd(cr, rec) + 1
		startRecord()
		if e := rd.csvUTF8(cr, rec); e != nil {
			if err := rd.fail(e); err != nil {
				return err
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" && len(header) > 1 {
			continue // a blank line
		}
		id := strings.Clone(strings.TrimSpace(rec[idCol])) // not a window on the whole record
		if id == "" {
			if err := rd.fail(&Error{Line: line, Msg: rd.opt.idField() + ": is empty; every item needs an id"}); err != nil {
				return err
			}
			continue
		}
		it := Item{ID: id, Line: line}
		if stCol >= 0 {
			it.State = cellState(rec[stCol])
		} else {
			it.State, _ = rd.combineState(func(ref string) (json.RawMessage, bool) {
				return cellState(rec[col[ref]]), true
			})
		}
		failed := false
		for _, lc := range labels {
			raw, msg := rd.mapValue(lc.q, textJSON(rec[lc.idx]))
			lab, has := Label{}, false
			if msg == "" {
				lab, has, msg = rd.resolve(lc.q, raw, true)
			}
			if msg != "" {
				failed = true
				l, c := cr.FieldPos(lc.idx)
				if err := rd.fail(&Error{Line: l, Col: c, Item: id, Question: lc.q, Msg: msg}); err != nil {
					return err
				}
				continue
			}
			if has {
				if it.Labels == nil {
					it.Labels = map[string]Label{}
				}
				it.Labels[lc.q] = lab
			}
		}
		if failed {
			rd.rows++
			rd.seenID(id, line)
			continue
		}
		if err := rd.emit(it); err != nil {
			return err
		}
	}
}

// cellState reads a state cell: JSON when it is an object or array,
// otherwise the text itself as a JSON string.
func cellState(cell string) json.RawMessage {
	t := strings.TrimSpace(cell)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		return provider.Compact(json.RawMessage(t))
	}
	return provider.String(cell)
}

// textJSON wraps a label cell as a JSON string ("" stays empty: unlabelled).
func textJSON(cell string) json.RawMessage {
	if cell == "" {
		return nil
	}
	return provider.String(cell)
}

// headerWord is a column name that reads as one: a short identifier.
var headerWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ .-]{0,63}$`)

// looksLikeHeader reports whether header is a dataset's header row: it has
// the id column (or the state column) and every name reads as a column
// name. Only then are its names quoted in messages.
func (rd *reader) looksLikeHeader(header []string) bool {
	has := false
	for _, h := range header {
		h = strings.TrimSpace(h)
		if !headerWord.MatchString(h) {
			return false
		}
		if h == rd.opt.idField() || h == rd.opt.stateField() {
			has = true
		}
	}
	return has
}

// describeColumns names the header's columns for a message when the row
// reads as a dataset header, and otherwise only counts them: the first
// line of a file that is not a dataset (an .env with a secret) is never
// echoed.
func (rd *reader) describeColumns(header []string) string {
	if rd.looksLikeHeader(header) {
		return "columns: " + strings.Join(header, ", ")
	}
	if len(header) == 1 {
		return "the first line is not a header row with id and state columns; is this a CSV dataset?"
	}
	return fmt.Sprintf("the first line has %d fields, none named %q or %q; is this a CSV dataset?", len(header), rd.opt.idField(), rd.opt.stateField())
}

// csvUTF8 is the problem of a record with a field that is not UTF-8 (the
// text rule of questionset.DecodeText), at that field, or nil.
func (rd *reader) csvUTF8(cr *csv.Reader, rec []string) *Error {
	for i, f := range rec {
		if !utf8.ValidString(f) {
			l, c := cr.FieldPos(i)
			return &Error{Line: l, Col: c, Msg: fmt.Sprintf("field %d is not valid UTF-8; save the file as UTF-8", i+1)}
		}
	}
	return nil
}

// recordEnd is the line the record just read ends on.
func recordEnd(cr *csv.Reader, rec []string) int {
	if len(rec) == 0 {
		return 0
	}
	line, _ := cr.FieldPos(len(rec) - 1)
	return line + strings.Count(rec[len(rec)-1], "\n")
}

// errRecordTooLong is recordBudget's error past the cap.
var errRecordTooLong = errors.New("record too long")

// recordBudget lets at most max bytes be read past the start of the
// current record (max includes the read-ahead of the buffers above it).
type recordBudget struct {
	r     io.Reader
	read  int64 // bytes handed out
	limit int64 // read may not pass this
	max   int64
}

func (b *recordBudget) startAt(off int64) { b.limit = off + b.max }

func (b *recordBudget) Read(p []byte) (int, error) {
	if b.limit == 0 {
		b.limit = b.max
	}
	if b.read >= b.limit {
		return 0, errRecordTooLong
	}
	if left := b.limit - b.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

func (rd *reader) csvError(err error, line int) error {
	if errors.Is(err, errRecordTooLong) {
		rd.errs = append(rd.errs, rd.tooLong(line, "record"))
		return &tooManyError{}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := "invalid CSV: " + pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg = "invalid CSV: wrong number of fields; every row needs one field per header column"
		}
		if e := rd.fail(&Error{Line: pe.Line, Col: pe.Column, Msg: msg}); e != nil {
			return e
		}
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return nil
		}
		return &tooManyError{} // the reader cannot recover its place after a quoting error
	}
	return readError(rd.name, err)
}
