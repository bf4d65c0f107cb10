package dataset

import (
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/fixtures"
	"github.com/jevlab/jevlab/internal/testutil"
)

// TestBanking77SourceAsIs reads the upstream file with field mapping, as
// `--id-field id --state-field text --label intent=gold_label` would.
func TestBanking77SourceAsIs(t *testing.T) {
	set, err := fixtures.DefaultSet()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testutil.Testdata(t, "banking77"), "dataset.source.jsonl")
	opt := Options{IDField: "id", StateField: "text"}
	if err := opt.ParseLabelFlag("intent=gold_label"); err != nil {
		t.Fatal(err)
	}
	items, err := Load(path, opt, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 500 {
		t.Fatalf("%d items", len(items))
	}
	first := items[0]
	if first.ID != "2" || string(first.State) != `"I ordered a card but it has not arrived. Help please!"` || first.Line != 1 {
		t.Errorf("first item %+v", first)
	}
	// card_arrival is option 11 (0-based) in questions.json's order.
	if l := first.Labels["intent"]; l.Text != "card_arrival" || l.Index != 11 {
		t.Errorf("label %+v", l)
	}
}
