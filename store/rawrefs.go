package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// An answer's raw bytes are most often a slice of an exchange stored
// already: a live answer is part of the response SaveExchange just kept,
// and a cached one is what LookupAnswers read out of a stored response.
// SaveItems then keeps a reference (exchange id, offset, length) instead
// of a second copy. recentRaws remembers, for this process, the answer
// bytes of the exchanges it saved or looked up lately, by their exact
// bytes, so a reference is only ever made to identical bytes.

// maxRecentRaws and maxRecentBytes bound each generation of recentRaws
// (two are kept): twice the runner's batch of 256 items × 8 answers, and
// at most 2 MB of answer bytes, so an eval's memory barely grows.
const (
	maxRecentRaws  = 4096
	maxRecentBytes = 2 << 20
)

// maxRecentRaw is the longest answer remembered; a longer one is stored
// packed.
const maxRecentRaw = 4096

type recentRaws struct {
	mu       sync.Mutex
	cur, old map[string]rawRef
	curBytes int
}

func (r *recentRaws) add(raw []byte, ref rawRef) {
	if len(raw) == 0 || len(raw) > maxRecentRaw {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cur) >= maxRecentRaws || r.curBytes+len(raw) > maxRecentBytes {
		r.old, r.cur, r.curBytes = r.cur, nil, 0
	}
	r.curBytes += len(raw)
	if r.cur == nil {
		r.cur = make(map[string]rawRef)
	}
	r.cur[string(raw)] = ref
}

func (r *recentRaws) get(raw []byte) (rawRef, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ref, ok := r.cur[string(raw)]; ok {
		return ref, true
	}
	ref, ok := r.old[string(raw)]
	return ref, ok
}

// rawReader gives back raw answers while reading packed answers: slices
// of stored exchange responses (the last few read are kept) and packed
// raws inflated.
type rawReader struct {
	ctx    context.Context
	db     *sql.DB
	unpack rawUnpacker
	exID   [4]int64
	exBody [4][]byte
	next   int
}

func newRawReader(ctx context.Context, db *sql.DB) *rawReader {
	return &rawReader{ctx: ctx, db: db, unpack: rawUnpacker{db: db}}
}

func (r *rawReader) inflate(b []byte, dict int64) ([]byte, error) {
	if dict == 0 {
		return bytes.Clone(b), nil // b is the row's, reused by the next
	}
	return r.unpack.unpack(r.ctx, b, dict)
}

func (r *rawReader) exchangeSlice(ref rawRef) ([]byte, error) {
	var body []byte
	found := false
	for i, id := range r.exID {
		if id == ref.exchange && r.exBody[i] != nil {
			body, found = r.exBody[i], true
			break
		}
	}
	if !found {
		var err error
		if body, err = readResponse(r.ctx, r.db, ref.exchange); err != nil {
			return nil, err
		}
		r.exID[r.next], r.exBody[r.next] = ref.exchange, body
		r.next = (r.next + 1) % len(r.exID)
	}
	if ref.off < 0 || ref.n < 0 || ref.off+ref.n > len(body) {
		return nil, fmt.Errorf("raw answer refers to bytes %d..%d of exchange %d, which has %d", ref.off, ref.off+ref.n, ref.exchange, len(body))
	}
	return bytes.Clone(body[ref.off : ref.off+ref.n]), nil
}

// readResponse reads exchange id's response body as received.
func readResponse(ctx context.Context, db *sql.DB, id int64) ([]byte, error) {
	var body []byte
	var dict sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT response, resp_dict FROM exchanges WHERE id = ?`, id).Scan(&body, &dict); err != nil {
		if err == sql.ErrNoRows {
			return nil, fmt.Errorf("raw answer refers to exchange %d, which is not stored", id)
		}
		return nil, fmt.Errorf("exchange %d: %w", id, err)
	}
	if dict.Valid {
		u := rawUnpacker{db: db}
		var err error
		if body, err = u.unpack(ctx, body, dict.Int64); err != nil {
			return nil, fmt.Errorf("exchange %d: %w", id, err)
		}
	}
	if body == nil {
		body = []byte{}
	}
	return body, nil
}

// ReleaseWriteCaches drops what the write path keeps between SaveItems
// calls: the recent answers items refer to and a deflater per run ×
// question (each ~1 MB of compressor state). The runner calls it once a
// run's items are all stored, so a report computed after the run does not
// carry them; a later write builds them again (the dictionaries are read
// back from the database), so what is stored is the same either way, at
// most with an answer packed that would otherwise have been a reference.
func (db *DB) ReleaseWriteCaches() {
	db.recent.mu.Lock()
	db.recent.cur, db.recent.old, db.recent.curBytes = nil, nil, 0
	db.recent.mu.Unlock()
	db.packer.mu.Lock()
	db.packer.w = nil
	db.packer.mu.Unlock()
}
