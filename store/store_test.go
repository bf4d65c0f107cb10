package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jevlab/jevlab/provider"
)

func openTemp(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "sub", "jevlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		name, jevlabDB, xdg, home, want string
	}{
		{"env wins", "/x/my.db", "/xdg", "/home/u", "/x/my.db"},
		{"xdg", "", "/xdg", "/home/u", "/xdg/jevlab/jevlab.db"},
		{"home", "", "", "/home/u", "/home/u/.local/share/jevlab/jevlab.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("JEVLAB_DB", tt.jevlabDB)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			if got := DefaultPath(); got != tt.want {
				t.Errorf("DefaultPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenModesAndPragmas(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "jevlab")
	path := filepath.Join(dir, "jevlab.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Errorf("db file mode = %o, want 600", m)
	}
	dst, _ := os.Stat(dir)
	if m := dst.Mode().Perm(); m != 0o700 {
		t.Errorf("dir mode = %o, want 700", m)
	}
	ctx := context.Background()
	var mode string
	var fk, busy, sync int
	db.sql.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	db.sql.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
	db.sql.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy)
	db.sql.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync)
	if mode != "wal" || fk != 1 || busy < 5000 || sync != 1 {
		t.Errorf("pragmas: journal_mode=%s foreign_keys=%d busy_timeout=%d synchronous=%d; want wal 1 >=5000 1(NORMAL)", mode, fk, busy, sync)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil || v != latestMigration(t) {
		t.Errorf("schema version = %q, %v", v, err)
	}
	// Reopening applies nothing twice.
	db.Close()
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var n int
	db2.sql.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&n)
	ents, _ := os.ReadDir("migrations")
	if n != len(ents) {
		t.Errorf("schema_migrations rows = %d, want one per migration (%d)", n, len(ents))
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\") succeeded")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := Open(filepath.Join(f, "x.db")); err == nil || !strings.Contains(err.Error(), "x.db") && !strings.Contains(err.Error(), "file") {
		t.Errorf("Open under a file: %v", err)
	}
}

// newRun saves a tiny set snapshot and creates a run.
func newRun(t testing.TB, db *DB, name, model string) *Run {
	t.Helper()
	ctx := context.Background()
	h, err := db.SaveQuestionSet(ctx, "set-"+name, "q.yaml", []byte(`{"name":"set-`+name+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.CreateRun(ctx, NewRun{Name: name, SetHash: h, SetName: "set-" + name, Model: model, ProviderKind: "stand-in", Total: 3})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sampleItem(id string, seq, rep int, p float64) ItemResult {
	lab := 1
	return ItemResult{ItemID: id, Seq: seq, Repeat: rep, LatencyMS: 12.5, Usage: provider.Usage{InputTokens: 100}, CostUSD: 0.0000042,
		Model: "jev-1.13.0", Attempts: 1,
		Answers: []ItemAnswer{
			{QuestionID: "intent", Decided: "b", LatencyMS: 12.5, Label: &lab, LabelText: "b",
				Answer: &provider.Answer{ID: "intent", Type: provider.Choice, Choice: "b", Confidence: 0.7, HasConfidence: true,
					Probs: []float64{0.30000000000000004, 0.7}, Raw: json.RawMessage(`{"type":"choice","choice":"b","x":1}`),
					Provenance: provider.Provenance{Source: provider.SourceLive, Model: "jev-1.13.0", RecordedAt: time.Date(2026, 9, 17, 9, 28, 3, 0, time.UTC)}}},
			{QuestionID: "urgent", Decided: "0.25", LatencyMS: 12.5,
				Answer: &provider.Answer{ID: "urgent", Type: provider.Noul, P: p, Provenance: provider.Provenance{Source: provider.SourceCache, Model: "jev-1.13.0", Origin: "f.jsonl"}}},
		}}
}

func TestSaveItemsRoundTripAndIdempotent(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "a", "jev-latest")
	failed := ItemResult{ItemID: "i2", Seq: 1, ErrKind: "rate_limited", ErrMsg: "rate_limited (HTTP 429) after 5 attempts",
		Answers: []ItemAnswer{{QuestionID: "intent", ErrKind: "rate_limited", ErrMsg: "429"}, {QuestionID: "urgent", ErrKind: "rate_limited", ErrMsg: "429"}}}
	n, err := db.SaveItems(ctx, r.ID, []ItemResult{sampleItem("i1", 0, 0, 0.25), failed})
	if err != nil || n != 2 {
		t.Fatalf("SaveItems = %d, %v; want 2", n, err)
	}
	// The same answered item again (a resume that re-saves) is skipped;
	// the failure saved again replaces the stored one (a retry that failed
	// again, spending nothing here); plus one new.
	n, err = db.SaveItems(ctx, r.ID, []ItemResult{sampleItem("i1", 0, 0, 0.99), failed, sampleItem("i3", 2, 0, 0.5)})
	if err != nil || n != 2 {
		t.Fatalf("second SaveItems = %d, %v; want 2 (i2 replaced, i3 new)", n, err)
	}
	got, err := db.Run(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Done != 3 || got.Errors != 1 || got.InputTokens != 200 || fmt.Sprintf("%.7f", got.CostUSD) != "0.0000084" {
		t.Errorf("totals: done=%d errors=%d tokens=%d cost=%g; want 3 1 200 8.4e-6", got.Done, got.Errors, got.InputTokens, got.CostUSD)
	}
	if len(got.Models) != 1 || got.Models[0] != "jev-1.13.0" {
		t.Errorf("models = %v", got.Models)
	}
	ans, err := db.RunAnswers(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ans) != 6 {
		t.Fatalf("answers = %d, want 6", len(ans))
	}
	a := ans[0]
	if a.ItemID != "i1" || a.QuestionID != "intent" || a.Answer == nil || a.Answer.Choice != "b" || !a.Answer.HasConfidence ||
		a.Answer.Confidence != 0.7 || len(a.Answer.Probs) != 2 || a.Answer.Probs[0] != 0.30000000000000004 || *a.Label != 1 ||
		string(a.Answer.Raw) != `{"type":"choice","choice":"b","x":1}` || a.Answer.Provenance.RecordedAt.Year() != 2026 {
		t.Errorf("first answer = %+v / %+v", a, a.Answer)
	}
	u := ans[1]
	if u.Answer == nil || u.Answer.P != 0.25 || u.Answer.HasConfidence || u.Label != nil || u.Answer.Provenance.Origin != "f.jsonl" {
		t.Errorf("noul answer kept the first save: %+v / %+v", u, u.Answer)
	}
	if e := ans[2]; e.ItemID != "i2" || e.Answer != nil || e.ErrKind != "rate_limited" {
		t.Errorf("error row = %+v", e)
	}
	done, err := db.DoneItems(ctx, r.ID)
	if err != nil || len(done) != 3 || !done[ItemKey{"i2", 0}] || done[ItemKey{"i2", 1}] {
		t.Errorf("DoneItems = %v, %v", done, err)
	}
	fails, err := db.FailedItems(ctx, r.ID, 5)
	if err != nil || len(fails) != 1 || fails[0].ItemID != "i2" || fails[0].ErrKind != "rate_limited" || !strings.Contains(fails[0].ErrMsg, "429") {
		t.Errorf("FailedItems = %+v, %v", fails, err)
	}
	var items []string
	db.ForEachItemResult(ctx, r.ID, func(it *ItemResult) error { items = append(items, it.ItemID+":"+it.ErrKind); return nil })
	if strings.Join(items, ",") != "i1:,i2:rate_limited,i3:" {
		t.Errorf("item results = %v", items)
	}
	if _, err := db.SaveItems(ctx, "r-missing", []ItemResult{sampleItem("x", 0, 0, 0.1)}); err == nil {
		t.Error("SaveItems on a missing run succeeded (foreign keys off?)")
	}
}

func TestResolveRun(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	if _, err := db.ResolveRun(ctx, "latest"); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest on empty db: %v", err)
	}
	var runs []*Run
	for i := 0; i < 3; i++ {
		runs = append(runs, newRun(t, db, fmt.Sprint(i), "jev-latest"))
		time.Sleep(3 * time.Millisecond)
	}
	// Force ids sharing a prefix to test ambiguity.
	db.sql.Exec(`UPDATE runs SET id = 'r-20261202-000000-aaaa1' WHERE id = ?`, runs[0].ID)
	db.sql.Exec(`UPDATE runs SET id = 'r-20261202-000000-aaab2' WHERE id = ?`, runs[1].ID)
	tests := []struct {
		ref, want, errHas string
	}{
		{"latest", runs[2].ID, ""},
		{"latest~1", "r-20261202-000000-aaab2", ""},
		{"latest~2", "r-20261202-000000-aaaa1", ""},
		{"latest~3", "", "fewer than 4"},
		{"latest~x", "", "latest~N"},
		{runs[2].ID, runs[2].ID, ""},
		{"r-20261202-000000-aaab", "r-20261202-000000-aaab2", ""},
		{"r-20261202-000000-aaa", "", "ambiguous"},
		{"r-nope", "", "no run"},
		{"", "", "no run given"},
	}
	for _, tt := range tests {
		r, err := db.ResolveRun(ctx, tt.ref)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("ResolveRun(%q) err = %v, want containing %q", tt.ref, err, tt.errHas)
			}
			continue
		}
		if err != nil || r.ID != tt.want {
			t.Errorf("ResolveRun(%q) = %v, %v; want %s", tt.ref, r, err, tt.want)
		}
	}
}

func TestRunsFilterAndStatus(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	a := newRun(t, db, "a", "jev-latest")
	b := newRun(t, db, "b", "jev-1.12.0")
	db.SaveItems(ctx, a.ID, []ItemResult{sampleItem("i", 0, 0, 0.1)})
	if err := db.FinishRun(ctx, a.ID, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, b.ID, StatusInterrupted, "max cost $0.01 reached"); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, "r-none", StatusDone, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun missing: %v", err)
	}
	if err := db.FinishRun(ctx, a.ID, "bogus", ""); err == nil {
		t.Error("bogus status accepted")
	}
	tests := []struct {
		f    RunFilter
		want []string
	}{
		{RunFilter{}, []string{b.ID, a.ID}},
		{RunFilter{SetName: "set-a"}, []string{a.ID}},
		{RunFilter{Model: "jev-1.13.0"}, []string{a.ID}}, // resolved
		{RunFilter{Model: "jev-1.12.0"}, []string{b.ID}}, // requested
		{RunFilter{Status: StatusInterrupted}, []string{b.ID}},
		{RunFilter{Limit: 1}, []string{b.ID}},
	}
	for _, tt := range tests {
		rs, err := db.Runs(ctx, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		if strings.Join(ids, " ") != strings.Join(tt.want, " ") {
			t.Errorf("Runs(%+v) = %v, want %v", tt.f, ids, tt.want)
		}
	}
	got, _ := db.Run(ctx, b.ID)
	if got.Status != StatusInterrupted || got.Reason == "" || got.FinishedAt.IsZero() {
		t.Errorf("b = %+v", got)
	}
	db.MarkRun(ctx, b.ID, StatusRunning, "")
	got, _ = db.Run(ctx, b.ID)
	if got.Status != StatusRunning || !got.FinishedAt.IsZero() {
		t.Errorf("after MarkRun running: %+v", got)
	}
}

func TestSnapshots(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	h1, err := db.SaveQuestionSet(ctx, "s", "a.yaml", []byte(`{"q":"Is it urgent?"}`))
	if err != nil {
		t.Fatal(err)
	}
	h1b, _ := db.SaveQuestionSet(ctx, "s", "b.yaml", []byte(`{"q":"Is it urgent?"}`))
	h2, _ := db.SaveQuestionSet(ctx, "s", "a.yaml", []byte(`{"q":"Is this urgent?"}`))
	if h1 != h1b || h1 == h2 {
		t.Errorf("hashes: same body %s vs %s; reworded %s", h1, h1b, h2)
	}
	// sha256 of the body, hand-checked with sha256sum.
	if want := "bcc19c540a434c7f4a1b88b847334111955ac58e0056bfd7dc63d0f307d5f5a7"; h1 != want {
		t.Errorf("hash = %s, want %s (sha256sum of the body)", h1, want)
	}
	if _, err := db.SaveQuestionSet(ctx, "s", "", []byte(`{bad`)); err == nil {
		t.Error("invalid JSON accepted")
	}
	snap, err := db.QuestionSet(ctx, h1)
	if err != nil || snap.Path != "a.yaml" || string(snap.Body) != `{"q":"Is it urgent?"}` {
		t.Errorf("snapshot = %+v, %v", snap, err)
	}
	items := func(yield func(DatasetItem) error) error {
		for i := 0; i < 5000; i++ {
			if err := yield(DatasetItem{Seq: i, ID: fmt.Sprint("id", i), State: json.RawMessage(`"text"`), Labels: json.RawMessage(`{"q":{"index":1}}`)}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := db.SaveDataset(ctx, "dh", "d.jsonl", items); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveDataset(ctx, "dh", "d.jsonl", func(func(DatasetItem) error) error { t.Error("re-saved"); return nil }); err != nil {
		t.Fatal(err)
	}
	n := 0
	db.ForEachDatasetItem(ctx, "dh", func(it DatasetItem) error {
		if it.Seq != n || it.ID != fmt.Sprint("id", n) {
			t.Fatalf("item %d = %+v", n, it)
		}
		n++
		return nil
	})
	if n != 5000 {
		t.Errorf("items = %d", n)
	}
	// A failing stream leaves nothing behind.
	boom := errors.New("boom")
	err = db.SaveDataset(ctx, "bad", "x.jsonl", func(yield func(DatasetItem) error) error {
		for i := 0; i < 2500; i++ {
			yield(DatasetItem{Seq: i, ID: fmt.Sprint(i), State: json.RawMessage(`1`)})
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("SaveDataset error = %v", err)
	}
	if ok, _ := db.HasDataset(ctx, "bad"); ok {
		t.Error("half dataset left behind")
	}
}

func TestExchanges(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "x", "jev-latest")
	for i := 0; i < 3; i++ {
		c := ctx
		if i == 1 {
			c = WithRunID(ctx, r.ID)
		}
		ex := provider.Exchange{ID: fmt.Sprint(i), Request: json.RawMessage(`{"model":"m","state":"s"}`), Response: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)),
			LatencyMS: float64(i), RecordedAt: "2026-09-17T09:28:03Z"}
		if i == 2 {
			ex.Uncertain = []string{"request"}
		}
		if err := db.SaveExchange(c, ex); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := db.ForEachExchange(ctx, func(ex provider.Exchange) error {
		got = append(got, fmt.Sprintf("%s %s %g %v", ex.ID, ex.Response, ex.LatencyMS, ex.Uncertain))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `0 {"n":0} 0 []|1 {"n":1} 1 []|2 {"n":2} 2 [request]`
	if strings.Join(got, "|") != want {
		t.Errorf("exchanges = %q, want %q", strings.Join(got, "|"), want)
	}
	if n, _ := db.ExchangeCount(ctx, r.ID); n != 1 {
		t.Errorf("run exchanges = %d, want 1", n)
	}
	stop := errors.New("stop")
	if err := db.ForEachExchange(ctx, func(provider.Exchange) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error not returned: %v", err)
	}
}

type providerExchange = provider.Exchange

func sampleExchange(i int) provider.Exchange {
	return provider.Exchange{Request: json.RawMessage(`{"model":"m","state":"s","questions":{}}`), Response: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
}

func TestMigrationsApplyInOrderAndRollBack(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	fsys := fstest.MapFS{
		// Listed out of order on purpose: the second needs the first.
		"migrations/20270101_0002_more.sql":  {Data: []byte(`ALTER TABLE extra ADD COLUMN b TEXT;`)},
		"migrations/20270101_0001_extra.sql": {Data: []byte(`CREATE TABLE extra (a INTEGER);`)},
	}
	if err := db.migrate(ctx, fsys, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`INSERT INTO extra (a, b) VALUES (1, 'x')`); err != nil {
		t.Errorf("migrated table: %v", err)
	}
	if v, _ := db.SchemaVersion(ctx); v != "20270101_0002_more" {
		t.Errorf("version = %s", v)
	}
	// Applying again is a no-op.
	if err := db.migrate(ctx, fsys, nil, nil); err != nil {
		t.Errorf("re-migrate: %v", err)
	}
	bad := fstest.MapFS{"migrations/20270102_0001_bad.sql": {Data: []byte(`CREATE TABLE half (a INTEGER); SELECT * FROM no_such_table;`)}}
	err := db.migrate(ctx, bad, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "20270102_0001_bad") {
		t.Fatalf("bad migration: %v", err)
	}
	var n int
	db.sql.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'half'`).Scan(&n)
	if n != 0 {
		t.Error("a failed migration left its table behind")
	}
	if v, _ := db.SchemaVersion(ctx); v != "20270101_0002_more" {
		t.Errorf("version after failure = %s", v)
	}
}

func TestQuestionSetVersions(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	h1, _ := db.SaveQuestionSet(ctx, "triage", "t.yaml", []byte(`{"v":1}`))
	time.Sleep(2 * time.Millisecond)
	h2, _ := db.SaveQuestionSet(ctx, "triage", "t.yaml", []byte(`{"v":2}`))
	db.SaveQuestionSet(ctx, "other", "o.yaml", []byte(`{"v":3}`))
	vs, err := db.QuestionSetVersions(ctx, "triage")
	if err != nil || len(vs) != 2 || vs[0].Hash != h2 || vs[1].Hash != h1 || string(vs[1].Body) != `{"v":1}` {
		t.Errorf("versions = %+v, %v", vs, err)
	}
}

func TestOpenMemory(t *testing.T) {
	db, err := Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(t, db, "m", "jev-latest")
	// Another pooled connection sees the same database.
	errc := make(chan error, 1)
	go func() {
		_, err := db.Run(context.Background(), r.ID)
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Errorf("second connection: %v", err)
	}
	path := db.Path()
	db.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("temporary database %s left behind: %v", path, err)
	}
}

// latestMigration is the name of the newest shipped migration file, the
// schema version of a database opened by this build.
func latestMigration(t *testing.T) string {
	t.Helper()
	ents, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, e := range ents {
		if n := strings.TrimSuffix(e.Name(), ".sql"); n != e.Name() && n > last {
			last = n
		}
	}
	return last
}
