package tui

import (
	"bytes"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// qAnswer is what the answer pane knows about one question's answers.
type qAnswer struct {
	cur   *provider.Answer
	curQ  *provider.Question // question as cur was asked
	prev  *provider.Answer   // ghost
	prevQ *provider.Question
	err   string
	run   int                 // which run of the pane gave cur (answers of one run saw one state)
	img   *provider.ImageInfo // a box answer's image, from the request it answered
	lines []string            // the chart, drawn when something changed
}

// answerPane is the design screen's answer view: every question's chart,
// the selected one first, drawn from workbench.View when an answer, the
// question or the width changes (never in View), in one scrolling view.
type answerPane struct {
	d        *designModel
	answers  map[string]*qAnswer
	expanded map[string]bool // questions whose folded options are shown
	stack    []string
	scroll   list
	runs     int // runs answered so far
}

func newAnswerPane(d *designModel) *answerPane {
	return &answerPane{d: d, answers: map[string]*qAnswer{}, expanded: map[string]bool{}, scroll: newScroll()}
}

func (a *answerPane) get(id string) *qAnswer {
	x := a.answers[id]
	if x == nil {
		x = &qAnswer{}
		a.answers[id] = x
	}
	return x
}

// answered takes a run's answers: the previous answer becomes the ghost.
func (a *answerPane) answered(asked *workbench.Asked) {
	a.runs++
	for i := range asked.Result.Answers {
		ans := asked.Result.Answers[i]
		q, ok := asked.Request.Questions.Get(ans.ID)
		if !ok {
			continue
		}
		x := a.get(ans.ID)
		if x.cur != nil {
			x.prev, x.prevQ = x.cur, x.curQ
		}
		qc := q.Clone()
		x.cur, x.curQ, x.err, x.run = &ans, &qc, "", a.runs
		x.img = nil
		if q.Type == provider.Box {
			x.img = workbench.BoxImage(asked.Request, q)
		}
	}
	for id, err := range asked.Failed {
		a.get(id).err = workbench.DescribeError(err)
	}
	a.redrawAll()
}

// failed marks questions as failed with their errors.
func (a *answerPane) failed(errs map[string]error) {
	for id, err := range errs {
		a.get(id).err = workbench.DescribeError(err)
	}
	a.redrawAll()
}

// renamed carries a question's answers to its new id.
func (a *answerPane) renamed(old, id string) {
	if x, ok := a.answers[old]; ok {
		delete(a.answers, old)
		a.answers[id] = x
	}
	a.redrawAll()
}

// stateChanged clears every answer's error (the next run asks anew).
func (a *answerPane) stateChanged() {
	for _, x := range a.answers {
		x.err = ""
	}
	a.redrawAll()
}

func (a *answerPane) toggleExpand() tea.Cmd {
	if sel := a.d.selected(); sel != nil {
		a.expanded[sel.ID] = !a.expanded[sel.ID]
		a.redraw(sel.ID)
	}
	return nil
}

func (a *answerPane) redrawAll() {
	for _, qe := range a.d.e.set.Questions {
		a.redraw(qe.ID)
	}
	a.restack()
}

// redraw recomputes question id's chart lines.
func (a *answerPane) redraw(id string) {
	x := a.answers[id]
	q, ok := a.d.e.set.Questions.Get(id)
	if x == nil || !ok {
		return
	}
	_, rw := a.d.layout()
	stale := false
	if x.curQ != nil {
		cur, _ := x.curQ.MarshalJSON()
		now, _ := q.MarshalJSON()
		stale = !bytes.Equal(cur, now)
	}
	if q.Type == provider.Box {
		x.lines = boxChart(id, x, stale, rw, &a.d.e.st)
		return
	}
	x.lines = renderChart(chartInput{
		ID: id, Q: q, Cur: x.cur, CurQ: x.curQ, Prev: x.prev, PrevQ: x.prevQ, Stale: stale,
		Err: x.err, Threshold: a.d.e.set.Threshold(id), True: -1, Width: rw, Expand: a.expanded[id],
	}, &a.d.e.st)
	x.lines = append(x.lines, a.variantLines(id, x, rw)...)
}

// variantLines draws question id's variants under its chart, indented:
// for each, a line naming it with how its answer differs from the base's
// in the same run (workbench.DiffAnswers: decision changed or not, TV
// distance), then its own chart.
func (a *answerPane) variantLines(id string, x *qAnswer, w int) []string {
	st := &a.d.e.st
	set := a.d.e.set
	const indent = "  "
	var out []string
	for _, v := range set.Variants[id] {
		r := workbench.VariantRef{Question: id, Name: v.Name}
		vq, ok := set.VariantQuestion(r)
		if !ok {
			continue
		}
		y := a.answers[r.ID()]
		if y == nil {
			y = &qAnswer{}
		}
		head := "variant " + termsafe.String(v.Name) + " · "
		style := st.Muted
		switch {
		case y.cur == nil || x.cur == nil:
			head += "not answered yet"
		case y.run != x.run:
			head += "answered in another run than the question: press r to ask both"
		default:
			diff := workbench.DiffAnswers(x.curQ, x.cur, set.Threshold(id), y.curQ, y.cur, set.Threshold(r.ID()))
			head += termsafe.String(diff.Summary())
			if diff.DecisionChanged {
				style = st.Warn
			}
		}
		out = append(out, "")
		for _, l := range wrapText(head, w-len(indent), 3) { // said in full, not cut
			out = append(out, style.Render(fit(indent+l, w)))
		}
		stale := false
		if y.curQ != nil {
			cur, _ := y.curQ.MarshalJSON()
			now, _ := vq.MarshalJSON()
			stale = !bytes.Equal(cur, now)
		}
		for _, l := range renderChart(chartInput{
			ID: r.ID(), Q: &vq, Cur: y.cur, CurQ: y.curQ, Prev: y.prev, PrevQ: y.prevQ, Stale: stale,
			Err: y.err, Threshold: set.Threshold(r.ID()), True: -1, Width: w - len(indent), Expand: a.expanded[id],
		}, st) {
			out = append(out, indent+l)
		}
	}
	return out
}

// restack assembles the pane: the selected question's chart first, then
// every other question's in file order, so one run shows every
// distribution move. Done after each message, never in View.
func (a *answerPane) restack() {
	st := &a.d.e.st
	_, w := a.d.layout()
	sel := a.d.selected()
	a.stack = a.stack[:0]
	add := func(qe *provider.QuestionEntry) {
		if x := a.answers[qe.ID]; x != nil && x.lines != nil {
			a.stack = append(a.stack, x.lines...)
		} else {
			a.stack = append(a.stack, st.Header.Render(fit(fmt.Sprintf("%s · %s", termsafe.String(qe.ID), qe.Question.Type), w)), st.Muted.Render("not run yet — press r to run"))
		}
	}
	if sel != nil {
		add(sel)
	}
	cur := a.d.cursor()
	for i := range a.d.e.set.Questions {
		if i == cur && sel != nil {
			continue
		}
		a.stack = append(a.stack, "")
		add(&a.d.e.set.Questions[i])
	}
	a.scroll.setLen(len(a.stack))
}

// confidence is the status line's figure for question id's answer: the
// provider's confidence, or a noul's P(true).
func (a *answerPane) confidence(id string) string {
	x := a.answers[id]
	if x == nil || x.cur == nil {
		return ""
	}
	switch {
	case x.cur.HasConfidence:
		return fmt.Sprintf("%s confidence %s", termsafe.String(id), workbench.Prob(x.cur.Confidence))
	case x.cur.Type == provider.Noul:
		return fmt.Sprintf("%s P(true) %s", termsafe.String(id), workbench.Prob(x.cur.P))
	}
	return ""
}

// view is the visible window of the stacked charts in h rows.
func (a *answerPane) view(w, h int) []string {
	st := &a.d.e.st
	more := len(a.stack) > h
	room := h
	if more {
		room = max(1, h-1)
	}
	a.scroll.setHeight(room)
	out := a.scroll.render(a.stack, nil)
	if more {
		start, end := a.scroll.window()
		out = append(out, st.Faint.Render(fit(fmt.Sprintf("… %d–%d of %d lines (tab, ↑↓ to scroll)", start+1, end, len(a.stack)), w)))
	}
	return out
}

// boxChart draws a box question's answer (Jev 1.14): its headline (edges
// and confidence), where it came from, then workbench.BoxGrid's grid —
// the lines `jevlab ask` prints — as wide as the pane allows (at most
// workbench.BoxGridWidth cells, leaving room for the edge labels).
func boxChart(id string, x *qAnswer, stale bool, w int, st *Styles) []string {
	w = max(w, 20)
	title := termsafe.String(id) + " · " + string(provider.Box)
	var out []string
	cur := x.cur
	if cur != nil && cur.Type != provider.Box {
		cur = nil // answered as another type: nothing to draw
	}
	v := workbench.BoxViewOf(cur, x.img)
	if h := v.Headline(); cur != nil && len([]rune(title))+1+len([]rune(h)) > w {
		out = append(out, st.Header.Render(fit(title, w))) // wrapped, never cut
		for _, l := range wrapText(h, w, 3) {
			out = append(out, st.Header.Render(fit(l, w)))
		}
	} else if cur != nil {
		out = append(out, st.Header.Render(fit(title+" "+h, w)))
	}
	if cur != nil {
		if src := workbench.SourceText(cur.Provenance); src != "" {
			out = append(out, st.Faint.Render(fit("from "+termsafe.String(src), w)))
		}
	} else {
		out = append(out, st.Header.Render(fit(title, w)))
	}
	if x.err != "" {
		for _, l := range wrapText("error: "+x.err, w, 8) {
			out = append(out, st.Bad.Render(fit(l, w)))
		}
	}
	if stale && cur != nil {
		out = append(out, st.Warn.Render(fit("edited since this answer — press r to re-run", w)))
	}
	if cur == nil {
		if x.err == "" {
			out = append(out, st.Muted.Render(fit("not run yet — press r to run", w)))
		}
		return out
	}
	cells := min(workbench.BoxGridWidth, w-2-len("  bottom 0.00"))
	for _, l := range workbench.BoxGrid(v, cells) {
		out = append(out, fit(l, w))
	}
	return out
}
