package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// ImportingReason is the reason an imported run carries while its items
// are being written: a run left with it (the import was killed) is
// completed by importing the same bundle again.
const ImportingReason = "import in progress"

// ErrRunExists is returned (wrapped) by ImportRun when the database
// already holds a finished run with the same id.
var ErrRunExists = errors.New("run already exists")

// importBatch is how many item results one transaction of ImportRun
// writes.
const importBatch = 500

// ImportRun stores run r exactly as given — its id, status, reason, times,
// totals, resolved models and settings — with its item results (answers
// included), for a run brought from another database (a run bundle). The
// snapshots r names must have been saved first (SaveQuestionSet,
// SaveDataset). Items are written in batches through SaveItems, so a
// killed import is completed, never duplicated, by importing again: a run
// whose reason is ImportingReason is resumed; any other run with r.ID is
// ErrRunExists. On any error the run is removed again.
func (db *DB) ImportRun(ctx context.Context, r *Run, results []ItemResult) error {
	if r == nil || r.ID == "" {
		return errors.New("import run: no run id")
	}
	if r.SetHash == "" {
		return fmt.Errorf("import run %s: no question-set snapshot", r.ID)
	}
	settings := r.Settings
	if len(settings) == 0 {
		settings = json.RawMessage("{}")
	}
	if !json.Valid(settings) {
		return fmt.Errorf("import run %s: settings are not valid JSON", r.ID)
	}
	models := r.Models
	if models == nil {
		models = []string{}
	}
	modelsJSON, err := json.Marshal(models)
	if err != nil {
		return fmt.Errorf("import run %s: %w", r.ID, err)
	}
	var dsHash any
	if r.DatasetHash != "" {
		dsHash = r.DatasetHash
	}
	started, updated := r.StartedAt.UTC().Format(timeFormat), r.UpdatedAt.UTC().Format(timeFormat)
	finished := ""
	if !r.FinishedAt.IsZero() {
		finished = r.FinishedAt.UTC().Format(timeFormat)
	}

	existing, err := db.Run(ctx, r.ID)
	switch {
	case err == nil && existing.Reason != ImportingReason:
		return fmt.Errorf("import run %s: %w", r.ID, ErrRunExists)
	case err == nil:
		// A killed import of this run: SaveItems skips what is stored.
	case errors.Is(err, ErrNotFound):
		err = db.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, name, set_hash, set_name, set_path, dataset_hash, dataset_path,
				provider_kind, base_url, model, status, reason, started_at, updated_at, repeat, total, version, settings)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
				r.ID, r.Name, r.SetHash, r.SetName, r.SetPath, dsHash, r.DatasetPath,
				r.ProviderKind, r.BaseURL, r.Model, string(StatusRunning), ImportingReason, started, started, r.Repeat, r.Total, r.Version, string(settings))
			return err
		})
		if err != nil {
			return fmt.Errorf("import run %s: %w", r.ID, err)
		}
	default:
		return fmt.Errorf("import run %s: %w", r.ID, err)
	}

	fail := func(err error) error {
		// Leave no half run behind: it would pass for a whole one.
		_ = db.write(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
			_, err := tx.Exec(`DELETE FROM runs WHERE id = ?`, r.ID)
			return err
		})
		return fmt.Errorf("import run %s: %w", r.ID, err)
	}
	for start := 0; start < len(results); start += importBatch {
		end := min(start+importBatch, len(results))
		if _, err := db.SaveItems(ctx, r.ID, results[start:end]); err != nil {
			return fail(err)
		}
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET name = ?, status = ?, reason = ?, started_at = ?, updated_at = ?, finished_at = ?,
			repeat = ?, total = ?, done = ?, errors = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, models = ? WHERE id = ?`,
			r.Name, string(r.Status), r.Reason, started, updated, finished, r.Repeat, r.Total, r.Done, r.Errors,
			r.InputTokens, r.OutputTokens, r.CostUSD, string(modelsJSON), r.ID)
		return err
	})
	if err != nil {
		return fail(err)
	}
	db.finished(ctx, r.ID, r.Status)
	return nil
}
