// Package lint checks a question set (and optionally its dataset) before
// any call is made: schema and limits, dataset consistency, and warnings
// grounded in Jev's documented failure modes (systemone-api.md §5.1): a
// choice with no catch-all option, a non-ordinal score level, backticked
// state paths that resolve nowhere, indistinguishable options, a noul whose
// `true` reads as a negation, and an estimated token budget overrun.
//
// Every finding has a stable id, a severity, a file:line:col location, the
// question it is about, a message and a one-line fix.
package lint

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/srcpos"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// Severity is how serious a finding is.
type Severity string

// Severities: an error makes the set unusable as it is; a warning names a
// documented way for answers to go wrong.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// String returns "error" or "warning".
func (s Severity) String() string { return string(s) }

// Finding ids for errors.
const (
	// IDSchema is a question-set file that does not load: syntax, types,
	// unknown fields, and the API's limits.
	IDSchema = "schema"
	// IDDataset is a dataset problem: unreadable rows, duplicate ids, labels
	// that don't match their question, labels for questions not in the set.
	IDDataset = "dataset"
	// IDStaleLabel is a well-formed label that names no option or level of
	// the set as it is now (an option renamed or deleted): excluded from
	// the metrics by eval and the workbench alike.
	IDStaleLabel = "stale-label"
	// IDLimits is a request jevlab would refuse to send: with the largest
	// state seen, the serialized request exceeds the client's size ceiling
	// (provider.DefaultMaxRequestBytes).
	IDLimits = "limits"
	// IDPath is a dataset: or fixtures: path that leaves the set's folder
	// (absolute, "..", or a symlink pointing out) without --allow-path.
	IDPath = "path"
)

// Finding ids for warnings (stable: scripts may filter on them).
const (
	IDNoCatchAll       = "no-catch-all"
	IDNonOrdinalLevel  = "non-ordinal-level"
	IDUnresolvedPath   = "unresolved-path"
	IDDuplicateDesc    = "duplicate-description"
	IDNegatedTrue      = "negated-true"
	IDTokenBudget      = "token-budget"
	IDDoubleNegative   = "double-negative"
	IDNumericTask      = "numeric-task"
	defaultMaxRequest  = 64000
	defaultMaxStateAsk = 32000
)

// Rule describes one warning.
type Rule struct {
	ID      string
	Summary string
	Fix     string
}

// Rules lists every warning lint can report, in documentation order.
func Rules() []Rule {
	return []Rule{
		{IDNoCatchAll, "a choice has no catch-all option (none / other / unknown), so Jev must pick a wrong option when none fits", "add an option such as `other` or `none`"},
		{IDNonOrdinalLevel, "a score level such as `unknown` or `not applicable` sits inside an ordered ladder", "remove it from the ladder; ask whether it can be told as a separate noul"},
		{IDUnresolvedPath, "a backticked state path in instructions or criteria resolves in no state (working state or dataset)", "correct the path, or drop the backticks if it is not a path"},
		{IDDuplicateDesc, "two options (or levels) have the same description, so Jev cannot tell them apart", "say what distinguishes each one"},
		{IDNegatedTrue, "a noul's `true` reads as a negation (\"true\" means no)", "rephrase so `true` means the positive statement"},
		{IDTokenBudget, "a request is estimated (approximately, bytes/4) over 64k tokens, or state + the longest question over 32k", "shorten the state or split the questions"},
		{IDDoubleNegative, "instructions contain a double negative", "state the condition positively"},
		{IDNumericTask, "a question asks Jev to count or compute, which it does unreliably", "count or compute in code; ask one noul per candidate"},
	}
}

// Finding is one problem or warning.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Col      int      `json:"col,omitempty"`
	Question string   `json:"question,omitempty"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
}

// String formats the finding as
// `file:line:col: severity[id]: question "q": message` with the fix on a
// second, indented line.
func (f Finding) String() string {
	// The file's name, labels and texts are quoted in messages: each part
	// is escaped for the terminal (termsafe), so a finding is two lines at
	// most and drives nothing.
	var b strings.Builder
	if pos := srcpos.Format(termsafe.String(f.File), f.Line, f.Col); pos != "" {
		b.WriteString(pos)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s[%s]: ", f.Severity, f.ID)
	if f.Question != "" {
		fmt.Fprintf(&b, "question %q: ", f.Question)
	}
	b.WriteString(termsafe.String(f.Message))
	if f.Fix != "" {
		b.WriteString("\n    fix: ")
		b.WriteString(termsafe.String(f.Fix))
	}
	return b.String()
}

// Options tune a lint.
type Options struct {
	// Data is the dataset to check against the set; "" uses the set's
	// `dataset:` (resolved against the set's file), if any.
	Data string
	// NoData skips the dataset even when the set names one.
	NoData bool
	// DataOptions maps the dataset's fields (see dataset.Options).
	DataOptions dataset.Options
	// AllowPaths are roots besides the set's folder that its dataset: and
	// fixtures: may name (--allow-path).
	AllowPaths []string
	// SetLimits bound reading the set file (size cap, regular files only).
	SetLimits questionset.Limits
	// MaxRequestTokens and MaxStateQuestionTokens are the token budgets
	// (defaults 64,000 and 32,000, System One's documented context).
	MaxRequestTokens, MaxStateQuestionTokens int
}

func (o Options) maxRequest() int {
	if o.MaxRequestTokens > 0 {
		return o.MaxRequestTokens
	}
	return defaultMaxRequest
}

func (o Options) maxStateAsk() int {
	if o.MaxStateQuestionTokens > 0 {
		return o.MaxStateQuestionTokens
	}
	return defaultMaxStateAsk
}

// LintFile lints the question-set file at path and its dataset (opts.Data,
// else the set's own `dataset:`). Problems in the files are findings; the
// error is only for a file that cannot be read at all.
func LintFile(path string, opts Options) ([]Finding, error) {
	data, err := questionset.ReadFile(path, opts.SetLimits)
	if err != nil {
		return nil, fmt.Errorf("lint: %w", err)
	}
	set, err := questionset.Parse(path, data)
	if err != nil {
		return setErrors(path, err), nil
	}
	set.Path = path
	// The set's own parsed tree locates findings: a second tree cost 16k
	// questions about 70 MB of peak resident memory.
	c := newChecker(set, path, newLocator(set.Document()), opts)
	c.static()
	c.observe("", set.State)
	dpath, dopt := opts.Data, opts.DataOptions
	if dpath == "" && set.Dataset != "" {
		np, err := set.DatasetPath(opts.AllowPaths)
		if err != nil {
			// Refused, never read (nor quoted): a located finding.
			c.pathFindings(path, err)
			opts.NoData = true
		}
		dpath = np.Path
		dopt = dopt.ForSet(set) // the set's dataset: mapping
	}
	if _, err := set.FixturePaths(opts.AllowPaths); err != nil {
		c.pathFindings(path, err)
	}
	if dpath != "" && !opts.NoData {
		// Labels are resolved against the set as it is now, by text: a
		// label naming no option any more is a warning (eval excludes it
		// with the same sentence), not a reason to reject the file.
		dopt.KeepStale = true
		err := dataset.Stream(dpath, dopt, set, func(it dataset.Item) error {
			c.observe(it.ID, it.State)
			_, stale := dataset.ResolveLabels(set, []dataset.Item{it}, nil)
			for _, s := range stale {
				c.findings = append(c.findings, Finding{ID: IDStaleLabel, Severity: SeverityWarning, File: dpath, Line: s.Line,
					Question: s.Question, Message: s.String() + "; excluded from the metrics",
					Fix: "relabel the item with an option of the set, or rename the option back (the workbench offers to rewrite labels when you rename)"})
			}
			return nil
		})
		if err != nil {
			c.datasetErrors(dpath, err)
		}
	}
	c.finish()
	return c.sorted(), nil
}

// Lint checks an already loaded set against items (nil for none). Locations
// come from the set's file form (set.Marshal), so they match the file for a
// set that is unchanged since loading.
func Lint(set *questionset.Set, items []dataset.Item, opts Options) []Finding {
	file := set.Path
	if file == "" {
		file = set.Title()
	}
	src, _ := set.Marshal()
	if err := set.Validate(); err != nil {
		return setErrors(file, err)
	}
	c := newChecker(set, file, parseLocator(src), opts)
	c.static()
	c.observe("", set.State)
	for _, it := range items {
		c.observe(it.ID, it.State)
	}
	c.finish()
	return c.sorted()
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Count returns the number of errors and warnings.
func Count(fs []Finding) (errs, warns int) {
	for _, f := range fs {
		if f.Severity == SeverityError {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}

// setErrors turns a questionset load error into findings.
func setErrors(file string, err error) []Finding {
	var list questionset.ErrorList
	if errors.As(err, &list) {
		out := make([]Finding, 0, len(list))
		for _, e := range list {
			msg := e.Msg
			if e.Field != "" {
				msg = e.Field + ": " + msg
			}
			f := e.File
			if f == "" {
				f = file
			}
			out = append(out, Finding{ID: IDSchema, Severity: SeverityError, File: f, Line: e.Line, Col: e.Col,
				Question: e.Question, Message: msg, Fix: "correct the file at this position"})
		}
		return out
	}
	return []Finding{{ID: IDSchema, Severity: SeverityError, File: file, Message: err.Error()}}
}

// pathFindings reports dataset: and fixtures: paths that leave the set's
// folder.
func (c *checker) pathFindings(file string, err error) {
	var list questionset.ErrorList
	var one *questionset.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = questionset.ErrorList{one}
	default:
		c.findings = append(c.findings, Finding{ID: IDPath, Severity: SeverityError, File: file, Message: err.Error()})
		return
	}
	for _, e := range list {
		c.findings = append(c.findings, Finding{ID: IDPath, Severity: SeverityError, File: file, Line: e.Line, Col: e.Col,
			Message: e.Field + ": " + e.Msg,
			Fix:     "move the file into the set's folder, or run with --allow-path DIR if you trust this set"})
	}
}

func (c *checker) datasetErrors(path string, err error) {
	var list dataset.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			msg := e.Msg
			if e.Item != "" {
				msg = fmt.Sprintf("item %q: %s", e.Item, msg)
			}
			f := e.File
			if f == "" {
				f = path
			}
			c.findings = append(c.findings, Finding{ID: IDDataset, Severity: SeverityError, File: f, Line: e.Line, Col: e.Col,
				Question: e.Question, Message: msg, Fix: "correct the row, or map its fields with --id-field/--state-field/--label"})
		}
		return
	}
	var one *dataset.Error
	if errors.As(err, &one) {
		c.datasetErrors(path, dataset.ErrorList{one})
		return
	}
	c.findings = append(c.findings, Finding{ID: IDDataset, Severity: SeverityError, File: path, Message: err.Error(),
		Fix: "check the dataset path (relative to the question set's file) or pass --data"})
}

func (c *checker) sorted() []Finding {
	out := c.findings
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Severity == SeverityError) != (b.Severity == SeverityError) {
			return a.Severity == SeverityError
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.ID < b.ID
	})
	return out
}

// MarshalFindings writes findings as a JSON document
// {"errors": n, "warnings": n, "findings": [...]}.
func MarshalFindings(fs []Finding) ([]byte, error) {
	e, w := Count(fs)
	if fs == nil {
		fs = []Finding{}
	}
	return json.MarshalIndent(struct {
		Errors   int       `json:"errors"`
		Warnings int       `json:"warnings"`
		Findings []Finding `json:"findings"`
	}{e, w, fs}, "", "  ")
}
