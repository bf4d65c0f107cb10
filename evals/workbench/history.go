package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/internal/worddiff"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// DiffOp is one run of words of a word diff (worddiff.Op).
type DiffOp = worddiff.Op

// Revision is one distinct body of a question (its id, wire question,
// caller-side settings and variants): when it was first seen, how it
// differs from the revision before it, and every run that asked it.
type Revision struct {
	Hash      string          `json:"hash"`
	FirstSeen time.Time       `json:"first_seen"`
	Body      json.RawMessage `json:"body"`
	// Text is the revision as readable lines (what the diff is over).
	Text string `json:"text"`
	// Diff is the word diff from the revision before (nil for the
	// first); DiffText its [-removed-] {+added+} rendering.
	Diff     []DiffOp `json:"diff,omitempty"`
	DiffText string   `json:"diff_text,omitempty"`
	// Renames are the options renamed from the revision before (old →
	// new): an option whose label changed in place while its description
	// stayed, so runs of the two revisions compare through the map.
	Renames map[string]string `json:"renames,omitempty"`
	// Current marks the question as the file holds it now.
	Current bool          `json:"current"`
	Runs    []RevisionRun `json:"runs"`
}

// RevisionRun is one run that asked a revision, with the question's
// metrics in it.
type RevisionRun struct {
	RunID     string    `json:"run"`
	Name      string    `json:"name,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Model     string    `json:"model"`
	// Split is the part of the dataset asked ("" all, dev, test).
	Split    string   `json:"split,omitempty"`
	N        int      `json:"n"`
	Labelled int      `json:"labelled"`
	Accuracy Estimate `json:"accuracy"`
	ECE      Estimate `json:"ece"`
	Brier    Estimate `json:"brier"`
}

// QuestionHistory returns question qid's revisions in set (by its title),
// newest first, with diffs and the metrics of every run that used each.
// It records the question as set holds it now as seen, and first records
// the revisions of stored runs of the set that predate the history.
func QuestionHistory(ctx context.Context, db *store.DB, set *questionset.Set, qid string, opt *MetricOptions) ([]Revision, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	body := set.QuestionBody(qid)
	if body == nil {
		return nil, fmt.Errorf("%s has no question %q (questions: %s)", set.Title(), qid, strings.Join(set.Questions.IDs(), ", "))
	}
	name := set.Title()
	if err := backfillRevisions(ctx, db, name); err != nil {
		return nil, err
	}
	cur := store.HashBytes(body)
	if err := db.RecordRevisions(ctx, "", "", time.Now(), []store.QuestionRevision{{SetName: name, QuestionID: qid, Hash: cur, Body: body}}); err != nil {
		return nil, err
	}
	revs, err := db.QuestionRevisions(ctx, name, qid)
	if err != nil {
		return nil, err
	}
	mo := DefaultMetricOptions()
	if opt != nil {
		mo = *opt
	}
	out := make([]Revision, 0, len(revs))
	var prev *provider.Question
	prevText := ""
	for i, r := range revs {
		q, text := revisionText(r.Body)
		rv := Revision{Hash: r.Hash, FirstSeen: r.FirstSeen, Body: json.RawMessage(r.Body), Text: text, Current: r.Hash == cur}
		if i > 0 {
			rv.Diff = worddiff.Diff(prevText, text)
			rv.DiffText = worddiff.Plain(rv.Diff)
			if prev != nil && q != nil {
				rv.Renames = optionRenames(prev, q)
			}
		}
		uses, err := db.RevisionUses(ctx, name, qid, r.Hash)
		if err != nil {
			return nil, err
		}
		for _, u := range uses {
			run, err := db.Run(ctx, u.RunID)
			if err != nil {
				return nil, err
			}
			v, err := LoadStoredRun(ctx, db, run, ViewConfig{Metrics: &mo, ReportOnly: true})
			if err != nil {
				return nil, err
			}
			rr := RevisionRun{RunID: run.ID, Name: run.Name, StartedAt: run.StartedAt, Model: run.Model, Split: u.Split}
			if len(run.Models) > 0 {
				rr.Model = strings.Join(run.Models, "+")
			}
			if qr := v.QuestionReport(qid); qr != nil {
				rr.N, rr.Labelled, rr.Accuracy, rr.ECE, rr.Brier = qr.N, qr.Labelled, qr.Accuracy, qr.ECE, qr.Brier
			}
			rv.Runs = append(rv.Runs, rr)
		}
		out = append(out, rv)
		prev, prevText = q, text
	}
	slices.Reverse(out)
	return out, nil
}

// backfillRevisions records the revisions of the set's stored runs that
// recorded none (runs stored before the history was kept), each as first
// seen when its run started.
func backfillRevisions(ctx context.Context, db *store.DB, name string) error {
	ids, err := db.RunsWithoutRevisions(ctx, name)
	if err != nil {
		return err
	}
	for _, id := range ids {
		run, err := db.Run(ctx, id)
		if err != nil {
			return err
		}
		snap, err := db.QuestionSet(ctx, run.SetHash)
		if err != nil {
			return fmt.Errorf("run %s: question set: %w", run.ID, err)
		}
		set, err := runner.ParseSnapshot(run.SetName, snap.Body)
		if err != nil {
			return fmt.Errorf("run %s: %w", run.ID, err)
		}
		st, _ := runner.ParseSettings(run)
		if err := db.RecordRevisions(ctx, run.ID, st.Split, run.StartedAt, runner.Revisions(set)); err != nil {
			return err
		}
	}
	return nil
}

// revisionText parses a revision body and writes it as readable lines.
func revisionText(body []byte) (*provider.Question, string) {
	var rb struct {
		ID       string          `json:"id"`
		Question json.RawMessage `json:"question"`
	}
	if err := json.Unmarshal(body, &rb); err != nil {
		return nil, string(body)
	}
	doc := []byte(`{"questions":{` + string(provider.String(rb.ID)) + `:` + string(rb.Question) + `}}`)
	set, err := questionset.Parse("revision.json", doc)
	if err != nil || len(set.Questions) != 1 {
		return nil, string(body)
	}
	e := set.Questions[0]
	q := e.Question
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", rb.ID, q.Type)
	writeFields := func(indent string, instr json.RawMessage, opts []provider.Option, levels []json.RawMessage, typ provider.QuestionType) {
		if instr != nil {
			fmt.Fprintf(&b, "%sinstructions: %s\n", indent, provider.Text(instr))
		}
		if opts != nil || levels != nil {
			fmt.Fprintf(&b, "%scriteria:\n", indent)
		}
		for _, o := range opts {
			fmt.Fprintf(&b, "%s  %s: %s\n", indent, o.Label, provider.Text(o.Description))
		}
		for i, l := range levels {
			fmt.Fprintf(&b, "%s  %d: %s\n", indent, i, provider.Text(l))
		}
	}
	writeFields("", q.Instructions, q.Options, q.Levels, q.Type)
	if st, ok := set.Settings[e.ID]; ok {
		if st.Threshold != nil {
			fmt.Fprintf(&b, "threshold: %g\n", *st.Threshold)
		}
		if st.MinConfidence != nil {
			fmt.Fprintf(&b, "min_confidence: %g\n", *st.MinConfidence)
		}
	}
	for _, v := range set.Variants[e.ID] {
		fmt.Fprintf(&b, "variant %s:\n", v.Name)
		writeFields("  ", v.Instructions, v.Options, v.Levels, q.Type)
		if v.Threshold != nil {
			fmt.Fprintf(&b, "  threshold: %g\n", *v.Threshold)
		}
		if v.MinConfidence != nil {
			fmt.Fprintf(&b, "  min_confidence: %g\n", *v.MinConfidence)
		}
	}
	return &q, strings.TrimRight(b.String(), "\n")
}

// optionRenames infers renamed options between two revisions of a choice:
// an option at the same position whose label changed while its
// description stayed, the old label gone and the new one new.
func optionRenames(a, b *provider.Question) map[string]string {
	if a.Type != provider.Choice || b.Type != provider.Choice {
		return nil
	}
	var out map[string]string
	for i := 0; i < len(a.Options) && i < len(b.Options); i++ {
		oa, ob := a.Options[i], b.Options[i]
		if oa.Label == ob.Label || string(oa.Description) != string(ob.Description) {
			continue
		}
		if b.OptionIndex(oa.Label) >= 0 || a.OptionIndex(ob.Label) >= 0 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[oa.Label] = ob.Label
	}
	return out
}
