package workbench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// Item is one dataset item (dataset.Item).
type Item = dataset.Item

// StaleLabel is a dataset label that names nothing in the set as it is now
// (dataset.StaleLabel).
type StaleLabel = dataset.StaleLabel

// DatasetSource says where a set's dataset comes from: a file, or (for the
// shipped example) an embedded reader.
type DatasetSource struct {
	// Path is the dataset file, resolved against the set's folder; it is
	// recorded with runs. For an embedded dataset it names the file as
	// shown ("fixtures/banking77/dataset.jsonl").
	Path string
	// Options are the field-mapping options.
	Options dataset.Options
	// Open opens an embedded dataset; nil reads Path from disk.
	Open func() (io.ReadCloser, error)
}

// Session is one open question set being designed: the set as it is now,
// its dataset, the option renames made since it was opened, and the run
// template. The workbench keeps one for its whole life; a command makes one
// per invocation. A Session is not safe for concurrent use: the workbench
// calls it from Update and hands copies of what a tea.Cmd needs to it.
type Session struct {
	// Set is the working set; editors change it in place.
	Set *questionset.Set
	// Dataset is where the set's items come from; Path "" means none.
	Dataset DatasetSource
	// Template starts runs (nil: no database, runs cannot be stored).
	Template *RunTemplate
	// AskVariants asks every variant of the set beside its question in
	// the session's runs (PrepareRun).
	AskVariants bool

	renames dataset.Renames
}

// NewSession opens set with its dataset source.
func NewSession(set *questionset.Set, ds DatasetSource, tmpl *RunTemplate) *Session {
	return &Session{Set: set, Dataset: ds, Template: tmpl, renames: dataset.Renames{}}
}

// DatasetFor is the dataset a set names, resolved against the set's folder,
// with opt's field mapping; override (a --data flag) wins. Path is "" when
// there is none. The set's own dataset: must stay inside its folder or
// one of the allowed roots (--allow-path); otherwise the error is located
// and names the flag (questionset.Set.DatasetPath).
func DatasetFor(set *questionset.Set, override string, opt dataset.Options, allow []string) (DatasetSource, error) {
	ds := DatasetSource{Options: opt}
	switch {
	case override != "":
		ds.Path = override
	case set.Dataset != "":
		np, err := set.DatasetPath(allow)
		if err != nil {
			return ds, err
		}
		ds.Path = np.Path
	}
	return ds, nil
}

// LoadItems reads every item of the dataset with its labels kept as text:
// labels that name no option of the set as it is now are kept (not
// failed) so that Labelled can report and exclude them. Malformed rows
// still fail with file:line.
func LoadItems(ctx context.Context, set *questionset.Set, ds DatasetSource) ([]Item, error) {
	if ds.Path == "" {
		return nil, fmt.Errorf("the question set names no dataset: add dataset: FILE.jsonl to it, or pass --data PATH")
	}
	opt := ds.Options
	opt.KeepStale = true
	var items []Item
	add := func(it Item) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		items = append(items, it)
		return nil
	}
	if ds.Open != nil {
		r, err := ds.Open()
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", ds.Path, err)
		}
		defer r.Close()
		if err := dataset.Parse(ds.Path, r, opt, set, add); err != nil {
			return nil, err
		}
		return items, nil
	}
	if err := dataset.Stream(ds.Path, opt, set, add); err != nil {
		return nil, err
	}
	return items, nil
}

// Labelled resolves items' labels against the set as it is now, through
// the renames made in this session: the items to evaluate, and the labels
// that name nothing any more (excluded, and to be said).
func (s *Session) Labelled(items []Item) ([]Item, []StaleLabel) {
	return dataset.ResolveLabels(s.Set, items, s.renames)
}

// RenameOption renames option old of question q in the set and remembers
// it, so labels with the old text count as the new option for the rest of
// the session (and SaveLabels can rewrite them in the dataset file).
func (s *Session) RenameOption(q, old, new string) error {
	if err := s.Set.RenameOption(q, old, new); err != nil {
		return err
	}
	m := s.renames[q]
	if m == nil {
		m = map[string]string{}
		s.renames[q] = m
	}
	// Chains collapse: a → b then b → c maps a (and b) to c; renaming
	// back to the original drops the entry.
	introduced := false // old is itself a name given in this session
	for from, to := range m {
		if to == old {
			m[from] = new
			introduced = true
		}
	}
	if !introduced {
		m[old] = new
	}
	for from, to := range m {
		if from == to {
			delete(m, from)
		}
	}
	return nil
}

// Renames returns the option renames made in this session, per question:
// old label → new label.
func (s *Session) Renames() map[string]map[string]string {
	out := make(map[string]map[string]string, len(s.renames))
	for q, m := range s.renames {
		if len(m) > 0 {
			out[q] = maps.Clone(m)
		}
	}
	return out
}

// PendingRenames says how many dataset labels the session's renames
// would rewrite, for the save prompt ("rewrite 12 labels in dataset.jsonl?").
func (s *Session) PendingRenames(items []Item) int {
	n := 0
	for _, it := range items {
		for q, l := range it.Labels {
			if _, ok := s.renames[q][l.Text]; ok {
				n++
			}
		}
	}
	return n
}

// ForgetRenames drops the remembered renames (after the dataset was
// rewritten, or the user chose to keep the old labels).
func (s *Session) ForgetRenames() { s.renames = dataset.Renames{} }

// StaleSummary is the one sentence every front end prints for stale
// labels: "2 labels name no option of the set and are excluded: item a1:
// queue="other": "other" is not an option of queue; …".
func StaleSummary(stale []StaleLabel, max int) string {
	if len(stale) == 0 {
		return ""
	}
	noun := "labels name"
	if len(stale) == 1 {
		noun = "label names"
	}
	parts := make([]string, 0, min(len(stale), max))
	for i, s := range stale {
		if i == max {
			break
		}
		parts = append(parts, s.String())
	}
	more := ""
	if len(stale) > max {
		more = fmt.Sprintf("; and %d more", len(stale)-max)
	}
	return fmt.Sprintf("%d %s nothing in the set as it is now and %s excluded from the metrics: %s%s",
		len(stale), noun, map[bool]string{true: "is", false: "are"}[len(stale) == 1], strings.Join(parts, "; "), more)
}

// StaleQuestions lists the questions with stale labels, sorted.
func StaleQuestions(stale []StaleLabel) []string {
	seen := map[string]bool{}
	for _, s := range stale {
		seen[s.Question] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// StartRun evaluates items (raw, as LoadItems returned them; labels are
// resolved against the set as it is now, through the renames) with the
// session's template. The set is snapshotted before the run starts, so
// edits made while it runs do not reach it.
func (s *Session) StartRun(ctx context.Context, items []Item, name, resume string, progress chan<- Progress) (string, error) {
	spec, _ := s.PrepareRun(items, name, resume, "")
	return s.Template.StartRun(ctx, spec, progress)
}

// PrepareRun is the part of StartRun that reads the session: the labels
// resolved against the set as it is now (the stale ones returned, to be
// said), the set snapshotted (with model, when not empty, as its model)
// and the resolved dataset path. The workbench calls it in Update and runs
// s.Template.StartRun(ctx, spec, progress) in a tea.Cmd, so the run never
// touches the session while the user edits it.
func (s *Session) PrepareRun(items []Item, name, resume, model string) (RunSpec, []StaleLabel) {
	labelled, stale := s.Labelled(items)
	set := s.Set.Clone()
	if model != "" {
		set.Model = model
	}
	return RunSpec{Set: set, DatasetPath: s.Dataset.Path, Items: labelled, Name: name, Resume: resume, Variants: s.VariantsToAsk(s.AskVariants)}, stale
}

// AskState asks the session's set about state (nil: its working state)
// with model ("" : the set's) through p, with the per-question fallback.
func (s *Session) AskState(ctx context.Context, p provider.Provider, state []byte, model string) (*Asked, error) {
	req, err := Request(s.Set, state, model)
	if err != nil {
		return nil, err
	}
	return Ask(ctx, p, req)
}

// SaveRenames rewrites the dataset file's labels through the session's
// option renames (atomically, in the file's own format, every other byte
// kept), then forgets the renames: the dataset now says what the set
// means. It returns how many labels changed. An embedded dataset (the
// shipped example) or none cannot be rewritten.
func (s *Session) SaveRenames() (int, error) {
	if len(s.renames) == 0 {
		return 0, nil
	}
	if s.Dataset.Path == "" || s.Dataset.Open != nil {
		return 0, fmt.Errorf("the dataset is not a file this workbench can rewrite; save the set to a folder first")
	}
	n := 0
	for _, q := range slices.Sorted(maps.Keys(s.renames)) {
		if len(s.renames[q]) == 0 {
			continue
		}
		k, err := dataset.RenameLabels(s.Dataset.Path, s.Dataset.Options, q, s.renames[q])
		n += k
		if err != nil {
			return n, fmt.Errorf("rewrite labels of %s: %w", q, err)
		}
		delete(s.renames, q)
	}
	return n, nil
}

// SetLabel writes one item's label (value as JSON: an option or level
// text, a level index, true/false; nil removes it) into the dataset file,
// checked against the set as it is now first.
func (s *Session) SetLabel(itemID, q string, value []byte) error {
	if s.Dataset.Path == "" || s.Dataset.Open != nil {
		return fmt.Errorf("the dataset is not a file this workbench can rewrite; save the set to a folder first")
	}
	if value != nil && string(value) != "null" {
		question, ok := s.Set.Questions.Get(q)
		if !ok {
			return fmt.Errorf("the set has no question %s", q)
		}
		if _, _, msg := dataset.ResolveLabel(question, value); msg != "" {
			return fmt.Errorf("label for %s: %s", q, msg)
		}
	}
	_, err := dataset.RewriteLabels(s.Dataset.Path, s.Dataset.Options, []dataset.LabelEdit{{ItemID: itemID, Question: q, Value: value}})
	return err
}
