package workbench

import (
	"context"
	"errors"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// missOn answers every question but the ones in miss, which it reports as
// an offline miss (the whole request fails when it holds one, as the
// fixture cache does).
type missOn struct {
	miss  map[string]bool
	calls int
}

func (m *missOn) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	m.calls++
	for _, id := range req.Questions.IDs() {
		if m.miss[id] {
			return nil, &provider.Error{Kind: provider.KindMiss, Message: "not recorded: " + id}
		}
	}
	res := &provider.Result{Model: "jev-1.13.0"}
	for _, qe := range req.Questions {
		a := provider.Answer{ID: qe.ID, Type: qe.Question.Type, Provenance: provider.Provenance{Source: provider.SourceCache, Origin: "dir/recorded.jsonl", Model: "jev-1.13.0"}}
		switch qe.Question.Type {
		case provider.Noul:
			a.P = 0.9
		case provider.Choice:
			a.Probs = make([]float64, len(qe.Question.Options))
			a.Probs[0] = 1
			a.Choice = qe.Question.Options[0].Label
		case provider.Score:
			a.Probs = make([]float64, len(qe.Question.Levels))
			a.Probs[0] = 1
		}
		res.Answers = append(res.Answers, a)
	}
	return res, nil
}

// The stand-in alone answers every question synthetically, marked as the
// stand-in's (model and source), with no exchanges anyone could record.
func TestStandInAnswersSynthetically(t *testing.T) {
	set := mustSet(t, triage)
	p, err := StandIn(nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req, err := Request(set, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Ask(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != StandInModel || len(res.Answers) != 3 || len(res.Exchanges) != 0 {
		t.Fatalf("model %q, %d answers, %d exchanges", res.Model, len(res.Answers), len(res.Exchanges))
	}
	for _, a := range res.Answers {
		if a.Provenance.Source != provider.SourceStandIn || a.Provenance.Model != StandInModel {
			t.Errorf("%s: provenance %+v", a.ID, a.Provenance)
		}
	}
	// Deterministic: the same request gives the same answers.
	again, err := p.Ask(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Answers[0].Choice != res.Answers[0].Choice {
		t.Fatalf("not deterministic: %q then %q", res.Answers[0].Choice, again.Answers[0].Choice)
	}
}

// In front of a primary that misses one edited question, the stand-in
// answers only that one; the others keep the primary's recorded answers
// and provenance, in request order.
func TestStandInFillsOnlyTheMisses(t *testing.T) {
	set := mustSet(t, triage)
	prim := &missOn{miss: map[string]bool{"urgent": true}}
	p, err := StandIn(prim, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req, _ := Request(set, nil, "")
	asked, err := Ask(context.Background(), p, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked.Failed) != 0 || len(asked.Result.Answers) != 3 {
		t.Fatalf("failed %v, %d answers", asked.Failed, len(asked.Result.Answers))
	}
	for i, id := range req.Questions.IDs() {
		a := asked.Result.Answers[i]
		if a.ID != id {
			t.Fatalf("answer %d is %s, want %s (request order)", i, a.ID, id)
		}
		want := provider.SourceCache
		if id == "urgent" {
			want = provider.SourceStandIn
		}
		if a.Provenance.Source != want {
			t.Errorf("%s: source %s, want %s", id, a.Provenance.Source, want)
		}
	}
	if asked.Result.Model != "jev-1.13.0+"+StandInModel {
		t.Errorf("model %q", asked.Result.Model)
	}
}

// A failure of the primary that is not a miss (the key refused) is not
// papered over with synthetic answers.
func TestStandInKeepsOtherFailures(t *testing.T) {
	set := mustSet(t, triage)
	p, err := StandIn(failing{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req, _ := Request(set, nil, "")
	_, err = p.Ask(context.Background(), req)
	if provider.KindOf(err) != provider.KindAuth {
		t.Fatalf("err = %v, want the auth failure", err)
	}
}

type failing struct{}

func (failing) Ask(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, &provider.Error{Kind: provider.KindAuth, Err: errors.New("no")}
}
