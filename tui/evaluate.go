package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
)

// Messages of the evaluation screen.
type (
	evalProgressMsg struct {
		p  runner.Progress
		ch <-chan runner.Progress
	}
	evalDoneMsg struct {
		runID string
		err   error
	}
	analysisMsg struct {
		ra   *runAnalysis
		err  error
		for_ screenID
		seq  int // drops an analysis overtaken by a newer one (0: always shown)
	}
)

type evalModel struct {
	e    *env
	w, h int

	running  bool
	cancel   context.CancelFunc
	progress runner.Progress
	started  time.Time
	lastRun  string // id of the last run started here (resume target)
	lastErr  string

	ra     *runAnalysis
	qi     int     // selected question
	cut    float64 // confidence cut-point
	lines  []string
	scroll int
	busy   bool // analysing
	aseq   int  // analysis sequence
}

func newEvalScreen(e *env) screen { return &evalModel{e: e, cut: 0.5} }

func (m *evalModel) capturing() bool { return false }

func (m *evalModel) resize(w, h int) {
	m.w, m.h = w, h
	m.draw()
}

// copySet returns an independent copy of the working set for a background
// run, so edits made meanwhile cannot race with it.
func copySet(s *questionset.Set) (*questionset.Set, error) {
	c := s.Clone()
	if err := c.Request(nil).Validate(); err != nil {
		return nil, fmt.Errorf("the set does not validate: %w", err)
	}
	return c, nil
}

// start begins (or with resume, continues) an evaluation over the dataset.
func (m *evalModel) start(resume string) tea.Cmd {
	e := m.e
	switch {
	case m.running:
		e.say("an evaluation is already running — x cancels")
		return nil
	case e.opt.DB == nil:
		e.fail("no database: evaluations are stored in SQLite (--db)")
		return nil
	case e.prov == nil:
		e.fail("the provider is not ready yet")
		return nil
	case len(e.items) == 0:
		e.fail("no dataset items to evaluate (add `dataset:` to the set)")
		return nil
	}
	set, err := copySet(e.set)
	if err != nil {
		e.fail("cannot evaluate: %v", firstLine(err.Error()))
		return nil
	}
	if e.opt.Model != "" {
		set.Model = e.opt.Model
	}
	ctx, cancel := context.WithCancel(e.ctx)
	m.running, m.cancel, m.started, m.lastErr = true, cancel, e.now(), ""
	m.progress = runner.Progress{Total: len(e.items)}
	ch := make(chan runner.Progress, 64)
	cfg := runner.Config{Set: set, Items: e.items, DatasetPath: e.set.Dataset, Provider: e.prov, DB: e.opt.DB,
		Resume: resume, ProviderKind: e.mode}
	done := make(chan evalDoneMsg, 1)
	go func() {
		id, err := runner.Run(ctx, cfg, ch)
		done <- evalDoneMsg{runID: id, err: err}
	}()
	if resume != "" {
		e.say("resuming run %s…", resume)
	} else {
		e.say("evaluating %d items…", len(e.items))
	}
	m.draw()
	return tea.Batch(waitProgress(ch), func() tea.Msg { return <-done })
}

// waitProgress turns the runner's progress channel into messages.
func waitProgress(ch <-chan runner.Progress) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return evalProgressMsg{p: p, ch: ch}
	}
}

func (m *evalModel) analyze(runID string) tea.Cmd {
	db, ctx := m.e.opt.DB, m.e.ctx
	m.busy = true
	m.aseq++
	seq := m.aseq
	return func() tea.Msg {
		ra, err := analyzeRun(ctx, db, runID)
		return analysisMsg{ra: ra, err: err, for_: screenEval, seq: seq}
	}
}

func (m *evalModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case datasetLoadedMsg:
		m.draw() // the item count in the prompt
		return nil
	case evalProgressMsg:
		m.progress = msg.p
		if msg.p.RunID != "" {
			m.lastRun = msg.p.RunID
		}
		m.draw()
		return waitProgress(msg.ch)
	case evalDoneMsg:
		m.running, m.cancel = false, nil
		if msg.runID != "" {
			m.lastRun = msg.runID
		}
		switch {
		case errors.Is(msg.err, runner.ErrInterrupted):
			m.lastErr = "interrupted — R resumes run " + m.lastRun
			m.e.say("run %s interrupted; R resumes it", m.lastRun)
		case msg.err != nil:
			m.lastErr = firstLine(msg.err.Error())
			m.e.fail("evaluation failed: %s", m.lastErr)
		default:
			m.e.say("run %s done", msg.runID)
		}
		m.draw()
		if msg.runID != "" {
			return m.analyze(msg.runID)
		}
		return nil
	case analysisMsg:
		if msg.for_ != screenEval || (msg.seq != 0 && msg.seq != m.aseq) {
			return nil
		}
		m.busy = false
		if msg.err != nil {
			m.e.fail("read run: %s", firstLine(msg.err.Error()))
			return nil
		}
		m.ra = msg.ra
		m.qi = min(m.qi, max(0, len(m.ra.reports)-1))
		m.draw()
		// The dataset screen shows this run's correctness.
		answers := msg.ra.byItem
		id := msg.ra.run.ID
		return func() tea.Msg { return itemAnswersMsg{runID: id, answers: answers} }
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

func (m *evalModel) key(msg tea.KeyMsg) tea.Cmd {
	k := m.e.keys
	switch {
	case key.Matches(msg, k.StartEval):
		return m.start("")
	case key.Matches(msg, k.Resume):
		if m.lastRun == "" {
			// A run interrupted in an earlier session: the newest stored.
			return m.start("latest")
		}
		return m.start(m.lastRun)
	case key.Matches(msg, k.Cancel), key.Matches(msg, k.Back) && m.running:
		if m.running && m.cancel != nil {
			m.cancel()
			m.e.say("cancelling — answers so far are kept")
		}
	case key.Matches(msg, k.CutDown):
		m.cut = math.Max(0, math.Round((m.cut-0.05)*100)/100)
		m.draw()
	case key.Matches(msg, k.CutUp):
		m.cut = math.Min(1, math.Round((m.cut+0.05)*100)/100)
		m.draw()
	case key.Matches(msg, k.PrevQ):
		if m.qi > 0 {
			m.qi--
			m.draw()
		}
	case key.Matches(msg, k.NextQ):
		if m.ra != nil && m.qi < len(m.ra.reports)-1 {
			m.qi++
			m.draw()
		}
	case key.Matches(msg, k.Up):
		m.scroll = max(0, m.scroll-1)
	case key.Matches(msg, k.Down):
		m.scroll = min(m.scroll+1, max(0, len(m.lines)-1))
	case key.Matches(msg, k.PageDown):
		m.scroll = min(m.scroll+m.h-2, max(0, len(m.lines)-1))
	case key.Matches(msg, k.PageUp):
		m.scroll = max(0, m.scroll-m.h+2)
	case key.Matches(msg, k.Top):
		m.scroll = 0
	}
	return nil
}

func (m *evalModel) help() helpMap {
	k := m.e.keys
	short := []key.Binding{k.StartEval, k.CutDown, k.CutUp, k.PrevQ, k.NextQ, k.Down}
	if m.running {
		short = append([]key.Binding{k.Cancel}, short[1:]...)
	} else if m.lastRun != "" && m.lastErr != "" {
		short = append([]key.Binding{k.Resume}, short...)
	}
	return helpMap{short: short, full: [][]key.Binding{
		{k.StartEval, k.Cancel, k.Resume},
		{k.CutDown, k.CutUp, k.PrevQ, k.NextQ},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top},
	}}
}

// draw precomputes the screen's lines.
func (m *evalModel) draw() {
	st := &m.e.st
	w := max(20, m.w-1)
	var l []string
	// Progress.
	p := m.progress
	switch {
	case m.running || p.Total > 0:
		frac := 0.0
		if p.Total > 0 {
			frac = float64(p.Done) / float64(p.Total)
		}
		state := "running"
		if !m.running {
			state = "finished"
			if m.lastErr != "" {
				state = "stopped"
			}
		}
		l = append(l, st.Focused.Render(fit(fmt.Sprintf(" Evaluation %s %s", p.RunID, state), w)))
		barW := max(10, w-16)
		l = append(l, " "+st.BarChosen.Render(Bar(frac, barW))+fmt.Sprintf(" %5.1f%% ", 100*frac))
		eta := "—"
		if p.ETA > 0 && m.running {
			eta = p.ETA.Round(time.Second).String()
		}
		l = append(l, fit(fmt.Sprintf(" %d/%d items · %.1f items/s · %d errors · %d tokens · $%.4f · ETA %s",
			p.Done, p.Total, p.ItemsPerSec, p.Errors, p.Tokens, p.CostUSD, eta), w))
		if m.lastErr != "" {
			l = append(l, st.Warn.Render(fit(" "+m.lastErr, w)))
		}
	default:
		n := len(m.e.items)
		l = append(l, st.Focused.Render(fit(" Evaluation", w)))
		switch {
		case m.e.opt.Dataset == nil:
			l = append(l, st.Muted.Render(fit(" The set names no dataset; add `dataset: FILE.jsonl` to evaluate it.", w)))
		case n == 0:
			l = append(l, st.Muted.Render(fit(" loading the dataset…", w)))
		default:
			l = append(l, fit(fmt.Sprintf(" r evaluates the working set over %d items (stored as a run; x cancels, R resumes).", n), w))
		}
	}
	if m.busy {
		l = append(l, st.Muted.Render(" computing metrics…"))
	}
	if m.ra != nil {
		l = append(l, "")
		l = append(l, m.metricsTable(w)...)
		if m.qi < len(m.ra.reports) {
			rep := m.ra.reports[m.qi]
			l = append(l, "")
			l = append(l, m.coverage(rep, w)...)
			l = append(l, "")
			l = append(l, m.reliability(rep, w)...)
			l = append(l, "")
			l = append(l, m.confusion(rep, w)...)
		}
	}
	m.lines = l
}

func est(e metrics.Estimate) string {
	if math.IsNaN(e.Value) {
		return "   —"
	}
	if math.IsNaN(e.Lo) || (e.Lo == 0 && e.Hi == 0) {
		return fmt.Sprintf("%.3f", e.Value)
	}
	return fmt.Sprintf("%.3f [%.3f,%.3f]", e.Value, e.Lo, e.Hi)
}

func (m *evalModel) metricsTable(w int) []string {
	st := &m.e.st
	l := []string{st.Focused.Render(fit(fmt.Sprintf(" Metrics of run %s (95%% bootstrap intervals)   [ ] picks a question", m.ra.run.ID), w))}
	wide, wider := w >= 100, w >= 150
	head := fmt.Sprintf("   %-14s %4s %-22s %-22s", "question", "n", "accuracy", "ECE")
	if wide {
		head += fmt.Sprintf(" %-22s", "Brier")
	}
	if wider {
		head += fmt.Sprintf(" %-22s %s", "log loss", "errors")
	}
	l = append(l, st.Muted.Render(fit(head, w)))
	for i, r := range m.ra.reports {
		row := fmt.Sprintf("%-14s %4d %-22s %-22s", truncID(r.ID, 14), r.Labelled, est(r.Accuracy), est(r.ECE))
		if wide {
			row += fmt.Sprintf(" %-22s", est(r.Brier))
		}
		if wider {
			errs := 0
			for _, n := range r.Errors {
				errs += n
			}
			row += fmt.Sprintf(" %-22s %d", est(r.LogLoss), errs)
		}
		if i == m.qi {
			l = append(l, st.Selected.Render(fit(" ▶ "+row, w)))
		} else {
			l = append(l, fit("   "+row, w))
		}
	}
	return l
}

func truncID(s string, n int) string { return strings.TrimRight(fit(s, n), " ") }

// coverage draws accuracy against coverage at the cut-point.
func (m *evalModel) coverage(rep *metrics.QuestionReport, w int) []string {
	st := &m.e.st
	sel := rep.Selective
	l := []string{st.Focused.Render(fit(fmt.Sprintf(" Accuracy–coverage · %s ≥ cut-point (←/→ moves it)", sel.ConfidenceName), w))}
	if len(sel.Curve) == 0 {
		return append(l, st.Muted.Render(fit(" no labelled answers", w)))
	}
	// The curve point for the cut: the lowest threshold at or above it.
	curve := append([]metrics.CurvePoint(nil), sel.Curve...)
	sort.Slice(curve, func(i, j int) bool { return curve[i].Threshold < curve[j].Threshold })
	var pt *metrics.CurvePoint
	for i := range curve {
		if curve[i].Threshold >= m.cut-1e-12 {
			pt = &curve[i]
			break
		}
	}
	barW := max(10, w-34)
	if pt == nil {
		l = append(l, fit(fmt.Sprintf(" cut %.2f: no answer is that confident (coverage 0%%)", m.cut), w))
	} else {
		l = append(l, fmt.Sprintf(" cut %.2f  coverage %s %5.1f%% (%d)", m.cut, st.Bar.Render(Bar(pt.Coverage, barW)), 100*pt.Coverage, pt.N))
		l = append(l, fmt.Sprintf("           accuracy %s %5.1f%%", st.Good.Render(Bar(pt.Accuracy, barW)), 100*pt.Accuracy))
	}
	if sel.Cutpoint != nil {
		c := sel.Cutpoint
		l = append(l, st.Muted.Render(fit(fmt.Sprintf(" fitted cut-point %.3f for %.0f%% accuracy: holdout accuracy %.3f, coverage %.3f", c.Cutpoint, 100*c.Target, c.HoldoutAccuracy, c.HoldoutCoverage), w)))
	} else if sel.Refused != "" {
		l = append(l, st.Muted.Render(fit(" no cut-point fitted: "+sel.Refused, w)))
	}
	if rt := sel.Routing; rt != nil {
		// The set's min_confidence: what routing below it would do.
		l = append(l, fit(" "+rt.String(), w))
	}
	return l
}

// reliability draws a bar per bin (observed accuracy) with the diagonal —
// the bin's mean confidence — marked ┃ and the bin's count.
func (m *evalModel) reliability(rep *metrics.QuestionReport, w int) []string {
	st := &m.e.st
	l := []string{st.Focused.Render(fit(" Reliability · bar = observed accuracy, ┃ = mean confidence (the diagonal)", w))}
	if len(rep.Reliability) == 0 {
		return append(l, st.Muted.Render(fit(" no labelled answers", w)))
	}
	barW := max(10, w-36)
	for _, b := range rep.Reliability {
		bar := []rune(Bar(b.Observed, barW))
		pos := min(barW-1, max(0, int(b.Confidence*float64(barW))))
		bar[pos] = '┃'
		style := st.Bar
		if math.Abs(b.Observed-b.Confidence) > 0.1 && b.N >= 10 {
			style = st.Warn
		}
		l = append(l, fmt.Sprintf(" %.1f–%.1f %s obs %.2f conf %.2f n=%d", b.Lo, b.Hi, style.Render(string(bar)), b.Observed, b.Confidence, b.N))
	}
	return l
}

// confusion draws the heat-shaded confusion matrix (rows: label, columns:
// decision), limited to the classes that occur and fit.
func (m *evalModel) confusion(rep *metrics.QuestionReport, w int) []string {
	st := &m.e.st
	var mat [][]int
	switch {
	case rep.Choice != nil:
		mat = rep.Choice.Confusion
	case rep.Score != nil:
		mat = rep.Score.Confusion
	case rep.Type == provider.Noul && m.ra != nil:
		mat = noulConfusion(m.ra, rep.ID)
	}
	l := []string{st.Focused.Render(fit(" Confusion · rows = true label, columns = decision", w))}
	if len(mat) == 0 {
		return append(l, st.Muted.Render(fit(" no labelled answers", w)))
	}
	// Classes that occur as a label or a decision, most frequent first.
	k := len(mat)
	support := make([]int, k)
	for i := range mat {
		for j := range mat[i] {
			support[i] += mat[i][j]
			if j < k {
				support[j] += mat[i][j]
			}
		}
	}
	var cls []int
	for i := range support {
		if support[i] > 0 {
			cls = append(cls, i)
		}
	}
	sort.SliceStable(cls, func(a, b int) bool { return support[cls[a]] > support[cls[b]] })
	labelW := 14
	maxCols := max(1, (w-labelW-2)/5)
	shown := cls[:min(len(cls), maxCols)]
	sort.Ints(shown)
	name := func(i int) string {
		if i < len(rep.Classes) {
			return rep.Classes[i]
		}
		return fmt.Sprint(i)
	}
	colName := func(i int) string {
		if rep.Type == provider.Score {
			return fmt.Sprintf("L%d", i)
		}
		return truncID(name(i), 4)
	}
	if rep.Type == provider.Score {
		base := name
		name = func(i int) string { return fmt.Sprintf("L%d %s", i, base(i)) }
	}
	head := " " + strings.Repeat(" ", labelW) + " "
	for _, j := range shown {
		head += fmt.Sprintf("%5s", colName(j))
	}
	l = append(l, st.Muted.Render(fit(head, w)))
	for _, i := range shown {
		row := " " + fit(name(i), labelW) + " "
		total := 0
		for _, v := range mat[i] {
			total += v
		}
		for _, j := range shown {
			v := 0
			if j < len(mat[i]) {
				v = mat[i][j]
			}
			shade := 0
			if total > 0 && v > 0 {
				shade = 1 + int(float64(v)/float64(total)*float64(len(st.Heat)-2)+0.5)
			}
			cell := fmt.Sprintf("%4d ", v)
			if v == 0 {
				cell = "   · "
			}
			row += st.Heat[min(shade, len(st.Heat)-1)].Render(cell)
		}
		l = append(l, row)
	}
	if len(shown) < len(cls) {
		l = append(l, st.Muted.Render(fit(fmt.Sprintf(" showing the %d most frequent of %d classes that occur", len(shown), len(cls)), w)))
	}
	return l
}

// noulConfusion counts a noul's labelled answers: rows and columns
// false, true.
func noulConfusion(ra *runAnalysis, id string) [][]int {
	mat := [][]int{{0, 0}, {0, 0}}
	t := ra.set.Threshold(id)
	n := 0
	for item, qs := range ra.byItem {
		r := qs[id]
		lab, ok := ra.labels[item][id]
		if r == nil || r.ans == nil || !ok || lab < 0 || lab > 1 {
			continue
		}
		mat[lab][r.ans.Decision(t)]++
		n++
	}
	if n == 0 {
		return nil
	}
	return mat
}

func (m *evalModel) view(w, h int) string {
	s := min(m.scroll, max(0, len(m.lines)-1))
	end := min(len(m.lines), s+h)
	if s >= end {
		return ""
	}
	return strings.Join(m.lines[s:end], "\n")
}
