package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/jevlab/jevlab/provider"
)

// canonAnswer is a as text, every float as its bits, so that two answers
// are equal exactly when their texts are (NaN included).
func canonAnswer(a *ItemAnswer) string {
	var b strings.Builder
	bits := func(v float64) string { return fmt.Sprintf("%016x", math.Float64bits(v)) }
	fmt.Fprintf(&b, "%q %q r%d s%d %q %q %q lat=%s text=%q", a.ItemID, a.QuestionID, a.Repeat, a.Seq, a.Decided, a.ErrKind, a.ErrMsg, bits(a.LatencyMS), a.LabelText)
	if a.Label != nil {
		fmt.Fprintf(&b, " label=%d", *a.Label)
	}
	if an := a.Answer; an != nil {
		fmt.Fprintf(&b, " answer{%q %q p=%s score=%s choice=%q conf=%s has=%t raw=%q prov=%+v", an.ID, an.Type, bits(an.P), bits(an.Score), an.Choice,
			bits(an.Confidence), an.HasConfidence, an.Raw, an.Provenance)
		if an.Probs != nil {
			b.WriteString(" probs=[")
			for _, p := range an.Probs {
				b.WriteString(bits(p) + " ")
			}
			b.WriteString("]")
		}
		if x := an.Box; x != nil {
			fmt.Fprintf(&b, " box=%s,%s,%s,%s", bits(x.Top), bits(x.Bottom), bits(x.Left), bits(x.Right))
		}
		b.WriteString("}")
	}
	return b.String()
}

// readGroups reads run's items with read, each group as canonical text.
func readGroups(t *testing.T, read func(fn func([]ItemAnswer) error) error) []string {
	t.Helper()
	var out []string
	err := read(func(group []ItemAnswer) error {
		var b strings.Builder
		for i := range group {
			b.WriteString(canonAnswer(&group[i]) + "\n")
		}
		out = append(out, b.String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// streamItems are oldItems with numbers of every kind in their answers:
// −0, NaN, infinities, subnormals, random bits and decimals.
func streamItems(n int) []ItemResult {
	items := oldItems(n)
	rng := rand.New(rand.NewPCG(7, 11))
	odd := []float64{math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 5e-324, math.MaxFloat64, -1.5, 0.1 + 0.2}
	for i := range items {
		for j := range items[i].Answers {
			a := &items[i].Answers[j]
			an := a.Answer
			if an == nil {
				continue
			}
			switch (i + j) % 5 {
			case 0:
				an.Confidence, an.HasConfidence = odd[rng.IntN(len(odd))], true
			case 1:
				if an.Probs != nil {
					an.Probs[0] = math.Float64frombits(rng.Uint64())
				}
			case 2:
				a.LatencyMS = odd[rng.IntN(len(odd))]
			case 3:
				if an.Type == provider.Noul {
					an.P = odd[rng.IntN(len(odd))]
				}
			}
		}
	}
	return items
}

func TestItemStreamReadsAsTheRows(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "a", "m")
	// More items than a chunk holds, so the stream has several.
	items := streamItems(2*groupsPerChunk + 37)
	if _, err := db.SaveItems(ctx, r.ID, items); err != nil {
		t.Fatal(err)
	}
	rows := readGroups(t, func(fn func([]ItemAnswer) error) error { return forEachItemRows(ctx, db.sql, r.ID, fn) })
	if err := db.FinishRun(ctx, r.ID, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	var chunks int
	if err := db.sql.QueryRow(`SELECT count(*) FROM item_streams WHERE run_id = ?`, r.ID).Scan(&chunks); err != nil || chunks != 3 {
		t.Fatalf("chunks = %d, %v; want 3", chunks, err)
	}
	streamed := readGroups(t, func(fn func([]ItemAnswer) error) error {
		ok, err := db.forEachStreamedItem(ctx, r.ID, fn)
		if !ok && err == nil {
			t.Fatal("no stream read")
		}
		return err
	})
	if len(streamed) != len(rows) {
		t.Fatalf("stream has %d items, the rows %d", len(streamed), len(rows))
	}
	for i := range rows {
		if streamed[i] != rows[i] {
			t.Fatalf("item %d:\nstream %s\nrows   %s", i, streamed[i], rows[i])
		}
	}
	// ForEachItemNoRaw reads the stream: the same again.
	if got := readGroups(t, func(fn func([]ItemAnswer) error) error { return db.ForEachItemNoRaw(ctx, r.ID, fn) }); strings.Join(got, "") != strings.Join(rows, "") {
		t.Error("ForEachItemNoRaw differs from the rows")
	}

	// A retry that replaces an item drops the stream; the rows then hold
	// the new answer, and reading gives it.
	fixed := sampleItem("i003", 3, 0, 0.125)
	if n, err := db.SaveItems(ctx, r.ID, []ItemResult{fixed}); err != nil || n != 1 {
		t.Fatalf("retry SaveItems = %d, %v", n, err)
	}
	if err := db.sql.QueryRow(`SELECT count(*) FROM item_streams WHERE run_id = ?`, r.ID).Scan(&chunks); err != nil || chunks != 0 {
		t.Fatalf("after a retry: %d chunks, %v; want none", chunks, err)
	}
	after := readGroups(t, func(fn func([]ItemAnswer) error) error { return db.ForEachItemNoRaw(ctx, r.ID, fn) })
	if strings.Join(after, "") == strings.Join(rows, "") || !strings.Contains(strings.Join(after, ""), "3fc0000000000000") {
		t.Error("reading after the retry did not give its answer")
	}
	// Finished again, the stream is stored again and equals the rows.
	if err := db.FinishRun(ctx, r.ID, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	again := readGroups(t, func(fn func([]ItemAnswer) error) error { return db.ForEachItemNoRaw(ctx, r.ID, fn) })
	if strings.Join(again, "") != strings.Join(after, "") {
		t.Error("the stream stored after the retry differs from the rows")
	}
}

func TestItemStreamOnlyForFinishedRuns(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	count := func(id string) int {
		var n int
		if err := db.sql.QueryRow(`SELECT count(*) FROM item_streams WHERE run_id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, st := range []Status{StatusInterrupted, StatusFailed, StatusDone} {
		r := newRun(t, db, string(st), "m")
		if _, err := db.SaveItems(ctx, r.ID, oldItems(5)); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, r.ID, st, ""); err != nil {
			t.Fatal(err)
		}
		if want := map[Status]int{StatusDone: 1}[st]; count(r.ID) != want {
			t.Errorf("%s run: %d chunks, want %d", st, count(r.ID), want)
		}
	}
	// A run finished through its lease stores one too.
	h, err := db.SaveQuestionSet(ctx, "set-leased", "q.yaml", []byte(`{"name":"set-leased"}`))
	if err != nil {
		t.Fatal(err)
	}
	owner := NewLeaseOwner()
	r, err := db.CreateRun(ctx, NewRun{Name: "leased", SetHash: h, SetName: "set-leased", Model: "m", ProviderKind: "stand-in", LeaseOwner: owner, LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveItems(ctx, r.ID, oldItems(5)); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishLease(ctx, r.ID, owner, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if count(r.ID) != 1 {
		t.Errorf("leased run: %d chunks, want 1", count(r.ID))
	}
	// Deleting the run deletes its stream.
	if _, err := db.sql.Exec(`DELETE FROM runs WHERE id = ?`, r.ID); err != nil {
		t.Fatal(err)
	}
	if count(r.ID) != 0 {
		t.Error("a deleted run's stream is still stored")
	}
}

func TestDamagedItemStreamFails(t *testing.T) {
	var enc streamEncoder
	lab := 2
	group := []ItemAnswer{{ItemID: "x", Seq: 4, QuestionID: "q", LatencyMS: 3, Label: &lab, LabelText: "c",
		Answer: &provider.Answer{ID: "q", Type: provider.Choice, Choice: "c", Confidence: 0.5, HasConfidence: true, Probs: []float64{0.25, 0.25, 0.5}}},
		{ItemID: "x", Seq: 4, QuestionID: "r", Repeat: 1, ErrKind: "timeout"}}
	if err := enc.add("x", 4, group); err != nil {
		t.Fatal(err)
	}
	body := enc.chunk()
	var dec streamDecoder
	calls := 0
	if err := dec.chunk(body, func([]ItemAnswer) error { calls++; return nil }); err != nil || calls != 1 {
		t.Fatalf("whole chunk: %v, %d calls", err, calls)
	}
	for n := 0; n < len(body); n++ {
		var dec streamDecoder
		if err := dec.chunk(body[:n], func([]ItemAnswer) error { return nil }); err == nil {
			t.Errorf("a chunk cut to %d of %d bytes read", n, len(body))
		}
	}
	// A string index past the table, and bytes left over.
	bad := append([]byte(nil), body...)
	bad = append(bad, 0)
	if err := (&streamDecoder{}).chunk(bad, func([]ItemAnswer) error { return nil }); err == nil {
		t.Error("a chunk with a byte left over read")
	}
	// fn's error stops the reading and is returned.
	stop := errors.New("stop")
	if err := (&streamDecoder{}).chunk(body, func([]ItemAnswer) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
}

func TestUnstreamableAnswersKeepNoStream(t *testing.T) {
	var enc streamEncoder
	for name, a := range map[string]ItemAnswer{
		"raw":        {ItemID: "x", QuestionID: "q", Answer: &provider.Answer{ID: "q", Type: provider.Noul, Raw: []byte(`{}`)}},
		"provenance": {ItemID: "x", QuestionID: "q", Answer: &provider.Answer{ID: "q", Type: provider.Noul, Provenance: provider.Provenance{Model: "m"}}},
		"decided":    {ItemID: "x", QuestionID: "q", Decided: "0.5"},
		"message":    {ItemID: "x", QuestionID: "q", ErrMsg: "boom"},
		"other item": {ItemID: "y", QuestionID: "q"},
	} {
		if err := enc.add("x", 0, []ItemAnswer{a}); !errors.Is(err, errNotStreamable) {
			t.Errorf("%s: %v, want errNotStreamable", name, err)
		}
	}
	if err := enc.add("x", 0, make([]ItemAnswer, maxGroupAnswers+1)); !errors.Is(err, errNotStreamable) {
		t.Errorf("an item of %d answers: %v, want errNotStreamable", maxGroupAnswers+1, err)
	}
}

// A chunk that claims more strings or answers than a reader allows fails
// before allocating for them.
func TestItemStreamBoundsWhatItAllocates(t *testing.T) {
	pad := make([]byte, maxChunkStrings+2)
	strs := append(binary.AppendUvarint([]byte{streamVersion}, maxChunkStrings+1), pad...)
	// One string (""), one group "x" of maxGroupAnswers+1 answers, each
	// four bytes: without the bound it would read.
	answers := append([]byte{streamVersion, 1, 0, 1, 0, 1, 'x', 0}, binary.AppendUvarint(nil, maxGroupAnswers+1)...)
	answers = append(answers, make([]byte, 4*(maxGroupAnswers+1))...)
	for name, b := range map[string][]byte{"strings": strs, "answers": answers} {
		if err := (&streamDecoder{}).chunk(b, func([]ItemAnswer) error { return nil }); !errors.Is(err, errPacked) {
			t.Errorf("too many %s: %v", name, err)
		}
	}
}

// doneRun stores items in a new run of db and finishes it (done), which
// stores its item stream.
func doneRun(t *testing.T, db *DB, items []ItemResult) *Run {
	t.Helper()
	ctx := context.Background()
	r := newRun(t, db, "a", "m")
	if _, err := db.SaveItems(ctx, r.ID, items); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, r.ID, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDamagedStoredStreamIsAnError(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := doneRun(t, db, oldItems(20))
	z, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for name, body := range map[string][]byte{
		"not zstd":         []byte("garbage, not a frame"),
		"inflates too far": z.EncodeAll(make([]byte, maxChunkBytes+1), nil),
		"unknown version":  z.EncodeAll([]byte{99, 0, 0}, nil),
	} {
		if _, err := db.sql.Exec(`UPDATE item_streams SET body = ? WHERE run_id = ?`, body, r.ID); err != nil {
			t.Fatal(err)
		}
		err := db.ForEachItemNoRaw(ctx, r.ID, func([]ItemAnswer) error { return nil })
		if err == nil || !strings.Contains(err.Error(), r.ID) || !strings.Contains(err.Error(), "item stream") {
			t.Errorf("%s: %v, want an error naming the run and its item stream", name, err)
		}
	}
}

func TestItemStreamMigrationStoresDoneRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ctx := context.Background()
	old := schemaBefore(t, path, "20261207_0100")
	done, running := newRun(t, old, "done", "m"), newRun(t, old, "running", "m")
	for _, r := range []*Run{done, running} {
		if _, err := old.SaveItems(ctx, r.ID, streamItems(50)); err == nil {
			t.Fatal("SaveItems before the migration found item_streams")
		}
	}
	// SaveItems of this build drops streams, so the old rows are written
	// as the previous build wrote them: through the same statements, with
	// the stream's table made for the purpose and dropped again.
	if _, err := old.sql.Exec(`CREATE TABLE item_streams (run_id TEXT, chunk INTEGER, body BLOB)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Run{done, running} {
		if _, err := old.SaveItems(ctx, r.ID, streamItems(50)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.sql.Exec(`DROP TABLE item_streams`); err != nil {
		t.Fatal(err)
	}
	if err := old.setStatus(ctx, done.ID, StatusDone, "", true); err != nil {
		t.Fatal(err)
	}
	old.Close()

	var seen []MigrationProgress
	db, err := OpenWith(path, OpenOptions{Progress: func(p MigrationProgress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var chunks int
	if err := db.sql.QueryRow(`SELECT count(*) FROM item_streams WHERE run_id = ?`, done.ID).Scan(&chunks); err != nil || chunks != 1 {
		t.Fatalf("done run: %d chunks, %v; want 1", chunks, err)
	}
	if err := db.sql.QueryRow(`SELECT count(*) FROM item_streams WHERE run_id = ?`, running.ID).Scan(&chunks); err != nil || chunks != 0 {
		t.Fatalf("running run: %d chunks, %v; want none", chunks, err)
	}
	rows := readGroups(t, func(fn func([]ItemAnswer) error) error { return forEachItemRows(ctx, db.sql, done.ID, fn) })
	streamed := readGroups(t, func(fn func([]ItemAnswer) error) error { return db.ForEachItemNoRaw(ctx, done.ID, fn) })
	if len(rows) != 50 || strings.Join(streamed, "") != strings.Join(rows, "") {
		t.Errorf("the migrated stream (%d items) differs from the rows (%d)", len(streamed), len(rows))
	}
	if len(seen) < 2 || seen[len(seen)-2].Done == 0 || seen[len(seen)-2].Total != 50 {
		t.Fatalf("progress: %+v, want updates of 50 items", seen)
	}
	last := seen[len(seen)-1]
	if last.Migration != "20261207_0100_item_streams" || !last.Finished || last.Total == 0 || last.Done != last.Total {
		t.Errorf("progress ended with %+v", last)
	}
}

// A stream left behind by a jevlab that predates streams (which changes a
// run without dropping it) no longer matches its run's key: reading gives
// the rows, and finishing the run again stores a stream of them.
func TestStaleItemStreamIsNotRead(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := doneRun(t, db, oldItems(30))
	if _, err := db.sql.Exec(`CREATE TABLE kept AS SELECT * FROM item_streams`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveItems(ctx, r.ID, []ItemResult{sampleItem("i999", 999, 0, 0.125)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`INSERT INTO item_streams SELECT * FROM kept`); err != nil {
		t.Fatal(err)
	}
	rows := readGroups(t, func(fn func([]ItemAnswer) error) error { return forEachItemRows(ctx, db.sql, r.ID, fn) })
	got := readGroups(t, func(fn func([]ItemAnswer) error) error { return db.ForEachItemNoRaw(ctx, r.ID, fn) })
	if len(rows) != 31 || strings.Join(got, "") != strings.Join(rows, "") {
		t.Fatalf("read %d items, the rows hold %d: the stale stream was read", len(got), len(rows))
	}
	if err := db.FinishRun(ctx, r.ID, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.forEachStreamedItem(ctx, r.ID, func([]ItemAnswer) error { return nil }); !ok || err != nil {
		t.Fatalf("after finishing again: stream read %t, %v", ok, err)
	}
	got = readGroups(t, func(fn func([]ItemAnswer) error) error { return db.ForEachItemNoRaw(ctx, r.ID, fn) })
	if strings.Join(got, "") != strings.Join(rows, "") {
		t.Fatal("the stream stored again differs from the rows")
	}
}

func TestItemStreamOutOfOrderFails(t *testing.T) {
	var enc streamEncoder
	for _, id := range []string{"b", "a"} {
		if err := enc.add(id, 0, []ItemAnswer{{ItemID: id, QuestionID: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	err := (&streamDecoder{}).chunk(enc.chunk(), func([]ItemAnswer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "out of id order") {
		t.Fatalf("ids b, a: %v", err)
	}
	// Across chunks too.
	var d streamDecoder
	for _, id := range []string{"b", "a"} {
		var e streamEncoder
		if err := e.add(id, 0, nil); err != nil {
			t.Fatal(err)
		}
		err = d.chunk(e.chunk(), func([]ItemAnswer) error { return nil })
	}
	if err == nil {
		t.Fatal("a chunk starting before the last one's ids read")
	}
}
