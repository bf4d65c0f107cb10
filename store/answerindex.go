package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// The answer index (table answer_index, migration 20261202_0002) lets the
// answer cache find a stored answer by provider.AnswerKey without reading
// every exchange: SaveExchange adds one row per answered question, and the
// migration's Go step adds the rows of exchanges stored before it.

// MaxLookupBatch is the most keys one lookup statement carries; longer key
// lists are split.
const MaxLookupBatch = 500

// unknownTime is recorded_ns for an exchange without a (parseable)
// recorded_at: older than any real time.
const unknownTime = math.MinInt64

const insAnswerIndexSQL = `INSERT INTO answer_index (key, exchange_id, ord, off, len, raw) VALUES (?,?,?,?,?,?)`

// insOldAnswerIndexSQL writes a row of the answer index as it was before
// migration 20261203_0900 (the earlier migrations' backfill writes it).
const insOldAnswerIndexSQL = `INSERT INTO answer_index (key, exchange_id, question_id, model, recorded_ns, off, len, raw) VALUES (?,?,?,?,?,?,?,?)`

// indexRow is one answer_index row to write.
type indexRow struct {
	key        provider.AnswerKey
	questionID string
	model      string
	recordedNS int64
	off, n     int
	raw        []byte // set only when the answer could not be sliced
}

// wireRequest is a stored request split into the fields the key needs.
type wireRequest struct {
	Model     string          `json:"model"`
	State     json.RawMessage `json:"state"`
	Document  json.RawMessage `json:"document"` // legacy name of state
	Questions json.RawMessage `json:"questions"`
	Assets    json.RawMessage `json:"assets"` // images, by hash (provider.WithAssets)
}

// indexer computes answer_index rows. It remembers the last few decoded
// questions objects: a dataset's exchanges all ask the same questions, so
// a backfill decodes each distinct set once.
type indexer struct {
	memo map[string]provider.Questions
}

// maxIndexerMemo bounds indexer.memo.
const maxIndexerMemo = 64

// rows returns the rows for ex: one per question of its request that its
// response answers, keyed like the answer cache keys a request
// (provider.KeyFor with the requested model, provider.DefaultModel when
// empty). An exchange whose request or response does not decode has no
// rows; the error says why.
func (ix *indexer) rows(ex provider.Exchange) ([]indexRow, error) {
	rs, _, err := ix.rowsAndQuestions(ex)
	return rs, err
}

// rowsAndQuestions is rows, also returning the request's questions value
// as written (nil when the request does not decode), which SaveExchanges
// stores once by hash.
func (ix *indexer) rowsAndQuestions(ex provider.Exchange) ([]indexRow, json.RawMessage, error) {
	var w wireRequest
	if err := json.Unmarshal(ex.Request, &w); err != nil {
		return nil, nil, fmt.Errorf("request: %w", err)
	}
	rs, err := ix.rowsOf(ex, &w)
	return rs, w.Questions, err
}

func (ix *indexer) rowsOf(ex provider.Exchange, w *wireRequest) ([]indexRow, error) {
	state := provider.Compact(w.State)
	if state == nil {
		state = provider.Compact(w.Document)
	}
	qs, ok := ix.memo[string(w.Questions)]
	if !ok {
		if len(w.Questions) > 0 {
			if err := qs.UnmarshalJSON(w.Questions); err != nil {
				return nil, fmt.Errorf("request: %w", err)
			}
		}
		if ix.memo == nil || len(ix.memo) >= maxIndexerMemo {
			ix.memo = make(map[string]provider.Questions)
		}
		ix.memo[string(w.Questions)] = qs
	}
	model, spans, err := answerSpans(ex.Response)
	if err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	if len(spans) == 0 {
		return nil, nil
	}
	reqModel := w.Model
	if reqModel == "" {
		reqModel = provider.DefaultModel
	}
	at := recordedNS(ex.RecordedAt)
	var assets []provider.Asset
	if len(w.Assets) > 0 && string(w.Assets) != "null" {
		if assets, err = provider.ParseAssets(w.Assets); err != nil {
			return nil, fmt.Errorf("request: %w", err)
		}
	}
	var out []indexRow
	for i := range qs {
		e := &qs[i]
		sp, ok := spans[e.ID]
		if !ok {
			continue
		}
		r := indexRow{key: provider.WithAssets(provider.KeyFor(reqModel, state, &e.Question), assets), questionID: e.ID, model: model, recordedNS: at}
		if sp.raw != nil {
			r.raw = sp.raw
		} else {
			r.off, r.n = sp.off, sp.n
		}
		out = append(out, r)
	}
	return out, nil
}

// span locates one answer in a response body: body[off:off+n], or raw when
// the bytes could not be located.
type span struct {
	off, n int
	raw    []byte
}

// answerSpans reads a response body's resolved model and where each answer
// object lies in it. Like decoding into map[string]json.RawMessage, a
// repeated answer id keeps the last; "answers": null has none.
func answerSpans(body []byte) (string, map[string]span, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := expectDelim(dec, '{'); err != nil {
		return "", nil, err
	}
	var model string
	spans := map[string]span{}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return "", nil, err
		}
		switch key {
		case "model":
			var m *string
			if err := dec.Decode(&m); err != nil {
				return "", nil, fmt.Errorf("model: %w", err)
			}
			if m != nil {
				model = *m
			}
		case "answers":
			tok, err := dec.Token()
			if err != nil {
				return "", nil, fmt.Errorf("answers: %w", err)
			}
			if tok == nil {
				continue // null
			}
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return "", nil, fmt.Errorf("answers: not an object")
			}
			for dec.More() {
				id, err := stringToken(dec)
				if err != nil {
					return "", nil, fmt.Errorf("answers: %w", err)
				}
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return "", nil, fmt.Errorf("answer %q: %w", id, err)
				}
				end := int(dec.InputOffset())
				start := end - len(raw)
				if start >= 0 && end <= len(body) && bytes.Equal(body[start:end], raw) {
					spans[id] = span{off: start, n: len(raw)}
				} else {
					spans[id] = span{raw: raw}
				}
			}
			if err := expectDelim(dec, '}'); err != nil {
				return "", nil, fmt.Errorf("answers: %w", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", nil, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return "", nil, err
	}
	return model, spans, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("want an object key, found %v", tok)
	}
	return s, nil
}

// recordedNS is recorded_at as stored in answer_index.recorded_ns.
func recordedNS(s string) int64 {
	t := provider.ParseRecordedAt(s)
	switch {
	case t.IsZero():
		return unknownTime
	case t.Year() < 1678:
		return unknownTime + 1
	case t.Year() > 2261:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// insertIndexRows writes the answer_index rows of exchange id (ins is
// insAnswerIndexSQL, or insOldAnswerIndexSQL when old).
func insertIndexRows(ctx context.Context, ins *sql.Stmt, id int64, rows []indexRow, old bool) error {
	for i, r := range rows {
		var raw any
		if r.raw != nil {
			raw = []byte(r.raw)
		}
		var err error
		if old {
			_, err = ins.ExecContext(ctx, r.key[:], id, r.questionID, r.model, r.recordedNS, r.off, r.n, raw)
		} else {
			_, err = ins.ExecContext(ctx, r.key[:], id, i, r.off, r.n, raw)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// exchangeModel is the resolved model and recorded time stored on an
// exchange (exchanges.model, recorded_ns) for its index rows.
func exchangeModel(ex provider.Exchange, rows []indexRow) (string, int64) {
	if len(rows) > 0 {
		return rows[0].model, rows[0].recordedNS
	}
	return "", recordedNS(ex.RecordedAt)
}

// backfillBatch is how many exchanges the backfill reads at a time.
const backfillBatch = 256

// backfillAnswerIndex is migration 20261202_0002's Go step: it indexes the
// answers of every exchange already stored, oldest first (so first saved
// still wins ties). Exchanges whose request or response does not decode
// are left out, as the cache used to skip them.
//
// It reads requests through storedRequestSQL, so it works before and after
// migration 20261203_0300 split them.
func backfillAnswerIndex(ctx context.Context, tx *sql.Tx, pr *progress) error {
	split, err := hasColumn(ctx, tx, "exchanges", "q_hash")
	if err != nil {
		return fmt.Errorf("backfill answer index: %w", err)
	}
	// Since migration 20261203_0900 responses may be packed and the model
	// and time are the exchange's.
	compact, err := hasColumn(ctx, tx, "exchanges", "resp_dict")
	if err != nil {
		return fmt.Errorf("backfill answer index: %w", err)
	}
	cols, join := "0, NULL", ""
	if split {
		cols, join = "e.q_off, b.body", "LEFT JOIN bodies b ON b.hash = e.q_hash"
	}
	dictCol := "NULL"
	if compact {
		dictCol = "e.resp_dict"
	}
	sel := `SELECT e.id, e.request, ` + cols + `, e.response, ` + dictCol + `, e.recorded_at FROM exchanges e ` + join +
		` WHERE e.id > ? ORDER BY e.id LIMIT ?`
	insSQL := insOldAnswerIndexSQL
	if compact {
		insSQL = insAnswerIndexSQL
	}
	ins, err := tx.PrepareContext(ctx, insSQL)
	if err != nil {
		return fmt.Errorf("backfill answer index: %w", err)
	}
	defer ins.Close()
	var upd *sql.Stmt
	if compact {
		if upd, err = tx.PrepareContext(ctx, `UPDATE exchanges SET model = ?, recorded_ns = ? WHERE id = ?`); err != nil {
			return fmt.Errorf("backfill answer index: %w", err)
		}
		defer upd.Close()
		var total int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM exchanges`).Scan(&total); err != nil {
			return fmt.Errorf("backfill answer index: %w", err)
		}
		pr.start("indexing stored answers", total)
	}
	type stored struct {
		id   int64
		ex   provider.Exchange
		dict int64 // the response is packed against this raw_dicts body
	}
	var ix indexer
	unpack := rawUnpacker{db: tx}
	last := int64(0)
	var done int64
	for {
		rows, err := tx.QueryContext(ctx, sel, last, backfillBatch)
		if err != nil {
			return fmt.Errorf("backfill answer index: %w", err)
		}
		var batch []stored
		for rows.Next() {
			var s stored
			var req, body, resp []byte
			var off int64
			var dict sql.NullInt64
			if err := rows.Scan(&s.id, &req, &off, &body, &resp, &dict, &s.ex.RecordedAt); err != nil {
				rows.Close()
				return fmt.Errorf("backfill answer index: %w", err)
			}
			if body != nil {
				if req, err = joinRequest(req, off, body); err != nil {
					rows.Close()
					return fmt.Errorf("backfill answer index: exchange %d: %w", s.id, err)
				}
			}
			s.ex.Request, s.ex.Response, s.dict = req, resp, dict.Int64
			batch = append(batch, s)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("backfill answer index: %w", err)
		}
		if len(batch) == 0 {
			pr.finish()
			return nil
		}
		for _, s := range batch {
			if s.dict != 0 {
				// Inflated out of the query, which reads raw_dicts.
				resp, err := unpack.unpack(ctx, s.ex.Response, s.dict)
				if err != nil {
					return fmt.Errorf("backfill answer index: exchange %d: %w", s.id, err)
				}
				s.ex.Response = resp
			}
			rs, err := ix.rows(s.ex)
			if err != nil {
				rs = nil // undecodable: never answered anything
			}
			if upd != nil {
				model, ns := exchangeModel(s.ex, rs)
				if _, err := upd.ExecContext(ctx, model, ns, s.id); err != nil {
					return fmt.Errorf("backfill answer index: exchange %d: %w", s.id, err)
				}
			}
			if err := insertIndexRows(ctx, ins, s.id, rs, !compact); err != nil {
				return fmt.Errorf("backfill answer index: exchange %d: %w", s.id, err)
			}
			done++
			pr.update(done)
		}
		last = batch[len(batch)-1].id
	}
}

// lookupBuckets are the IN-list lengths prepared; a batch is padded (by
// repeating its last value) to the next one, so a handful of statements
// serve every batch size.
var lookupBuckets = [...]int{1, 2, 4, 8, 16, 32, 64, 128, 256, MaxLookupBatch}

func bucket(n int) int {
	for _, b := range lookupBuckets {
		if n <= b {
			return b
		}
	}
	return n
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// LookupAnswers implements provider.ExchangeStore: for each key it returns
// the latest-recorded stored answer whose resolved model accept takes (nil
// takes all), the first saved among equals. It reads the index, never every
// exchange: MaxLookupBatch keys per statement, then the winners' answer
// bytes.
func (db *DB) LookupAnswers(ctx context.Context, keys []provider.AnswerKey, accept func(resolvedModel string) bool) (map[provider.AnswerKey]provider.StoredAnswer, error) {
	out := make(map[provider.AnswerKey]provider.StoredAnswer)
	seen := make(map[provider.AnswerKey]bool, len(keys))
	uniq := make([]provider.AnswerKey, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	for len(uniq) > 0 {
		n := min(len(uniq), MaxLookupBatch)
		if err := db.lookupBatch(ctx, uniq[:n], accept, out); err != nil {
			return nil, fmt.Errorf("look up stored answers: %w", err)
		}
		uniq = uniq[n:]
	}
	return out, nil
}

// candidate is the best answer_index row found so far for a key.
type candidate struct {
	exchange int64
	ord      int64
	ns       int64
	model    string
	off, n   int
	raw      []byte
}

// before reports whether c was saved before d (a lower exchange id, or the
// same exchange and an earlier place in it).
func (c *candidate) before(d *candidate) bool {
	return c.exchange < d.exchange || c.exchange == d.exchange && c.ord < d.ord
}

func (db *DB) lookupBatch(ctx context.Context, keys []provider.AnswerKey, accept func(string) bool, out map[provider.AnswerKey]provider.StoredAnswer) error {
	nb := bucket(len(keys))
	st, err := db.stmt(ctx, `SELECT a.key, a.exchange_id, a.ord, a.off, a.len, a.raw, e.model, e.recorded_ns
		FROM answer_index a JOIN exchanges e ON e.id = a.exchange_id WHERE a.key IN (`+placeholders(nb)+`)`)
	if err != nil {
		return err
	}
	args := make([]any, nb)
	for i := range args {
		args[i] = keys[min(i, len(keys)-1)][:]
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	best := make(map[provider.AnswerKey]*candidate)
	var kb []byte
	for rows.Next() {
		var c candidate
		kb = kb[:0]
		if err := rows.Scan(&kb, &c.exchange, &c.ord, &c.off, &c.n, &c.raw, &c.model, &c.ns); err != nil {
			rows.Close()
			return err
		}
		var k provider.AnswerKey
		if copy(k[:], kb) != len(k) {
			continue
		}
		if accept != nil && !accept(c.model) {
			continue
		}
		if old, ok := best[k]; ok && (old.ns > c.ns || old.ns == c.ns && old.before(&c)) {
			continue
		}
		best[k] = &c
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return err
	}
	if len(best) == 0 {
		return nil
	}
	// The winners' exchanges, each read (and inflated) once.
	type exInfo struct {
		runID, at string
		resp      []byte
	}
	exs := make(map[int64]*exInfo)
	var ids []int64
	for _, c := range best {
		if _, ok := exs[c.exchange]; !ok {
			exs[c.exchange] = nil
			ids = append(ids, c.exchange)
		}
	}
	nb = bucket(len(ids))
	st, err = db.stmt(ctx, `SELECT id, ifnull(run_id, ''), recorded_at, response, resp_dict FROM exchanges WHERE id IN (`+placeholders(nb)+`)`)
	if err != nil {
		return err
	}
	args = make([]any, nb)
	for i := range args {
		args[i] = ids[min(i, len(ids)-1)]
	}
	rows, err = st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	type packedResp struct {
		id   int64
		b    []byte
		dict int64
	}
	var packed []packedResp
	for rows.Next() {
		var id int64
		var e exInfo
		var dict sql.NullInt64
		if err := rows.Scan(&id, &e.runID, &e.at, &e.resp, &dict); err != nil {
			rows.Close()
			return err
		}
		exs[id] = &e
		if dict.Valid {
			packed = append(packed, packedResp{id, e.resp, dict.Int64})
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return err
	}
	unpack := rawUnpacker{db: db.sql}
	for _, p := range packed {
		if exs[p.id].resp, err = unpack.unpack(ctx, p.b, p.dict); err != nil {
			return fmt.Errorf("exchange %d: %w", p.id, err)
		}
	}
	for k, c := range best {
		e := exs[c.exchange]
		if e == nil {
			continue // gone since the first query
		}
		raw := c.raw
		if raw == nil {
			lo, hi := min(max(c.off, 0), len(e.resp)), min(max(c.off+c.n, 0), len(e.resp))
			raw = bytes.Clone(e.resp[lo:max(lo, hi)])
			db.recent.add(raw, rawRef{exchange: c.exchange, off: lo, n: len(raw)})
		}
		origin := fmt.Sprintf("database exchange %d", c.exchange)
		if e.runID != "" {
			origin += fmt.Sprintf(" (run %s)", e.runID)
		}
		out[k] = provider.StoredAnswer{Raw: json.RawMessage(raw), Model: c.model, RecordedAt: provider.ParseRecordedAt(e.at), Origin: origin}
	}
	return nil
}

// hasColumn reports whether table has column (in tx's view of the schema).
func hasColumn(ctx context.Context, tx *sql.Tx, table, column string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	return n > 0, err
}
