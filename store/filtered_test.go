package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// One question's stream holds exactly that question's answers, in dataset
// order, and equals the whole stream filtered; one item's likewise.
func TestQuestionAndItemStreams(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "filtered", "jev-latest")
	var items []ItemResult
	for i := 0; i < 40; i++ {
		items = append(items, sampleItem(fmt.Sprint("i", (i*17)%40), i, 0, 0.5))
	}
	// Stored out of dataset order, as concurrent workers write.
	for _, b := range [][]ItemResult{items[20:], items[:20]} {
		if _, err := db.SaveItems(ctx, r.ID, b); err != nil {
			t.Fatal(err)
		}
	}
	all, err := db.RunAnswers(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	byQ := map[string][]string{}
	for _, a := range all {
		byQ[a.QuestionID] = append(byQ[a.QuestionID], fmt.Sprintf("%s/%d/%v", a.ItemID, a.Seq, a.Answer.P))
	}
	if len(byQ) < 2 {
		t.Fatalf("want answers to two questions, got %v", byQ)
	}
	for q, want := range byQ {
		var got []string
		if err := db.ForEachQuestionAnswerNoRaw(ctx, r.ID, q, func(a *ItemAnswer) error {
			if a.QuestionID != q {
				return fmt.Errorf("question %s in the stream of %s", a.QuestionID, q)
			}
			got = append(got, fmt.Sprintf("%s/%d/%v", a.ItemID, a.Seq, a.Answer.P))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("question %s: %v, want %v", q, got, want)
		}
	}
	// Several questions in one pass: each question's answers as its own
	// stream has them, and none of a question not asked for.
	var qids []string
	for q := range byQ {
		qids = append(qids, q)
	}
	for _, ask := range [][]string{qids, qids[:1], {qids[0], "no-such-question"}} {
		got := map[string][]string{}
		if err := db.ForEachQuestionsAnswerNoRaw(ctx, r.ID, ask, func(a *ItemAnswer) error {
			got[a.QuestionID] = append(got[a.QuestionID], fmt.Sprintf("%s/%d/%v", a.ItemID, a.Seq, a.Answer.P))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{}
		for _, q := range ask {
			if byQ[q] != nil {
				want[q] = byQ[q]
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("questions %v in one pass: %v, want %v", ask, got, want)
		}
	}
	if err := db.ForEachQuestionsAnswerNoRaw(ctx, r.ID, nil, func(*ItemAnswer) error {
		return fmt.Errorf("an answer when no question was asked for")
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.ForEachQuestionAnswerNoRaw(ctx, r.ID, "no-such-question", func(*ItemAnswer) error {
		return fmt.Errorf("an answer to a question the run does not have")
	}); err != nil {
		t.Fatal(err)
	}
	one, err := db.ItemAnswers(ctx, r.ID, "i17")
	if err != nil || len(one) != len(byQ) {
		t.Fatalf("item i17: %d answers (%v), want %d", len(one), err, len(byQ))
	}
	for _, a := range one {
		if a.ItemID != "i17" || a.Answer == nil {
			t.Fatalf("item stream: %+v", a)
		}
	}
}

// The item-order stream holds every answer once, items in byte order of
// their ids, each item's answers together in question id, repeat order.
func TestItemOrderStream(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "byitem", "jev-latest")
	var items []ItemResult
	for i := 0; i < 30; i++ {
		items = append(items, sampleItem(fmt.Sprint("i", (i*11)%30), i, 0, 0.5))
		items = append(items, sampleItem(fmt.Sprint("i", (i*11)%30), i, 1, 0.25))
	}
	if _, err := db.SaveItems(ctx, r.ID, items); err != nil {
		t.Fatal(err)
	}
	all, err := db.RunAnswers(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []ItemAnswer
	if err := db.ForEachAnswerByItemNoRaw(ctx, r.ID, func(a *ItemAnswer) error {
		got = append(got, *a)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(all) {
		t.Fatalf("%d answers by item, %d in all", len(got), len(all))
	}
	for i := 1; i < len(got); i++ {
		p, c := got[i-1], got[i]
		key := func(a ItemAnswer) string { return fmt.Sprintf("%s\x00%s\x00%03d", a.ItemID, a.QuestionID, a.Repeat) }
		if key(p) >= key(c) {
			t.Fatalf("answer %d (%s) after %s: not in item, question, repeat order", i, key(c), key(p))
		}
	}
}

// The item-at-a-time stream gives exactly the item-order stream's answers
// less what no metric reads (provenance, decided text, error message),
// one item per call, and reuses their storage: what one call saw is
// overwritten by the next, so a caller that keeps nothing allocates
// nothing per answer.
func TestItemAtATimeStream(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	r := newRun(t, db, "peritem", "jev-latest")
	var items []ItemResult
	for i := 0; i < 30; i++ {
		items = append(items, sampleItem(fmt.Sprint("i", (i*11)%30), i, 0, 0.5))
		items = append(items, sampleItem(fmt.Sprint("i", (i*11)%30), i, 1, float64(i)/30))
	}
	if _, err := db.SaveItems(ctx, r.ID, items); err != nil {
		t.Fatal(err)
	}
	show := func(a *ItemAnswer) string {
		j, _ := json.Marshal(a.Answer)
		return fmt.Sprintf("%s/%d/%s/%d/%v/%s/%s", a.ItemID, a.Seq, a.QuestionID, a.Repeat, *a.Label, a.LabelText, j)
	}
	var want []string
	provenances := 0
	if err := db.ForEachAnswerByItemNoRaw(ctx, r.ID, func(a *ItemAnswer) error {
		if a.Label == nil {
			a.Label = new(int)
		}
		// Only what metrics read: no provenance, decided text or message.
		if a.Answer != nil && a.Answer.Provenance.Source != "" {
			provenances++
			a.Answer.Provenance = provider.Provenance{}
		}
		a.Decided, a.ErrMsg = "", ""
		want = append(want, show(a))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if provenances == 0 {
		t.Fatal("the fixture has no provenance to leave out")
	}
	var got []string
	var first *provider.Answer
	var firstWas string
	calls, reused := 0, 0
	if err := db.ForEachItemNoRaw(ctx, r.ID, func(as []ItemAnswer) error {
		calls++
		if len(as) != 4 {
			return fmt.Errorf("item %s: %d answers in one call, want 4 (2 questions × 2 repeats)", as[0].ItemID, len(as))
		}
		for i := range as {
			if as[i].ItemID != as[0].ItemID {
				return fmt.Errorf("items %s and %s in one call", as[0].ItemID, as[i].ItemID)
			}
			if as[i].Label == nil {
				as[i].Label = new(int)
			}
			if as[i].Decided != "" || as[i].ErrMsg != "" {
				return fmt.Errorf("item %s: decided %q, error %q: want them left out", as[i].ItemID, as[i].Decided, as[i].ErrMsg)
			}
			got = append(got, show(&as[i]))
		}
		// as[3] is urgent's second repeat, whose P differs item by item.
		if first == nil {
			first, firstWas = as[3].Answer, show(&as[3])
		} else if as[3].Answer == first {
			reused++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if calls != 30 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d calls:\n%v\nwant\n%v", calls, got, want)
	}
	if reused != 29 {
		t.Fatalf("the first Answer's storage reused for %d of 29 later items", reused)
	}
	if j, _ := json.Marshal(first); !strings.Contains(firstWas, `"urgent"`) || strings.Contains(firstWas, string(j)) {
		t.Fatalf("the first item's answer was not overwritten (%s): nothing is reused", j)
	}
}
