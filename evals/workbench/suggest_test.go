package workbench

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

func suggestView(t *testing.T, probs map[string][]float64) *RunView {
	t.Helper()
	set := mustSet(t, "questions:\n  team:\n    type: choice\n    criteria: {billing: x, orders: y, account: z}\n")
	v := &RunView{Run: &store.Run{ID: "r"}, Set: set, Items: map[string]map[string]*ItemResult{}}
	for id, p := range probs {
		v.Items[id] = map[string]*ItemResult{"team": {Answer: &provider.Answer{ID: "team", Type: provider.Choice, Probs: p, Choice: "billing"}, Label: -1}}
	}
	return v
}

func TestSuggestRanksByUncertaintyDisagreementAndDiversity(t *testing.T) {
	items := []Item{
		{ID: "a", State: json.RawMessage(`"charged twice for my order refund please"`)},
		{ID: "b", State: json.RawMessage(`"charged twice for my order refund please now"`)},
		{ID: "c", State: json.RawMessage(`"cannot login to my account"`)},
		{ID: "d", State: json.RawMessage(`"where is my parcel"`)},
	}
	v := suggestView(t, map[string][]float64{
		"a": {0.4, 0.4, 0.2}, "b": {0.4, 0.4, 0.2}, "c": {0.6, 0.3, 0.1}, "d": {1, 0, 0},
	})
	got, err := Suggest(items, []*RunView{v}, SuggestOptions{Diversity: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Hand values for a: margin 0, entropy (−2·0.4 ln 0.4 − 0.2 ln 0.2)/ln 3.
	h := (-2*0.4*math.Log(0.4) - 0.2*math.Log(0.2)) / math.Log(3)
	if got[0].ItemID != "a" || got[1].ItemID != "b" || got[0].Margin != 0 || math.Abs(got[0].Entropy-h) > 1e-12 || math.Abs(got[0].Score-(1+h)/2) > 1e-12 {
		t.Fatalf("no diversity: %+v", got[:2])
	}
	if got[3].ItemID != "d" || got[3].Score != 0 {
		t.Fatalf("certain item: %+v", got[3])
	}
	// With the overlap penalty the near-copy b falls behind c.
	got, _ = Suggest(items, []*RunView{v}, SuggestOptions{N: 2})
	if len(got) != 2 || got[0].ItemID != "a" || got[1].ItemID != "c" {
		t.Fatalf("with diversity: %v, %v", got[0].ItemID, got[1].ItemID)
	}
	// A second run disagreeing on d lifts it by the TV distance.
	other := suggestView(t, map[string][]float64{"d": {0, 1, 0}})
	got, _ = Suggest(items, []*RunView{v, other}, SuggestOptions{Diversity: -1})
	for _, s := range got {
		if s.ItemID == "d" && (s.Disagreement != 1 || s.Rank != 1) {
			t.Fatalf("d with a disagreeing run: %+v", s)
		}
	}
	// Labelled items are left out.
	items[0].Labels = map[string]dataset.Label{"team": {Index: 0, Text: "billing"}}
	got, _ = Suggest(items, []*RunView{v}, SuggestOptions{})
	for _, s := range got {
		if s.ItemID == "a" {
			t.Fatal("labelled item suggested")
		}
	}
	if _, err := Suggest(items, []*RunView{v}, SuggestOptions{Questions: []string{"nope"}}); err == nil {
		t.Fatal("unknown question accepted")
	}
}
