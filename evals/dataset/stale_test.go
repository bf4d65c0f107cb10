package dataset

import (
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
)

const staleSet = `name: t
questions:
  queue:
    type: choice
    instructions: Which queue?
    criteria:
      billing: null
      other: null
  urgent:
    type: noul
    instructions: Urgent?
  level:
    type: score
    instructions: How upset?
    criteria: [calm, annoyed, furious]
`

func staleItems(t *testing.T, set *questionset.Set, data string) []Item {
	t.Helper()
	var items []Item
	err := Parse("d.jsonl", strings.NewReader(data), Options{KeepStale: true}, set, func(it Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func TestResolveLabelsFollowsTextNotIndex(t *testing.T) {
	set, err := questionset.Parse("t.yaml", []byte(staleSet))
	if err != nil {
		t.Fatal(err)
	}
	data := `{"id":"a","state":"x","labels":{"queue":"other","urgent":true,"level":2}}
{"id":"b","state":"y","labels":{"queue":"billing","urgent":"no","level":"calm"}}
`
	items := staleItems(t, set, data)
	// Insert an option before other: other's index moves from 1 to 2, and
	// the label must follow it.
	edited, err := questionset.Parse("t.yaml", []byte(strings.Replace(staleSet, "      billing: null\n", "      billing: null\n      shipping: null\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	got, stale := ResolveLabels(edited, items, nil)
	if len(stale) != 0 {
		t.Fatalf("stale = %v", stale)
	}
	if l := got[0].Labels["queue"]; l.Index != 2 || l.Text != "other" {
		t.Fatalf("a queue = %+v, want other at 2", l)
	}
	if items[0].Labels["queue"].Index != 1 {
		t.Fatal("ResolveLabels changed its input")
	}
	// Rename other → general without telling: the label is stale, named,
	// and excluded.
	renamed, _ := questionset.Parse("t.yaml", []byte(strings.Replace(staleSet, "      other: null", "      general: null", 1)))
	got, stale = ResolveLabels(renamed, items, nil)
	if len(stale) != 1 || stale[0].ItemID != "a" || stale[0].Question != "queue" || stale[0].Text != "other" || stale[0].Line != 1 {
		t.Fatalf("stale = %+v", stale)
	}
	if !strings.Contains(stale[0].String(), `"other" is not an option of queue`) {
		t.Fatalf("why = %s", stale[0])
	}
	if _, ok := got[0].Labels["queue"]; ok {
		t.Fatal("stale label kept")
	}
	// With the rename known, it counts as the new option.
	got, stale = ResolveLabels(renamed, items, Renames{"queue": {"other": "general"}})
	if len(stale) != 0 || got[0].Labels["queue"].Text != "general" || got[0].Labels["queue"].Index != 1 {
		t.Fatalf("renamed: %+v %v", got[0].Labels["queue"], stale)
	}
	// Reordered levels keep the level's meaning.
	rev, _ := questionset.Parse("t.yaml", []byte(strings.Replace(staleSet, "[calm, annoyed, furious]", "[furious, annoyed, calm]", 1)))
	got, _ = ResolveLabels(rev, items, nil)
	if got[0].Labels["level"].Index != 0 || got[1].Labels["level"].Index != 2 {
		t.Fatalf("levels: %+v %+v", got[0].Labels["level"], got[1].Labels["level"])
	}
	if got[1].Labels["urgent"].Index != 0 {
		t.Fatalf("noul: %+v", got[1].Labels["urgent"])
	}
}

func TestKeepStaleReadsLabelsOfAnEditedSet(t *testing.T) {
	set, _ := questionset.Parse("t.yaml", []byte(strings.Replace(staleSet, "      other: null", "      general: null", 1)))
	data := `{"id":"a","state":"x","labels":{"queue":"other","gone":"x"}}` + "\n"
	if err := Parse("d.jsonl", strings.NewReader(data), Options{}, set, func(Item) error { return nil }); err == nil {
		t.Fatal("strict read accepted a stale label")
	}
	items := staleItems(t, set, data)
	_, stale := ResolveLabels(set, items, nil)
	if len(stale) != 2 || stale[0].Question != "queue" || stale[1].Question != "gone" {
		t.Fatalf("stale = %+v", stale)
	}
	// A label of the wrong kind still fails the row.
	bad := `{"id":"a","state":"x","labels":{"urgent":"maybe"}}` + "\n"
	if err := Parse("d.jsonl", strings.NewReader(bad), Options{KeepStale: true}, set, func(Item) error { return nil }); err == nil {
		t.Fatal("malformed noul label kept as stale")
	}
}
