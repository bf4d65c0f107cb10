package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// QuestionSetSnapshot is a stored question set: its canonical JSON and
// where it came from.
type QuestionSetSnapshot struct {
	Hash string
	Name string
	Path string
	Body json.RawMessage
}

// HashBytes returns the hex sha256 of b, the content hash snapshots use.
func HashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// SaveQuestionSet keeps a question set's canonical JSON body under its
// content hash (a reworded question is a new version) and returns the hash.
// Saving the same body again is a no-op; the first name and path are kept.
func (db *DB) SaveQuestionSet(ctx context.Context, name, path string, body []byte) (string, error) {
	if !json.Valid(body) {
		return "", fmt.Errorf("save question set %q: body is not JSON", name)
	}
	hash := HashBytes(body)
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO question_sets (hash, name, path, body, created_at) VALUES (?,?,?,?,?)`,
			hash, name, path, body, now())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("save question set %q: %w", name, err)
	}
	return hash, nil
}

// QuestionSet returns the snapshot with hash.
func (db *DB) QuestionSet(ctx context.Context, hash string) (*QuestionSetSnapshot, error) {
	s := &QuestionSetSnapshot{Hash: hash}
	var body []byte
	err := db.sql.QueryRowContext(ctx, `SELECT name, path, body FROM question_sets WHERE hash = ?`, hash).Scan(&s.Name, &s.Path, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("question set %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("question set %s: %w", hash, err)
	}
	s.Body = body
	return s, nil
}

// QuestionSetVersions returns the stored versions of the question set
// called name, newest first (bodies included), so a change of wording can
// be traced across runs.
func (db *DB) QuestionSetVersions(ctx context.Context, name string) ([]*QuestionSetSnapshot, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT hash, name, path, body FROM question_sets WHERE name = ? ORDER BY created_at DESC, rowid DESC`, name)
	if err != nil {
		return nil, fmt.Errorf("versions of question set %q: %w", name, err)
	}
	defer rows.Close()
	var out []*QuestionSetSnapshot
	for rows.Next() {
		s := &QuestionSetSnapshot{}
		var body []byte
		if err := rows.Scan(&s.Hash, &s.Name, &s.Path, &body); err != nil {
			return nil, fmt.Errorf("versions of question set %q: %w", name, err)
		}
		s.Body = body
		out = append(out, s)
	}
	return out, rows.Err()
}

// QuestionSetSnapshot returns the question set run was made with.
func (db *DB) QuestionSetSnapshot(ctx context.Context, runID string) (*QuestionSetSnapshot, error) {
	r, err := db.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	return db.QuestionSet(ctx, r.SetHash)
}

// DatasetItem is one stored dataset item. Labels is the JSON object the
// caller saved ({"question": {"index": i, "text": t}} by convention), nil
// when unlabelled.
type DatasetItem struct {
	Seq    int
	ID     string
	State  json.RawMessage
	Labels json.RawMessage
}

// HasDataset reports whether a dataset snapshot with hash is stored.
func (db *DB) HasDataset(ctx context.Context, hash string) (bool, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM datasets WHERE hash = ?`, hash).Scan(&n); err != nil {
		return false, fmt.Errorf("dataset %s: %w", hash, err)
	}
	return n > 0, nil
}

// SaveDataset stores a dataset snapshot under hash (computed by the caller
// over the canonical items) unless it is already stored. items is called
// once with a yield function; items are written in batches so a large
// dataset never sits in memory.
func (db *DB) SaveDataset(ctx context.Context, hash, path string, items func(yield func(DatasetItem) error) error) error {
	if ok, err := db.HasDataset(ctx, hash); err != nil || ok {
		return err
	}
	const batch = 2000
	var pending []DatasetItem
	first := true
	n := 0
	newDicts := map[string]int64{} // dictionaries the flush creates
	flush := func(final bool) error {
		err := db.write(ctx, func(tx *sql.Tx) error {
			if first {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO datasets (hash, path, n_items, created_at) VALUES (?,?,?,?)`,
					hash, path, -1, now()); err != nil {
					return err
				}
				first = false
			}
			st, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO dataset_items (dataset_hash, seq, item_id, state, labels, state_dict, labels_dict)
				VALUES (?,?,?,?,?,?,?)`)
			if err != nil {
				return err
			}
			defer st.Close()
			clear(newDicts)
			for _, it := range pending {
				state, labels, stateDict, labelsDict, err := packDatasetItem(ctx, tx, &db.packer, hash, it, newDicts)
				if err != nil {
					return fmt.Errorf("item %s: %w", it.ID, err)
				}
				if _, err := st.ExecContext(ctx, hash, it.Seq, it.ID, state, labels, stateDict, labelsDict); err != nil {
					return fmt.Errorf("item %s: %w", it.ID, err)
				}
			}
			pending = pending[:0]
			if final {
				_, err := tx.ExecContext(ctx, `UPDATE datasets SET n_items = ? WHERE hash = ?`, n, hash)
				return err
			}
			return nil
		})
		if err != nil {
			db.packer.forget(newDicts)
			return err
		}
		db.packer.remember(newDicts)
		return nil
	}
	err := items(func(it DatasetItem) error {
		pending = append(pending, it)
		n++
		if len(pending) >= batch {
			return flush(false)
		}
		return nil
	})
	if err == nil {
		err = flush(true)
	}
	if err != nil {
		// Leave no half snapshot behind: it would pass for a whole one.
		_ = db.write(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
			if _, err := tx.Exec(`DELETE FROM dataset_items WHERE dataset_hash = ?`, hash); err != nil {
				return err
			}
			_, err := tx.Exec(`DELETE FROM datasets WHERE hash = ? AND n_items = -1`, hash)
			return err
		})
		return fmt.Errorf("save dataset %s: %w", path, err)
	}
	return nil
}

// ForEachDatasetItem streams the items of the dataset snapshot hash in order.
func (db *DB) ForEachDatasetItem(ctx context.Context, hash string, fn func(DatasetItem) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT seq, item_id, state, labels, state_dict, labels_dict FROM dataset_items
		WHERE dataset_hash = ? ORDER BY seq`, hash)
	if err != nil {
		return fmt.Errorf("dataset %s: %w", hash, err)
	}
	defer rows.Close()
	unpack := rawUnpacker{db: db.sql}
	for rows.Next() {
		var it DatasetItem
		var state, labels []byte
		var stateDict, labelsDict sql.NullInt64
		if err := rows.Scan(&it.Seq, &it.ID, &state, &labels, &stateDict, &labelsDict); err != nil {
			return fmt.Errorf("dataset %s: %w", hash, err)
		}
		if stateDict.Valid {
			if state, err = unpack.unpack(ctx, state, stateDict.Int64); err != nil {
				return fmt.Errorf("dataset %s: item %s: state: %w", hash, it.ID, err)
			}
		}
		if labelsDict.Valid {
			if labels, err = unpack.unpack(ctx, labels, labelsDict.Int64); err != nil {
				return fmt.Errorf("dataset %s: item %s: labels: %w", hash, it.ID, err)
			}
		}
		it.State, it.Labels = state, labels
		if err := fn(it); err != nil {
			return err
		}
	}
	return rows.Err()
}

// DatasetItems streams the items of the dataset run was made over.
func (db *DB) DatasetItems(ctx context.Context, runID string, fn func(DatasetItem) error) error {
	r, err := db.Run(ctx, runID)
	if err != nil {
		return err
	}
	if r.DatasetHash == "" {
		return fmt.Errorf("run %s has no dataset snapshot", runID)
	}
	return db.ForEachDatasetItem(ctx, r.DatasetHash, fn)
}

// packDatasetItem returns it's state and labels as stored: each deflated
// against the dataset's first item's (a dictionary id, else nil and the
// bytes as they are). Labels nil stay NULL.
func packDatasetItem(ctx context.Context, tx *sql.Tx, p *rawPacker, hash string, it DatasetItem, newDicts map[string]int64) (state, labels, stateDict, labelsDict any, err error) {
	key := "dataset " + hash
	st, d, err := p.pack(ctx, tx, key, "\x01\x01state", []byte(it.State), newDicts)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	state = []byte(st)
	if st == nil {
		state = []byte{}
	}
	if d != 0 {
		stateDict = d
	}
	if it.Labels != nil {
		lb, d, err := p.pack(ctx, tx, key, "\x01\x01labels", []byte(it.Labels), newDicts)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		labels = lb
		if d != 0 {
			labelsDict = d
		}
	}
	return state, labels, stateDict, labelsDict, nil
}
