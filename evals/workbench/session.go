package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
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
	shifts  []dataset.LabelEdit // planned by PendingRenames
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

// PendingRenames says how many dataset labels saving the set as it is now
// would leave meaning something else, for the save prompt ("rewrite 12
// labels in dataset.jsonl?"): labels naming an option renamed in this
// session, and score labels written as a level index whose level moved
// (levels reordered, inserted or deleted above it). It also plans the
// index rewrites SaveRenames makes (a fork made after it carries the plan).
func (s *Session) PendingRenames(items []Item) int {
	n := 0
	for _, it := range items {
		for q, l := range it.Labels {
			if _, ok := s.renames[q][l.Text]; ok {
				n++
			}
		}
	}
	s.shifts = IndexShifts(s.Set, items)
	return n + len(s.shifts)
}

// PendingIndexShifts is how many level-index labels the last
// PendingRenames found pointing at a level that moved.
func (s *Session) PendingIndexShifts() int { return len(s.shifts) }

// IndexShifts lists the score labels written as a level index (ByIndex)
// whose level is now at another index of set: rewriting each to its new
// index keeps the file meaning what it meant. Labels whose level is gone
// are stale instead (ResolveLabels reports them).
func IndexShifts(set *questionset.Set, items []Item) []dataset.LabelEdit {
	var edits []dataset.LabelEdit
	for _, it := range items {
		for _, q := range slices.Sorted(maps.Keys(it.Labels)) {
			l := it.Labels[q]
			if !l.ByIndex || l.Index < 0 {
				continue
			}
			question, ok := set.Questions.Get(q)
			if !ok || question.Type != provider.Score {
				continue
			}
			now := -1
			for i, lv := range question.Levels {
				if dataset.LevelText(lv) == l.Text {
					now = i
					break
				}
			}
			if now >= 0 && now != l.Index {
				edits = append(edits, dataset.LabelEdit{ItemID: it.ID, Question: q, Value: json.RawMessage(strconv.Itoa(now))})
			}
		}
	}
	return edits
}

// Reindexed returns items with every level-index label's index set to its
// level's index in set (by text), as a dataset rewritten by SaveRenames
// now reads. The input is not changed.
func Reindexed(set *questionset.Set, items []Item) []Item {
	shifts := IndexShifts(set, items)
	if len(shifts) == 0 {
		return items
	}
	type key struct{ item, q string }
	to := make(map[key]int, len(shifts))
	for _, e := range shifts {
		i, _ := strconv.Atoi(string(e.Value))
		to[key{e.ItemID, e.Question}] = i
	}
	out := make([]Item, len(items))
	for i, it := range items {
		out[i] = it
		changed := false
		labels := make(map[string]dataset.Label, len(it.Labels))
		for q, l := range it.Labels {
			if ni, ok := to[key{it.ID, q}]; ok {
				l.Index, changed = ni, true
			}
			labels[q] = l
		}
		if changed {
			out[i].Labels = labels
		}
	}
	return out
}

// ForgetRenames drops the remembered renames and planned index rewrites
// (after the dataset was rewritten, or the user chose to keep the labels).
func (s *Session) ForgetRenames() { s.renames, s.shifts = dataset.Renames{}, nil }

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
	if len(s.renames) == 0 && len(s.shifts) == 0 {
		return 0, nil
	}
	if s.Dataset.Path == "" || s.Dataset.Open != nil {
		return 0, fmt.Errorf("the dataset is not a file this workbench can rewrite; save the set to a folder first")
	}
	n := 0
	if len(s.shifts) > 0 {
		k, err := dataset.RewriteLabels(s.Dataset.Path, s.Dataset.Options, s.shifts)
		n += k
		if err != nil {
			return n, fmt.Errorf("rewrite level-index labels: %w", err)
		}
		s.shifts = nil
	}
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
	n, err := dataset.RewriteLabels(s.Dataset.Path, s.Dataset.Options, []dataset.LabelEdit{{ItemID: itemID, Question: q, Value: value}})
	if err != nil || n == 0 {
		return err // n 0: the label was already that; nothing changed
	}
	return s.recordRelabel(context.Background(), itemID, q)
}

// recordRelabel records in the hold-out ledger a label of question q
// changed after some revision of q had been evaluated on test, so the
// reports of later runs on test say so. Without a writable database
// there is no ledger to record in.
func (s *Session) recordRelabel(ctx context.Context, itemID, q string) error {
	if s.Template == nil || s.Template.DB == nil || s.Template.DB.ReadOnly() {
		return nil
	}
	db := s.Template.DB
	n, err := db.RevisionsOnSplit(ctx, s.Set.Title(), q, questionset.SplitTest)
	if err != nil || n == 0 {
		if err != nil {
			return fmt.Errorf("label saved, but the hold-out ledger could not be read: %w", err)
		}
		return nil
	}
	split := ""
	if s.Set.Split != nil {
		split = s.Set.Split.Of(itemID)
	}
	if err := db.RecordLabelEdit(ctx, store.LabelEdit{SetName: s.Set.Title(), QuestionID: q, ItemID: itemID, Split: split, At: time.Now()}); err != nil {
		return fmt.Errorf("label saved, but the hold-out ledger did not record it: %w", err)
	}
	return nil
}
