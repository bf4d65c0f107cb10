package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/jevlab/jevlab/provider"
)

// runKey carries the run an exchange belongs to through a context.
type runKey struct{}

// WithRunID returns ctx tagged with runID: exchanges saved under it (by the
// answer cache) are linked to the run.
func WithRunID(ctx context.Context, runID string) context.Context {
	return context.WithValue(ctx, runKey{}, runID)
}

// RunIDFrom returns the run id set by WithRunID, or "".
func RunIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(runKey{}).(string)
	return s
}

var _ provider.ExchangeStore = (*DB)(nil)

const insExchangeSQL = `INSERT INTO exchanges (run_id, ext_id, request, q_hash, q_off, response, latency_ms, recorded_at, uncertain,
	resp_dict, model, recorded_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`

// respDictQuestion is the rawPacker key of a run's dictionary for
// exchange responses.
const respDictQuestion = "\x01\x01response"

// SaveExchange keeps one exchange's wire bodies (never headers or the key),
// linked to the run named by WithRunID if any, and indexes its answers for
// LookupAnswers in the same transaction. The request's questions object is
// kept once in bodies, by content hash, and the exchange refers to it. An exchange whose request or
// response does not decode is kept but answers nothing.
func (db *DB) SaveExchange(ctx context.Context, ex provider.Exchange) error {
	return db.SaveExchanges(ctx, []provider.Exchange{ex})
}

// SaveExchanges keeps exchanges like SaveExchange, all in one transaction
// (all or none), in order.
func (db *DB) SaveExchanges(ctx context.Context, exs []provider.Exchange) error {
	insEx, err := db.stmt(ctx, insExchangeSQL)
	if err != nil {
		return fmt.Errorf("save exchange: %w", err)
	}
	insIdx, err := db.stmt(ctx, insAnswerIndexSQL)
	if err != nil {
		return fmt.Errorf("save exchange: %w", err)
	}
	var run any
	if id := RunIDFrom(ctx); id != "" {
		run = id
	}
	// Keys are computed before taking the write lock.
	insBody, err := db.stmt(ctx, insBodySQL)
	if err != nil {
		return fmt.Errorf("save exchange: %w", err)
	}
	var ix indexer
	rows := make([][]indexRow, len(exs))
	splits := make([]splitRequest, len(exs))
	for i, ex := range exs {
		var qs json.RawMessage
		rows[i], qs, _ = ix.rowsAndQuestions(ex) // undecodable: stored, never an answer
		splits[i] = splitOf(ex.Request, qs)
	}
	ids := make([]int64, len(exs))
	runID, _ := run.(string)
	var newDicts map[string]int64
	err = db.write(ctx, func(tx *sql.Tx) error {
		clear(ids)
		newDicts = map[string]int64{}
		se := tx.StmtContext(ctx, insEx)
		defer se.Close()
		si := tx.StmtContext(ctx, insIdx)
		defer si.Close()
		sb := tx.StmtContext(ctx, insBody)
		defer sb.Close()
		stored := map[string]bool{}
		for i, ex := range exs {
			sp := &splits[i]
			var qHash any
			if sp.hash != nil {
				if !stored[string(sp.hash)] {
					if _, err := sb.ExecContext(ctx, sp.hash, sp.body); err != nil {
						return err
					}
					stored[string(sp.hash)] = true
				}
				qHash = sp.hash
			}
			unc := ""
			if len(ex.Uncertain) > 0 {
				b, _ := json.Marshal(ex.Uncertain)
				unc = string(b)
			}
			// The response deflated against the run's first one.
			resp, dict, err := db.packer.pack(ctx, tx, runID, respDictQuestion, ex.Response, newDicts)
			if err != nil {
				return err
			}
			var respDict any
			if dict != 0 {
				respDict = dict
			}
			model, ns := exchangeModel(ex, rows[i])
			res, err := se.ExecContext(ctx, run, ex.ID, sp.rest, qHash, sp.off, []byte(resp), ex.LatencyMS, ex.RecordedAt, unc,
				respDict, model, ns)
			if err != nil {
				return err
			}
			if len(rows[i]) == 0 {
				continue
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if err := insertIndexRows(ctx, si, id, rows[i], false); err != nil {
				return err
			}
			ids[i] = id
		}
		return nil
	})
	if err != nil {
		db.packer.forget(newDicts)
		return fmt.Errorf("save exchange: %w", err)
	}
	db.packer.remember(newDicts)
	// Answers saved next (SaveItems) refer to these bytes instead of
	// keeping a copy.
	for i, ex := range exs {
		for _, r := range rows[i] {
			if ids[i] != 0 && r.raw == nil {
				db.recent.add(ex.Response[r.off:r.off+r.n], rawRef{exchange: ids[i], off: r.off, n: r.n})
			}
		}
	}
	return nil
}

// ForEachExchange streams every stored exchange, oldest first, to fn. The
// exchange's byte slices are fn's to keep. Its cost grows with the
// database: the answer cache uses LookupAnswers instead.
func (db *DB) ForEachExchange(ctx context.Context, fn func(provider.Exchange) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT e.id, e.ext_id, e.request, e.q_hash, e.q_off, b.body, e.response, e.resp_dict,
		e.latency_ms, e.recorded_at, e.uncertain FROM exchanges e LEFT JOIN bodies b ON b.hash = e.q_hash ORDER BY e.id`)
	if err != nil {
		return fmt.Errorf("read stored exchanges: %w", err)
	}
	defer rows.Close()
	unpack := rawUnpacker{db: db.sql}
	for rows.Next() {
		var ex provider.Exchange
		var id, off int64
		var req, qHash, body, resp []byte
		var dict sql.NullInt64
		var unc string
		if err := rows.Scan(&id, &ex.ID, &req, &qHash, &off, &body, &resp, &dict, &ex.LatencyMS, &ex.RecordedAt, &unc); err != nil {
			return fmt.Errorf("read stored exchanges: %w", err)
		}
		if qHash != nil {
			if body == nil {
				return fmt.Errorf("read stored exchanges: exchange %d: its questions body %x is missing", id, qHash)
			}
			if req, err = joinRequest(req, off, body); err != nil {
				return fmt.Errorf("read stored exchanges: exchange %d: %w", id, err)
			}
		}
		if dict.Valid {
			if resp, err = unpack.unpack(ctx, resp, dict.Int64); err != nil {
				return fmt.Errorf("read stored exchanges: exchange %d: %w", id, err)
			}
		}
		ex.Request, ex.Response = req, resp
		if unc != "" {
			_ = json.Unmarshal([]byte(unc), &ex.Uncertain)
		}
		if err := fn(ex); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read stored exchanges: %w", err)
	}
	return nil
}

// ExchangeCount returns how many exchanges are stored (for run id "" all,
// else those of the run).
func (db *DB) ExchangeCount(ctx context.Context, runID string) (int, error) {
	var n int
	var err error
	if runID == "" {
		err = db.sql.QueryRowContext(ctx, `SELECT count(*) FROM exchanges`).Scan(&n)
	} else {
		err = db.sql.QueryRowContext(ctx, `SELECT count(*) FROM exchanges WHERE run_id = ?`, runID).Scan(&n)
	}
	return n, err
}
