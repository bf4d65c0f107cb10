package store

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// previousSchemaDB opens path with every migration before
// 20261203_0900_compact_layout applied (their Go steps included).
func previousSchemaDB(t *testing.T, path string) *DB {
	t.Helper()
	return schemaBefore(t, path, "20261203_0900")
}

// schemaBefore opens path with every migration whose version sorts before
// cutoff applied (their Go steps included).
func schemaBefore(t *testing.T, path, cutoff string) *DB {
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
		if e.Name() >= cutoff {
			continue
		}
		b, err := fs.ReadFile(migrations, "migrations/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		fsys["migrations/"+e.Name()] = &fstest.MapFile{Data: b}
	}
	steps := migrationSteps()
	for v := range steps {
		if v >= cutoff {
			delete(steps, v)
		}
	}
	if err := db.migrate(context.Background(), fsys, steps, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// oldSaveItems writes items of run the way SaveItems wrote them before
// migration 20261203_0900: a row per answer, raw deflated against dict
// when dict is not 0 (else as is), distributions as text, provenance on
// every row.
func oldSaveItems(t *testing.T, db *DB, runID string, items []ItemResult, dictID int64, dict []byte) {
	t.Helper()
	for _, it := range items {
		if _, err := db.sql.Exec(`INSERT INTO item_results (run_id, item_id, repeat, seq, latency_ms, input_tokens, output_tokens,
			cost_usd, model, request_id, attempts, err_kind, err_msg) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			runID, it.ItemID, it.Repeat, it.Seq, it.LatencyMS, it.Usage.InputTokens, it.Usage.OutputTokens,
			it.CostUSD, it.Model, it.RequestID, it.Attempts, it.ErrKind, it.ErrMsg); err != nil {
			t.Fatal(err)
		}
		for _, a := range it.Answers {
			var args [23]any
			args[0], args[1], args[2], args[3], args[4] = runID, it.ItemID, a.QuestionID, it.Repeat, it.Seq
			args[6], args[17] = a.Decided, a.LatencyMS
			if a.Label != nil {
				args[18] = int64(*a.Label)
			}
			args[19], args[20], args[21] = a.LabelText, a.ErrKind, a.ErrMsg
			args[5], args[13], args[14], args[15], args[16] = "", "", "", "", ""
			if an := a.Answer; an != nil {
				args[5] = string(an.Type)
				switch an.Type {
				case provider.Noul:
					args[7] = an.P
				case provider.Score:
					args[8] = an.Score
				case provider.Choice:
					args[9] = an.Choice
				}
				if an.HasConfidence {
					args[10] = an.Confidence
				}
				if an.Probs != nil {
					args[11] = string(appendFloats(nil, an.Probs))
				}
				if e, ok := an.BoxOf(); ok {
					args[11] = string(appendFloats(nil, []float64{e.Top, e.Bottom, e.Left, e.Right}))
				}
				if an.Raw != nil {
					args[12] = []byte(an.Raw)
					if dictID != 0 && len(an.Raw) >= minPack {
						var b bytes.Buffer
						w, _ := flate.NewWriterDict(&b, 6, dict)
						w.Write(an.Raw)
						w.Close()
						args[12], args[22] = b.Bytes(), dictID
					}
				}
				args[13], args[14] = string(an.Provenance.Source), an.Provenance.Model
				if !an.Provenance.RecordedAt.IsZero() {
					args[15] = an.Provenance.RecordedAt.UTC().Format(time.RFC3339Nano)
				}
				args[16] = an.Provenance.Origin
			}
			if _, err := db.sql.Exec(`INSERT INTO answers (run_id, item_id, question_id, repeat, seq, type, decided, p, score, choice,
				confidence, probs, raw, source, model, recorded_at, origin, latency_ms, label_index, label_text, err_kind, err_msg, raw_dict)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args[:]...); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// oldItems are items of every kind the old layout held: answers with and
// without raw, confidence, distribution, label; a per-answer provenance
// and latency unlike the item's; failures; repeats.
func oldItems(n int) []ItemResult {
	var out []ItemResult
	for i := 0; i < n; i++ {
		it := sampleItem(fmt.Sprintf("i%03d", i), i, 0, float64(i)/float64(n))
		it.Answers[0].Answer.Raw = longRaw(i)
		it.Answers[0].Answer.Provenance.RecordedAt = time.Date(2026, 9, 17, 9, 28, 3, i*1000+7, time.UTC)
		if i%3 == 0 {
			it.Answers[1].LatencyMS = 1.25
			it.Answers[1].Answer.Raw = json.RawMessage(fmt.Sprintf(`{"type":"noul","noul":%g}`, it.Answers[1].Answer.P))
		}
		lv := 2
		it.Answers = append(it.Answers, ItemAnswer{QuestionID: "level", Decided: "2", LatencyMS: it.LatencyMS, Label: &lv,
			Answer: &provider.Answer{ID: "level", Type: provider.Score, Score: 1.7500000000000002, Probs: []float64{0.1, 0.2, 0.7},
				Provenance: it.Answers[0].Answer.Provenance}})
		if i%2 == 0 {
			it.Answers = append(it.Answers, ItemAnswer{QuestionID: "box", LatencyMS: it.LatencyMS, LabelText: `{"top":0.2}`,
				Answer: &provider.Answer{ID: "box", Type: provider.Box, Confidence: 0.9, HasConfidence: true,
					Box:        &provider.Edges{Top: 0.25, Bottom: 0.82, Left: 0.44, Right: float64(i) / 100},
					Raw:        json.RawMessage(fmt.Sprintf(`{"type":"box","box":{"top":0.25,"bottom":0.82,"left":0.44,"right":%g},"confidence":0.9}`, float64(i)/100)),
					Provenance: it.Answers[1].Answer.Provenance}})
		}
		// Questions out of id order, as a caller may give them.
		it.Answers[0], it.Answers[2] = it.Answers[2], it.Answers[0]
		switch {
		case i%7 == 3:
			it = ItemResult{ItemID: it.ItemID, Seq: i, Attempts: 5, Usage: provider.Usage{InputTokens: 9}, ErrKind: "rate_limited", ErrMsg: "429 after 5",
				Answers: []ItemAnswer{{QuestionID: "intent", ErrKind: "rate_limited", ErrMsg: "429"}, {QuestionID: "urgent", ErrKind: "rate_limited", ErrMsg: "429"}}}
		case i%5 == 1:
			// An answer with no type (no answer) and no error.
			it.Answers = append(it.Answers, ItemAnswer{QuestionID: "empty", LatencyMS: 4})
		}
		out = append(out, it)
		if i%4 == 0 && it.ErrKind == "" {
			rep := sampleItem(it.ItemID, i, 1, 0.5)
			rep.LatencyMS = 20
			out = append(out, rep)
		}
	}
	return out
}

// wantAnswers is what ForEachAnswer gives for items: dataset order, then
// question id, then repeat, as the answers table's reader gave it.
func wantAnswers(items []ItemResult) []ItemAnswer {
	var out []ItemAnswer
	for _, it := range items {
		for _, a := range it.Answers {
			a.ItemID, a.Seq, a.Repeat = it.ItemID, it.Seq, it.Repeat
			if a.Answer != nil {
				an := *a.Answer
				an.ID = a.QuestionID
				if a.ErrKind != "" || an.Type == "" {
					a.Answer = nil
				} else {
					a.Answer = &an
				}
			}
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b ItemAnswer) int {
		if a.Seq != b.Seq {
			return a.Seq - b.Seq
		}
		if c := strings.Compare(a.QuestionID, b.QuestionID); c != 0 {
			return c
		}
		return a.Repeat - b.Repeat
	})
	return out
}

func sameAnswers(t *testing.T, what string, got, want []ItemAnswer) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d answers, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Answer != nil && w.Answer != nil {
			if !g.Answer.Provenance.RecordedAt.Equal(w.Answer.Provenance.RecordedAt) {
				t.Fatalf("%s: answer %d (%s %s): recorded %v, want %v", what, i, w.ItemID, w.QuestionID, g.Answer.Provenance.RecordedAt, w.Answer.Provenance.RecordedAt)
			}
			ga, wa := *g.Answer, *w.Answer
			ga.Provenance.RecordedAt, wa.Provenance.RecordedAt = time.Time{}, time.Time{}
			if !reflect.DeepEqual(ga, wa) {
				t.Fatalf("%s: answer %d (%s %s):\n got %+v\nwant %+v", what, i, w.ItemID, w.QuestionID, ga, wa)
			}
			g.Answer, w.Answer = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: answer %d:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

func TestCompactLayoutMigrationKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ctx := context.Background()
	old := previousSchemaDB(t, path)
	// Exchanges as the previous layout kept them (the request whole, the
	// response as received) with their index rows, one of them undecodable.
	exs := recordedExchanges(t)
	exs = append(exs, ex(`{"model":"m"`, `not json`, ""))
	run := newRun(t, old, "before", "jev-latest")
	run2 := newRun(t, old, "other", "jev-latest")
	var ix indexer
	for i, e := range exs {
		var runID any
		if i%2 == 0 {
			runID = run.ID
		}
		res, err := old.sql.Exec(`INSERT INTO exchanges (run_id, ext_id, request, response, latency_ms, recorded_at, uncertain) VALUES (?,?,?,?,?,?,?)`,
			runID, e.ID, []byte(e.Request), []byte(e.Response), e.LatencyMS, e.RecordedAt, "")
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		rs, _ := ix.rows(e)
		if err := insertIndexRows(ctx, mustPrepare(t, old, insOldAnswerIndexSQL), id, rs, true); err != nil {
			t.Fatal(err)
		}
	}
	// Answers: run's raws deflated against a dictionary, run2's as is.
	dict := []byte(longRaw(0))
	res, err := old.sql.Exec(`INSERT INTO raw_dicts (body) VALUES (?)`, dict)
	if err != nil {
		t.Fatal(err)
	}
	dictID, _ := res.LastInsertId()
	items, items2 := oldItems(60), oldItems(9)
	oldSaveItems(t, old, run.ID, items, dictID, dict)
	oldSaveItems(t, old, run2.ID, items2, 0, nil)
	var itemsBefore []ItemResult
	for _, r := range []*Run{run, run2} {
		if err := old.ForEachItemResult(ctx, r.ID, func(it *ItemResult) error {
			itemsBefore = append(itemsBefore, *it)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	runBefore, err := old.Run(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	// A dataset snapshot as the previous layout kept it.
	if _, err := old.sql.Exec(`INSERT INTO datasets (hash, path, n_items, created_at) VALUES ('dh', 'd.jsonl', 300, '')`); err != nil {
		t.Fatal(err)
	}
	var dsBefore []DatasetItem
	for i := 0; i < 300; i++ {
		it := DatasetItem{Seq: i, ID: fmt.Sprintf("it-%04d", i),
			State:  json.RawMessage(fmt.Sprintf(`{"subject":"ticket %d","body":"words w%d about topic %d, \u00e9 please help"}`, i, i, i%7)),
			Labels: json.RawMessage(fmt.Sprintf(`{"intent":{"index":%d,"text":"intent_%02d"},"refund":{"index":%d,"text":"%v"}}`, i%22, i%22, i%2, i%2 == 1))}
		if i%9 == 4 {
			it.Labels = nil
		}
		var labels any
		if it.Labels != nil {
			labels = []byte(it.Labels)
		}
		if _, err := old.sql.Exec(`INSERT INTO dataset_items (dataset_hash, seq, item_id, state, labels) VALUES ('dh',?,?,?,?)`,
			it.Seq, it.ID, []byte(it.State), labels); err != nil {
			t.Fatal(err)
		}
		dsBefore = append(dsBefore, it)
	}
	old.Close()

	// The same exchanges saved by this version, for the cache's answers.
	fresh := openTemp(t)
	for i, e := range exs {
		c := ctx
		if i%2 == 0 {
			c = WithRunID(ctx, run.ID)
		}
		if _, err := fresh.sql.Exec(`INSERT OR IGNORE INTO question_sets (hash, name, body, created_at) VALUES (?, 'x', x'', '')`, run.SetHash); err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.sql.Exec(`INSERT OR IGNORE INTO runs (id, set_hash, status, started_at, updated_at) VALUES (?, ?, 'done', '', '')`, run.ID, run.SetHash); err != nil {
			t.Fatal(err)
		}
		if err := fresh.SaveExchange(c, e); err != nil {
			t.Fatal(err)
		}
	}

	var reports []MigrationProgress
	db, err := OpenWith(path, OpenOptions{Progress: func(p MigrationProgress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.SchemaVersion(ctx); v != latestMigration(t) {
		t.Fatalf("schema version %s", v)
	}
	steps := map[string]bool{}
	for _, p := range reports {
		if p.Finished && p.Done == p.Total {
			steps[p.Step] = true
		}
	}
	if len(steps) != 4 {
		t.Errorf("progress reported for %v, want its 4 steps finished", steps)
	}
	var dsAfter []DatasetItem
	if err := db.ForEachDatasetItem(ctx, "dh", func(it DatasetItem) error {
		dsAfter = append(dsAfter, it)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(dsAfter) != len(dsBefore) {
		t.Fatalf("%d dataset items, want %d", len(dsAfter), len(dsBefore))
	}
	for i := range dsBefore {
		a, b := dsAfter[i], dsBefore[i]
		if a.Seq != b.Seq || a.ID != b.ID || !bytes.Equal(a.State, b.State) || !bytes.Equal(a.Labels, b.Labels) || (a.Labels == nil) != (b.Labels == nil) {
			t.Fatalf("dataset item %d: %+v, want %+v", i, a, b)
		}
	}
	var packedItems int
	if err := db.sql.QueryRow(`SELECT count(labels_dict) FROM dataset_items`).Scan(&packedItems); err != nil || packedItems < 200 {
		t.Fatalf("%d dataset items' labels packed (%v)", packedItems, err)
	}
	var n int
	if err := db.sql.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('answers', 'answers_run_seq', 'answer_index_key')`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d old tables left (%v)", n, err)
	}

	// Every answer, item result and run as the old layout held them.
	for _, c := range []struct {
		r     *Run
		items []ItemResult
	}{{run, items}, {run2, items2}} {
		got, err := db.RunAnswers(ctx, c.r.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameAnswers(t, "answers of "+c.r.Name, got, wantAnswers(c.items))
		noRaw := wantAnswers(c.items)
		for i := range noRaw {
			if noRaw[i].Answer != nil {
				an := *noRaw[i].Answer
				an.Raw = nil
				noRaw[i].Answer = &an
			}
		}
		var gotNoRaw []ItemAnswer
		if err := db.ForEachAnswerNoRaw(ctx, c.r.ID, func(a *ItemAnswer) error {
			gotNoRaw = append(gotNoRaw, *a)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sameAnswers(t, "answers without raw of "+c.r.Name, gotNoRaw, noRaw)
		one, err := db.ItemAnswers(ctx, c.r.ID, "i000")
		if err != nil {
			t.Fatal(err)
		}
		var wantOne []ItemAnswer
		for _, a := range wantAnswers(c.items) {
			if a.ItemID == "i000" {
				wantOne = append(wantOne, a)
			}
		}
		sameAnswers(t, "item i000 of "+c.r.Name, one, wantOne)
	}
	var itemsAfter []ItemResult
	for _, r := range []*Run{run, run2} {
		if err := db.ForEachItemResult(ctx, r.ID, func(it *ItemResult) error {
			itemsAfter = append(itemsAfter, *it)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(itemsAfter, itemsBefore) {
		t.Fatalf("item results changed:\n got %+v\nwant %+v", itemsAfter, itemsBefore)
	}
	runAfter, err := db.Run(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(runAfter, runBefore) {
		t.Fatalf("run changed:\n got %+v\nwant %+v", runAfter, runBefore)
	}

	// Every exchange byte for byte, now packed, and the cache's answers.
	var got []provider.Exchange
	if err := db.ForEachExchange(ctx, func(e provider.Exchange) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(exs) {
		t.Fatalf("%d exchanges, want %d", len(got), len(exs))
	}
	for i := range exs {
		if !bytes.Equal(got[i].Request, exs[i].Request) || !bytes.Equal(got[i].Response, exs[i].Response) || got[i].RecordedAt != exs[i].RecordedAt ||
			got[i].ID != exs[i].ID || got[i].LatencyMS != exs[i].LatencyMS {
			t.Fatalf("exchange %d changed", i+1)
		}
	}
	var packed, total int64
	if err := db.sql.QueryRow(`SELECT count(resp_dict), count(*) FROM exchanges`).Scan(&packed, &total); err != nil || packed == 0 {
		t.Fatalf("%d of %d responses packed (%v)", packed, total, err)
	}
	keys := allKeys(t, fresh)
	want, err := fresh.LookupAnswers(ctx, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	look, err := db.LookupAnswers(ctx, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 20 || !reflect.DeepEqual(look, want) {
		t.Fatalf("cache answers after migration differ from a fresh save's (%d keys)", len(keys))
	}

	// A retry of a failed item and a new item work on the new layout.
	if _, err := db.SaveItems(ctx, run.ID, []ItemResult{sampleItem("i003", 3, 0, 0.5), sampleItem("new", 100, 0, 0.5)}); err != nil {
		t.Fatal(err)
	}
	after, err := db.ItemAnswers(ctx, run.ID, "i003")
	if err != nil || len(after) != 2 || after[0].Answer == nil {
		t.Fatalf("retried item: %+v %v", after, err)
	}
}

func mustPrepare(t *testing.T, db *DB, q string) *sql.Stmt {
	t.Helper()
	s, err := db.stmt(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
