package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

// recordedExchanges reads every real recording in the shared testdata as
// exchanges, their request and response bytes exactly as in the file.
func recordedExchanges(t *testing.T) []provider.Exchange {
	t.Helper()
	var out []provider.Exchange
	for _, name := range []string{"banking77", "citation-support", "demo-triage", "entity-merge"} {
		f, err := os.Open(filepath.Join(testutil.Testdata(t, name), "recorded.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var l struct {
				ID         string          `json:"id"`
				Request    json.RawMessage `json:"request"`
				Response   json.RawMessage `json:"response"`
				RecordedAt string          `json:"recorded_at"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, provider.Exchange{ID: l.ID, Request: l.Request, Response: l.Response, RecordedAt: l.RecordedAt, LatencyMS: 3.25})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatal("no recorded exchanges")
	}
	return out
}

func TestSplitJoinRequestExact(t *testing.T) {
	q := `{"x":{"type":"noul","instructions":"Is it \u00e9 urgent? ` + strings.Repeat("x", 80) + `"}}`
	for _, req := range []string{
		`{"model":"m","state":"s","questions":` + q + `}`,
		`{"questions":` + q + `, "model":"m" ,"state":{"a":1}}`, // not at the end, spaced
		`{"model":"m","state":` + q + `,"questions":` + q + `}`, // the same bytes twice
		`{"model":"m","state":"s","questions":{"x":{}}}`,        // too short to split
		`{"model":"m"`, // does not decode
	} {
		sp := splitOf([]byte(req), requestQuestions([]byte(req)))
		back, err := joinRequest(sp.rest, int64(sp.off), sp.body)
		if err != nil || string(back) != req {
			t.Errorf("%s: join = %q, %v", req, back, err)
		}
		if strings.Contains(req, q) && sp.hash == nil {
			t.Errorf("%s: not split", req)
		}
	}
	if _, err := joinRequest([]byte(`{}`), 3, []byte(`x`)); err == nil {
		t.Error("an offset past the rest joined")
	}
}

func TestExchangesRoundTripBitIdentical(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	exs := recordedExchanges(t)
	if err := db.SaveExchanges(WithRunID(ctx, ""), exs); err != nil {
		t.Fatal(err)
	}
	got := readExchanges(t, db)
	if len(got) != len(exs) {
		t.Fatalf("%d exchanges back, want %d", len(got), len(exs))
	}
	for i := range exs {
		if !bytes.Equal(got[i].Request, exs[i].Request) || !bytes.Equal(got[i].Response, exs[i].Response) {
			t.Fatalf("exchange %d (%s) did not come back identical", i, exs[i].ID)
		}
	}
	// Each recording asks one questions object, so a handful of bodies
	// stand for every request.
	var bodies int
	if err := db.sql.QueryRow(`SELECT count(*) FROM bodies`).Scan(&bodies); err != nil {
		t.Fatal(err)
	}
	if bodies == 0 || bodies >= len(exs)/4 {
		t.Errorf("%d bodies for %d exchanges", bodies, len(exs))
	}
	// A missing body is an error naming the exchange, never a different
	// request.
	if _, err := db.sql.Exec(`DELETE FROM bodies`); err != nil {
		t.Fatal(err)
	}
	err := db.ForEachExchange(ctx, func(provider.Exchange) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing body: %v", err)
	}
}

func readExchanges(t *testing.T, db *DB) []provider.Exchange {
	t.Helper()
	var out []provider.Exchange
	if err := db.ForEachExchange(context.Background(), func(ex provider.Exchange) error {
		out = append(out, ex)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// currentSchemaDB creates a database at path with every shipped migration
// but 20261203_0300, the layout exchanges had before question bodies were
// stored once, and returns it open. (20261203_0310 is kept: SaveItems, which
// the test uses to store answers, drops summaries from its table.)
func currentSchemaDB(t *testing.T, path string) *DB {
	t.Helper()
	sdb, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_txlock=immediate&_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	db := &DB{sql: sdb, path: path, stmts: map[string]*sql.Stmt{}}
	ents, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "20261203_0300") {
			continue
		}
		b, err := fs.ReadFile(migrations, "migrations/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		fsys["migrations/"+e.Name()] = &fstest.MapFile{Data: b}
	}
	if err := db.migrate(context.Background(), fsys, map[string]migrationStep{
		"20261202_0002_answer_index": backfillAnswerIndex, "20261203_0100_rekey_answer_index": backfillAnswerIndex,
		"20261203_0900_compact_layout": compactLayout}, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestMigrationStoresBodiesOnceLosslessly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ctx := context.Background()
	old := currentSchemaDB(t, path)
	exs := recordedExchanges(t)
	// Exchanges as the old schema stored them, with their index rows, then
	// a run with answers.
	var ix indexer
	for i, ex := range exs {
		rs, _ := ix.rows(exs[i])
		model, ns := exchangeModel(ex, rs)
		res, err := old.sql.Exec(`INSERT INTO exchanges (ext_id, request, response, latency_ms, recorded_at, model, recorded_ns) VALUES (?,?,?,?,?,?,?)`,
			ex.ID, []byte(ex.Request), []byte(ex.Response), ex.LatencyMS, ex.RecordedAt, model, ns)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		for j, r := range rs {
			if _, err := old.sql.Exec(insAnswerIndexSQL, r.key[:], id, j, r.off, r.n, r.raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := newRun(t, old, "before", "jev-latest")
	var items []ItemResult
	for i := 0; i < 40; i++ {
		items = append(items, sampleItem(fmt.Sprint("i", i), i, 0, float64(i)/40))
	}
	if _, err := old.SaveItems(ctx, run.ID, items); err != nil {
		t.Fatal(err)
	}
	runBefore, err := old.Run(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	answersBefore, err := old.RunAnswers(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	keys := allKeys(t, old)
	lookBefore, err := old.LookupAnswers(ctx, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sizeBefore int64
	if err := old.sql.QueryRow(`SELECT sum(length(request)) FROM exchanges`).Scan(&sizeBefore); err != nil {
		t.Fatal(err)
	}
	old.Close()

	var reports []MigrationProgress
	db, err := OpenWith(path, OpenOptions{Progress: func(p MigrationProgress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.SchemaVersion(ctx); v != latestMigration(t) {
		t.Fatalf("schema version %s", v)
	}
	got := readExchanges(t, db)
	if len(got) != len(exs) {
		t.Fatalf("%d exchanges after migrating, want %d", len(got), len(exs))
	}
	for i := range exs {
		if !bytes.Equal(got[i].Request, exs[i].Request) || !bytes.Equal(got[i].Response, exs[i].Response) ||
			got[i].ID != exs[i].ID || got[i].RecordedAt != exs[i].RecordedAt || got[i].LatencyMS != exs[i].LatencyMS {
			t.Fatalf("exchange %d (%s) changed by the migration", i, exs[i].ID)
		}
	}
	runAfter, err := db.Run(ctx, run.ID)
	if err != nil || !reflect.DeepEqual(runAfter, runBefore) {
		t.Fatalf("run changed: %+v, %v\nwas %+v", runAfter, err, runBefore)
	}
	answersAfter, err := db.RunAnswers(ctx, run.ID)
	if err != nil || !reflect.DeepEqual(answersAfter, answersBefore) {
		t.Fatalf("answers changed (%v)", err)
	}
	lookAfter, err := db.LookupAnswers(ctx, keys, nil)
	if err != nil || !reflect.DeepEqual(lookAfter, lookBefore) || len(lookAfter) == 0 {
		t.Fatalf("cached answers changed: %d vs %d (%v)", len(lookAfter), len(lookBefore), err)
	}
	var sizeAfter int64
	if err := db.sql.QueryRow(`SELECT sum(length(request)) + (SELECT sum(length(body)) FROM bodies) FROM exchanges`).Scan(&sizeAfter); err != nil {
		t.Fatal(err)
	}
	if sizeAfter*3 > sizeBefore {
		t.Errorf("requests take %d bytes after, %d before: not stored once", sizeAfter, sizeBefore)
	}
	if len(reports) < 2 || reports[0].Migration != "20261203_0300_exchange_bodies" || reports[0].Total != int64(len(exs)) ||
		!reports[len(reports)-1].Finished || reports[len(reports)-1].Done != int64(len(exs)) {
		t.Fatalf("progress reports %+v", reports)
	}
}

// allKeys returns every key in the answer index.
func allKeys(t *testing.T, db *DB) []provider.AnswerKey {
	t.Helper()
	rows, err := db.sql.Query(`SELECT DISTINCT key FROM answer_index`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []provider.AnswerKey
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		var k provider.AnswerKey
		copy(k[:], b)
		out = append(out, k)
	}
	return out
}
