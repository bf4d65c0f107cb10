package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Raw answers are stored deflated with a preset dictionary (migration
// 20261203_0320): the first raw answer of each run × question, kept once in
// raw_dicts. Later answers to that question mostly repeat its labels and
// keys, so they shrink several-fold, and inflating gives them back byte
// for byte.

// minPack is the shortest raw answer worth deflating.
const minPack = 48

// packLevel is the deflate level: measured on the scale set, level 6
// keeps ~95% of level 9's saving at a fraction of its cost.
const packLevel = 6

// maxDictCache bounds rawPacker.dicts (run × question pairs one process
// writes; a handful in practice).
const maxDictCache = 1024

// rawPacker remembers, for this process, the dictionary of each run ×
// question it stored answers for, and a deflater per dictionary.
type rawPacker struct {
	mu    sync.Mutex
	dicts map[string]int64 // run id + "\x00" + question id → raw_dicts.id
	w     map[int64]*packWriter
}

type packWriter struct {
	buf bytes.Buffer
	fw  *flate.Writer
}

func dictKey(runID, questionID string) string { return runID + "\x00" + questionID }

// pack returns raw deflated against its run × question's dictionary and
// the dictionary's id, creating the dictionary (raw itself, stored as is)
// through tx when there is none yet; newDicts collects those, to remember
// once tx commits. A short raw is kept as is (id 0).
func (p *rawPacker) pack(ctx context.Context, tx *sql.Tx, runID, questionID string, raw []byte, newDicts map[string]int64) ([]byte, int64, error) {
	if len(raw) < minPack {
		return raw, 0, nil
	}
	// SaveItems holds the write lock; p.mu only guards the maps.
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == nil || len(p.w) >= maxDictCache {
		p.w = map[int64]*packWriter{}
	}
	k := dictKey(runID, questionID)
	id, ok := p.dicts[k]
	if !ok {
		id, ok = newDicts[k]
	}
	if !ok {
		res, err := tx.ExecContext(ctx, `INSERT INTO raw_dicts (body) VALUES (?)`, raw)
		if err != nil {
			return nil, 0, err
		}
		if id, err = res.LastInsertId(); err != nil {
			return nil, 0, err
		}
		newDicts[k] = id
		p.w[id] = newPackWriter(raw)
	}
	w := p.w[id]
	if w == nil {
		// Its writer was dropped from the cache: read the dictionary back.
		var dict []byte
		if err := tx.QueryRowContext(ctx, `SELECT body FROM raw_dicts WHERE id = ?`, id).Scan(&dict); err != nil {
			return nil, 0, err
		}
		w = newPackWriter(dict)
		p.w[id] = w
	}
	w.buf.Reset()
	w.fw.Reset(&w.buf)
	if _, err := w.fw.Write(raw); err != nil {
		return nil, 0, err
	}
	if err := w.fw.Close(); err != nil {
		return nil, 0, err
	}
	if w.buf.Len() >= len(raw) {
		return raw, 0, nil // nothing gained: kept as is
	}
	return bytes.Clone(w.buf.Bytes()), id, nil
}

func newPackWriter(dict []byte) *packWriter {
	w := &packWriter{}
	w.fw, _ = flate.NewWriterDict(&w.buf, packLevel, dict) // the level is valid
	return w
}

// remember records dictionaries created by a committed transaction.
func (p *rawPacker) remember(newDicts map[string]int64) {
	if len(newDicts) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dicts == nil || len(p.dicts)+len(newDicts) > maxDictCache {
		p.dicts = map[string]int64{}
	}
	for k, id := range newDicts {
		p.dicts[k] = id
	}
}

// forget drops what a rolled-back transaction created.
func (p *rawPacker) forget(newDicts map[string]int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range newDicts {
		delete(p.w, id)
	}
}

// rowQueryer is a *sql.DB or a *sql.Tx.
type rowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// maxInflated bounds what one stored value (an item's packed answers, a
// raw answer, a response) may inflate to: four times the largest response
// the client accepts. A value past it is damaged, or made to exhaust
// memory.
const maxInflated = 4 * 64 << 20

// rawUnpacker inflates stored raw answers, reading each dictionary once.
type rawUnpacker struct {
	db    rowQueryer
	max   int // what a value may inflate to (0: maxInflated)
	dicts map[int64][]byte
	fr    io.ReadCloser
	src   bytes.Reader
	out   bytes.Buffer
}

// unpack returns the raw answer stored as b with dictionary id (0: as is).
func (u *rawUnpacker) unpack(ctx context.Context, b []byte, id int64) ([]byte, error) {
	if id == 0 {
		return b, nil
	}
	out, err := u.unpackShared(ctx, b, id)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(out), nil
}

// unpackShared is unpack (id > 0) into a buffer the next call reuses.
func (u *rawUnpacker) unpackShared(ctx context.Context, b []byte, id int64) ([]byte, error) {
	dict, ok := u.dicts[id]
	if !ok {
		if err := u.db.QueryRowContext(ctx, `SELECT body FROM raw_dicts WHERE id = ?`, id).Scan(&dict); err != nil {
			return nil, fmt.Errorf("raw answer dictionary %d: %w", id, err)
		}
		if u.dicts == nil {
			u.dicts = map[int64][]byte{}
		}
		u.dicts[id] = dict
	}
	u.src.Reset(b)
	if u.fr == nil {
		u.fr = flate.NewReaderDict(&u.src, dict)
	} else if err := u.fr.(flate.Resetter).Reset(&u.src, dict); err != nil {
		return nil, err
	}
	u.out.Reset()
	limit := u.max
	if limit <= 0 {
		limit = maxInflated
	}
	if _, err := u.out.ReadFrom(io.LimitReader(u.fr, int64(limit)+1)); err != nil {
		return nil, fmt.Errorf("raw answer: %w", err)
	}
	if u.out.Len() > limit {
		u.out = bytes.Buffer{} // not kept for the next value
		return nil, fmt.Errorf("stored value inflates past %d MB: the database is damaged", limit>>20)
	}
	return u.out.Bytes(), nil
}
