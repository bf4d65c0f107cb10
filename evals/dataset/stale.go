package dataset

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// StaleLabel is a label that no longer means anything in the set as it is
// now: its text names no option or level of the question (an option was
// renamed or deleted, levels changed, the type changed), or the question
// is gone. It is excluded from every metric, and said so.
type StaleLabel struct {
	ItemID   string `json:"item_id"`
	Line     int    `json:"line,omitempty"`
	Question string `json:"question"`
	Text     string `json:"label"`
	// Why says what is wrong, e.g. `"other" is not an option of queue`.
	Why string `json:"why"`
}

func (s StaleLabel) String() string {
	return fmt.Sprintf("item %s: %s=%s: %s", s.ItemID, s.Question, strconv.Quote(s.Text), s.Why)
}

// Renames maps, per question id, an old option label to the new one (an
// option renamed in the editor): labels with the old text count as the
// new option.
type Renames map[string]map[string]string

// ResolveLabels resolves every item's labels against set as it is now, by
// label text (never by a remembered index, so inserting, deleting or
// reordering options and levels cannot shift a label to another outcome),
// through renames. It returns new items (the input is not changed) with
// fresh indices, and the labels that name nothing in set, which are left
// out of the returned items' labels. Items should come from a read with
// Options.KeepStale so that stale labels reach here instead of failing.
func ResolveLabels(set *questionset.Set, items []Item, renames Renames) ([]Item, []StaleLabel) {
	out := make([]Item, len(items))
	var stale []StaleLabel
	for i, it := range items {
		out[i] = it
		if len(it.Labels) == 0 {
			continue
		}
		labels := make(map[string]Label, len(it.Labels))
		for _, qid := range labelIDs(set, it.Labels) {
			l := it.Labels[qid]
			text := l.Text
			if to, ok := renames[qid][text]; ok {
				text = to
			}
			q, ok := set.Questions.Get(qid)
			if !ok {
				stale = append(stale, StaleLabel{ItemID: it.ID, Line: it.Line, Question: qid, Text: l.Text,
					Why: fmt.Sprintf("the set has no question %s", qid)})
				continue
			}
			r, has, msg := ResolveLabel(q, provider.String(text))
			if msg != "" || !has {
				stale = append(stale, StaleLabel{ItemID: it.ID, Line: it.Line, Question: qid, Text: l.Text, Why: staleWhy(q, qid, text)})
				continue
			}
			labels[qid] = r
		}
		out[i].Labels = labels
	}
	return out, stale
}

// labelIDs lists a label map's questions in set order, then the rest
// sorted, so stale labels are reported in a stable order.
func labelIDs(set *questionset.Set, labels map[string]Label) []string {
	raw := make(map[string]json.RawMessage, len(labels))
	for q := range labels {
		raw[q] = nil
	}
	return (&reader{set: set}).labelOrder(raw)
}

func staleWhy(q *provider.Question, qid, text string) string {
	switch q.Type {
	case provider.Choice:
		return fmt.Sprintf("%s is not an option of %s", strconv.Quote(text), qid)
	case provider.Score:
		return fmt.Sprintf("%s is not a level of %s", strconv.Quote(text), qid)
	}
	return fmt.Sprintf("%s is not a label of the %s question %s", strconv.Quote(text), q.Type, qid)
}

// isStale reports whether a label that failed to resolve against q is of
// the right kind for q's type but names no outcome of it (so an edit of
// the set, not the file, made it wrong): a string for a choice, a string
// or whole number for a score. A noul label that is not true/false is
// malformed, not stale.
func isStale(q *provider.Question, raw json.RawMessage, isStr bool) bool {
	switch q.Type {
	case provider.Choice:
		return isStr
	case provider.Score:
		if isStr {
			return true
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		return err == nil && f == float64(int(f))
	}
	return false
}

// staleLabel keeps a label's text for ResolveLabels.
func staleLabel(raw json.RawMessage, str string, isStr bool) Label {
	if isStr {
		return Label{Index: -1, Text: str}
	}
	return Label{Index: -1, Text: string(raw)}
}
