package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
)

func longRaw(i int) json.RawMessage {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"choice","choice":"opt_%02d","confidence":0.%02d,"probabilities":{`, i%22, i%100)
	for k := 0; k < 22; k++ {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"opt_%02d":0.%03d`, (k*7+i)%22, (k*13+i)%1000)
	}
	b.WriteString(`}, "extra" : "\u00e9"}`) // spacing and escapes as received
	return b.Bytes()
}

// Raw answers are stored deflated against their run × question's first
// raw answer and come back byte for byte, next to rows stored as is.
func TestRawAnswersPackedLosslessly(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "raw", "jev-latest")
	var items []ItemResult
	for i := 0; i < 300; i++ {
		it := sampleItem(fmt.Sprint("i", i), i, 0, 0.5)
		it.Answers[0].Answer.Raw = longRaw(i)
		items = append(items, it)
	}
	// Two batches, and a second run whose answers get their own dictionary.
	for _, b := range [][]ItemResult{items[:100], items[100:]} {
		if _, err := db.SaveItems(ctx, r.ID, b); err != nil {
			t.Fatal(err)
		}
	}
	r2 := newRun(t, db, "raw2", "jev-latest")
	if _, err := db.SaveItems(ctx, r2.ID, items[:50]); err != nil {
		t.Fatal(err)
	}
	for _, run := range []*Run{r, r2} {
		got, err := db.RunAnswers(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range got {
			var i int
			fmt.Sscanf(a.ItemID, "i%d", &i)
			want := items[i].Answers[0].Answer.Raw
			if a.QuestionID != "intent" {
				want = items[i].Answers[1].Answer.Raw
			}
			if !bytes.Equal(a.Answer.Raw, want) {
				t.Fatalf("run %s item %s question %s: raw %q, want %q", run.ID, a.ItemID, a.QuestionID, a.Answer.Raw, want)
			}
			n++
		}
		if n == 0 {
			t.Fatal("no answers")
		}
	}
	var stored, asReceived, dicts int
	if err := db.sql.QueryRow(`SELECT sum(length(raws)) FROM item_results`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		asReceived += len(it.Answers[0].Answer.Raw)
	}
	asReceived += 50 * len(items[0].Answers[0].Answer.Raw)
	if err := db.sql.QueryRow(`SELECT count(*) FROM raw_dicts`).Scan(&dicts); err != nil {
		t.Fatal(err)
	}
	// A dictionary per run for the long raw answers and one for the
	// packed items.
	if stored*3 > asReceived || dicts != 4 {
		t.Fatalf("raw answers take %d bytes of %d as received, in %d dictionaries (want under a third, 4)", stored, asReceived, dicts)
	}
	// ForEachAnswerNoRaw leaves them out.
	if err := db.ForEachAnswerNoRaw(ctx, r.ID, func(a *ItemAnswer) error {
		if a.Answer != nil && a.Answer.Raw != nil {
			return fmt.Errorf("raw read for %s", a.ItemID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A damaged row is an error naming it, never other bytes.
	if _, err := db.sql.Exec(`UPDATE item_results SET raws = x'0102ffff' || substr(raws, 5) WHERE run_id = ? AND item_id = 'i9'`, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RunAnswers(ctx, r.ID); err == nil {
		t.Fatal("a damaged raw answer read back")
	}
}

// A save that fails leaves nothing behind; the next one reads back exactly.
func TestRawDictionaryRolledBack(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "rb", "jev-latest")
	it := sampleItem("a", 0, 0, 0.5)
	it.Answers[0].Answer.Raw = longRaw(1)
	if _, err := db.SaveItems(ctx, "no-such-run", []ItemResult{it}); err == nil {
		t.Fatal("saved items of a missing run")
	}
	it2 := sampleItem("b", 1, 0, 0.5)
	it2.Answers[0].Answer.Raw = longRaw(2)
	if _, err := db.SaveItems(ctx, r.ID, []ItemResult{it2}); err != nil {
		t.Fatal(err)
	}
	got, err := db.RunAnswers(ctx, r.ID)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0].Answer.Raw, it2.Answers[0].Answer.Raw) {
		t.Fatalf("%v %d", err, len(got))
	}
}

func TestParseFloatsExact(t *testing.T) {
	in := []float64{0.30000000000000004, 1e-300, 5e-324, 0, 1, 0.1, 123456789.125}
	got, err := parseFloats(appendFloats(nil, in))
	if err != nil || len(got) != len(in) || cap(got) != len(in) {
		t.Fatalf("%v %v (cap %d)", got, err, cap(got))
	}
	for i := range in {
		if got[i] != in[i] {
			t.Fatalf("%d: %v, want %v", i, got[i], in[i])
		}
	}
	if v, err := parseFloats([]byte(`[1, 2.5]`)); err != nil || len(v) != 2 || v[1] != 2.5 {
		t.Fatalf("spaced: %v %v", v, err)
	}
	if v, err := parseFloats([]byte(`[]`)); err != nil || len(v) != 0 {
		t.Fatalf("empty: %v %v", v, err)
	}
	for _, bad := range []string{`[1,x]`, `1,2`, ``} {
		if _, err := parseFloats([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A stored value that inflates past the bound (a damaged database, or one
// made to exhaust memory) is an error, read no further than the bound.
func TestInflateIsBounded(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	dict := []byte(`{"type":"noul","noul":0.5}`)
	res, err := db.sql.Exec(`INSERT INTO raw_dicts (body) VALUES (?)`, dict)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	var buf bytes.Buffer
	w, err := flate.NewWriterDict(&buf, flate.BestSpeed, dict)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 1<<20+1))
	w.Close()
	u := rawUnpacker{db: db.sql, max: 1 << 20}
	if _, err := u.unpack(ctx, buf.Bytes(), id); err == nil || !strings.Contains(err.Error(), "inflates past 1 MB") {
		t.Fatalf("a value inflating past the bound: %v", err)
	}
	// At the bound it reads, and the unpacker goes on working.
	buf.Reset()
	w.Reset(&buf)
	w.Write(make([]byte, 1<<20))
	w.Close()
	if out, err := u.unpack(ctx, buf.Bytes(), id); err != nil || len(out) != 1<<20 {
		t.Fatalf("a value at the bound: %d bytes, %v", len(out), err)
	}
}
