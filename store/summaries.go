package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SaveRunSummary keeps body (a computed report, as JSON) for run under key,
// which must name everything it was computed from. Saving under a key
// already stored replaces it. A summary is dropped when SaveItems changes
// the run.
func (db *DB) SaveRunSummary(ctx context.Context, runID, key string, body []byte) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO run_summaries (run_id, key, body, created_at) VALUES (?,?,?,?)`,
			runID, key, body, now())
		return err
	})
	if err != nil {
		return fmt.Errorf("save summary of run %s: %w", runID, err)
	}
	return nil
}

// RunSummary returns the summary stored for run under key, or nil when
// there is none.
func (db *DB) RunSummary(ctx context.Context, runID, key string) ([]byte, error) {
	var body []byte
	err := db.sql.QueryRowContext(ctx, `SELECT body FROM run_summaries WHERE run_id = ? AND key = ?`, runID, key).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("summary of run %s: %w", runID, db.check(err))
	}
	return body, nil
}
