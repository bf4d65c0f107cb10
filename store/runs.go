package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Status is a run's state.
type Status string

// Run statuses.
const (
	StatusRunning     Status = "running"
	StatusDone        Status = "done"
	StatusInterrupted Status = "interrupted"
	StatusFailed      Status = "failed"
)

// NewRun describes a run about to start. The snapshots it names must have
// been saved first (SaveQuestionSet, SaveDataset).
type NewRun struct {
	Name         string
	SetHash      string // from SaveQuestionSet
	SetName      string
	SetPath      string
	DatasetHash  string // "" when the run has no dataset
	DatasetPath  string
	ProviderKind string // live, cached, offline, stand-in
	BaseURL      string // never a key
	Model        string // requested model
	Repeat       int
	Total        int // planned items × repeat
	Version      string
	Settings     json.RawMessage // JSON object of run settings (concurrency, rps, max cost, …)
	// LeaseOwner (from NewLeaseOwner), when set, takes the run's lease for
	// LeaseTTL: the creating process must renew it (RenewLease) while it
	// runs, or the run reads as interrupted.
	LeaseOwner string
	LeaseTTL   time.Duration
}

// Run is a stored run.
type Run struct {
	ID           string          `json:"id"`
	Name         string          `json:"name,omitempty"`
	SetHash      string          `json:"question_set_hash"`
	SetName      string          `json:"question_set"`
	SetPath      string          `json:"question_set_path,omitempty"`
	DatasetHash  string          `json:"dataset_hash,omitempty"`
	DatasetPath  string          `json:"dataset,omitempty"`
	ProviderKind string          `json:"provider"`
	BaseURL      string          `json:"base_url,omitempty"`
	Model        string          `json:"model"`
	Models       []string        `json:"resolved_models"`
	Status       Status          `json:"status"`
	Reason       string          `json:"reason,omitempty"`
	StartedAt    time.Time       `json:"started_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	FinishedAt   time.Time       `json:"finished_at,omitzero"`
	Repeat       int             `json:"repeat"`
	Total        int             `json:"total"`
	Done         int             `json:"done"`
	Errors       int             `json:"errors"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	CostUSD      float64         `json:"cost_usd"`
	Version      string          `json:"jevlab_version,omitempty"`
	Settings     json.RawMessage `json:"settings,omitempty"`
	// LeaseOwner and LeaseUntil are the lease of a running run: the
	// process running it ("host:pid:token") and until when it has promised
	// to renew. Status reads interrupted once the lease lapses or the
	// process is gone, though the row still says running.
	LeaseOwner string    `json:"lease_owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

// ErrNotFound is returned (wrapped) when a run, snapshot or item is absent.
var ErrNotFound = errors.New("not found")

// NewRunID returns a fresh run id, r-YYYYMMDD-HHMMSS-xxxx: sortable by start
// time, unique by its random suffix.
func NewRunID(t time.Time) string {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	var b [5]byte
	_, _ = rand.Read(b[:])
	suffix := make([]byte, 5)
	for i := range b {
		suffix[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "r-" + t.UTC().Format("20060102-150405") + "-" + string(suffix)
}

// CreateRun records a new run with status running and returns it.
func (db *DB) CreateRun(ctx context.Context, nr NewRun) (*Run, error) {
	if nr.SetHash == "" {
		return nil, errors.New("create run: no question-set snapshot")
	}
	if nr.Repeat < 1 {
		nr.Repeat = 1
	}
	settings := nr.Settings
	if len(settings) == 0 {
		settings = json.RawMessage("{}")
	}
	if !json.Valid(settings) {
		return nil, errors.New("create run: settings are not valid JSON")
	}
	started := time.Now()
	id := NewRunID(started)
	ts := started.UTC().Format(timeFormat)
	var dsHash any
	if nr.DatasetHash != "" {
		dsHash = nr.DatasetHash
	}
	leaseUntil := ""
	if nr.LeaseOwner != "" {
		leaseUntil = started.Add(leaseTTL(nr.LeaseTTL)).UTC().Format(timeFormat)
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, name, set_hash, set_name, set_path, dataset_hash, dataset_path,
			provider_kind, base_url, model, status, started_at, updated_at, repeat, total, version, settings, lease_owner, lease_until)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			id, nr.Name, nr.SetHash, nr.SetName, nr.SetPath, dsHash, nr.DatasetPath,
			nr.ProviderKind, nr.BaseURL, nr.Model, string(StatusRunning), ts, ts, nr.Repeat, nr.Total, nr.Version, string(settings),
			nr.LeaseOwner, leaseUntil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create run: %w", err)
	}
	return db.Run(ctx, id)
}

// FinishRun sets a run's final status (done, interrupted or failed) with an
// optional reason, and stamps its finish time. It then stores the run's
// item stream (itemstream.go), which only speeds reading it: a stream not
// stored is no error.
func (db *DB) FinishRun(ctx context.Context, id string, status Status, reason string) error {
	if err := db.setStatus(ctx, id, status, reason, true); err != nil {
		return err
	}
	db.finished(ctx, id, status)
	return nil
}

// finished does what follows a run's finish: a run that is done stores its
// item stream, best effort (a run stopped early is likely to be resumed,
// which would drop it again).
func (db *DB) finished(ctx context.Context, id string, status Status) {
	if status == StatusDone {
		_ = db.saveItemStream(ctx, id)
	}
}

// MarkRun sets a run's status without finishing it (e.g. running again on
// resume, which clears the finish time).
func (db *DB) MarkRun(ctx context.Context, id string, status Status, reason string) error {
	return db.setStatus(ctx, id, status, reason, false)
}

func (db *DB) setStatus(ctx context.Context, id string, status Status, reason string, finish bool) error {
	switch status {
	case StatusRunning, StatusDone, StatusInterrupted, StatusFailed:
	default:
		return fmt.Errorf("run %s: unknown status %q", id, status)
	}
	ts := now()
	fin := ""
	if finish {
		fin = ts
	}
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		// A finished run holds no lease.
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, reason = ?, updated_at = ?, finished_at = ?,
			lease_owner = CASE WHEN ? THEN '' ELSE lease_owner END, lease_until = CASE WHEN ? THEN '' ELSE lease_until END WHERE id = ?`,
			string(status), reason, ts, fin, finish, finish, id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("mark run %s %s: %w", id, status, err)
	}
	if n == 0 {
		return fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	return nil
}

// SetRunTotal records the planned number of items × repeats.
func (db *DB) SetRunTotal(ctx context.Context, id string, total int) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET total = ? WHERE id = ?`, total, id)
		return err
	})
}

const runColumns = `id, name, set_hash, set_name, set_path, coalesce(dataset_hash, ''), dataset_path, provider_kind, base_url,
	model, models, status, reason, started_at, updated_at, finished_at, repeat, total, done, errors,
	input_tokens, output_tokens, cost_usd, version, settings, lease_owner, lease_until`

func scanRun(sc interface{ Scan(...any) error }) (*Run, error) {
	var r Run
	var models, status, started, updated, finished, settings, leaseUntil string
	err := sc.Scan(&r.ID, &r.Name, &r.SetHash, &r.SetName, &r.SetPath, &r.DatasetHash, &r.DatasetPath, &r.ProviderKind, &r.BaseURL,
		&r.Model, &models, &status, &r.Reason, &started, &updated, &finished, &r.Repeat, &r.Total, &r.Done, &r.Errors,
		&r.InputTokens, &r.OutputTokens, &r.CostUSD, &r.Version, &settings, &r.LeaseOwner, &leaseUntil)
	if err != nil {
		return nil, err
	}
	r.Status = Status(status)
	r.StartedAt, r.UpdatedAt, r.FinishedAt = parseTime(started), parseTime(updated), parseTime(finished)
	r.LeaseUntil = parseTime(leaseUntil)
	if r.Status == StatusRunning {
		if why := r.abandoned(time.Now()); why != "" {
			r.Status, r.Reason = StatusInterrupted, why
		}
	}
	if err := json.Unmarshal([]byte(models), &r.Models); err != nil {
		r.Models = nil
	}
	if r.Models == nil {
		r.Models = []string{}
	}
	r.Settings = json.RawMessage(settings)
	return &r, nil
}

// Run returns the run with exactly this id.
func (db *DB) Run(ctx context.Context, id string) (*Run, error) {
	r, err := scanRun(db.sql.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, db.check(err))
	}
	return r, nil
}

// RunFilter narrows Runs. Zero fields match everything.
type RunFilter struct {
	SetName string // question set name
	SetHash string // question-set snapshot
	Model   string // requested or resolved model
	Status  Status
	Limit   int // 0 = no limit
}

// Runs lists runs, newest first.
func (db *DB) Runs(ctx context.Context, f RunFilter) ([]*Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs`
	var where []string
	var args []any
	if f.SetName != "" {
		where = append(where, "set_name = ?")
		args = append(args, f.SetName)
	}
	if f.SetHash != "" {
		where = append(where, "set_hash = ?")
		args = append(args, f.SetHash)
	}
	if f.Model != "" {
		m, _ := json.Marshal(f.Model)
		where = append(where, "(model = ? OR instr(models, ?) > 0)")
		args = append(args, f.Model, string(m))
	}
	// running and interrupted are told apart by the lease after reading
	// (a run whose process died still says running in its row).
	inGo := f.Status == StatusRunning || f.Status == StatusInterrupted
	switch {
	case inGo:
		where = append(where, "status IN ('running', 'interrupted')")
	case f.Status != "":
		where = append(where, "status = ?")
		args = append(args, string(f.Status))
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_at DESC, rowid DESC"
	if f.Limit > 0 && !inGo {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", db.check(err))
	}
	defer rows.Close()
	out := []*Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", db.check(err))
		}
		if inGo && r.Status != f.Status {
			continue
		}
		out = append(out, r)
		if inGo && f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", db.check(err))
	}
	return out, nil
}

// ResolveRun finds the run a user named: "latest", "latest~N" (the Nth
// before the latest), an exact id, or a unique id prefix.
func (db *DB) ResolveRun(ctx context.Context, ref string) (*Run, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, errors.New("no run given: use a run id, a unique prefix of one, latest or latest~N (see 'jevlab runs')")
	}
	if ref == "latest" || strings.HasPrefix(ref, "latest~") {
		back := 0
		if ref != "latest" {
			n, err := strconv.Atoi(strings.TrimPrefix(ref, "latest~"))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("run %q: expected latest~N with N a whole number, e.g. latest~1", ref)
			}
			back = n
		}
		r, err := scanRun(db.sql.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1 OFFSET ?`, back))
		if errors.Is(err, sql.ErrNoRows) {
			if back == 0 {
				return nil, fmt.Errorf("run %s: no runs stored yet in %s (run 'jevlab eval' first): %w", ref, db.path, ErrNotFound)
			}
			return nil, fmt.Errorf("run %s: fewer than %d runs stored: %w", ref, back+1, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", ref, err)
		}
		return r, nil
	}
	if r, err := db.Run(ctx, ref); err == nil {
		return r, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6`, len(ref), ref)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", ref, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("run %s: %w", ref, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	switch len(ids) {
	case 0:
		return nil, fmt.Errorf("run %q: no run has this id or prefix (see 'jevlab runs'): %w", ref, ErrNotFound)
	case 1:
		return db.Run(ctx, ids[0])
	default:
		more := ""
		if len(ids) > 5 {
			ids, more = ids[:5], ", …"
		}
		return nil, fmt.Errorf("run %q is ambiguous: it prefixes %s%s; give more of the id", ref, strings.Join(ids, ", "), more)
	}
}
