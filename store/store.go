// Package store keeps jevlab's runs in SQLite: question-set and dataset
// snapshots, runs with every item's answers, and the raw exchanges the
// answer cache replays (it implements provider.ExchangeStore).
//
// A database is safe for concurrent use by one process and shared with
// others through WAL mode and a busy timeout, so the workbench can read
// while a CLI eval writes.
//
// # Layout
//
// Since migration 20261203_0900 a run costs about 1 KB per item of the
// scale set (8 questions, cached or live), where it cost 4.8 KB:
//
//   - item_results: one row per item × repeat, its accounting, and its
//     answers packed into one value (itempack.go): the item's provenance
//     once, per answer only what differs from the item, floats as their
//     bits and distributions as their shortest exact text, deflated
//     against the run's first packed item. Read in dataset order through
//     item_results_seq.
//   - A raw answer (the bytes as received) is a reference (exchange id,
//     offset, length) into a stored response when it is a slice of one
//     (rawrefs.go), else an entry of item_results.raws, deflated against
//     the run × question's first raw answer (rawpack.go).
//   - exchanges: the request with its questions value cut out (kept once
//     in bodies, bodies.go) and the response deflated against the run's
//     first response, with the resolved model and recorded time the answer
//     cache ranks by.
//   - answer_index: the answer cache's index, a WITHOUT ROWID table keyed
//     by provider.AnswerKey, pointing into the exchanges.
//
// Dictionaries are rows of raw_dicts. Every value reads back identical to
// what was stored.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// maxConns bounds the pool of connections (open and idle).
const maxConns = 8

// cacheKiB is each connection's page cache (PRAGMA cache_size, in KiB;
// SQLite's default is 2,000). A run's concurrent lookups open every
// connection of the pool and each fills its cache as the database grows,
// so the pool's caches bound how a long run's memory grows: at 1 MiB they
// hold 8 MiB, and storing items was as fast as with 2 MB each
// (BenchmarkSaveItems, 100,000 items: 85-89 µs per item either way).
// Reports and comparisons scan whole tables, which a page cache does not
// speed up.
const cacheKiB = 1024

// BusyTimeout is how long a statement waits for another connection's (or
// process's) write lock before failing.
const BusyTimeout = 15 * time.Second

// DB is an open jevlab database. It is safe for concurrent use.
type DB struct {
	sql  *sql.DB
	path string
	// wmu serialises this process's write transactions, so they queue in Go
	// rather than spin in SQLite's busy handler.
	wmu sync.Mutex

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt

	tempDir string // removed on Close (Open(":memory:"))

	packer rawPacker  // deflates raw answers (SaveItems)
	recent recentRaws // answers of exchanges saved or looked up lately (SaveItems refers to them)

	readOnly bool         // OpenReadOnly: every write is refused
	corrupt  atomic.Value // error: set on the first corruption error; later writes are refused
}

// DefaultPath returns where the database lives: $JEVLAB_DB, else
// $XDG_DATA_HOME/jevlab/jevlab.db, else ~/.local/share/jevlab/jevlab.db.
func DefaultPath() string {
	if p := os.Getenv("JEVLAB_DB"); p != "" {
		return p
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "jevlab", "jevlab.db")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(".", "jevlab.db")
	}
	return filepath.Join(home, ".local", "share", "jevlab", "jevlab.db")
}

// Open opens (creating if needed) the database at path and brings its schema
// up to date. ":memory:" opens a private temporary database removed on
// Close. A new file is created with mode 0600 and its directory with
// 0700. The connection uses WAL, a busy timeout of BusyTimeout, foreign keys,
// synchronous=NORMAL and a 1 MiB page cache (cacheKiB).
func Open(path string) (*DB, error) {
	return OpenWith(path, OpenOptions{})
}

// OpenWith is Open with options: opt.Progress hears about migrations that
// rewrite stored rows, which take a while on a large database.
func OpenWith(path string, opt OpenOptions) (*DB, error) {
	if path == "" {
		return nil, errors.New("open database: empty path")
	}
	var tempDir string
	if path == ":memory:" {
		// Each pooled connection to ":memory:" would see its own empty
		// database; a private temporary file behaves like one database
		// and goes away on Close.
		d, err := os.MkdirTemp("", "jevlab-db-")
		if err != nil {
			return nil, fmt.Errorf("open temporary database: %w", err)
		}
		tempDir, path = d, filepath.Join(d, "jevlab.db")
	}
	{
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("open database: create directory %s: %w", dir, err)
			}
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
		f.Close()
	}
	dsn := "file:" + escapePath(path) + fmt.Sprintf(
		"?_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate&_cache_size=-%d",
		BusyTimeout.Milliseconds(), cacheKiB)
	sdb, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	sdb.SetMaxOpenConns(maxConns)
	sdb.SetMaxIdleConns(maxConns)
	sdb.SetConnMaxIdleTime(0)
	db := &DB{sql: sdb, path: path, tempDir: tempDir, stmts: map[string]*sql.Stmt{}}
	if err := db.migrate(context.Background(), migrations, migrationSteps(), opt.Progress); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, db.check(err))
	}
	return db, nil
}

// escapePath makes path safe inside a file: URI (a '?' or '#' would end it).
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// Path returns the file the database was opened from.
func (db *DB) Path() string { return db.path }

// Close closes the database.
func (db *DB) Close() error {
	db.stmtMu.Lock()
	for _, s := range db.stmts {
		s.Close()
	}
	db.stmts = nil
	db.stmtMu.Unlock()
	err := db.sql.Close()
	if db.tempDir != "" {
		os.RemoveAll(db.tempDir)
	}
	return err
}

// stmt returns the prepared statement for query, preparing it once.
func (db *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	if s, ok := db.stmts[query]; ok {
		return s, nil
	}
	if db.stmts == nil {
		return nil, errors.New("database is closed")
	}
	s, err := db.sql.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	db.stmts[query] = s
	return s, nil
}

// write runs fn in a write transaction, serialised with this process's other
// writers.
// A database opened read-only refuses (ErrReadOnly); one that reported
// corruption once refuses every later write with the same CorruptError, so
// a damaged file is not written to further.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.readOnly {
		return fmt.Errorf("%s: %w", db.path, ErrReadOnly)
	}
	if c, _ := db.corrupt.Load().(error); c != nil {
		return c
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return db.check(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return db.check(err)
	}
	return db.check(tx.Commit())
}

// SchemaVersion returns the version of the last applied migration.
func (db *DB) SchemaVersion(ctx context.Context) (string, error) {
	var v sql.NullString
	err := db.sql.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v)
	return v.String, err
}

// migrationStep is Go code a migration runs after its SQL, in the same
// transaction: work SQL cannot do, such as backfilling computed columns.
// It reports its progress through pr (which may be nil).
type migrationStep func(ctx context.Context, tx *sql.Tx, pr *progress) error

// migrationSteps returns the Go steps of the shipped migrations, by version
// (the migration's file name without .sql).
func migrationSteps() map[string]migrationStep {
	return map[string]migrationStep{
		"20261202_0002_answer_index":       backfillAnswerIndex,
		"20261203_0100_rekey_answer_index": backfillAnswerIndex,
		"20261203_0300_exchange_bodies":    splitExchangeRequests,
		"20261203_0900_compact_layout":     compactLayout,
		"20261207_0100_item_streams":       streamDoneRuns,
	}
}

// migrate applies every migration in fsys's migrations/ directory not yet
// recorded in schema_migrations, each in its own transaction, in file-name
// order (names start with their date, so that is the order they were
// written). A migration is its SQL file followed by its Go step in steps,
// if any. A failing migration is rolled back whole. Opening an up-to-date
// database takes no write lock.
func (db *DB) migrate(ctx context.Context, fsys fs.FS, steps map[string]migrationStep, report func(MigrationProgress)) error {
	if _, err := db.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var names []string
	known := map[string]bool{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
			known[strings.TrimSuffix(e.Name(), ".sql")] = true
		}
	}
	for v := range steps {
		if !known[v] {
			return fmt.Errorf("migrate: Go step for %s has no migrations/%s.sql", v, v)
		}
	}
	sort.Strings(names)
	applied, err := db.appliedMigrations(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, name := range names {
		version := strings.TrimSuffix(name, ".sql")
		if applied[version] {
			continue
		}
		body, err := fs.ReadFile(fsys, "migrations/"+name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		err = db.write(ctx, func(tx *sql.Tx) error {
			var n int
			// Checked again inside the (immediate) transaction, so two
			// processes opening a new file at once apply each migration
			// once.
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			if step := steps[version]; step != nil {
				if err := step(ctx, tx, &progress{fn: report, migration: version}); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, version, now())
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

// appliedMigrations reads the versions already applied.
func (db *DB) appliedMigrations(ctx context.Context) (map[string]bool, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out[v] = true
	}
	return out, rows.Err()
}

// timeFormat is how times are stored: UTC, sortable as text.
const timeFormat = "2006-01-02T15:04:05.000Z"

func now() string { return time.Now().UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		t, _ = time.Parse(time.RFC3339Nano, s)
	}
	return t
}

// CloseIdle closes the pool's idle connections. Each keeps its own page
// cache (up to 2 MB of C memory) and prepared statements; after a run's
// concurrent lookups and writes only one is needed at a time, and a
// connection closed here is opened again when one is needed. The memory
// they freed is handed back to the operating system (trimCHeap), so the
// process's resident size falls with them.
func (db *DB) CloseIdle() {
	db.sql.SetMaxIdleConns(0)
	db.sql.SetMaxIdleConns(maxConns)
	trimCHeap()
}
