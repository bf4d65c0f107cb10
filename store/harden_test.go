package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seeded creates a database at path holding one run with two items, and
// closes it (so SQLite checkpoints and removes the -wal and -shm files).
func seeded(t *testing.T, path string) string {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(t, db, "seeded", "jev-latest")
	if _, err := db.SaveItems(context.Background(), r.ID, []ItemResult{sampleItem("i1", 0, 0, 0.25), sampleItem("i2", 1, 0, 0.75)}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(context.Background(), r.ID, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// TestOpenReadOnlyReadsAndRefusesWrites: a read-only open reads every
// run, refuses writes through the store and through raw SQL (the handle
// itself is read-only), and leaves the file byte for byte as it was.
func TestOpenReadOnlyReadsAndRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	id := seeded(t, path)
	before, _ := os.ReadFile(path)

	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if !db.ReadOnly() {
		t.Error("ReadOnly() = false")
	}
	r, err := db.ResolveRun(ctx, "latest")
	if err != nil || r.ID != id || r.Done != 2 {
		t.Fatalf("ResolveRun = %+v, %v", r, err)
	}
	ans, err := db.RunAnswers(ctx, id)
	if err != nil || len(ans) != 4 {
		t.Fatalf("RunAnswers = %d, %v", len(ans), err)
	}
	if _, err := db.SaveQuestionSet(ctx, "x", "x.yaml", []byte(`{"name":"x"}`)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("SaveQuestionSet on a read-only DB: %v, want ErrReadOnly", err)
	}
	if err := db.FinishRun(ctx, id, StatusFailed, "x"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("FinishRun on a read-only DB: %v, want ErrReadOnly", err)
	}
	// Past the store's own guard, SQLite refuses too.
	if _, err := db.sql.ExecContext(ctx, `UPDATE runs SET name = 'changed'`); err == nil {
		t.Error("a raw UPDATE through the read-only handle succeeded")
	}
	if _, err := db.sql.ExecContext(ctx, `PRAGMA query_only = 0`); err == nil {
		if _, err := db.sql.ExecContext(ctx, `UPDATE runs SET name = 'changed'`); err == nil {
			t.Error("the handle became writable after PRAGMA query_only = 0: mode=ro is missing")
		}
	}
	db.Close()
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("the database file changed under a read-only open")
	}
}

// TestOpenReadOnlyCreatesNothing: no file, no directory, a clear error.
func TestOpenReadOnlyCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-yet")
	path := filepath.Join(dir, "jevlab.db")
	_, err := OpenReadOnly(path)
	if !errors.Is(err, ErrNoDatabase) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "jevlab eval") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s", dir)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	if err := os.WriteFile(other, []byte("SQLite format 3\x00 but not really"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(other); err == nil {
		t.Error("a file that is not a database opened")
	}
}

// TestOpenReadOnlyUpgradesAnOldSchema: a database written by an older
// jevlab (without the lease columns) is migrated once through a writable
// open, then read read-only.
func TestOpenReadOnlyUpgradesAnOldSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	seeded(t, path)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, q := range []string{`DELETE FROM schema_migrations WHERE version = '20261203_0200_run_lease'`,
		`ALTER TABLE runs DROP COLUMN lease_owner`, `ALTER TABLE runs DROP COLUMN lease_until`} {
		if _, err := db.sql.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if rs, err := ro.Runs(ctx, RunFilter{}); err != nil || len(rs) != 1 {
		t.Fatalf("Runs = %d, %v", len(rs), err)
	}
}

// TestOpenReadOnlyOnAReadOnlyMount mounts a tmpfs, puts a database on it
// and remounts it read-only: Open fails, OpenReadOnly reads. It needs the
// right to mount (root in a container); elsewhere it is skipped.
func TestOpenReadOnlyOnAReadOnlyMount(t *testing.T) {
	mnt := mountTmpfs(t, "4m")
	path := filepath.Join(mnt, "jevlab.db")
	id := seeded(t, path)
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	if _, err := Open(path); err == nil {
		t.Fatal("a writable Open succeeded on a read-only mount: the test is not testing one")
	}
	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly on a read-only mount: %v", err)
	}
	defer db.Close()
	r, err := db.ResolveRun(context.Background(), "latest")
	if err != nil || r.ID != id {
		t.Fatalf("ResolveRun = %v, %v", r, err)
	}
	if _, err := db.RunAnswers(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

// mountTmpfs mounts a tmpfs of size for the test, or skips it.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	return mnt
}

// TestCorruptionStopsWritesAndSaysHowToRecover damages a database's pages:
// the error names the file, says how to recover (sqlite3 .recover, or a
// copy), and no later write touches the file. Damage everywhere but the
// header fails the open; damage to the last pages only (the answers) lets
// it open and fails the first write that reaches them.
func TestCorruptionStopsWritesAndSaysHowToRecover(t *testing.T) {
	for _, tc := range []struct {
		name string
		from func(size int) int // first damaged byte
	}{
		{"all pages", func(int) int { return 4096 }},
		{"last pages", func(size int) int { return size - 8*4096 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.db")
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			r := newRun(t, db, "big", "jev-latest")
			var items []ItemResult
			for i := 0; i < 2000; i++ {
				items = append(items, sampleItem(fmt.Sprintf("item-%06d-%s", i, strings.Repeat("x", 60)), i, 0, 0.5))
			}
			if _, err := db.SaveItems(ctx, r.ID, items); err != nil {
				t.Fatal(err)
			}
			db.Close()
			b, err := os.ReadFile(path)
			if err != nil || len(b) < 64*4096 {
				t.Fatalf("database is %d bytes (%v); want enough pages to damage", len(b), err)
			}
			for i := tc.from(len(b)); i < len(b); i++ {
				b[i] = 0xA5
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}

			var ce *CorruptError
			db, err = Open(path)
			opened := err == nil
			if opened {
				defer db.Close()
				more := []ItemResult{}
				for i := 0; i < 500; i++ {
					more = append(more, sampleItem(fmt.Sprintf("new-%06d", i), 5000+i, 0, 0.5))
				}
				_, err = db.SaveItems(ctx, r.ID, more)
				if err == nil {
					_, err = db.RunAnswers(ctx, r.ID)
					err = db.Check(err)
				}
			}
			if !errors.As(err, &ce) || !IsCorrupt(err) {
				t.Fatalf("opened %v, err = %v; want a CorruptError", opened, err)
			}
			msg := err.Error()
			for _, want := range []string{path, ".recover", "restore the file from a copy", "stopped writing"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q:\n%s", want, msg)
				}
			}
			if opened {
				before, _ := os.ReadFile(path)
				if err := db.FinishRun(ctx, r.ID, StatusFailed, "x"); !errors.As(err, &ce) {
					t.Errorf("a write after corruption: %v; want the CorruptError again", err)
				}
				after, _ := os.ReadFile(path)
				if !bytes.Equal(before, after) {
					t.Error("a write after corruption changed the file")
				}
			}
			if tc.name == "last pages" && !opened {
				t.Errorf("damage to the last pages only failed the open: the write path is not tested (%v)", err)
			}
		})
	}
}

// TestLeaseMakesADeadRunInterrupted: a run whose process is gone reads as
// interrupted at once on the same host; one whose lease lapsed reads as
// interrupted anywhere; a live lease keeps it running and refuses a second
// process's resume.
func TestLeaseMakesADeadRunInterrupted(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	hash, _ := db.SaveQuestionSet(ctx, "s", "s.yaml", []byte(`{"name":"s"}`))
	host, _ := os.Hostname()

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone, err := db.CreateRun(ctx, NewRun{SetHash: hash, LeaseOwner: host + ":" + strconv.Itoa(dead.Process.Pid) + ":t", LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if gone.Status != StatusInterrupted || !strings.Contains(gone.Reason, "is gone") {
		t.Errorf("run of a dead process: %s (%s); want interrupted", gone.Status, gone.Reason)
	}

	lapsed, err := db.CreateRun(ctx, NewRun{SetHash: hash, LeaseOwner: "elsewhere:1:t", LeaseTTL: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if lapsed.Status != StatusRunning {
		t.Errorf("fresh lease: %s", lapsed.Status)
	}
	time.Sleep(120 * time.Millisecond)
	if r, _ := db.Run(ctx, lapsed.ID); r.Status != StatusInterrupted || !strings.Contains(r.Reason, "no heartbeat") {
		t.Errorf("lapsed lease: %s (%s)", r.Status, r.Reason)
	}
	if rs, _ := db.Runs(ctx, RunFilter{Status: StatusInterrupted}); len(rs) != 2 {
		t.Errorf("runs --status interrupted = %d, want 2", len(rs))
	}

	me := NewLeaseOwner()
	live, err := db.CreateRun(ctx, NewRun{SetHash: hash, LeaseOwner: me, LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if rs, _ := db.Runs(ctx, RunFilter{Status: StatusRunning}); len(rs) != 1 || rs[0].ID != live.ID {
		t.Errorf("runs --status running = %v", rs)
	}
	if _, err := db.AcquireRun(ctx, live.ID, NewLeaseOwner(), time.Hour); !errors.Is(err, ErrRunBusy) {
		t.Errorf("resuming a run another owner holds: %v, want ErrRunBusy", err)
	}
	if err := db.RenewLease(ctx, live.ID, "someone-else:1:x", time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("renewing another's lease: %v", err)
	}
	// The dead process's run can be taken over; its old owner then can
	// neither renew nor finish it.
	if _, err := db.AcquireRun(ctx, gone.ID, me, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishLease(ctx, gone.ID, host+":"+strconv.Itoa(dead.Process.Pid)+":t", StatusFailed, "late"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("the old owner finished a run it lost: %v", err)
	}
	if err := db.FinishLease(ctx, gone.ID, me, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.Run(ctx, gone.ID); r.Status != StatusDone || r.LeaseOwner != "" {
		t.Errorf("finished run: %s lease %q", r.Status, r.LeaseOwner)
	}
}

// TestSaveItemsRetryReplacesAFailure: a failure stored for an item is
// replaced by a later answer; done stays, errors drop, and the spend of
// both attempts is kept on the item and the run.
func TestSaveItemsRetryReplacesAFailure(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "retry", "jev-latest")
	failed := ItemResult{ItemID: "i1", Seq: 0, ErrKind: "local_write", ErrMsg: "record: no space left on device",
		Usage: sampleItem("i1", 0, 0, 0).Usage, CostUSD: 0.0000042, Attempts: 1,
		Answers: []ItemAnswer{{QuestionID: "intent", ErrKind: "local_write"}, {QuestionID: "urgent", ErrKind: "local_write"}}}
	if _, err := db.SaveItems(ctx, r.ID, []ItemResult{failed}); err != nil {
		t.Fatal(err)
	}
	keys, err := db.FailedKeys(ctx, r.ID)
	if err != nil || keys[ItemKey{"i1", 0}] != "local_write" {
		t.Fatalf("FailedKeys = %v, %v", keys, err)
	}
	n, err := db.SaveItems(ctx, r.ID, []ItemResult{sampleItem("i1", 0, 0, 0.25)})
	if err != nil || n != 1 {
		t.Fatalf("retry SaveItems = %d, %v", n, err)
	}
	got, _ := db.Run(ctx, r.ID)
	if got.Done != 1 || got.Errors != 0 || got.InputTokens != 200 || got.CostUSD < 0.0000083 || got.CostUSD > 0.0000085 {
		t.Errorf("after retry: done=%d errors=%d tokens=%d cost=%g; want 1 0 200 8.4e-6", got.Done, got.Errors, got.InputTokens, got.CostUSD)
	}
	ans, _ := db.RunAnswers(ctx, r.ID)
	if len(ans) != 2 || ans[0].ErrKind != "" || ans[0].Answer == nil {
		t.Errorf("answers after retry: %+v", ans)
	}
	var itemCost float64
	db.ForEachItemResult(ctx, r.ID, func(it *ItemResult) error { itemCost += it.CostUSD; return nil })
	if itemCost != got.CostUSD {
		t.Errorf("item costs sum to %g, run says %g", itemCost, got.CostUSD)
	}
	// An answered item is never replaced.
	if n, _ := db.SaveItems(ctx, r.ID, []ItemResult{failed}); n != 0 {
		t.Errorf("a failure replaced an answer (n=%d)", n)
	}
}
