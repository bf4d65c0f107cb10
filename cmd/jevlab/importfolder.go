package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/formats"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
)

// folderFormats are the --from values that import other tools' files into
// a folder (set, dataset, fixtures, stored runs).
var folderFormats = []string{"jev-packs", "jevassert", "jevl", "jev-eval"}

type folderImport struct {
	from   string
	out    string
	force  bool
	pack   string // jevassert: the pack folder
	data   string // jev-eval: labelled rows
	config string // jev-eval: question config
	noRuns bool
}

// importFolder imports sources written by another tool into the folder
// o.out: questions.yaml with its dataset and fixtures beside it, and the
// recorded runs stored in the database.
func (a *app) importFolder(cmd *cobra.Command, o folderImport, sources []string) error {
	if o.out == "" {
		return usageErr(fmt.Errorf("--from %s writes a folder (questions.yaml, its dataset and recordings): name it with -o DIR", o.from))
	}
	var f *formats.Folder
	var err error
	switch o.from {
	case "jev-packs":
		if len(sources) != 1 {
			return usageErr(errors.New("--from jev-packs takes one pack folder (holding pack.yaml and cases.jsonl)"))
		}
		f, err = formats.ImportPack(sources[0], formats.PackOptions{})
	case "jevassert":
		pack := o.pack
		if pack == "" {
			pack = filepath.Dir(sources[0])
			if _, err := os.Stat(filepath.Join(pack, "pack.yaml")); err != nil {
				return usageErr(fmt.Errorf("--from jevassert needs the recordings' pack: no pack.yaml beside %s; name the pack folder with --pack DIR", sources[0]))
			}
		}
		f, err = formats.ImportPack(pack, formats.PackOptions{Recordings: sources, Runs: !o.noRuns})
	case "jevl":
		f, err = formats.ImportJEVL(sources, !o.noRuns)
	case "jev-eval":
		if len(sources) != 1 {
			return usageErr(errors.New("--from jev-eval takes one cache file (run --cache FILE); give --config and --data"))
		}
		f, err = formats.ImportJevEval(formats.JevEvalFiles{Config: o.config, Data: o.data, Cache: sources[0]}, !o.noRuns)
	}
	if err != nil {
		return usageErr(err)
	}
	setPath, err := writeFolder(f, o.out, o.force)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	for _, n := range f.Notes {
		fmt.Fprintln(stderr, "jevlab: note:", n)
	}
	fmt.Fprintf(stderr, "jevlab: wrote %s (%d questions; %s)\n", setPath, len(f.Set.Questions), strings.Join(sortedNames(f.Files), ", "))
	if len(f.Runs) == 0 {
		return nil
	}
	set, err := a.loadSet(setPath)
	if err != nil {
		return fmt.Errorf("imported set does not load back: %w", err)
	}
	ids, err := a.storeImportedRuns(cmd.Context(), set, f)
	if err != nil {
		return err
	}
	for i, id := range ids {
		r := f.Runs[i]
		fmt.Fprintf(stderr, "jevlab: stored run %s (%s, %d round(s))\n", id, r.Name, len(r.Rounds))
	}
	return nil
}

func sortedNames(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeFolder writes the imported files and DIR/questions.yaml. DIR must
// be new or empty unless force.
func writeFolder(f *formats.Folder, dir string, force bool) (string, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 && !force {
		return "", usageErr(fmt.Errorf("%s exists and is not empty; use --force to write into it", dir))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", usageErr(err)
	}
	body, err := f.Marshal()
	if err != nil {
		return "", err
	}
	for name, data := range f.Files {
		if name != filepath.Base(name) || name == "questions.yaml" {
			return "", fmt.Errorf("import: refusing to write %q outside the folder", name)
		}
		if err := questionset.WriteFileAtomic(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", failErr(fmt.Errorf("write %s: %w", name, err))
		}
	}
	setPath := filepath.Join(dir, "questions.yaml")
	if err := questionset.WriteFileAtomic(setPath, body, 0o644); err != nil {
		return "", failErr(fmt.Errorf("write %s: %w", setPath, err))
	}
	return setPath, nil
}

// storeImportedRuns stores each recorded run through the runner, answered
// in dataset order by a provider that replays the recording's rounds, so
// an imported run is stored exactly as an eval of the same answers.
func (a *app) storeImportedRuns(ctx context.Context, set *questionset.Set, f *formats.Folder) ([]string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	db, err := a.db()
	if err != nil {
		return nil, usageErr(fmt.Errorf("%w (choose another with --db or $JEVLAB_DB)", err))
	}
	np, err := set.DatasetPath(a.allowPaths)
	if err != nil {
		return nil, usageErr(err)
	}
	dataPath := np.Path
	items, err := dataset.Load(dataPath, dataset.Options{}.ForSet(set), set)
	if err != nil {
		return nil, fmt.Errorf("imported dataset does not load back: %w", err)
	}
	var ids []string
	for _, r := range f.Runs {
		rp := newRoundsProvider(set, items, r)
		cfg := runner.Config{
			Set: set, Items: items, DatasetPath: dataPath, DB: db, Provider: rp,
			Repeat: len(r.Rounds), Concurrency: 1, Name: r.Name,
			ProviderKind: "imported", Version: versionString(),
			Settings: runner.Settings{ImportedFrom: f.Format, Source: f.Source},
		}
		id, err := runner.Run(ctx, cfg, nil)
		if err != nil {
			return ids, fmt.Errorf("store imported run %s: %w", r.Name, err)
		}
		if rp.err != nil {
			return ids, rp.err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// roundsProvider answers a run's requests from its recorded rounds. The
// runner asks with one worker, items in dataset order and each item's
// repeats in order, so the k-th call is the next (item, round) of that
// order; the request's state is checked against the item's.
type roundsProvider struct {
	mu    sync.Mutex
	set   *questionset.Set
	order []roundCall
	next  int
	err   error
}

type roundCall struct {
	item  dataset.Item
	rec   *formats.Record // nil: not recorded in this round
	round int
}

func newRoundsProvider(set *questionset.Set, items []dataset.Item, r formats.Run) *roundsProvider {
	byRound := make([]map[string]*formats.Record, len(r.Rounds))
	for k, recs := range r.Rounds {
		byRound[k] = map[string]*formats.Record{}
		for i := range recs {
			byRound[k][recs[i].ItemID] = &recs[i]
		}
	}
	p := &roundsProvider{set: set}
	for _, it := range items {
		for k := range r.Rounds {
			p.order = append(p.order, roundCall{item: it, rec: byRound[k][it.ID], round: k + 1})
		}
	}
	return p
}

// Ask replays the next recorded answer.
func (p *roundsProvider) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= len(p.order) {
		p.err = errors.New("import: the runner asked more than the recording holds")
		return nil, &provider.Error{Kind: provider.KindInvalid, Message: p.err.Error()}
	}
	c := p.order[p.next]
	p.next++
	if !bytes.Equal(provider.Compact(req.State), provider.Compact(c.item.State)) {
		p.err = fmt.Errorf("import: request %d is not item %s's; the runner's order changed", p.next, c.item.ID)
		return nil, &provider.Error{Kind: provider.KindInvalid, Message: p.err.Error()}
	}
	if c.rec == nil {
		return nil, &provider.Error{Kind: provider.KindMiss, Message: fmt.Sprintf("item %s is not in round %d of the recording", c.item.ID, c.round)}
	}
	if c.rec.Error != "" || c.rec.Answers == nil {
		kind := provider.KindUnavailable
		if strings.HasPrefix(c.rec.Error, "HTTP 4") {
			kind = provider.KindRejected
		}
		return nil, &provider.Error{Kind: kind, Message: "recorded error: " + c.rec.Error}
	}
	var body bytes.Buffer
	body.WriteString(`{"model":`)
	body.Write(provider.String(c.rec.Model))
	body.WriteString(`,"answers":`)
	body.Write(c.rec.Answers)
	body.WriteString(`}`)
	resp, err := provider.DecodeResponse(body.Bytes())
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindMalformed, Message: fmt.Sprintf("item %s, line %d: %v", c.item.ID, c.rec.Line, err)}
	}
	if len(resp.Answers) < len(req.Questions) {
		// The source did not ask every question of this item (jev-eval
		// asks a row only what it labels): check what was answered; the
		// runner marks the rest unanswered.
		var asked []string
		for _, e := range req.Questions {
			if _, ok := resp.Answers[e.ID]; ok {
				asked = append(asked, e.ID)
			}
		}
		req = req.Subset(asked)
	}
	answers, err := provider.Check(req, resp)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindMalformed, Message: fmt.Sprintf("item %s, line %d: %v", c.item.ID, c.rec.Line, err), Err: err}
	}
	res := &provider.Result{Model: c.rec.Model, Answers: answers, Latency: time.Duration(c.rec.LatencyMS * float64(time.Millisecond)), Attempts: 1}
	if c.rec.InputTokens >= 0 {
		res.Usage = provider.Usage{InputTokens: c.rec.InputTokens, OutputTokens: max(c.rec.OutputTokens, 0)}
		res.CostUSD = provider.Cost(res.Usage, provider.CostPerMillionInputTokens)
	}
	for i := range res.Answers {
		res.Answers[i].Provenance = provider.Provenance{Source: provider.SourceCache, Model: c.rec.Model, Origin: fmt.Sprintf("imported round %d, line %d", c.round, c.rec.Line)}
	}
	return res, nil
}
