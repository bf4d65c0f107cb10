package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// ItemResult is one item × repeat of a run: the call's accounting, its error
// (if the call failed) and one ItemAnswer per question.
type ItemResult struct {
	ItemID    string
	Seq       int // the item's position in the dataset
	Repeat    int // 0 for the first asking
	LatencyMS float64
	Usage     provider.Usage
	CostUSD   float64
	Model     string // resolved model
	RequestID string
	Attempts  int
	// ErrKind and ErrMsg are set when the call failed; the answers then
	// carry the same error and no Answer.
	ErrKind string
	ErrMsg  string
	Answers []ItemAnswer
}

// ItemAnswer is one item × question × repeat of a run.
type ItemAnswer struct {
	ItemID     string           `json:"item_id"`
	QuestionID string           `json:"question_id"`
	Repeat     int              `json:"repeat"`
	Seq        int              `json:"seq"`
	Answer     *provider.Answer `json:"answer,omitempty"` // nil on error
	// Decided is the decided value as text: the chosen label (choice), the
	// most probable level's index (score), or P(true) (noul).
	Decided   string  `json:"decided,omitempty"`
	ErrKind   string  `json:"error_kind,omitempty"`
	ErrMsg    string  `json:"error,omitempty"`
	LatencyMS float64 `json:"latency_ms"`
	Label     *int    `json:"label,omitempty"` // the item's label index for this question, if labelled
	LabelText string  `json:"label_text,omitempty"`
}

// ItemKey names one item × repeat.
type ItemKey struct {
	ItemID string
	Repeat int
}

const insItemSQL = `INSERT OR IGNORE INTO item_results (run_id, item_id, repeat, seq, latency_ms, input_tokens, output_tokens,
	cost_usd, model, request_id, attempts, err_kind, err_msg, answers, raws) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// SaveItems stores a batch of finished items of run in one transaction and
// adds them to the run's totals. It is idempotent: an item × repeat already
// stored with its answers is skipped (and not counted twice), so a resumed
// run never duplicates. An item × repeat stored as failed is replaced by
// the new result (a retry): the run's done count stays, its error count
// follows the new outcome, and the tokens and cost of both attempts are
// kept, on the item and the run, because both were spent. It returns how
// many items were new or replaced.
//
// An item's answers are packed into its item_results row (itempack.go);
// a raw answer that is a slice of a stored exchange this process saved or
// looked up lately is kept as a reference to it (rawrefs.go).
func (db *DB) SaveItems(ctx context.Context, runID string, items []ItemResult) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	insItem, err := db.stmt(ctx, insItemSQL)
	if err != nil {
		return 0, fmt.Errorf("save items of run %s: %w", runID, err)
	}
	var added, replaced, errs int
	var in, out int64
	var cost float64
	models := map[string]bool{}
	var newDicts map[string]int64
	err = db.write(ctx, func(tx *sql.Tx) error {
		newDicts = map[string]int64{}
		si := tx.StmtContext(ctx, insItem)
		defer si.Close()
		sink := func(questionID string, raw []byte) (rawRef, bool, []byte, int64, error) {
			if ref, ok := db.recent.get(raw); ok {
				return ref, true, nil, 0, nil
			}
			packed, dict, err := db.packer.pack(ctx, tx, runID, questionID, raw, newDicts)
			return rawRef{}, false, packed, dict, err
		}
		for i := range items {
			it := &items[i]
			pk, err := encodeItem(it, sink)
			if err != nil {
				return fmt.Errorf("item %s: %w", it.ItemID, err)
			}
			packed, err := db.packItem(ctx, tx, runID, pk.answers, newDicts)
			if err != nil {
				return fmt.Errorf("item %s: %w", it.ItemID, err)
			}
			var raws any
			if pk.raws != nil {
				raws = pk.raws
			}
			res, err := si.ExecContext(ctx, runID, it.ItemID, it.Repeat, it.Seq, it.LatencyMS, it.Usage.InputTokens, it.Usage.OutputTokens,
				it.CostUSD, it.Model, it.RequestID, it.Attempts, it.ErrKind, it.ErrMsg, packed, raws)
			if err != nil {
				return fmt.Errorf("item %s: %w", it.ItemID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				// Already stored. A stored answer stays (a resumed or
				// repeated save); a stored failure is replaced by this
				// new attempt (a retry), keeping the spend of both.
				var oldKind string
				if err := tx.QueryRowContext(ctx, `SELECT err_kind FROM item_results WHERE run_id = ? AND item_id = ? AND repeat = ?`,
					runID, it.ItemID, it.Repeat).Scan(&oldKind); err != nil {
					return fmt.Errorf("item %s: %w", it.ItemID, err)
				}
				if oldKind == "" {
					continue
				}
				if _, err := tx.ExecContext(ctx, `UPDATE item_results SET seq = ?, latency_ms = ?, input_tokens = input_tokens + ?,
					output_tokens = output_tokens + ?, cost_usd = cost_usd + ?, model = ?, request_id = ?, attempts = attempts + ?,
					err_kind = ?, err_msg = ?, answers = ?, raws = ? WHERE run_id = ? AND item_id = ? AND repeat = ?`,
					it.Seq, it.LatencyMS, it.Usage.InputTokens, it.Usage.OutputTokens, it.CostUSD, it.Model, it.RequestID, it.Attempts,
					it.ErrKind, it.ErrMsg, packed, raws, runID, it.ItemID, it.Repeat); err != nil {
					return fmt.Errorf("item %s: %w", it.ItemID, err)
				}
				replaced++
				errs-- // the old failure is gone; the new one counts below
			} else {
				added++
			}
			if it.ErrKind != "" {
				errs++
			}
			in += it.Usage.InputTokens
			out += it.Usage.OutputTokens
			cost += it.CostUSD
			if it.Model != "" {
				models[it.Model] = true
			}
		}
		if added == 0 && replaced == 0 {
			return nil
		}
		// The run changed: a summary computed before no longer holds.
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_summaries WHERE run_id = ?`, runID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM item_streams WHERE run_id = ?`, runID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET done = done + ?, errors = errors + ?, input_tokens = input_tokens + ?,
			output_tokens = output_tokens + ?, cost_usd = cost_usd + ?, updated_at = ? WHERE id = ?`,
			added, errs, in, out, cost, now(), runID); err != nil {
			return err
		}
		if len(models) > 0 {
			return mergeModels(ctx, tx, runID, models)
		}
		return nil
	})
	if err != nil {
		db.packer.forget(newDicts)
		return 0, fmt.Errorf("save items of run %s: %w", runID, err)
	}
	db.packer.remember(newDicts)
	return added + replaced, nil
}

// packItem returns an item's packed answers as stored: a uvarint
// dictionary id, then the bytes, deflated against the run's dictionary
// (the first item's packed answers) unless that gains nothing (id 0).
func (db *DB) packItem(ctx context.Context, tx *sql.Tx, runID string, b []byte, newDicts map[string]int64) ([]byte, error) {
	return packItemWith(ctx, tx, &db.packer, runID, b, newDicts)
}

func packItemWith(ctx context.Context, tx *sql.Tx, p *rawPacker, runID string, b []byte, newDicts map[string]int64) ([]byte, error) {
	packed, dict, err := p.pack(ctx, tx, runID, itemsDictQuestion, b, newDicts)
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, len(packed)+4), uint64(dict))
	return append(out, packed...), nil
}

// mergeModels adds newly seen resolved models to the run's list.
func mergeModels(ctx context.Context, tx *sql.Tx, runID string, seen map[string]bool) error {
	var cur string
	if err := tx.QueryRowContext(ctx, `SELECT models FROM runs WHERE id = ?`, runID).Scan(&cur); err != nil {
		return err
	}
	var list []string
	_ = json.Unmarshal([]byte(cur), &list)
	have := map[string]bool{}
	for _, m := range list {
		have[m] = true
	}
	changed := false
	for m := range seen {
		if !have[m] {
			list = append(list, m)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	b, _ := json.Marshal(list)
	_, err := tx.ExecContext(ctx, `UPDATE runs SET models = ? WHERE id = ?`, string(b), runID)
	return err
}

// appendFloats writes ps as a JSON array, each number in its shortest
// round-tripping form.
func appendFloats(b []byte, ps []float64) []byte {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, p, 'g', -1, 64)
	}
	return append(b, ']')
}

// DoneItems returns the item × repeat pairs of run already stored (answered
// or failed), for resuming.
func (db *DB) DoneItems(ctx context.Context, runID string) (map[ItemKey]bool, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, repeat FROM item_results WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("stored items of run %s: %w", runID, err)
	}
	defer rows.Close()
	out := map[ItemKey]bool{}
	for rows.Next() {
		var k ItemKey
		if err := rows.Scan(&k.ItemID, &k.Repeat); err != nil {
			return nil, fmt.Errorf("stored items of run %s: %w", runID, err)
		}
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stored items of run %s: %w", runID, err)
	}
	return out, nil
}

// FailedKeys returns run's failed item × repeats with their error kind, so
// a resume can ask them again (--retry-errors, or failures that were ours,
// such as a local write error).
func (db *DB) FailedKeys(ctx context.Context, runID string) (map[ItemKey]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, repeat, err_kind FROM item_results WHERE run_id = ? AND err_kind != ''`, runID)
	if err != nil {
		return nil, fmt.Errorf("failed items of run %s: %w", runID, db.check(err))
	}
	defer rows.Close()
	out := map[ItemKey]string{}
	for rows.Next() {
		var k ItemKey
		var kind string
		if err := rows.Scan(&k.ItemID, &k.Repeat, &kind); err != nil {
			return nil, fmt.Errorf("failed items of run %s: %w", runID, err)
		}
		out[k] = kind
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failed items of run %s: %w", runID, db.check(err))
	}
	return out, nil
}

// ForEachItemResult streams run's item × repeat rows in dataset order
// (answers not filled in).
func (db *DB) ForEachItemResult(ctx context.Context, runID string, fn func(*ItemResult) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, seq, repeat, latency_ms, input_tokens, output_tokens, cost_usd, model,
		request_id, attempts, err_kind, err_msg FROM item_results WHERE run_id = ? ORDER BY seq, repeat`, runID)
	if err != nil {
		return fmt.Errorf("items of run %s: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var it ItemResult
		if err := rows.Scan(&it.ItemID, &it.Seq, &it.Repeat, &it.LatencyMS, &it.Usage.InputTokens, &it.Usage.OutputTokens, &it.CostUSD,
			&it.Model, &it.RequestID, &it.Attempts, &it.ErrKind, &it.ErrMsg); err != nil {
			return fmt.Errorf("items of run %s: %w", runID, err)
		}
		if err := fn(&it); err != nil {
			return err
		}
	}
	return rows.Err()
}

// FailedItems returns up to limit of run's failed item × repeats in dataset
// order, with their error kind and message.
func (db *DB) FailedItems(ctx context.Context, runID string, limit int) ([]ItemResult, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, seq, repeat, attempts, err_kind, err_msg FROM item_results
		WHERE run_id = ? AND err_kind != '' ORDER BY seq, repeat LIMIT ?`, runID, limit)
	if err != nil {
		return nil, fmt.Errorf("failed items of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []ItemResult
	for rows.Next() {
		var it ItemResult
		if err := rows.Scan(&it.ItemID, &it.Seq, &it.Repeat, &it.Attempts, &it.ErrKind, &it.ErrMsg); err != nil {
			return nil, fmt.Errorf("failed items of run %s: %w", runID, err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// ForEachAnswer streams run's answers in dataset order (then question id,
// then repeat). fn must not keep a after it returns unless it copies it; the
// Answer it points to is fresh for each call.
func (db *DB) ForEachAnswer(ctx context.Context, runID string, fn func(*ItemAnswer) error) error {
	return db.forEachAnswer(ctx, runID, answerFilter{}, true, fn)
}

// ItemAnswers returns one item's answers in run (every question and
// repeat, raw bytes included): what a screen shows of an item picked from
// a large run without reading the run.
func (db *DB) ItemAnswers(ctx context.Context, runID, itemID string) ([]ItemAnswer, error) {
	var out []ItemAnswer
	err := db.forEachAnswer(ctx, runID, answerFilter{item: itemID}, true, func(a *ItemAnswer) error {
		out = append(out, *a)
		return nil
	})
	return out, err
}

// ForEachAnswerNoRaw is ForEachAnswer without each answer's Raw (nil): what
// metrics and comparisons read, without the bytes as received, so a large
// run's answers are read faster and held in less memory.
func (db *DB) ForEachAnswerNoRaw(ctx context.Context, runID string, fn func(*ItemAnswer) error) error {
	return db.forEachAnswer(ctx, runID, answerFilter{}, false, fn)
}

// ForEachQuestionAnswerNoRaw is ForEachAnswerNoRaw for one question's
// answers only (in dataset order, then repeat): what a report or a
// comparison reads question by question, so a large run never has more
// than one question's answers in memory.
func (db *DB) ForEachQuestionAnswerNoRaw(ctx context.Context, runID, questionID string, fn func(*ItemAnswer) error) error {
	return db.ForEachQuestionsAnswerNoRaw(ctx, runID, []string{questionID}, fn)
}

// ForEachQuestionsAnswerNoRaw is ForEachQuestionAnswerNoRaw for several
// questions in one pass: the answers of questionIDs only, in the same
// order as ForEachAnswerNoRaw (so each question's come as
// ForEachQuestionAnswerNoRaw streams them). Reading the rows costs the
// same whatever they keep, so a report of several questions reads them
// once instead of once per question.
func (db *DB) ForEachQuestionsAnswerNoRaw(ctx context.Context, runID string, questionIDs []string, fn func(*ItemAnswer) error) error {
	return db.forEachAnswer(ctx, runID, answerFilter{questions: slices.Clip(questionIDs), byQuestion: true}, false, fn)
}

// ForEachAnswerByItemNoRaw is ForEachAnswerNoRaw in item id order (byte
// order), then question id, then repeat: an item's answers come together,
// so two runs can be merged by item id as they stream (compare).
func (db *DB) ForEachAnswerByItemNoRaw(ctx context.Context, runID string, fn func(*ItemAnswer) error) error {
	return db.forEachAnswer(ctx, runID, answerFilter{byItem: true}, false, fn)
}

// ForEachItemNoRaw is ForEachAnswerByItemNoRaw an item at a time, with
// only what metrics and comparisons read: fn gets every answer of one item
// (all its repeats, in question id, then repeat order), items in id order
// (byte order), without the raw bytes, the provenance, the decided text or
// the error message (left empty; the error kind is kept). The answers, and
// the Answers, labels and distributions they point to, are reused once fn
// returns, so a large run is read without allocating per answer: fn must
// copy what it keeps (strings are not reused).
//
// A finished run is read from its item stream (itemstream.go) when it has
// one, else from its item_results rows; both give the same answers.
func (db *DB) ForEachItemNoRaw(ctx context.Context, runID string, fn func(answers []ItemAnswer) error) error {
	if ok, err := db.forEachStreamedItem(ctx, runID, fn); ok || err != nil {
		return err
	}
	return forEachItemRows(ctx, db.sql, runID, fn)
}

// forEachItemRows is ForEachItemNoRaw from the item_results rows, through q.
func forEachItemRows(ctx context.Context, q queryer, runID string, fn func(answers []ItemAnswer) error) error {
	return forEachGroupOn(ctx, q, nil, runID, answerFilter{byItem: true, perItem: true}, fn)
}

// answerFilter narrows forEachAnswer to one item or one question, or
// orders it by item id.
type answerFilter struct {
	item       string
	questions  []string // with byQuestion: the questions kept
	byQuestion bool
	byItem     bool
	// perItem: a group is one item's rows, its storage is reused and only
	// what metrics read is decoded (ForEachItemNoRaw).
	perItem bool
}

// forEachAnswer streams run's answers that pass f. Item rows come in
// dataset order; the answers of the rows at one dataset position (an
// item's repeats) are put in question id, then repeat order.
func (db *DB) forEachAnswer(ctx context.Context, runID string, f answerFilter, withRaw bool, fn func(*ItemAnswer) error) error {
	return db.forEachGroup(ctx, runID, f, withRaw, func(group []ItemAnswer) error {
		for i := range group {
			if err := fn(&group[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// forEachGroup is forEachAnswer a group of rows at a time: the rows at one
// dataset position (one item's, with f.perItem), their answers sorted.
func (db *DB) forEachGroup(ctx context.Context, runID string, f answerFilter, withRaw bool, fn func([]ItemAnswer) error) error {
	var rawDB *sql.DB
	if withRaw {
		rawDB = db.sql
	}
	return forEachGroupOn(ctx, db.sql, rawDB, runID, f, fn)
}

// queryer is what forEachGroupOn reads through: the database or a
// transaction.
type queryer interface {
	rowQueryer
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// forEachGroupOn is forEachGroup reading through q, with the raw bytes
// read from rawDB (none when nil).
func forEachGroupOn(ctx context.Context, q queryer, rawDB *sql.DB, runID string, f answerFilter, fn func([]ItemAnswer) error) error {
	withRaw := rawDB != nil
	rawCol := "raws"
	if !withRaw {
		rawCol = "NULL"
	}
	where, args := "run_id = ?", []any{runID}
	if f.item != "" {
		where, args = "run_id = ? AND item_id = ?", []any{runID, f.item}
	}
	var only []string
	if f.byQuestion {
		only = f.questions
		if only == nil {
			only = []string{} // none kept, not all
		}
	}
	order := "seq, repeat"
	if f.byItem {
		order = "item_id, repeat" // the primary key's order
	}
	rows, err := q.QueryContext(ctx, `SELECT item_id, seq, repeat, latency_ms, answers, `+rawCol+`
		FROM item_results WHERE `+where+` ORDER BY `+order, args...)
	if err != nil {
		return fmt.Errorf("answers of run %s: %w", runID, err)
	}
	defer rows.Close()
	var src rawSource
	if withRaw {
		src = newRawReader(ctx, rawDB)
	}
	unpack := rawUnpacker{db: q}
	dec := itemDecoder{reuse: f.perItem, lean: f.perItem}
	var group []ItemAnswer
	groupSeq, groupRows := 0, 0
	var groupItem string
	flush := func() error {
		if groupRows == 0 {
			return nil
		}
		if groupRows > 1 {
			sortAnswers(group)
		}
		if err := fn(group); err != nil {
			return err
		}
		clear(group)
		group, groupRows = group[:0], 0
		if f.perItem {
			dec.recycle()
		}
		return nil
	}
	var itemB, packed, raws sql.RawBytes
	for rows.Next() {
		var seq, repeat int
		var latency float64
		if err := rows.Scan(&itemB, &seq, &repeat, &latency, &packed, &raws); err != nil {
			return fmt.Errorf("answers of run %s: %w", runID, err)
		}
		if packed == nil {
			continue // an item stored without answers
		}
		itemID := dec.in.last(itemB)
		if groupRows > 0 && (seq != groupSeq || f.perItem && itemID != groupItem) {
			if err := flush(); err != nil {
				return err
			}
		}
		body, err := unpackItem(ctx, &unpack, packed)
		if err == nil {
			group, err = dec.decode(group, body, raws, itemID, seq, repeat, latency, src, only)
		}
		if err != nil {
			return fmt.Errorf("answers of run %s: item %s: %w", runID, itemID, err)
		}
		groupSeq, groupItem = seq, itemID
		groupRows++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("answers of run %s: %w", runID, err)
	}
	return flush()
}

// unpackItem inflates item_results.answers as packItem wrote it.
func unpackItem(ctx context.Context, u *rawUnpacker, b []byte) ([]byte, error) {
	dict, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errPacked
	}
	if dict == 0 {
		return b[n:], nil
	}
	return u.unpackShared(ctx, b[n:], int64(dict))
}

// RunAnswers returns every answer of run in dataset order.
func (db *DB) RunAnswers(ctx context.Context, runID string) ([]ItemAnswer, error) {
	var out []ItemAnswer
	err := db.ForEachAnswer(ctx, runID, func(a *ItemAnswer) error {
		out = append(out, *a)
		return nil
	})
	return out, err
}

// interner shares the strings answer rows repeat. Its map is bounded, so
// a column of distinct values (a noul's P as text, error messages) costs
// no more than one string per row.
type interner struct {
	m      map[string]string
	lastS  string
	lastT  string
	lastTm time.Time
}

// maxInterned bounds interner.m.
const maxInterned = 4096

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = make(map[string]string)
	}
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}

// last returns b as a string, the previous call's when equal (an item's
// rows come together).
func (in *interner) last(b []byte) string {
	if string(b) != in.lastS {
		in.lastS = string(b)
	}
	return in.lastS
}

// lastTime parses a stored RFC 3339 time, reusing the previous row's when
// the text is the same (an item's answers share one recorded_at).
func (in *interner) lastTime(b []byte) time.Time {
	if len(b) == 0 {
		return time.Time{}
	}
	if string(b) != in.lastT {
		in.lastT = string(b)
		in.lastTm, _ = time.Parse(time.RFC3339Nano, in.lastT)
	}
	return in.lastTm
}

// parseFloats reads a distribution as appendFloats writes it ([a,b,…],
// each number in its shortest round-tripping form), into a slice of
// exactly its length; anything else goes through encoding/json.
func parseFloats(b []byte) ([]float64, error) {
	return parseFloatsInto(b, func(n int) []float64 { return make([]float64, 0, n) })
}

// parseFloatsInto is parseFloats whose result, when the text is
// appendFloats', is carved from buf(n): an empty slice with room for n.
func parseFloatsInto(b []byte, buf func(n int) []float64) ([]float64, error) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, fmt.Errorf("not a JSON array: %.40q", b)
	}
	body := b[1 : len(b)-1]
	if len(body) == 0 {
		return []float64{}, nil
	}
	out := buf(bytes.Count(body, []byte{','}) + 1)
	for len(body) > 0 {
		i := bytes.IndexByte(body, ',')
		tok := body
		if i >= 0 {
			tok, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		f, ok := parseExact(tok)
		var err error
		if !ok {
			f, err = strconv.ParseFloat(string(tok), 64)
		}
		if err != nil {
			var v []float64
			if jerr := json.Unmarshal(b, &v); jerr != nil {
				return nil, jerr
			}
			return v, nil
		}
		out = append(out, f)
	}
	return out, nil
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseExact reads a decimal number ([-]digits[.digits][e[±]digits]) whose
// digits form an integer m < 2⁵² and whose value is m·10^e with |e| ≤ 22:
// m and 10^|e| are then exact float64s and one multiplication or division
// rounds correctly, so the result is strconv.ParseFloat's to the bit (its
// own exact path, without the general parsing around it). ok is false
// for anything else, which the caller parses with strconv.
func parseExact(b []byte) (f float64, ok bool) {
	i, neg := 0, false
	if i < len(b) && b[i] == '-' {
		neg, i = true, i+1
	}
	var m uint64
	nd, exp, digits := 0, 0, false
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		digits = true
		if m == 0 && b[i] == '0' {
			continue
		}
		if nd++; nd > 16 {
			return 0, false
		}
		m = m*10 + uint64(b[i]-'0')
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			digits = true
			exp--
			if m == 0 && b[i] == '0' {
				continue
			}
			if nd++; nd > 16 {
				return 0, false
			}
			m = m*10 + uint64(b[i]-'0')
		}
	}
	if !digits {
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg, i = b[i] == '-', i+1
		}
		e, ed := 0, 0
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			if ed++; ed > 4 {
				return 0, false
			}
			e = e*10 + int(b[i]-'0')
		}
		if ed == 0 {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) || m>>52 != 0 {
		return 0, false
	}
	f = float64(m)
	if neg {
		f = -f
	}
	switch {
	case m == 0 || exp == 0:
		return f, true
	case exp > 0 && exp <= 22:
		if f > 1e15 || f < -1e15 {
			return 0, false
		}
		return f * pow10[exp], true
	case exp < 0 && exp >= -22:
		return f / pow10[-exp], true
	}
	return 0, false
}
