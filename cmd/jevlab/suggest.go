package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/store"
)

type suggestOptions struct {
	data        string
	n           int
	out         string
	runs        []string
	questions   []string
	diversity   float64
	asJSON      bool
	idField     string
	stateField  string
	stateFields string
	labels      []string
}

func newSuggestCmd(a *app) *cobra.Command {
	var o suggestOptions
	cmd := &cobra.Command{
		Use:   "suggest FILE",
		Short: "Rank the dataset's unlabelled items by how much a label would teach",
		Long: `suggest ranks the items of the set's dataset (or --data) that have no label
for a question by how much labelling them would teach, from the answers of a
stored run (--run; default the newest run of the set): uncertainty (one minus
the top-two margin, and the entropy normalised to 0..1, averaged) plus
disagreement (the mean total-variation distance to the same item's answers
from the run's variants and from further --run runs). Items are picked
greedily with a penalty for word overlap with those already picked
(--diversity, 0 off), so the list is not twenty copies of one ticket.

-o PATH writes the suggested items as JSON Lines ready to label: id, state,
an empty labels object to fill in, and a "suggested" object with the rank,
the scores and the run's decisions.`,
		Example: `  jevlab suggest triage.yaml --n 20
  jevlab suggest triage.yaml --n 50 -o to-label.jsonl --run latest --run latest~1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.n < 0 {
				return usageErr(fmt.Errorf("--n %d: must not be negative", o.n))
			}
			return a.suggest(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "dataset (JSON Lines or CSV); default: the set's dataset:")
	f.IntVar(&o.n, "n", 20, "how many items to suggest (0: every unlabelled item, ranked)")
	f.StringVarP(&o.out, "output", "o", "", "write the suggested items as JSON Lines ready to label to PATH")
	f.StringArrayVar(&o.runs, "run", nil, "stored run whose answers rank the items (repeat for a second run to add run-to-run disagreement); default: the newest run of the set")
	f.StringArrayVar(&o.questions, "question", nil, "rank by this question only (repeatable); default: every question")
	f.Float64Var(&o.diversity, "diversity", workbench.DefaultDiversity, "weight of the word-overlap penalty (0: off)")
	f.BoolVar(&o.asJSON, "json", false, "print the suggestions as JSON")
	bindDataFlags(f, &o.idField, &o.stateField, &o.stateFields, &o.labels)
	return cmd
}

func (a *app) suggest(ctx context.Context, path string, o suggestOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := a.loadSet(path)
	if err != nil {
		return usageErr(err)
	}
	opt, err := flagDataOptions(o.idField, o.stateField, o.stateFields, o.labels)
	if err != nil {
		return usageErr(err)
	}
	opt = a.dataOptions(opt)
	if o.data == "" {
		opt = opt.ForSet(set)
	}
	ds, err := workbench.DatasetFor(set, o.data, opt, a.allowPaths)
	if err != nil {
		return usageErr(err)
	}
	items, err := workbench.LoadItems(ctx, set, ds)
	if err != nil {
		return usageErr(err)
	}
	db, err := a.db()
	if err != nil {
		return usageErr(fmt.Errorf("%w (choose another with --db or $JEVLAB_DB)", err))
	}
	refs := o.runs
	if len(refs) == 0 {
		runs, err := db.Runs(ctx, store.RunFilter{SetName: set.Title(), Limit: 1})
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			return usageErr(fmt.Errorf("no stored run of %s to rank the items by: run jevlab eval %s first (unlabelled items are asked too), or name one with --run", set.Title(), shellQuote(path)))
		}
		refs = []string{runs[0].ID}
	}
	var views []*workbench.RunView
	for _, ref := range refs {
		v, err := workbench.LoadRun(ctx, db, ref, workbench.ViewConfig{})
		if err != nil {
			return usageErr(err)
		}
		views = append(views, v)
	}
	div := o.diversity
	if div == 0 {
		div = -1
	}
	sug, err := workbench.Suggest(items, views, workbench.SuggestOptions{N: o.n, Questions: o.questions, Diversity: div})
	if err != nil {
		return usageErr(err)
	}
	if o.out != "" {
		var b bytes.Buffer
		for _, s := range sug {
			row := struct {
				ID        string          `json:"id"`
				State     json.RawMessage `json:"state"`
				Labels    struct{}        `json:"labels"`
				Suggested any             `json:"suggested"`
			}{ID: s.ItemID, State: s.State, Suggested: struct {
				Rank         int               `json:"rank"`
				Score        float64           `json:"score"`
				Uncertainty  float64           `json:"uncertainty"`
				Disagreement float64           `json:"disagreement"`
				Decisions    map[string]string `json:"decisions"`
			}{s.Rank, s.Score, s.Uncertainty, s.Disagreement, s.Decisions}}
			line, err := json.Marshal(row)
			if err != nil {
				return err
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := writeReportFile(o.out, b.Bytes()); err != nil {
			return err
		}
	}
	if o.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Runs        []string               `json:"runs"`
			Suggestions []workbench.Suggestion `json:"suggestions"`
		}{viewIDs(views), sug})
	}
	fmt.Fprintf(a.stdout, "%d item(s) to label next, ranked by uncertainty + disagreement with a word-overlap penalty (runs %s)\n\n", len(sug), strings.Join(viewIDs(views), ", "))
	for _, s := range sug {
		var dec []string
		for _, q := range s.Questions {
			dec = append(dec, q+"="+s.Decisions[q])
		}
		fmt.Fprintf(a.stdout, "%3d  %-16s score %.3f  (margin %.2f, entropy %.2f, disagreement %.3f, overlap %.2f)  %s\n", s.Rank, esc(s.ItemID), s.Score, s.Margin, s.Entropy, s.Disagreement, s.Similarity, esc(strings.Join(dec, " ")))
		fmt.Fprintf(a.stdout, "     %s\n", esc(firstLine(string(s.State), 120)))
	}
	if o.out != "" {
		fmt.Fprintf(a.stdout, "\nwrote %d row(s) ready to label to %s\n", len(sug), o.out)
	}
	return nil
}

func viewIDs(vs []*workbench.RunView) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Run.ID
	}
	return out
}
