package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// ReleaseWriteCaches drops the write path's caches (the deflaters and the
// recent answers), and writes after it rebuild them from the stored
// dictionary: no second dictionary, every raw answer back byte for byte.
func TestReleaseWriteCachesThenWriteAgain(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "rel", "jev-latest")
	var items []ItemResult
	for i := 0; i < 120; i++ {
		it := sampleItem(fmt.Sprint("i", i), i, 0, 0.5)
		it.Answers[0].Answer.Raw = longRaw(i)
		items = append(items, it)
	}
	if _, err := db.SaveItems(ctx, r.ID, items[:60]); err != nil {
		t.Fatal(err)
	}
	db.recent.add(longRaw(1), rawRef{})
	if len(db.packer.w) == 0 || len(db.recent.cur) == 0 {
		t.Fatalf("nothing cached to release (%d deflaters, %d recent answers)", len(db.packer.w), len(db.recent.cur))
	}
	db.ReleaseWriteCaches()
	if db.packer.w != nil || db.recent.cur != nil || db.recent.old != nil || db.recent.curBytes != 0 {
		t.Fatalf("caches kept: %d deflaters, %d+%d recent answers", len(db.packer.w), len(db.recent.cur), len(db.recent.old))
	}
	if _, err := db.SaveItems(ctx, r.ID, items[60:]); err != nil {
		t.Fatal(err)
	}
	var dicts int
	if err := db.sql.QueryRow(`SELECT count(*) FROM raw_dicts`).Scan(&dicts); err != nil {
		t.Fatal(err)
	}
	if dicts != 2 { // the long raws' dictionary and the packed items'
		t.Fatalf("%d dictionaries after the release, want the 2 made before it", dicts)
	}
	got, err := db.RunAnswers(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range got {
		if a.QuestionID != "intent" {
			continue
		}
		var i int
		fmt.Sscanf(a.ItemID, "i%d", &i)
		if !bytes.Equal(a.Answer.Raw, items[i].Answers[0].Answer.Raw) {
			t.Fatalf("item %s: raw %q, want %q", a.ItemID, a.Answer.Raw, items[i].Answers[0].Answer.Raw)
		}
		n++
	}
	if n != 120 {
		t.Fatalf("%d answers read back, want 120", n)
	}
}

// CloseIdle closes the connections a burst of concurrent reads left idle
// (each holds its own page cache) and the database keeps working.
func TestCloseIdleClosesPooledConnections(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "idle", "jev-latest")
	// Three reads open at once need three connections.
	var rows []interface{ Close() error }
	for i := 0; i < 3; i++ {
		rs, err := db.sql.QueryContext(ctx, `SELECT id FROM runs`)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs)
	}
	for _, rs := range rows {
		rs.Close()
	}
	if idle := db.sql.Stats().Idle; idle < 3 {
		t.Fatalf("%d idle connections after three concurrent reads, want at least 3", idle)
	}
	db.CloseIdle()
	if idle := db.sql.Stats().Idle; idle != 0 {
		t.Fatalf("%d idle connections after CloseIdle, want 0", idle)
	}
	got, err := db.Run(ctx, r.ID)
	if err != nil || got.ID != r.ID {
		t.Fatalf("read after CloseIdle: %v %v", got, err)
	}
	if _, err := db.SaveItems(ctx, r.ID, []ItemResult{sampleItem("a", 0, 0, 0.5)}); err != nil {
		t.Fatalf("write after CloseIdle: %v", err)
	}
}

// Every connection, writable or read-only, runs with the bounded page
// cache (cacheKiB), so the pool's caches cannot grow past maxConns MiB;
// and CloseIdle, which closes them and trims the C heap, leaves the pool
// working.
func TestConnectionsUseTheBoundedPageCache(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	check := func(name string, q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) {
		t.Helper()
		var kib int
		if err := q.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&kib); err != nil {
			t.Fatal(err)
		}
		if kib != -cacheKiB {
			t.Fatalf("%s: cache_size %d, want -%d (KiB)", name, kib, cacheKiB)
		}
	}
	// Hold several connections at once, as a run's lookups do.
	var conns []*sql.Conn
	for range 4 {
		c, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		check("pooled connection", c)
	}
	for _, c := range conns {
		c.Close()
	}
	db.CloseIdle()
	check("after CloseIdle", db.sql)
	ro, err := OpenReadOnly(db.path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	check("read-only", ro.sql)
}
