package store

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// A box answer's edges are stored in the probs column and read back as
// Answer.Box without the raw bytes (what metrics read), with no
// distribution; the label is kept as text.
func TestBoxAnswerEdgesWithoutRaw(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "a", "jev-1.14.0")
	raw := []byte(`{"type":"box","box":{"top":0.25,"bottom":0.82,"left":0.44,"right":0.84},"confidence":0.92}`)
	an, err := provider.CheckAnswer("mug", &provider.Question{Type: provider.Box, Instructions: []byte(`"the mug in photo"`)}, raw)
	if err != nil {
		t.Fatal(err)
	}
	label := `{"top":0.2,"bottom":0.8,"left":0.4,"right":0.9}`
	it := ItemResult{ItemID: "i1", Answers: []ItemAnswer{{QuestionID: "mug", Answer: &an, LabelText: label}}}
	if _, err := db.SaveItems(ctx, r.ID, []ItemResult{it}); err != nil {
		t.Fatal(err)
	}
	var got []ItemAnswer
	if err := db.ForEachAnswerNoRaw(ctx, r.ID, func(a *ItemAnswer) error { got = append(got, *a); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Answer == nil {
		t.Fatalf("answers = %+v", got)
	}
	a := got[0].Answer
	want := provider.Edges{Top: 0.25, Bottom: 0.82, Left: 0.44, Right: 0.84}
	if a.Raw != nil || a.Box == nil || *a.Box != want || a.Probs != nil || !a.HasConfidence || a.Confidence != 0.92 || got[0].LabelText != label {
		t.Errorf("read back without raw: %+v box=%v label=%q", a, a.Box, got[0].LabelText)
	}
	if e, ok := a.BoxOf(); !ok || e != want {
		t.Errorf("BoxOf = %v, %v", e, ok)
	}
	// A stored box with the wrong count of numbers is an error, not a
	// silently wrong box.
	bad := ItemResult{ItemID: "i1", Answers: []ItemAnswer{{QuestionID: "mug", Answer: &provider.Answer{Type: provider.Choice, Probs: []float64{0.1, 0.2}}}}}
	pk, err := encodeItem(&bad, nil)
	if err != nil {
		t.Fatal(err)
	}
	packed := bytes.Replace(pk.answers, appendStr(nil, "choice"), appendStr(nil, "box"), 1)
	if _, err := db.sql.ExecContext(ctx, `UPDATE item_results SET answers = x'00' || ? WHERE run_id = ?`, packed, r.ID); err != nil {
		t.Fatal(err)
	}
	err = db.ForEachAnswerNoRaw(ctx, r.ID, func(*ItemAnswer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "bad stored box") || !strings.Contains(err.Error(), "mug") {
		t.Errorf("corrupt box read: %v", err)
	}
}
