package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// A variant is asked in the same request as its question, its answers
// stored under the derived id with the label mapped into its own criteria,
// the run records which variants it asked, and a resume must ask the same.
func TestRunAsksVariantsInTheSameRequest(t *testing.T) {
	db := openDB(t)
	set := testSet(t)
	// v2 reorders the options: a label is stored as the index in the
	// variant's own criteria.
	if err := set.AddVariant("team", questionset.Variant{Name: "v2", Options: []provider.Option{
		{Label: "account", Description: provider.String("login and profile")},
		{Label: "billing", Description: provider.String("charges, refunds, invoices")},
		{Label: "orders", Description: provider.String("delivery and order status")},
	}}); err != nil {
		t.Fatal(err)
	}
	th := 0.9
	if err := set.AddVariant("urgent", questionset.Variant{Name: "strict", Threshold: &th}); err != nil {
		t.Fatal(err)
	}
	items := genItems(12)
	refs := set.AllVariants()
	p := &fakeProvider{}
	id, err := Run(context.Background(), Config{Set: set, Variants: refs, Items: items, Provider: p, DB: db}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.calls.Load() != 12 {
		t.Fatalf("%d requests for 12 items", p.calls.Load())
	}
	run, _ := db.Run(context.Background(), id)
	if got := RecordedVariants(run); len(got) != 2 || got[0].ID() != "team~v2" || got[1].ID() != "urgent~strict" {
		t.Fatalf("recorded variants %v (settings %s)", got, run.Settings)
	}
	answers, err := db.RunAnswers(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	byItem := map[string]map[string]int{}
	n := map[string]int{}
	for _, a := range answers {
		n[a.QuestionID]++
		if a.Label != nil {
			if byItem[a.ItemID] == nil {
				byItem[a.ItemID] = map[string]int{}
			}
			byItem[a.ItemID][a.QuestionID] = *a.Label
		}
		if a.QuestionID == "urgent~strict" && a.Answer != nil {
			want := "false"
			if a.Answer.P >= 0.9 {
				want = "true"
			}
			if a.Decided != want {
				t.Errorf("urgent~strict decided %s at p %v (threshold 0.9)", a.Decided, a.Answer.P)
			}
		}
	}
	if n["team~v2"] != 12 || n["urgent~strict"] != 12 || n["team"] != 12 {
		t.Fatalf("answers per id %v", n)
	}
	for _, it := range items {
		l := it.Labels["team"]
		want := map[string]int{"account": 0, "billing": 1, "orders": 2}[l.Text]
		if got := byItem[it.ID]["team~v2"]; got != want || byItem[it.ID]["team"] != l.Index {
			t.Errorf("%s: team label %d, team~v2 label %d (want %d for %s)", it.ID, byItem[it.ID]["team"], got, want, l.Text)
		}
	}
	// Resuming with other variants is refused.
	_, err = Run(context.Background(), Config{Set: set, Variants: refs[:1], Items: items, Provider: p, DB: db, Resume: id}, nil)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "same --variants") {
		t.Fatalf("resume with other variants: %v", err)
	}
	// The dry run says what the variants add.
	plain, err := DryRun(context.Background(), Config{Set: set, Items: items, DB: openDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	withV, err := DryRun(context.Background(), Config{Set: set, Items: items, Variants: refs, DB: openDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	var extra int64
	for _, it := range items {
		a, _ := set.Request(it.State).MarshalJSON()
		b, _ := set.RequestWith(it.State, refs).MarshalJSON()
		extra += int64(len(b) - len(a))
	}
	if withV.Variants != 2 || withV.VariantRequestBytes != extra || withV.RequestBytes != plain.RequestBytes+extra ||
		withV.VariantInputTokens != extra/4 || withV.Requests != plain.Requests || withV.CostUSD <= plain.CostUSD {
		t.Fatalf("dry run with variants %+v, plain %+v, extra bytes %d", withV, plain, extra)
	}
}
