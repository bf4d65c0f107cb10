package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// QuestionRevision is one distinct body of a question of a named set.
type QuestionRevision struct {
	SetName    string
	QuestionID string
	// Hash is HashBytes(Body); Body the question's compact JSON.
	Hash      string
	Body      []byte
	FirstSeen time.Time
}

// RevisionUse is one run that asked a revision, and on which split.
type RevisionUse struct {
	RunID string
	Split string // "" (every item), "dev" or "test"
}

// RecordRevisions records that the revisions revs were seen at seen (the
// earliest sighting is kept) and, when runID is not "", that run runID
// asked them on split. Recording again is a no-op.
func (db *DB) RecordRevisions(ctx context.Context, runID, split string, seen time.Time, revs []QuestionRevision) error {
	if len(revs) == 0 {
		return nil
	}
	at := seen.UTC().Format(timeFormat)
	err := db.write(ctx, func(tx *sql.Tx) error {
		for _, r := range revs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO question_revisions (set_name, question_id, hash, body, first_seen) VALUES (?,?,?,?,?)
				ON CONFLICT (set_name, question_id, hash) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen)`,
				r.SetName, r.QuestionID, r.Hash, r.Body, at); err != nil {
				return err
			}
			if runID == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO run_revisions (run_id, set_name, question_id, hash, split) VALUES (?,?,?,?,?)`,
				runID, r.SetName, r.QuestionID, r.Hash, split); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record question revisions: %w", err)
	}
	return nil
}

// QuestionRevisions lists question qid's revisions in set setName, oldest
// first.
func (db *DB) QuestionRevisions(ctx context.Context, setName, qid string) ([]QuestionRevision, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT hash, body, first_seen FROM question_revisions
		WHERE set_name = ? AND question_id = ? ORDER BY first_seen, hash`, setName, qid)
	if err != nil {
		return nil, fmt.Errorf("question revisions of %s: %w", qid, err)
	}
	defer rows.Close()
	var out []QuestionRevision
	for rows.Next() {
		r := QuestionRevision{SetName: setName, QuestionID: qid}
		var seen string
		if err := rows.Scan(&r.Hash, &r.Body, &seen); err != nil {
			return nil, err
		}
		r.FirstSeen = parseTime(seen)
		out = append(out, r)
	}
	return out, rows.Err()
}

// RevisionUses lists the runs that asked revision hash of question qid in
// set setName, oldest run first.
func (db *DB) RevisionUses(ctx context.Context, setName, qid, hash string) ([]RevisionUse, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT run_id, split FROM run_revisions
		WHERE set_name = ? AND question_id = ? AND hash = ? ORDER BY run_id`, setName, qid, hash)
	if err != nil {
		return nil, fmt.Errorf("runs of a revision of %s: %w", qid, err)
	}
	defer rows.Close()
	var out []RevisionUse
	for rows.Next() {
		var u RevisionUse
		if err := rows.Scan(&u.RunID, &u.Split); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// RevisionsOnSplit counts the distinct revisions of question qid in set
// setName that runs asked on split (the hold-out ledger: how many
// revisions have already seen "test").
func (db *DB) RevisionsOnSplit(ctx context.Context, setName, qid, split string) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(DISTINCT hash) FROM run_revisions
		WHERE set_name = ? AND question_id = ? AND split = ?`, setName, qid, split).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("ledger of %s: %w", qid, err)
	}
	return n, nil
}

// RunsWithoutRevisions lists the runs of set setName that recorded no
// revision (runs stored before the history was kept), oldest first.
func (db *DB) RunsWithoutRevisions(ctx context.Context, setName string) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id FROM runs WHERE set_name = ?
		AND NOT EXISTS (SELECT 1 FROM run_revisions rr WHERE rr.run_id = runs.id) ORDER BY id`, setName)
	if err != nil {
		return nil, fmt.Errorf("runs of %s: %w", setName, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// RevisionsOnSplitBy counts the distinct revisions of question qid in set
// setName that runs started no later than run runID asked on split: what
// had seen that split when runID ran (runID itself included).
func (db *DB) RevisionsOnSplitBy(ctx context.Context, setName, qid, split, runID string) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(DISTINCT rr.hash) FROM run_revisions rr JOIN runs r ON r.id = rr.run_id
		WHERE rr.set_name = ? AND rr.question_id = ? AND rr.split = ?
		AND r.started_at <= (SELECT started_at FROM runs WHERE id = ?)`, setName, qid, split, runID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("ledger of %s: %w", qid, err)
	}
	return n, nil
}

// LabelEdit is one relabel the ledger records: item ItemID's label for
// question QuestionID of set SetName changed at At, after test had been
// seen; Split is the item's part ("" when the set has no split).
type LabelEdit struct {
	SetName, QuestionID, ItemID, Split string
	At                                 time.Time
}

// RecordLabelEdit records e in the ledger.
func (db *DB) RecordLabelEdit(ctx context.Context, e LabelEdit) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO label_edits (set_name, question_id, item_id, split, edited_at) VALUES (?,?,?,?,?)`,
			e.SetName, e.QuestionID, e.ItemID, e.Split, e.At.UTC().Format(timeFormat))
		return err
	})
	if err != nil {
		return fmt.Errorf("record the relabel of %s for %s: %w", e.ItemID, e.QuestionID, err)
	}
	return nil
}

// RelabelsBefore counts the distinct items whose label for question qid
// of set setName the ledger records as changed before run runID started
// (all of them after test had been seen), and of those the items on test.
func (db *DB) RelabelsBefore(ctx context.Context, setName, qid, runID string) (items, onTest int, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT count(DISTINCT item_id), count(DISTINCT CASE WHEN split = 'test' THEN item_id END) FROM label_edits
		WHERE set_name = ? AND question_id = ? AND edited_at < (SELECT started_at FROM runs WHERE id = ?)`, setName, qid, runID).Scan(&items, &onTest)
	if err != nil {
		return 0, 0, fmt.Errorf("relabels of %s: %w", qid, err)
	}
	return items, onTest, nil
}
