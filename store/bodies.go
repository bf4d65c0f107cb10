package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Content-addressed bodies (table bodies, migration 20261203_0300): an
// exchange's request keeps its questions object by reference, so the
// questions a run asks are stored once however many items it has.

// minSplit is the shortest questions value worth storing by reference: a
// shorter one costs less inline than its 32-byte hash.
const minSplit = 64

// splitRequest is a request with its questions value cut out: the request
// is rest[:off] + body + rest[off:], byte for byte. hash is nil when the
// request is kept whole (it does not decode, or its questions are short).
type splitRequest struct {
	rest []byte
	off  int
	body []byte
	hash []byte
}

// splitOf cuts req's top-level "questions" value out, if it has one worth
// cutting. It works on the exact bytes, so whatever req holds (spacing,
// escapes, key order) join gives it back.
func splitOf(req []byte, questions json.RawMessage) splitRequest {
	if len(questions) < minSplit {
		return splitRequest{rest: req}
	}
	off := -1
	// The wire body ends with the questions ("...,"questions":{…}}"):
	// check there first, then anywhere.
	if n := len(req) - 1 - len(questions); n >= 0 && bytes.Equal(req[n:len(req)-1], questions) {
		off = n
	} else {
		off = bytes.LastIndex(req, questions)
	}
	if off < 0 {
		return splitRequest{rest: req}
	}
	h := sha256.Sum256(questions)
	rest := make([]byte, 0, len(req)-len(questions))
	rest = append(append(rest, req[:off]...), req[off+len(questions):]...)
	return splitRequest{rest: rest, off: off, body: questions, hash: h[:]}
}

// requestQuestions returns req's top-level "questions" value as written,
// or nil when req does not decode.
func requestQuestions(req []byte) json.RawMessage {
	var w struct {
		Questions json.RawMessage `json:"questions"`
	}
	if json.Unmarshal(req, &w) != nil {
		return nil
	}
	return w.Questions
}

// joinRequest puts a stored request back together: rest with body
// inserted at off. A body that does not fit (a damaged row) is an error,
// never a silently different request.
func joinRequest(rest []byte, off int64, body []byte) ([]byte, error) {
	if off < 0 || off > int64(len(rest)) {
		return nil, fmt.Errorf("stored request: questions offset %d outside its %d bytes", off, len(rest))
	}
	out := make([]byte, 0, len(rest)+len(body))
	out = append(append(append(out, rest[:off]...), body...), rest[off:]...)
	return out, nil
}

const insBodySQL = `INSERT OR IGNORE INTO bodies (hash, body) VALUES (?, ?)`

// splitExchangeRequests is migration 20261203_0300's Go step: it rewrites
// every stored exchange's request into its rest and a body reference,
// checking that each joins back to the bytes it had, and reports progress.
func splitExchangeRequests(ctx context.Context, tx *sql.Tx, pr *progress) error {
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM exchanges`).Scan(&total); err != nil {
		return fmt.Errorf("store question bodies once: %w", err)
	}
	pr.start("storing question bodies once", total)
	insBody, err := tx.PrepareContext(ctx, insBodySQL)
	if err != nil {
		return fmt.Errorf("store question bodies once: %w", err)
	}
	defer insBody.Close()
	upd, err := tx.PrepareContext(ctx, `UPDATE exchanges SET request = ?, q_hash = ?, q_off = ? WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("store question bodies once: %w", err)
	}
	defer upd.Close()
	type stored struct {
		id  int64
		req []byte
	}
	seen := map[[32]byte]bool{}
	var done int64
	last := int64(0)
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, request FROM exchanges WHERE id > ? AND q_hash IS NULL ORDER BY id LIMIT ?`, last, backfillBatch)
		if err != nil {
			return fmt.Errorf("store question bodies once: %w", err)
		}
		var batch []stored
		for rows.Next() {
			var s stored
			if err := rows.Scan(&s.id, &s.req); err != nil {
				rows.Close()
				return fmt.Errorf("store question bodies once: %w", err)
			}
			batch = append(batch, s)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("store question bodies once: %w", err)
		}
		if len(batch) == 0 {
			pr.finish()
			return nil
		}
		for _, s := range batch {
			sp := splitOf(s.req, requestQuestions(s.req))
			done++
			if sp.hash == nil {
				continue
			}
			back, err := joinRequest(sp.rest, int64(sp.off), sp.body)
			if err != nil || !bytes.Equal(back, s.req) {
				return fmt.Errorf("store question bodies once: exchange %d would not come back identical", s.id)
			}
			var k [32]byte
			copy(k[:], sp.hash)
			if !seen[k] {
				if _, err := insBody.ExecContext(ctx, sp.hash, sp.body); err != nil {
					return fmt.Errorf("store question bodies once: exchange %d: %w", s.id, err)
				}
				seen[k] = true
			}
			if _, err := upd.ExecContext(ctx, sp.rest, sp.hash, sp.off, s.id); err != nil {
				return fmt.Errorf("store question bodies once: exchange %d: %w", s.id, err)
			}
		}
		last = batch[len(batch)-1].id
		pr.update(done)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
