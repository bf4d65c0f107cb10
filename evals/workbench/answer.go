package workbench

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// FoldBelow is the probability under which a long choice answer's options
// are folded into one summary row (they stay available: AnswerView.Folded).
const FoldBelow = 0.005

// FoldMinOptions is how many options a choice needs before small ones fold.
const FoldMinOptions = 12

// Markers every renderer uses, so ✓ and ✗ mean the same everywhere: ▶ the
// decision, ✓ the true label (right when it is also the decision), ✗ a
// wrong decision when the true label is known.
const (
	MarkChosen = "▶"
	MarkTrue   = "✓"
	MarkWrong  = "✗"
)

// Row is one outcome of an answer as drawn: an option, a level, or a noul's
// P(true).
type Row struct {
	// Index is the outcome's index in the displayed question (option or
	// level order); -1 for a noul's single row.
	Index int
	// Label is the option label, "N level text" for a level, or "P(true)".
	Label string
	// P is the answer's probability of this outcome; NaN when the answer
	// was given to a version of the question without it.
	P float64
	// Prev is the previous answer's probability (a ghost bar); NaN when
	// there is none.
	Prev float64
	// Chosen marks the decision; True the item's true label.
	Chosen, True bool
}

// Marker is the row's two-cell marker: "▶ " decision, "✓ " true label,
// "✓▶" both, "✗▶" a wrong decision where the true label is known and is
// another row.
func (r Row) Marker(labelKnown bool) string {
	switch {
	case r.True && r.Chosen:
		return MarkTrue + MarkChosen
	case r.True:
		return MarkTrue + " "
	case r.Chosen && labelKnown:
		return MarkWrong + MarkChosen
	case r.Chosen:
		return MarkChosen + " "
	}
	return "  "
}

// Folded summarises options folded out of a long choice answer.
type Folded struct {
	// Rows are the folded options, most probable first (a renderer may
	// expand them).
	Rows []Row
	// Max is the largest probability among them.
	Max float64
}

// AnswerView is one answer laid out for drawing: the headline and the rows
// in display order. ask's text bars and the workbench's charts both render
// it, so they mark the same outcomes.
type AnswerView struct {
	ID   string
	Type provider.QuestionType
	// Decision is the decided outcome as text ("billing", "2 annoyed",
	// "true"); DecisionIndex its index (option, level, or 1/0 for a noul).
	Decision      string
	DecisionIndex int
	// P is a noul's P(true); Threshold the caller's noul threshold.
	P, Threshold float64
	// Expected is a score's expected level (the provider's score field)
	// and Levels the number of levels.
	Expected float64
	Levels   int
	// Confidence is the provider's own confidence field (HasConfidence
	// false for a noul, which has none). TopProb is another quantity: the
	// largest probability of the distribution (for a noul, the probability
	// of the decision taken). Every screen and report names them
	// "confidence" and "top prob" respectively.
	Confidence    float64
	HasConfidence bool
	TopProb       float64
	// LabelKnown says the true label is known (a row is marked True), and
	// Right whether the decision equals it.
	LabelKnown, Right bool
	// TrueLabel is the true label's text, written out ("false", "billing").
	TrueLabel string
	// Rows are the outcomes in display order: a choice by probability
	// (highest first), a score in level order, a noul one row.
	Rows []Row
	// Folded holds the options folded out of Rows (nil when none).
	Folded *Folded
	// Source says where the answer came from ("cache recorded.jsonl ·
	// jev-1.13.0").
	Source string
}

// ViewOptions shape an AnswerView.
type ViewOptions struct {
	// Threshold is the noul threshold (0 means the default 0.5).
	Threshold float64
	// True is the true label's index in q, -1 when unknown.
	True int
	// Asked is the question as the answer was asked, when it differs from
	// q (the user edited it since): choice probabilities are matched by
	// label, so reordering or renaming keeps each bar right. nil: q.
	Asked *provider.Question
	// Prev and PrevAsked are an earlier answer drawn as ghost bars.
	Prev, PrevAsked *provider.Question
	PrevAnswer      *provider.Answer
	// NoFold keeps every option of a long choice in Rows.
	NoFold bool
}

// View lays out answer a to question q (the question as it is displayed).
// a may be nil (no answer yet): the view then has the rows with NaN
// probabilities.
func View(q *provider.Question, a *provider.Answer, o ViewOptions) AnswerView {
	t := o.Threshold
	if t <= 0 {
		t = 0.5
	}
	asked := o.Asked
	if asked == nil {
		asked = q
	}
	prevAsked := o.PrevAsked
	if prevAsked == nil {
		prevAsked = q
	}
	v := AnswerView{Type: q.Type, Threshold: t, DecisionIndex: -1}
	if a != nil {
		v.ID = a.ID
	}
	probOf := func(ans *provider.Answer, as *provider.Question, i int) float64 {
		if ans == nil || as == nil || ans.Type != q.Type {
			return math.NaN()
		}
		if q.Type == provider.Noul {
			return ans.P
		}
		j := i
		if q.Type == provider.Choice {
			if i >= len(q.Options) {
				return math.NaN()
			}
			j = as.OptionIndex(q.Options[i].Label)
		}
		if j < 0 || j >= len(ans.Probs) {
			return math.NaN()
		}
		return ans.Probs[j]
	}
	usable := a != nil && a.Type == q.Type
	if usable {
		v.Confidence, v.HasConfidence = a.Confidence, a.HasConfidence
		v.Source = SourceText(a.Provenance)
	}
	switch q.Type {
	case provider.Noul:
		row := Row{Index: -1, Label: "P(true)", P: probOf(a, asked, 0), Prev: probOf(o.PrevAnswer, prevAsked, 0)}
		if usable {
			v.P = a.P
			v.DecisionIndex = a.Decision(t)
			v.Decision = strconv.FormatBool(v.DecisionIndex == 1)
			v.TopProb = a.P
			if v.DecisionIndex == 0 {
				v.TopProb = 1 - a.P
			}
			row.Chosen = true
		}
		if o.True == 0 || o.True == 1 {
			// A noul has one row, so its marker says right (✓▶) or wrong
			// (✗▶); the label itself is written out in the headline.
			v.LabelKnown, v.TrueLabel = true, strconv.FormatBool(o.True == 1)
			row.True = usable && v.DecisionIndex == o.True
		}
		v.Rows = []Row{row}
	case provider.Choice:
		if usable {
			// The provider's choice field decides (it can differ from the
			// argmax on rounded ties); matched by label to the displayed
			// question.
			v.Decision = a.Choice
			v.DecisionIndex = q.OptionIndex(a.Choice)
			if v.DecisionIndex < 0 && a.Choice == "" {
				if d := a.DecisionFor(asked, t); d >= 0 && d < len(asked.Options) {
					v.Decision = asked.Options[d].Label
					v.DecisionIndex = q.OptionIndex(v.Decision)
				}
			}
		}
		rows := make([]Row, len(q.Options))
		for i, op := range q.Options {
			rows[i] = Row{Index: i, Label: op.Label, P: probOf(a, asked, i), Prev: probOf(o.PrevAnswer, prevAsked, i),
				Chosen: usable && i == v.DecisionIndex, True: i == o.True}
			if p := rows[i].P; !math.IsNaN(p) && p > v.TopProb {
				v.TopProb = p
			}
		}
		sort.SliceStable(rows, func(x, y int) bool {
			px, py := rows[x].P, rows[y].P
			return px > py || (math.IsNaN(py) && !math.IsNaN(px))
		})
		if o.True >= 0 && o.True < len(q.Options) {
			v.LabelKnown, v.TrueLabel = true, q.Options[o.True].Label
		}
		v.Rows = rows
		if !o.NoFold && len(rows) >= FoldMinOptions && usable {
			v.Rows, v.Folded = fold(rows)
		}
	case provider.Score:
		v.Levels = len(q.Levels)
		if usable {
			v.Expected = a.Score
			v.DecisionIndex = a.DecisionFor(asked, t)
			if v.DecisionIndex >= 0 && v.DecisionIndex < len(q.Levels) {
				v.Decision = LevelName(q, v.DecisionIndex)
			}
		}
		for i := range q.Levels {
			r := Row{Index: i, Label: LevelName(q, i), P: probOf(a, asked, i), Prev: probOf(o.PrevAnswer, prevAsked, i),
				Chosen: usable && i == v.DecisionIndex, True: i == o.True}
			if !math.IsNaN(r.P) && r.P > v.TopProb {
				v.TopProb = r.P
			}
			v.Rows = append(v.Rows, r)
		}
		if o.True >= 0 && o.True < len(q.Levels) {
			v.LabelKnown, v.TrueLabel = true, LevelName(q, o.True)
		}
	}
	if v.LabelKnown && usable {
		v.Right = v.DecisionIndex == o.True
	}
	return v
}

// fold keeps the options at or above FoldBelow (and always the decision
// and the true label) and folds the rest into one summary.
func fold(rows []Row) ([]Row, *Folded) {
	var keep []Row
	f := &Folded{}
	for _, r := range rows {
		if r.Chosen || r.True || math.IsNaN(r.P) || r.P >= FoldBelow {
			keep = append(keep, r)
			continue
		}
		f.Rows = append(f.Rows, r)
		if r.P > f.Max {
			f.Max = r.P
		}
	}
	if len(f.Rows) < 2 { // folding one row saves nothing
		return rows, nil
	}
	return keep, f
}

// LevelName is level i of a score question as shown: "i text".
func LevelName(q *provider.Question, i int) string {
	if i < 0 || i >= len(q.Levels) {
		return strconv.Itoa(i)
	}
	return fmt.Sprintf("%d %s", i, provider.Text(q.Levels[i]))
}

// SourceText says where an answer came from: "cache recorded.jsonl ·
// jev-1.13.0" (the file's name, not where it lives).
func SourceText(pv provider.Provenance) string {
	src := string(pv.Source)
	if pv.Origin != "" {
		o := pv.Origin
		if i := strings.LastIndexByte(o, '/'); i >= 0 {
			o = o[i+1:]
		}
		src += " " + o
	}
	if pv.Model != "" {
		src += " · " + pv.Model
	}
	return src
}

// Prob formats a probability with at least two decimals (Jev's precision)
// and at most four (float noise such as 0.29000000000000004 shows as 0.29).
func Prob(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	s := strconv.FormatFloat(p, 'f', -1, 64)
	if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 > 4 {
		s = strings.TrimRight(strconv.FormatFloat(p, 'f', 4, 64), "0")
	}
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		s += "."
		dot = len(s) - 1
	}
	for len(s)-dot-1 < 2 {
		s += "0"
	}
	return s
}

// Headline is the answer's one-line summary, the same on every screen and
// in ask: "→ billing  confidence 0.91  top prob 0.93".
func (v *AnswerView) Headline() string {
	if v.DecisionIndex < 0 && v.Decision == "" {
		return ""
	}
	var b strings.Builder
	switch v.Type {
	case provider.Noul:
		fmt.Fprintf(&b, "→ %s (P(true) %s, threshold %s)", v.Decision, Prob(v.P), Prob(v.Threshold))
	case provider.Score:
		fmt.Fprintf(&b, "→ %s (expected %.2f of 0..%d)", v.Decision, v.Expected, v.Levels-1)
	default:
		fmt.Fprintf(&b, "→ %s", v.Decision)
	}
	if v.HasConfidence {
		fmt.Fprintf(&b, "  confidence %s", Prob(v.Confidence))
	}
	if v.Type != provider.Noul && (!v.HasConfidence || math.Abs(v.TopProb-v.Confidence) >= 0.005) {
		fmt.Fprintf(&b, "  top prob %s", Prob(v.TopProb))
	}
	if v.LabelKnown {
		mark := MarkTrue
		if !v.Right {
			mark = MarkWrong
		}
		fmt.Fprintf(&b, "  %s label: %s", mark, v.TrueLabel)
	}
	return b.String()
}
