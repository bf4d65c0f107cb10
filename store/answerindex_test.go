package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// noulQ is a one-question request body asking question id "q" (a noul with
// the given instructions) of model about state "s".
func noulReq(model, id, instructions string) string {
	return fmt.Sprintf(`{"model":%q,"state":"s","questions":{%q:{"type":"noul","instructions":%q}}}`, model, id, instructions)
}

func noulResp(model, id string, p string) string {
	return fmt.Sprintf(`{"model":%q,"answers":{%q:{"type":"noul","noul":%s}},"usage":{"input_tokens":10}}`, model, id, p)
}

// keyOf is the key of the noul question "instructions" asked of model about
// state "s".
func keyOf(model, instructions string) provider.AnswerKey {
	q := provider.Question{Type: provider.Noul, Instructions: provider.String(instructions)}
	return provider.KeyFor(model, []byte(`"s"`), &q)
}

func ex(req, resp, at string) provider.Exchange {
	return provider.Exchange{Request: json.RawMessage(req), Response: json.RawMessage(resp), RecordedAt: at}
}

func TestLookupAnswersPrecedenceAndFilter(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "x", "jev-latest")
	saves := []struct {
		ctx context.Context
		ex  provider.Exchange
	}{
		// "a": undated, then dated — the dated one wins.
		{ctx, ex(noulReq("m", "a1", "A?"), noulResp("jev-1", "a1", "0.1"), "")},
		{ctx, ex(noulReq("m", "a2", "A?"), noulResp("jev-1", "a2", "0.2"), "2026-01-01T00:00:00Z")},
		// "b": same time twice — the first saved wins; a later stand-in answer
		// wins unless filtered, then the older real one is found.
		{ctx, ex(noulReq("m", "b", "B?"), noulResp("jev-1", "b", "0.3"), "2026-02-01T00:00:00Z")},
		{ctx, ex(noulReq("m", "b", "B?"), noulResp("jev-1", "b", "0.4"), "2026-02-01T00:00:00Z")},
		{WithRunID(ctx, r.ID), ex(noulReq("m", "b", "B?"), noulResp("standin-synthetic-1", "b", "0.5"), "2026-03-01T00:00:00Z")},
		// "c": only a stand-in answer. An offset time compares as an
		// instant: 01:00+02:00 is before 00:00Z.
		{ctx, ex(noulReq("m", "c", "C?"), noulResp("standin-synthetic-1", "c", "0.6"), "2026-04-01T00:00:00Z")},
		{ctx, ex(noulReq("m", "c", "C?"), noulResp("standin-synthetic-1", "c", "0.7"), "2026-04-01T01:00:00+02:00")},
		// An empty requested model is the default model.
		{ctx, ex(noulReq("", "d", "D?"), noulResp("jev-1", "d", "0.8"), "")},
		// Undecodable exchanges are kept but answer nothing.
		{ctx, ex(`{"model":`, noulResp("jev-1", "e", "0.9"), "")},
		{ctx, ex(noulReq("m", "e", "E?"), `{"answers":[]}`, "")},
	}
	for i, s := range saves {
		if err := db.SaveExchange(s.ctx, s.ex); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	keys := []provider.AnswerKey{keyOf("m", "A?"), keyOf("m", "B?"), keyOf("m", "C?"), keyOf(provider.DefaultModel, "D?"),
		keyOf("m", "E?"), keyOf("other", "A?"), keyOf("m", "B?")}
	noStandIn := func(m string) bool { return !strings.HasPrefix(m, "standin-") }
	type want struct{ raw, model, origin, at string }
	tests := []struct {
		name   string
		accept func(string) bool
		want   map[provider.AnswerKey]want
	}{
		{"all", nil, map[provider.AnswerKey]want{
			keys[0]: {`{"type":"noul","noul":0.2}`, "jev-1", "database exchange 2", "2026-01-01T00:00:00Z"},
			keys[1]: {`{"type":"noul","noul":0.5}`, "standin-synthetic-1", "database exchange 5 (run " + r.ID + ")", "2026-03-01T00:00:00Z"},
			keys[2]: {`{"type":"noul","noul":0.6}`, "standin-synthetic-1", "database exchange 6", "2026-04-01T00:00:00Z"},
			keys[3]: {`{"type":"noul","noul":0.8}`, "jev-1", "database exchange 8", ""},
		}},
		{"no stand-in", noStandIn, map[provider.AnswerKey]want{
			keys[0]: {`{"type":"noul","noul":0.2}`, "jev-1", "database exchange 2", "2026-01-01T00:00:00Z"},
			keys[1]: {`{"type":"noul","noul":0.3}`, "jev-1", "database exchange 3", "2026-02-01T00:00:00Z"},
			keys[3]: {`{"type":"noul","noul":0.8}`, "jev-1", "database exchange 8", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.LookupAnswers(ctx, keys, tt.accept)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("%d answers, want %d", len(got), len(tt.want))
			}
			for k, w := range tt.want {
				g, ok := got[k]
				if !ok {
					t.Errorf("%s: missing, want %s", k, w.raw)
					continue
				}
				at := ""
				if !g.RecordedAt.IsZero() {
					at = g.RecordedAt.UTC().Format(time.RFC3339)
				}
				if string(g.Raw) != w.raw || g.Model != w.model || g.Origin != w.origin || at != w.at {
					t.Errorf("%s: got %s %s %q %s, want %s %s %q %s", k, g.Raw, g.Model, g.Origin, at, w.raw, w.model, w.origin, w.at)
				}
			}
		})
	}
	if got, err := db.LookupAnswers(ctx, nil, nil); err != nil || len(got) != 0 {
		t.Errorf("no keys: %v %v", got, err)
	}
}

func TestLookupAnswersBatches(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	// 1203 keys, every third stored: three full batches and a short one,
	// with hits in each.
	const n = 1203
	var exs []provider.Exchange
	var keys []provider.AnswerKey
	for i := 0; i < n; i++ {
		ins := fmt.Sprintf("Q%d?", i)
		keys = append(keys, keyOf("m", ins))
		if i%3 == 0 {
			exs = append(exs, ex(noulReq("m", "q", ins), noulResp("jev-1", "q", fmt.Sprintf("0.%04d", i)), ""))
		}
	}
	if err := db.SaveExchanges(ctx, exs); err != nil {
		t.Fatal(err)
	}
	got, err := db.LookupAnswers(ctx, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 401 {
		t.Fatalf("%d answers, want 401", len(got))
	}
	for i := 0; i < n; i += 3 {
		want := fmt.Sprintf(`{"type":"noul","noul":0.%04d}`, i)
		if a := got[keys[i]]; string(a.Raw) != want {
			t.Fatalf("key %d: %s, want %s", i, a.Raw, want)
		}
	}
	if _, err := db.LookupAnswers(canceled(), keys, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled lookup: %v", err)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestAnswerSpans(t *testing.T) {
	tests := []struct {
		name, body, model string
		want              map[string]string
		err               string
	}{
		{"plain", `{"model":"m","answers":{"a":{"x":1},"b":[1, 2]}}`, "m", map[string]string{"a": `{"x":1}`, "b": `[1, 2]`}, ""},
		{"spaces and escapes", "{ \"answers\" : {\n \"a\\u00e9\" :\t{\"s\":\"}\\\"\"} } , \"model\" : \"x\" }", "x",
			map[string]string{"aé": `{"s":"}\""}`}, ""},
		{"repeated id keeps the last", `{"answers":{"a":1,"a":{"v":2}}}`, "", map[string]string{"a": `{"v":2}`}, ""},
		{"null answers and model", `{"model":null,"answers":null,"usage":{"input_tokens":3}}`, "", map[string]string{}, ""},
		{"answers not an object", `{"answers":[]}`, "", nil, "not an object"},
		{"model not a string", `{"model":1}`, "", nil, "model"},
		{"torn", `{"answers":{"a":{"x":`, "", nil, "EOF"},
		{"not an object", `[]`, "", nil, "want"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model, spans, err := answerSpans([]byte(tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if model != tt.model || len(spans) != len(tt.want) {
				t.Fatalf("model %q, %d spans", model, len(spans))
			}
			for id, w := range tt.want {
				sp := spans[id]
				if sp.raw != nil || tt.body[sp.off:sp.off+sp.n] != w {
					t.Errorf("%s: span %+v = %q, want %q", id, sp, tt.body[sp.off:sp.off+sp.n], w)
				}
			}
		})
	}
}

// preIndexDB creates a database at path with only the first migration
// applied (as jevlab before the answer index left it) and exchanges
// inserted the way it stored them.
func preIndexDB(t testing.TB, path string, exs []provider.Exchange) {
	t.Helper()
	sdb, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	old := &DB{sql: sdb, path: path, stmts: map[string]*sql.Stmt{}}
	defer old.Close()
	body, err := fs.ReadFile(migrations, "migrations/20261202_0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := old.migrate(context.Background(), fstest.MapFS{"migrations/20261202_0001_init.sql": {Data: body}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	tx, err := sdb.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		if _, err := tx.Exec(`INSERT INTO exchanges (ext_id, request, response, recorded_at) VALUES (?,?,?,?)`,
			ex.ID, []byte(ex.Request), []byte(ex.Response), ex.RecordedAt); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestAnswerIndexBackfilledByMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	var exs []provider.Exchange
	// 600 exchanges (more than one backfill batch), each answering two
	// questions, then a newer answer to question 0's first key and a
	// broken exchange.
	for i := 0; i < 600; i++ {
		req := fmt.Sprintf(`{"model":"m","state":"s","questions":{"x":{"type":"noul","instructions":"X%d?"},"y":{"type":"noul","instructions":"Y%d?"}}}`, i, i)
		resp := `{"model":"jev-1","answers":{"y":{"type":"noul","noul":0.2},"x":{"type":"noul", "noul":0.1}}}`
		exs = append(exs, ex(req, resp, "2026-05-01T00:00:00Z"))
	}
	exs = append(exs, ex(noulReq("m", "z", "X0?"), noulResp("jev-2", "z", "0.9"), "2026-06-01T00:00:00.5Z"))
	exs = append(exs, ex(`{"model":"m"`, `{}`, ""))
	preIndexDB(t, path, exs)

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if v, _ := db.SchemaVersion(ctx); v != latestMigration(t) {
		t.Fatalf("schema version %s", v)
	}
	var rows int
	if err := db.sql.QueryRow(`SELECT count(*) FROM answer_index`).Scan(&rows); err != nil || rows != 1201 {
		t.Fatalf("answer_index has %d rows (%v), want 600×2 + 1", rows, err)
	}
	keys := []provider.AnswerKey{keyOf("m", "X0?"), keyOf("m", "Y0?"), keyOf("m", "X599?"), keyOf("m", "Y599?"), keyOf("m", "X600?")}
	got, err := db.LookupAnswers(ctx, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"noul","noul":0.9} jev-2 database exchange 601 2026-06-01T00:00:00.5Z`,
		`{"type":"noul","noul":0.2} jev-1 database exchange 1 2026-05-01T00:00:00Z`,
		`{"type":"noul", "noul":0.1} jev-1 database exchange 600 2026-05-01T00:00:00Z`,
		`{"type":"noul","noul":0.2} jev-1 database exchange 600 2026-05-01T00:00:00Z`,
		`<nil>`,
	}
	for i, k := range keys {
		s := "<nil>"
		if a, ok := got[k]; ok {
			s = fmt.Sprintf("%s %s %s %s", a.Raw, a.Model, a.Origin, a.RecordedAt.Format(time.RFC3339Nano))
		}
		if s != want[i] {
			t.Errorf("key %d: %s, want %s", i, s, want[i])
		}
	}
	// Exchanges saved after the migration are indexed as they are saved;
	// reopening does not backfill again.
	if err := db.SaveExchange(ctx, ex(noulReq("m", "n", "X600?"), noulResp("jev-2", "n", "0.3"), "")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.sql.QueryRow(`SELECT count(*) FROM answer_index`).Scan(&rows); err != nil || rows != 1202 {
		t.Fatalf("answer_index has %d rows after reopening (%v), want 1202", rows, err)
	}
	got, err = db.LookupAnswers(ctx, keys[4:], nil)
	if a := got[keys[4]]; err != nil || string(a.Raw) != `{"type":"noul","noul":0.3}` || a.Origin != "database exchange 603" {
		t.Fatalf("new exchange: %+v %v", a, err)
	}
}

func TestMigrationGoSteps(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	fsys := fstest.MapFS{"migrations/20270301_0001_t.sql": {Data: []byte(`CREATE TABLE t (a INTEGER);`)}}
	// A step runs after its SQL, in its transaction: a failure rolls back
	// both.
	boom := errors.New("boom")
	err := db.migrate(ctx, fsys, map[string]migrationStep{"20270301_0001_t": func(ctx context.Context, tx *sql.Tx, _ *progress) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
			return err
		}
		return boom
	}}, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "20270301_0001_t") {
		t.Fatalf("failing step: %v", err)
	}
	var n int
	if db.sql.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 't'`).Scan(&n); n != 0 {
		t.Fatal("a failed step left its migration's table behind")
	}
	ran := 0
	step := func(ctx context.Context, tx *sql.Tx, _ *progress) error {
		ran++
		_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (7)`)
		return err
	}
	for i := 0; i < 2; i++ {
		if err := db.migrate(ctx, fsys, map[string]migrationStep{"20270301_0001_t": step}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if db.sql.QueryRow(`SELECT sum(a) FROM t`).Scan(&n); n != 7 || ran != 1 {
		t.Fatalf("step ran %d times, sum %d; want once, 7", ran, n)
	}
	err = db.migrate(ctx, fsys, map[string]migrationStep{"20270301_0002_typo": step}, nil)
	if err == nil || !strings.Contains(err.Error(), "20270301_0002_typo.sql") {
		t.Fatalf("step without a file: %v", err)
	}
}

// A database indexed before keys compared JSON strings by value is
// re-keyed on open: an exchange recorded with \u escapes (Python's
// json.dumps) is found by the key of its UTF-8 spelling, and a recorded_at
// in the far future no longer outranks a real recording.
func TestAnswerIndexRekeyedByMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	escaped := ex(`{"model":"m","state":"caf\u00e9","questions":{"x":{"type":"noul","instructions":"Ok?"}}}`,
		`{"model":"jev-1","answers":{"x":{"type":"noul","noul":0.7}}}`, "2026-05-01T00:00:00Z")
	future := ex(noulReq("m", "x", "F?"), noulResp("jev-9", "x", "0.1"), "2999-01-01T00:00:00Z")
	real := ex(noulReq("m", "x", "F?"), noulResp("jev-1", "x", "0.8"), "2026-05-01T00:00:00Z")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, e := range []provider.Exchange{escaped, future, real} {
		if err := db.SaveExchange(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// Make the index what an older jevlab wrote: keys by spelling, the
	// future timestamp believed, and the migration not yet applied.
	if _, err := db.sql.Exec(`UPDATE answer_index SET key = zeroblob(32) WHERE exchange_id = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`UPDATE exchanges SET recorded_ns = 32503680000000000000 / 1000 WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`DELETE FROM schema_migrations WHERE version = '20261203_0100_rekey_answer_index'`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := &provider.Question{Type: provider.Noul, Instructions: json.RawMessage(`"Ok?"`)}
	key := provider.KeyFor("m", []byte(`"café"`), q)
	got, err := db.LookupAnswers(ctx, []provider.AnswerKey{key, keyOf("m", "F?")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := got[key]; !ok || a.Model != "jev-1" {
		t.Fatalf("escaped recording not found by its value: %+v", got)
	}
	if a := got[keyOf("m", "F?")]; a.Model != "jev-1" {
		t.Fatalf("future recorded_at still wins: %s", a.Model)
	}
}
