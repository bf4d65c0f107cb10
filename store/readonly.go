package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// ErrReadOnly is returned (wrapped) by every write to a database opened
// with OpenReadOnly.
var ErrReadOnly = errors.New("database opened read-only: this command does not write")

// ErrNoDatabase is returned (wrapped) by OpenReadOnly when there is no
// database file yet. It matches fs.ErrNotExist too.
var ErrNoDatabase = fmt.Errorf("no database yet (jevlab eval stores the first run): %w", fs.ErrNotExist)

// CorruptError reports that SQLite found the database file damaged. The
// DB refuses every write after the first one, so a damaged file is not
// made worse; its message says how to recover.
type CorruptError struct {
	Path string
	Err  error
}

// Error names the file, the damage and the way out.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("database %s is damaged (%v); jevlab stopped writing to it. "+
		"Recover what SQLite can read with: sqlite3 %s '.recover' | sqlite3 %s.recovered "+
		"and use --db %s.recovered, or restore the file from a copy", e.Path, e.Err, shq(e.Path), shq(e.Path), shq(e.Path))
}

// Unwrap returns SQLite's error.
func (e *CorruptError) Unwrap() error { return e.Err }

// IsCorrupt reports whether err says the database file is damaged.
func IsCorrupt(err error) bool {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return true
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	return false
}

// check turns a corruption error into a CorruptError and remembers it, so
// later writes are refused; other errors pass through.
func (db *DB) check(err error) error {
	if err == nil {
		return nil
	}
	var ce *CorruptError
	if errors.As(err, &ce) {
		return err
	}
	if !IsCorrupt(err) {
		return err
	}
	ce = &CorruptError{Path: db.path, Err: err}
	db.corrupt.CompareAndSwap(nil, error(ce))
	if c, _ := db.corrupt.Load().(error); c != nil {
		return c
	}
	return ce
}

// Check passes err through, turned into a CorruptError (which also stops
// this DB's later writes) when it reports a damaged file. Callers that
// read through methods returning SQLite's errors use it to give the
// recovery advice.
func (db *DB) Check(err error) error { return db.check(err) }

// ReadOnly reports whether the database was opened with OpenReadOnly.
func (db *DB) ReadOnly() bool { return db.readOnly }

// OpenReadOnly opens the existing database at path for reading only, for
// commands that never write (runs, show, compare): it creates nothing,
// migrates nothing and every write through it fails (SQLite mode=ro and
// PRAGMA query_only), so it works on a read-only mount and cannot change
// the file by mistake.
//
// A WAL database needs its -shm file to be read safely beside a writer;
// where it cannot be created (a read-only directory holding a database
// that was closed cleanly, so there is no -wal either) the file is opened
// as immutable, which is exact because nothing can write there.
//
// A database whose schema is older than this jevlab's is upgraded first
// through a normal Open when the file is writable; otherwise the error
// says so.
func OpenReadOnly(path string) (*DB, error) {
	return OpenReadOnlyWith(path, OpenOptions{})
}

// OpenReadOnlyWith is OpenReadOnly with options; opt.Progress hears about
// the upgrade of a database whose schema is behind.
func OpenReadOnlyWith(path string, opt OpenOptions) (*DB, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open database read-only: %q is not a database file", path)
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoDatabase)
	}
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("open database %s: not a regular file", path)
	}
	db, err := openRO(path, false)
	if err == nil {
		err = db.schemaCurrent()
		if errors.Is(err, errSchemaBehind) {
			db.Close()
			// Upgrade through a writable open, then read-only again.
			up, uerr := OpenWith(path, opt)
			if uerr != nil {
				return nil, fmt.Errorf("open database %s read-only: %w, and upgrading it failed: %w", path, err, uerr)
			}
			up.Close()
			db, err = openRO(path, false)
			if err == nil {
				err = db.schemaCurrent()
			}
		}
	}
	if err != nil && canTryImmutable(path, err) {
		if db != nil {
			db.Close()
		}
		db, err = openRO(path, true)
		if err == nil {
			err = db.schemaCurrent()
		}
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		return nil, fmt.Errorf("open database %s read-only: %w", path, err)
	}
	return db, nil
}

// openRO opens path read-only and makes one read, so a database that
// cannot be read fails here rather than in the first query.
func openRO(path string, immutable bool) (*DB, error) {
	dsn := "file:" + escapePath(path) + fmt.Sprintf("?mode=ro&_query_only=1&_busy_timeout=%d&_foreign_keys=on&_cache_size=-%d", BusyTimeout.Milliseconds(), cacheKiB)
	if immutable {
		dsn += "&immutable=1"
	}
	sdb, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	sdb.SetMaxOpenConns(4)
	sdb.SetMaxIdleConns(4)
	db := &DB{sql: sdb, path: path, stmts: map[string]*sql.Stmt{}, readOnly: true}
	var n int
	if err := sdb.QueryRowContext(context.Background(), `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		db.Close()
		return nil, db.check(err)
	}
	return db, nil
}

// canTryImmutable: the read-only open failed because SQLite could not
// create the -shm file beside a WAL database, and there is no -wal file
// (no writer's pages to miss), so reading the file as immutable is exact.
func canTryImmutable(path string, err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) || (se.Code != sqlite3.ErrCantOpen && se.Code != sqlite3.ErrReadonly) {
		return false
	}
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
		return false
	}
	return true
}

var errSchemaBehind = errors.New("its schema is older than this jevlab's")

// schemaCurrent checks that every shipped migration has been applied.
func (db *DB) schemaCurrent() error {
	ctx := context.Background()
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return db.check(err)
	}
	if n == 0 {
		var tables int
		if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
			return db.check(err)
		}
		if tables == 0 {
			return fmt.Errorf("it is empty: %w", errSchemaBehind) // created but never migrated
		}
		return errors.New("not a jevlab database (it has no schema_migrations table); check --db / $JEVLAB_DB")
	}
	applied, err := db.appliedMigrations(ctx)
	if err != nil {
		return db.check(err)
	}
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return err
	}
	var missing []string
	for _, e := range entries {
		v := strings.TrimSuffix(e.Name(), ".sql")
		if strings.HasSuffix(e.Name(), ".sql") && !applied[v] {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%w (missing migration %s; open it once with a writing command such as jevlab eval)", errSchemaBehind, strings.Join(missing, ", "))
	}
	return nil
}

// shq quotes p for a shell command line when it needs it.
func shq(p string) string {
	if p != "" && !strings.ContainsAny(p, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
