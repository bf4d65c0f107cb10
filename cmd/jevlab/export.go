package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dialects"
	"github.com/jevlab/jevlab/evals/formats"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

func newExportCmd(a *app) *cobra.Command {
	var to, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "export --to playground|jevl|jev-packs SOURCE [-o OUT]",
		Short: "Write a set, a run or recordings in another tool's format",
		Long: `export writes jevlab's files in another tool's format.

  --to playground FILE   a TypeSafe Playground share link for the question set:
                         the working state as the document (JSON text for a
                         structured state), the questions as JSON, the set's
                         model (or --model). Caller-side settings (threshold,
                         min_confidence, gates, dataset) have no place in a
                         share; they are named on stderr.
  --to jevl SOURCE       jevkit JEVL v1 records (to -o FILE or stdout) of a
                         stored run (an id, prefix, latest or latest~N: one
                         record per answered item × repeat, with its label)
                         or of a recorded-exchanges file (.jsonl; what an
                         import --from jevl carried, unknown keys included,
                         is written back).
  --to jev-packs FILE    a jev-packs pack folder (-o DIR, named after the
                         pack id): pack.yaml, cases.jsonl from the set's
                         dataset, predictions.jsonl from its first fixture
                         file, README.md and CHANGELOG.md.`,
		Example: `  jevlab export --to playground fixtures/demo-triage/questions.yaml
  jevlab export --to jevl latest -o run.jevl
  jevlab export --to jev-packs fixtures/demo-triage/questions.yaml -o packs/demo-triage`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch to {
			case "playground":
				return a.exportPlayground(cmd, args[0])
			case "jevl":
				return a.exportJEVL(cmd, args[0], out, force)
			case "jev-packs":
				return a.exportPack(cmd, args[0], out, force)
			}
			return usageErr(fmt.Errorf("--to %q: export targets are playground, jevl and jev-packs", to))
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "export target: playground, jevl or jev-packs")
	cmd.Flags().StringVarP(&out, "output", "o", "", "jevl: the file (default stdout); jev-packs: the pack folder")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite OUT if it exists")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func (a *app) exportPlayground(cmd *cobra.Command, path string) error {
	set, err := a.loadSet(path)
	if err != nil {
		return usageErr(err)
	}
	if a.model != "" {
		set.Model = a.model
	}
	sh, notes, err := dialects.ShareFor(set)
	if err != nil {
		return usageErr(fmt.Errorf("export %s: %w", path, err))
	}
	for _, n := range notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "jevlab: note:", n)
	}
	fmt.Fprintln(cmd.OutOrStdout(), sh.Link())
	return nil
}

// exportJEVL writes JEVL records of a recorded-exchanges file or a run.
func (a *app) exportJEVL(cmd *cobra.Command, source, out string, force bool) error {
	var b bytes.Buffer
	var n, skipped int
	var err error
	if fi, statErr := os.Stat(source); statErr == nil && !fi.IsDir() {
		n, skipped, err = jevlFromFixtures(&b, source, fi.ModTime())
	} else {
		n, skipped, err = a.jevlFromRun(cmd.Context(), &b, source)
	}
	if err != nil {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "jevlab: note: %d failed or unanswered exchanges are not written: JEVL v1 has no per-record errors\n", skipped)
	}
	if out == "" {
		_, err := cmd.OutOrStdout().Write(b.Bytes())
		return err
	}
	if err := refuseExisting(out, force); err != nil {
		return err
	}
	if err := questionset.WriteFileAtomic(out, b.Bytes(), 0o644); err != nil {
		return failErr(fmt.Errorf("write %s: %w", out, err))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "jevlab: wrote %s (%d JEVL records)\n", out, n)
	return nil
}

func refuseExisting(out string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Stat(out); err == nil {
		return usageErr(fmt.Errorf("%s already exists; use --force to overwrite it", out))
	}
	return nil
}

func jevlFromFixtures(w *bytes.Buffer, path string, mtime time.Time) (n, skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, usageErr(err)
	}
	defer f.Close()
	fallback := mtime.UTC().Truncate(time.Second).Format(time.RFC3339)
	br := bufio.NewReader(f)
	line := 0
	for {
		text, rerr := br.ReadBytes('\n')
		if len(bytes.TrimSpace(text)) > 0 {
			line++
			rec, ok, err := formats.JEVLFromExchange(text, fallback)
			if err != nil {
				return n, skipped, usageErr(fmt.Errorf("%s:%d: %w", path, line, err))
			}
			if !ok {
				skipped++
			} else {
				formats.WriteJEVL(w, &rec)
				n++
			}
		} else if len(text) > 0 {
			line++
		}
		if rerr == io.EOF {
			return n, skipped, nil
		}
		if rerr != nil {
			return n, skipped, rerr
		}
	}
}

// jevlFromRun writes one record per answered item × repeat of a stored
// run: the request rebuilt from the run's set and dataset snapshots, the
// answers as stored, the item's labels in JEVL's encoding.
func (a *app) jevlFromRun(ctx context.Context, w *bytes.Buffer, ref string) (n, skipped int, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	db, err := a.db()
	if err != nil {
		return 0, 0, usageErr(err)
	}
	run, err := db.ResolveRun(ctx, ref)
	if err != nil {
		return 0, 0, usageErr(fmt.Errorf("%s is neither a file nor a stored run: %w", ref, err))
	}
	snap, err := db.QuestionSetSnapshot(ctx, run.ID)
	if err != nil {
		return 0, 0, err
	}
	set, err := runner.ParseSnapshot(run.ID, snap.Body)
	if err != nil {
		return 0, 0, err
	}
	questions, _ := set.Questions.MarshalJSON()
	type item struct {
		state  json.RawMessage
		labels map[string]json.RawMessage
	}
	items := map[string]*item{}
	err = db.DatasetItems(ctx, run.ID, func(di store.DatasetItem) error {
		labs, err := runner.ParseLabels(di.Labels)
		if err != nil {
			return err
		}
		it := &item{state: di.State}
		for q, l := range labs {
			question, ok := set.Questions.Get(q)
			if !ok {
				continue
			}
			if it.labels == nil {
				it.labels = map[string]json.RawMessage{}
			}
			switch question.Type {
			case provider.Choice:
				it.labels[q] = provider.String(l.Text)
			case provider.Score:
				it.labels[q] = json.RawMessage(fmt.Sprint(l.Index))
			case provider.Noul:
				it.labels[q] = json.RawMessage(fmt.Sprint(l.Index == 1))
			}
		}
		items[di.ID] = it
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	type key struct {
		id  string
		rep int
	}
	answers := map[key]map[string]json.RawMessage{}
	err = db.ForEachAnswer(ctx, run.ID, func(an *store.ItemAnswer) error {
		if an.Answer == nil || len(an.Answer.Raw) == 0 {
			return nil
		}
		k := key{an.ItemID, an.Repeat}
		if answers[k] == nil {
			answers[k] = map[string]json.RawMessage{}
		}
		answers[k][an.QuestionID] = an.Answer.Raw
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	ts := run.StartedAt.UTC().Truncate(time.Second).Format(time.RFC3339)
	err = db.ForEachItemResult(ctx, run.ID, func(r *store.ItemResult) error {
		it := items[r.ItemID]
		ans := answers[key{r.ItemID, r.Repeat}]
		if it == nil || r.ErrKind != "" || len(ans) == 0 {
			skipped++
			return nil
		}
		var ab bytes.Buffer
		ab.WriteByte('{')
		m := 0
		for _, e := range set.Questions {
			raw, ok := ans[e.ID]
			if !ok {
				continue
			}
			if m > 0 {
				ab.WriteByte(',')
			}
			m++
			ab.Write(provider.String(e.ID))
			ab.WriteByte(':')
			ab.Write(raw)
		}
		ab.WriteByte('}')
		usage := r.Usage
		rec := formats.JEVLRecord{V: formats.JEVLVersion, TS: ts, Model: r.Model, State: it.state, Quest: questions, Answers: ab.Bytes(), Usage: &usage, Label: it.labels,
			Meta: map[string]json.RawMessage{"requested_model": provider.String(run.Model), "jevlab_run": provider.String(run.ID), "jevlab_item": provider.String(r.ItemID)}}
		if r.Repeat > 0 {
			rec.Meta["jevlab_repeat"] = json.RawMessage(fmt.Sprint(r.Repeat))
		}
		rec.ID = formats.JEVLDigest(rec.Model, rec.Quest, rec.State)
		formats.WriteJEVL(w, &rec)
		n++
		return nil
	})
	if err != nil {
		return n, skipped, err
	}
	if n == 0 {
		return 0, skipped, usageErr(errors.New("run " + run.ID + " has no answered items to export"))
	}
	return n, skipped, nil
}

// exportPack writes the set as a jev-packs pack folder.
func (a *app) exportPack(cmd *cobra.Command, path, out string, force bool) error {
	if out == "" {
		return usageErr(errors.New("--to jev-packs writes a pack folder: name it with -o DIR (the folder's name is the pack id)"))
	}
	set, err := a.loadSet(path)
	if err != nil {
		return usageErr(err)
	}
	files, notes, err := formats.ExportPack(set, out)
	if err != nil {
		return usageErr(fmt.Errorf("export %s: %w", path, err))
	}
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 && !force {
		return usageErr(fmt.Errorf("%s exists and is not empty; use --force to write into it", out))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usageErr(err)
	}
	var names []string
	for name, data := range files {
		if err := questionset.WriteFileAtomic(out+string(os.PathSeparator)+name, data, 0o644); err != nil {
			return failErr(fmt.Errorf("write %s: %w", name, err))
		}
		names = append(names, name)
	}
	for _, n := range notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "jevlab: note:", n)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "jevlab: wrote pack %s (%s)\n", out, strings.Join(sortedNames(files), ", "))
	_ = names
	return nil
}
