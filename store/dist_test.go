package store

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// Every distribution reads back bit for bit; decimals (as providers round)
// take one byte a number at the fewest places that hold them, anything
// else its eight bytes of bits.
func TestDistRoundTripsBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := [][]float64{
		{}, {0}, {1}, {0.5, 0.5}, {0.03, 0.37, 0.6}, {0.2, 0.2, 0.2, 0.2, 0.2},
		{0.30000000000000004, 0.7}, {math.Copysign(0, -1), 1}, {-0.5, 1.5}, {math.NaN()}, {math.Inf(1)},
		{1e15, 2e15}, {5e-324}, {0.123456789}, {0.1234567891}, {4503599627370495},
	}
	for range 20000 {
		ps := make([]float64, 1+rng.IntN(30))
		d := math.Pow(10, float64(rng.IntN(12)))
		kind := rng.IntN(3)
		for i := range ps {
			switch kind {
			case 0:
				ps[i] = math.Round(rng.Float64()*d) / d
			case 1:
				ps[i] = rng.Float64()
			default:
				ps[i] = math.Float64frombits(rng.Uint64())
			}
		}
		cases = append(cases, ps)
	}
	scaled := 0
	for _, ps := range cases {
		b := appendDist(nil, ps)
		r := reader{b: b}
		got := r.dist(func(n int) []float64 { return make([]float64, 0, n) })
		if r.err != nil || len(r.b) != 0 || got == nil || len(got) != len(ps) {
			t.Fatalf("%v: read back %v (err %v, %d bytes left)", ps, got, r.err, len(r.b))
		}
		for i := range ps {
			if math.Float64bits(got[i]) != math.Float64bits(ps[i]) {
				t.Fatalf("%v: number %d read back as %v", ps, i, got[i])
			}
		}
		if b[0] != 0 {
			scaled++
		}
		r = reader{b: b}
		if r.skipDist(); r.err != nil || len(r.b) != 0 {
			t.Fatalf("%v: skipDist left %d bytes (err %v)", ps, len(r.b), r.err)
		}
	}
	if scaled < len(cases)/10 || scaled == len(cases) {
		t.Fatalf("%d of %d distributions were scaled: the test does not exercise both forms", scaled, len(cases))
	}
	for _, c := range []struct {
		ps    []float64
		scale int
	}{
		{[]float64{0.03, 0.37, 0.6}, 2}, {[]float64{0.5, 0.25}, 2}, {[]float64{1, 0}, 0}, {[]float64{0.1}, 1},
		{[]float64{0.123456789}, 9}, {[]float64{0.1234567891}, -1}, {[]float64{0.30000000000000004}, -1},
		{[]float64{math.Copysign(0, -1)}, -1}, {[]float64{-0.5}, -1},
	} {
		if got := distScale(c.ps); got != c.scale {
			t.Errorf("distScale(%v) = %d, want %d", c.ps, got, c.scale)
		}
	}
	// Jev's 22 options in hundredths: 24 bytes, against 111 as text.
	jev := []float64{0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.37, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03}
	if n, text := len(appendDist(nil, jev)), len(appendFloats(nil, jev)); n != 24 || text != 111 {
		t.Errorf("22 hundredths take %d bytes (text %d); want 24 (111)", n, text)
	}
}

// A damaged distribution fails the read (never a panic, never a slice
// sized by a damaged count).
func TestDamagedDistFails(t *testing.T) {
	for _, ps := range [][]float64{{0.03, 0.37, 0.6}, {0.30000000000000004, 0.7}} {
		b := appendDist(nil, ps)
		for cut := range len(b) {
			r := reader{b: b[:cut]}
			if got := r.dist(func(n int) []float64 { return make([]float64, 0, n) }); r.err == nil {
				t.Errorf("%v cut at %d read as %v", ps, cut, got)
			}
			r = reader{b: b[:cut]}
			if r.skipDist(); r.err == nil && cut > 0 && b[0] == 0 {
				t.Errorf("%v cut at %d skipped", ps, cut)
			}
		}
	}
	for _, b := range [][]byte{
		{3, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2}, // a count of 4 billion
		{0, 2, 1, 2, 3, 4, 5, 6, 7, 8},          // two float64s in 9 bytes
		{99, 1, 1},                              // no such scale
	} {
		r := reader{b: b}
		asked := 0
		if got := r.dist(func(n int) []float64 { asked = n; return make([]float64, 0, n) }); r.err == nil || asked > len(b) {
			t.Errorf("% x read as %v (asked room for %d)", b, got, asked)
		}
	}
}

// Answers packed before version 2 (distributions as text) read back as
// those packed now: a database written by an earlier jevlab needs no
// migration.
func TestVersion1PackedAnswersStillRead(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "v1", "jev-latest")
	boxRaw := []byte(`{"type":"box","box":{"top":0.25,"bottom":0.82,"left":0.44,"right":0.84},"confidence":0.92}`)
	box, err := provider.CheckAnswer("mug", &provider.Question{Type: provider.Box, Instructions: []byte(`"the mug"`)}, boxRaw)
	if err != nil {
		t.Fatal(err)
	}
	var items []ItemResult
	for i := range 40 {
		it := sampleItem("i"+string(rune('a'+i%26))+string(rune('a'+i/26)), i, 0, float64(i)/40)
		it.Answers[0].Answer.Probs = []float64{float64(i%10) / 10, 1 - float64(i%10)/10}
		if i%3 == 0 {
			it.Answers[0].Answer.Probs = []float64{0.1 * float64(i), 1 / 3.0}
		}
		b := box
		it.Answers = append(it.Answers, ItemAnswer{QuestionID: "mug", Answer: &b, LabelText: `{"top":0.2,"bottom":0.8,"left":0.4,"right":0.9}`})
		items = append(items, it)
	}
	if _, err := db.SaveItems(ctx, r.ID, items); err != nil {
		t.Fatal(err)
	}
	now, err := db.RunAnswers(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The same items as version 1 wrote them, stored as is (dictionary 0).
	for _, it := range items {
		asIs := func(_ string, raw []byte) (rawRef, bool, []byte, int64, error) { return rawRef{}, false, raw, 0, nil }
		pk, err := encodeItemAt(&it, asIs, 1)
		if err != nil {
			t.Fatal(err)
		}
		if pk.answers[0] != 1 {
			t.Fatalf("version %d written", pk.answers[0])
		}
		if _, err := db.sql.ExecContext(ctx, `UPDATE item_results SET answers = x'00' || ?, raws = ? WHERE run_id = ? AND item_id = ?`, pk.answers, pk.raws, r.ID, it.ItemID); err != nil {
			t.Fatal(err)
		}
	}
	old, err := db.RunAnswers(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(now) != len(items)*3 || !reflect.DeepEqual(old, now) {
		t.Fatalf("version 1 rows read back differently:\n%+v\nwant\n%+v", old[:3], now[:3])
	}
	// One question's answers, which skip the others' distributions.
	var mugs int
	if err := db.ForEachQuestionAnswerNoRaw(ctx, r.ID, "urgent", func(a *ItemAnswer) error {
		mugs++
		return nil
	}); err != nil || mugs != len(items) {
		t.Fatalf("one question of version 1 rows: %d answers, %v", mugs, err)
	}
}

// The reader's one-byte paths read what encoding/binary writes.
func TestReaderVarints(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 1 << 40, -1 << 40, math.MaxInt64, math.MinInt64} {
		r := reader{b: binary.AppendVarint(nil, v)}
		if got := r.varint(); got != v || r.err != nil || len(r.b) != 0 {
			t.Errorf("varint %d read as %d (%v)", v, got, r.err)
		}
		u := uint64(v)
		r = reader{b: binary.AppendUvarint(nil, u)}
		if got := r.uvarint(); got != u || r.err != nil || len(r.b) != 0 {
			t.Errorf("uvarint %d read as %d (%v)", u, got, r.err)
		}
	}
	r := reader{}
	if r.varint(); r.err == nil {
		t.Error("varint of nothing read")
	}
}
