package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/systemone"
	"github.com/jevlab/jevlab/store"
)

// Mode says where a command's answers come from.
type Mode string

// The provider modes.
const (
	// ModeLive: every question goes to System One (--fresh). New exchanges
	// are still recorded.
	ModeLive Mode = "live"
	// ModeCached: recorded answers first, System One for the rest.
	ModeCached Mode = "cached"
	// ModeOffline: recorded answers only; a miss is an error.
	ModeOffline Mode = "offline"
	// ModeStandIn: the server is on loopback (jevlab serve, a test server),
	// so its answers are not Jev's.
	ModeStandIn Mode = "stand-in"
)

// standInModelPrefix starts every model name the stand-in answers under.
const standInModelPrefix = "standin-"

// apiKey returns the API key from the environment variable named by
// --key-env. It is never logged, written or put in an error.
func (a *app) apiKey() string { return os.Getenv(a.keyEnv) }

// liveClient builds the System One client. The base URL comes only from
// --base-url or $TYPESAFE_BASE_URL, never from a file. It fails when there
// is no key and the server is not on loopback (a stand-in needs none).
func (a *app) liveClient() (*systemone.Client, bool, error) {
	base, api, err := a.resolveHost() // hosts.go
	if err != nil {
		return nil, false, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, false, usageErr(fmt.Errorf("base URL: %w", err))
	}
	loopback := systemone.IsLoopback(u.Hostname())
	key := a.apiKey()
	if key == "" && !loopback {
		return nil, false, errNoKey
	}
	c, err := systemone.New(systemone.Config{
		BaseURL:     base,
		APIKey:      key,
		Concurrency: a.concurrency,
		RPS:         a.rps,
		Timeout:     a.timeout,
		Version:     readBuildInfo().Version,
		API:         api,
	})
	if err != nil {
		return nil, false, usageErr(err)
	}
	a.onClose(c.Close)
	return c, loopback, nil
}

// errNoKey marks a missing API key for a non-loopback server.
var errNoKey = errors.New("no API key")

// db opens the database lazily, once per command: --db, else $JEVLAB_DB,
// else the default path.
func (a *app) db() (*store.DB, error) { return a.openDB(store.OpenWith) }

// dbReadOnly opens the database read-only, once per command, for commands
// that never write (runs, show, compare): it creates and migrates nothing
// (store.OpenReadOnly), so it works on a read-only mount and cannot change
// the file. A database already opened by a.db() is reused.
func (a *app) dbReadOnly() (*store.DB, error) { return a.openDB(store.OpenReadOnlyWith) }

// openDB opens the database with open, once per command: --db, else
// $JEVLAB_DB, else the default path; closed when the command ends.
func (a *app) openDB(open func(string, store.OpenOptions) (*store.DB, error)) (*store.DB, error) {
	if a.database != nil {
		return a.database, nil
	}
	path := a.dbPath
	if path == "" {
		path = store.DefaultPath()
	}
	db, err := open(path, store.OpenOptions{Progress: a.migrationProgress})
	if err != nil {
		return nil, err
	}
	a.database = db
	a.onClose(func() error {
		err := db.Close()
		a.database = nil
		return err
	})
	return db, nil
}

// provider builds the answer stack for set: the answer cache over the
// fixture files (--fixtures, then the set's fixtures: resolved relative to
// the set file) and the database's past exchanges, in front of the live
// client unless --offline or no key is set. New exchanges are saved to the
// database and appended to the first fixture file named (--fixtures first).
// Outside stand-in mode, stand-in answers stored in the database are
// ignored.
// The cache's load warnings (torn or invalid lines) go to stderr.
func (a *app) provider(ctx context.Context, set *questionset.Set) (provider.Provider, Mode, error) {
	if a.offline && a.fresh {
		return nil, "", usageErr(errors.New("--fresh skips recorded answers and --offline forbids calling out, so nothing could answer; drop one of them"))
	}
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		if !seen[abs] {
			seen[abs] = true
			files = append(files, p)
		}
	}
	// The record target is one the user chose: --record, else the first
	// --fixtures, else the first of the set's fixtures that lies inside
	// its folder. A set's fixture allowed only through --allow-path is
	// read, never appended to.
	record := a.record
	if record != "" {
		add(record)
	}
	for _, f := range a.fixtures {
		add(f)
	}
	if record == "" && len(a.fixtures) > 0 {
		record = a.fixtures[0]
	}
	var readOnly []string
	if set != nil && set.Path != "" {
		named, err := set.FixturePaths(a.allowPaths)
		if err != nil {
			return nil, "", usageErr(err)
		}
		for _, np := range named {
			add(np.Path)
			switch {
			case record == "" && np.Inside:
				record = np.Path
			case !np.Inside:
				readOnly = append(readOnly, np.Path)
			}
		}
	}

	if _, _, err := a.resolveHost(); err != nil && !a.offline {
		return nil, "", err
	}
	hint := fmt.Sprintf("run again without --offline (with %s set) to record them", a.keyEnv)
	var upstream provider.Provider
	mode := ModeOffline
	if !a.offline {
		c, loopback, err := a.liveClient()
		switch {
		case errors.Is(err, errNoKey):
			fmt.Fprintf(a.stderr, "jevlab: $%s is not set: answering offline from recorded answers only (set it to call System One)\n", a.keyEnv)
			hint = fmt.Sprintf("set %s and run again to record them", a.keyEnv)
		case err != nil:
			return nil, "", err
		default:
			upstream = c
			mode = ModeCached
			if loopback {
				mode = ModeStandIn
			} else if a.fresh {
				mode = ModeLive
			}
		}
	}

	db, err := a.db()
	if err != nil {
		return nil, "", usageErr(fmt.Errorf("%w (choose another with --db or $JEVLAB_DB)", err))
	}
	cfg := fixtures.CacheConfig{
		Files:    files,
		Store:    db,
		Upstream: upstream,
		Fresh:    a.fresh,
		MissHint: hint,
		// Fixture files come from strangers: bounded lines (--max-fixture-line).
		MaxLineBytes: a.maxFixtureLine,
	}
	if key := a.apiKey(); key != "" {
		cfg.Secrets = []string{key}
	}
	if mode != ModeStandIn {
		// Answers a stand-in gave (recorded in the database while testing
		// against jevlab serve) must never answer for the real server.
		cfg.AcceptStored = func(m string) bool { return !strings.HasPrefix(m, standInModelPrefix) }
	}
	if upstream != nil {
		cfg.RecordTo = record
		if record == "" && len(readOnly) > 0 {
			fmt.Fprintf(a.stderr, "jevlab: note: new answers are not appended to %s (outside the set's folder); name a file with --record to keep them there\n", readOnly[0])
		}
	}
	cache, err := fixtures.NewCache(cfg)
	if err != nil {
		return nil, "", usageErr(err)
	}
	a.onClose(cache.Close)
	if !a.fresh {
		if err := cache.Load(ctx); err != nil {
			return nil, "", err
		}
		for _, w := range cache.Warnings() {
			fmt.Fprintln(a.stderr, "jevlab: warning:", w)
		}
	}
	return cache, mode, nil
}

// migrationProgress prints a migration's progress on stderr while a large
// database is upgraded ("jevlab: upgrading the database: storing question
// bodies once: 41% (41000 of 100000)"), so the wait is explained.
func (a *app) migrationProgress(p store.MigrationProgress) {
	pct := 100
	if p.Total > 0 {
		pct = int(p.Done * 100 / p.Total)
	}
	fmt.Fprintf(a.stderr, "jevlab: upgrading the database (%s): %s: %d%% (%d of %d)\n", p.Migration, p.Step, pct, p.Done, p.Total)
}
