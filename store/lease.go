package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultLeaseTTL is how long a running run's lease lasts unless renewed.
// The runner renews it every third of that, so only a process that is gone
// (or stalled for this long) lets it lapse.
const DefaultLeaseTTL = 30 * time.Second

// legacyStaleAfter is how long a running run without a lease (written
// before leases existed) may go without storing an item before it reads
// as interrupted.
const legacyStaleAfter = 10 * time.Minute

// ErrRunBusy is returned (wrapped) when a run's lease is held by a process
// that is still running it.
var ErrRunBusy = errors.New("run is being run by another process")

// ErrLeaseLost is returned (wrapped) by RenewLease and FinishLease when the
// run's lease is no longer this owner's (it lapsed and another process
// resumed the run).
var ErrLeaseLost = errors.New("the run's lease was taken over by another process")

func leaseTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultLeaseTTL
	}
	return d
}

// NewLeaseOwner returns a lease owner for this process: "host:pid:token",
// unique per call so two runs in one process hold different leases.
func NewLeaseOwner() string {
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, ":", "_")
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// leaseProcess splits an owner into its host and pid.
func leaseProcess(owner string) (host string, pid int, ok bool) {
	parts := strings.Split(owner, ":")
	if len(parts) != 3 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", 0, false
	}
	return parts[0], pid, true
}

// abandoned says why a run whose row says running is in fact not running
// any more ("" when it may be): its lease lapsed, or its process on this
// host is gone.
func (r *Run) abandoned(now time.Time) string {
	if r.LeaseOwner == "" || r.LeaseUntil.IsZero() {
		if now.Sub(r.UpdatedAt) > legacyStaleAfter {
			return "stopped without finishing: no progress since " + r.UpdatedAt.UTC().Format(time.RFC3339) + " (resume it with eval --resume)"
		}
		return ""
	}
	if host, pid, ok := leaseProcess(r.LeaseOwner); ok {
		if h, _ := os.Hostname(); h != "" && strings.ReplaceAll(h, ":", "_") == host && processGone(pid) {
			return fmt.Sprintf("stopped without finishing: its process (pid %d) is gone (resume it with eval --resume)", pid)
		}
	}
	if now.After(r.LeaseUntil) {
		return "stopped without finishing: no heartbeat since " + r.LeaseUntil.UTC().Format(time.RFC3339) + " (resume it with eval --resume)"
	}
	return ""
}

// AcquireRun takes run id's lease for owner for ttl, marking it running
// again (for a resume), and returns it. It fails with ErrRunBusy while
// another process holds a live lease on it, so two processes never run the
// same run at once.
func (db *DB) AcquireRun(ctx context.Context, id, owner string, ttl time.Duration) (*Run, error) {
	if owner == "" {
		return nil, errors.New("acquire run: empty lease owner")
	}
	var busy *Run
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := scanRun(tx.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if r.Status == StatusRunning && r.LeaseOwner != owner {
			busy = r
			return nil
		}
		ts := time.Now()
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, reason = '', updated_at = ?, finished_at = '', lease_owner = ?, lease_until = ?
			WHERE id = ?`, string(StatusRunning), ts.UTC().Format(timeFormat), owner, ts.Add(leaseTTL(ttl)).UTC().Format(timeFormat), id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("acquire run %s: %w", id, err)
	}
	if busy != nil {
		who := busy.LeaseOwner
		if host, pid, ok := leaseProcess(who); ok {
			who = fmt.Sprintf("process %d on %s", pid, host)
		}
		if who == "" {
			who = "another process"
		}
		return nil, fmt.Errorf("run %s is being run by %s (lease until %s): wait for it to finish or stop it, then resume: %w",
			id, who, busy.LeaseUntil.Local().Format("15:04:05"), ErrRunBusy)
	}
	return db.Run(ctx, id)
}

// RenewLease extends owner's lease on run id by ttl from now (the
// heartbeat). It fails with ErrLeaseLost when the lease is no longer
// owner's.
func (db *DB) RenewLease(ctx context.Context, id, owner string, ttl time.Duration) error {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'running'`,
			time.Now().Add(leaseTTL(ttl)).UTC().Format(timeFormat), id, owner)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("renew the lease of run %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("run %s: %w", id, ErrLeaseLost)
	}
	return nil
}

// FinishLease is FinishRun for the holder of the run's lease: it sets the
// final status only while owner still holds the lease (else ErrLeaseLost,
// leaving the new holder's run alone) and releases it. A run that is done
// then stores its item stream, as with FinishRun.
func (db *DB) FinishLease(ctx context.Context, id, owner string, status Status, reason string) error {
	switch status {
	case StatusDone, StatusInterrupted, StatusFailed:
	default:
		return fmt.Errorf("run %s: cannot finish with status %q", id, status)
	}
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		ts := now()
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, reason = ?, updated_at = ?, finished_at = ?, lease_owner = '', lease_until = ''
			WHERE id = ? AND lease_owner = ?`, string(status), reason, ts, ts, id, owner)
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
		return fmt.Errorf("run %s: %w", id, ErrLeaseLost)
	}
	db.finished(ctx, id, status)
	return nil
}

// SetRunSettings replaces run id's recorded settings (a JSON object), as a
// resume does when a flag given again overrides one.
func (db *DB) SetRunSettings(ctx context.Context, id string, settings json.RawMessage) error {
	if !json.Valid(settings) {
		return fmt.Errorf("run %s: settings are not valid JSON", id)
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET settings = ? WHERE id = ?`, string(settings), id)
		return err
	})
}

// RunExchangeUsage sums the usage the provider reported in the responses
// recorded for run (usage.input_tokens and usage.output_tokens of each
// exchange saved under WithRunID). A process killed between saving an
// exchange and storing its item leaves spend here that no item carries.
func (db *DB) RunExchangeUsage(ctx context.Context, runID string) (in, out int64, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT
		coalesce(sum(CAST(json_extract(CAST(response AS TEXT), '$.usage.input_tokens') AS INTEGER)), 0),
		coalesce(sum(CAST(json_extract(CAST(response AS TEXT), '$.usage.output_tokens') AS INTEGER)), 0)
		FROM exchanges WHERE run_id = ? AND resp_dict IS NULL AND json_valid(CAST(response AS TEXT))`, runID).Scan(&in, &out)
	if err != nil {
		return 0, 0, fmt.Errorf("usage of run %s's exchanges: %w", runID, db.check(err))
	}
	// Packed responses are inflated here and read by the same SQL.
	rows, err := db.sql.QueryContext(ctx, `SELECT id, response, resp_dict FROM exchanges WHERE run_id = ? AND resp_dict IS NOT NULL`, runID)
	if err != nil {
		return 0, 0, fmt.Errorf("usage of run %s's exchanges: %w", runID, db.check(err))
	}
	defer rows.Close()
	unpack := rawUnpacker{db: db.sql}
	for rows.Next() {
		var id, dict int64
		var b []byte
		if err := rows.Scan(&id, &b, &dict); err != nil {
			return 0, 0, fmt.Errorf("usage of run %s's exchanges: %w", runID, err)
		}
		resp, err := unpack.unpack(ctx, b, dict)
		if err != nil {
			return 0, 0, fmt.Errorf("usage of run %s's exchange %d: %w", runID, id, err)
		}
		var i, o int64
		if err := db.sql.QueryRowContext(ctx, `SELECT CASE WHEN json_valid(?1) THEN
			ifnull(CAST(json_extract(?1, '$.usage.input_tokens') AS INTEGER), 0) ELSE 0 END, CASE WHEN json_valid(?1) THEN
			ifnull(CAST(json_extract(?1, '$.usage.output_tokens') AS INTEGER), 0) ELSE 0 END`, string(resp)).Scan(&i, &o); err != nil {
			return 0, 0, fmt.Errorf("usage of run %s's exchange %d: %w", runID, id, err)
		}
		in, out = in+i, out+o
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("usage of run %s's exchanges: %w", runID, db.check(err))
	}
	return in, out, nil
}

// AddRunSpend adds to run id's totals spend that no stored item carries
// (answers paid for by a process that died before storing them).
func (db *DB) AddRunSpend(ctx context.Context, id string, in, out int64, cost float64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cost_usd = cost_usd + ?
			WHERE id = ?`, in, out, cost, id)
		return err
	})
}
