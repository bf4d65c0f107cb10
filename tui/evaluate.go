package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
)

// Messages of the evaluation screen.
type (
	evalProgressMsg struct {
		p  workbench.Progress
		ch <-chan workbench.Progress
	}
	evalDoneMsg struct {
		runID string
		err   error
	}
)

type evalModel struct {
	e    *env
	w, h int

	running  bool
	cancel   context.CancelFunc
	progress workbench.Progress
	lastRun  string // id of the last run started here (resume target)
	lastErr  string
	stale    string // StaleSummary of the labels the last run excluded

	v   *workbench.RunView
	qi  int     // selected question
	cut float64 // confidence cut-point
	thr float64 // noul threshold of the cost view (costview.go)
	// ld is the load of a stored run in flight (loading.go); answersFor
	// names the run whose answers it reads ("" while it reads a report).
	ld         loader
	answersFor string

	lines  []string
	scroll list
	keys   bindings
	probes *probePane // the selected question's probe results (probes.go)
}

func newEvalScreen(e *env) screen {
	m := &evalModel{e: e, cut: 0.5, thr: 0.5, scroll: newScroll(), probes: newProbePane(e), ld: loader{for_: screenEval}}
	k := e.keys
	idle := func() bool { return !m.running && !m.probes.running }
	m.keys = bindings{
		bind(k.StartEval, "Evaluate", func() tea.Cmd { return m.start("") }).inBar().enabledWhen(idle),
		bind(k.Resume, "Evaluate", m.resume).inBar().enabledWhen(func() bool { return idle() && m.lastErr != "" }),
		bind(k.Resume, "Evaluate", m.resume).enabledWhen(idle).withDesc("resume the newest run"),
		bind(k.Cancel, "Evaluate", m.stop).inBar().enabledWhen(func() bool { return m.running }).withDesc("cancel the run"),
		bind(k.Back, "Evaluate", m.stop).enabledWhen(func() bool { return m.running }).withDesc("cancel the run"),
		bind(k.Back, "Evaluate", m.cancelLoad).inBar().enabledWhen(func() bool { return !m.running && m.loading() }).withDesc("stop reading the run"),
		bind(k.Open, "Evaluate", m.readAnswers).inBar().enabledWhen(func() bool { return m.v != nil && !m.answersRead() && !m.loading() }).withDesc("read the run's answers"),
		bind(k.CutDown, "Measure", func() tea.Cmd { return m.moveCut(-0.05) }).inBar(),
		bind(k.CutUp, "Measure", func() tea.Cmd { return m.moveCut(0.05) }).inBar(),
		bind(k.ThresholdDown, "Measure", func() tea.Cmd { return m.moveThreshold(-0.05) }).enabledWhen(m.hasCostView),
		bind(k.ThresholdUp, "Measure", func() tea.Cmd { return m.moveThreshold(0.05) }).enabledWhen(m.hasCostView),
		bind(k.PrevQ, "Measure", func() tea.Cmd { return m.pick(-1) }).inBar(),
		bind(k.NextQ, "Measure", func() tea.Cmd { return m.pick(1) }).inBar(),
	}
	m.keys = append(m.keys, m.probes.bindings(k, m.selectedQuestion, idle)...)
	nav := m.scroll.navBindings(k, "Scroll")
	nav[1] = nav[1].inBar()
	m.keys = append(m.keys, nav...)
	return m
}

func (m *evalModel) capturing() bool { return false }
func (m *evalModel) help() helpMap {
	if m.probes.modal() {
		return m.probes.help()
	}
	return m.keys.help()
}

// selectedQuestion is the run shown and the question selected in it.
func (m *evalModel) selectedQuestion() (run, qid string) {
	if m.v == nil || m.qi >= len(m.v.Report.Questions) {
		return "", ""
	}
	return m.v.Run.ID, m.v.Report.Questions[m.qi].ID
}

func (m *evalModel) resize(w, h int) {
	m.w, m.h = w, h
	m.scroll.setHeight(h)
	m.probes.resize(w, h)
	m.draw()
}

func (m *evalModel) resume() tea.Cmd {
	if m.lastRun == "" {
		return m.start("latest") // a run interrupted in an earlier session: the newest stored
	}
	return m.start(m.lastRun)
}

func (m *evalModel) stop() tea.Cmd {
	if m.running && m.cancel != nil {
		m.cancel()
		m.e.say("cancelling — answers so far are kept")
	}
	return nil
}

func (m *evalModel) moveCut(d float64) tea.Cmd {
	m.cut = math.Max(0, math.Min(1, math.Round((m.cut+d)*100)/100))
	m.draw()
	return nil
}

func (m *evalModel) pick(d int) tea.Cmd {
	if m.v != nil {
		m.qi = max(0, min(len(m.v.Report.Questions)-1, m.qi+d))
		m.draw()
		return m.probes.show(m.selectedQuestion())
	}
	return nil
}

// start begins (or with resume, continues) an evaluation over the dataset
// through the session's run template — the one `jevlab eval` uses. The
// labels are resolved and the set snapshotted here; the run itself goes
// through a tea.Cmd.
func (m *evalModel) start(resume string) tea.Cmd {
	e := m.e
	switch {
	case m.running:
		e.say("an evaluation is already running — x cancels")
		return nil
	case !e.hasDB():
		e.fail("no database: evaluations are stored in SQLite (--db)")
		return nil
	case e.prov == nil:
		e.fail("the provider is not ready yet")
		return nil
	case len(e.items) == 0:
		e.fail("no dataset items to evaluate (add `dataset:` to the set)")
		return nil
	}
	if err := e.set.Request(nil).Validate(); err != nil {
		e.fail("cannot evaluate: the set does not validate: %v", firstLine(err.Error()))
		return nil
	}
	spec, stale := e.sess.PrepareRun(e.items, "", resume, e.opt.Model)
	m.stale = workbench.StaleSummary(stale, 3)
	tmpl := e.runTemplate()
	ctx, cancel := context.WithCancel(e.ctx)
	m.running, m.cancel, m.lastErr = true, cancel, ""
	m.progress = workbench.Progress{Total: len(spec.Items)}
	ch := make(chan workbench.Progress, 64)
	switch {
	case resume != "":
		e.say("resuming run %s…", resume)
	case m.stale != "":
		e.fail("evaluating %d items; %d stale labels excluded (see the evaluate screen)", len(spec.Items), len(stale))
	default:
		e.say("evaluating %d items…", len(spec.Items))
	}
	m.draw()
	run := func() tea.Msg {
		id, err := tmpl.StartRun(ctx, spec, ch)
		return evalDoneMsg{runID: id, err: err}
	}
	return tea.Batch(waitProgress(ch), run)
}

// waitProgress turns the run's progress channel into messages.
func waitProgress(ch <-chan workbench.Progress) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return evalProgressMsg{p: p, ch: ch}
	}
}

// openRunMsg asks the evaluate screen to open a stored run.
type openRunMsg struct{ run *workbench.Run }

// A run whose first-repeat answers number at most smallRunAnswers is read
// whole in one load (report and answers, one message: small runs look as
// they always did); a larger one is opened from its report (the stored
// summary: instant once stored) and its answers read after, in a second
// load with its own progress line, when they number at most autoAnswers
// (past that the user asks for them: enter).
const (
	smallRunAnswers = 50_000
	autoAnswers     = 1_000_000
)

// evalLoadMsg carries a load of the evaluate screen: the report (answers
// false) or the answers (answers true) of a run.
type evalLoadMsg struct {
	seq     int
	v       *workbench.RunView
	err     error
	answers bool
	summary bool // the report came from the run's stored summary
}

// open reads and measures a stored run (run, or when nil ref: an id,
// prefix or latest) with the canonical settings `jevlab show` uses, from
// the run's stored summary when there is one. A load in flight is
// superseded.
func (m *evalModel) open(ref string, run *workbench.Run) tea.Cmd {
	e := m.e
	if !e.hasDB() {
		return nil
	}
	name := ref
	if run != nil {
		name = run.ID
	}
	db := e.sess.Template.DB
	cfg := workbench.ViewConfig{ReportOnly: true, Build: e.sess.Template.Build}
	ctx, seq, progress, ch, wait := m.ld.begin(e.ctx, "reading run "+name, "answers")
	m.ld.after = "computing the report of run " + name + " (stored for the next open)"
	m.answersFor = ""
	summary := false // set by the loading goroutine only, read by it after the load
	cfg.Progress = func(p workbench.LoadProgress) {
		summary = summary || p.Summary
		progress(p)
	}
	load := func() tea.Msg {
		defer close(ch)
		var v *workbench.RunView
		var err error
		if run != nil {
			v, err = workbench.LoadStoredRun(ctx, db, run, cfg)
		} else {
			v, err = workbench.LoadRun(ctx, db, ref, cfg)
		}
		if err == nil && v.Run.Done*len(v.Set.Questions) <= smallRunAnswers {
			v, err = workbench.WithAnswers(ctx, db, v, nil)
		}
		return evalLoadMsg{seq: seq, v: v, err: err, summary: summary}
	}
	m.draw()
	return tea.Batch(load, wait) // load first: a synchronous driver (tests) runs it before waiting
}

// readAnswers reads the shown run's answers for the per-item views.
func (m *evalModel) readAnswers() tea.Cmd {
	if m.v == nil || m.v.Items != nil || !m.e.hasDB() {
		return nil
	}
	v, db := m.v, m.e.sess.Template.DB
	ctx, seq, progress, ch, wait := m.ld.begin(m.e.ctx, "reading the answers of run "+v.Run.ID, "answers")
	m.ld.after = ""
	m.answersFor = v.Run.ID
	load := func() tea.Msg {
		defer close(ch)
		av, err := workbench.WithAnswers(ctx, db, v, progress)
		return evalLoadMsg{seq: seq, v: av, err: err, answers: true}
	}
	m.draw()
	return tea.Batch(load, wait) // load first: a synchronous driver (tests) runs it before waiting
}

// cancelLoad stops the load in flight and says what is left as it was.
func (m *evalModel) cancelLoad() tea.Cmd {
	what := m.ld.what
	if m.ld.stop() {
		if m.answersFor != "" {
			m.e.say("stopped %s; enter reads them (provider confidence, noul confusion, costs)", what)
		} else {
			m.e.say("stopped %s; the runs screen (4, enter) opens it again", what)
		}
	}
	m.draw()
	return nil
}

func (m *evalModel) loading() bool { return m.ld.active }

// answersRead reports whether the shown run's per-item answers are read.
func (m *evalModel) answersRead() bool { return m.v != nil && m.v.Items != nil }

func (m *evalModel) analyze(runID string) tea.Cmd {
	return m.open(runID, nil)
}

func (m *evalModel) update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.probes.update(msg); ok {
		m.draw()
		return cmd
	}
	if k, ok := msg.(tea.KeyMsg); ok && m.probes.modal() {
		cmd := m.probes.key(k)
		m.draw()
		return cmd
	}
	switch msg := msg.(type) {
	case datasetLoadedMsg:
		m.draw() // the item count in the prompt
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
		case errors.Is(msg.err, workbench.ErrInterrupted):
			m.lastErr = "interrupted — R resumes run " + m.lastRun
			m.e.say("run %s interrupted; R resumes it", m.lastRun)
		case msg.runID == "" && errors.Is(msg.err, context.Canceled):
			// Cancelled while the run was still being set up: nothing was
			// asked and nothing is stored to resume.
			m.lastErr = "cancelled before the first item was asked; r starts it again"
			m.e.say("evaluation cancelled before it started")
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
	case openRunMsg:
		return m.open("", msg.run)
	case loadProgressMsg:
		cmd, _ := m.ld.progress(msg)
		m.draw()
		return cmd
	case evalLoadMsg:
		if !m.ld.finished(msg.seq) {
			return nil // superseded or cancelled
		}
		if msg.err != nil {
			if msg.answers {
				m.e.fail("read the answers of run %s: %s", m.answersFor, firstLine(msg.err.Error()))
			} else {
				m.e.fail("read run: %s", firstLine(msg.err.Error()))
			}
			m.draw()
			return nil
		}
		m.v = msg.v
		m.qi = min(m.qi, max(0, len(m.v.Report.Questions)-1))
		cmds := []tea.Cmd{}
		if !msg.answers && m.v.Items == nil { // a large run (a small one is read whole, and says nothing new)
			if msg.summary {
				m.e.say("run %s: report from its stored summary", m.v.Run.ID)
			} else {
				m.e.say("run %s: report computed from its answers", m.v.Run.ID)
			}
		}
		if !msg.answers {
			cmds = append(cmds, m.probes.show(m.selectedQuestion()))
			if m.v.Items == nil && m.v.Run.Done*len(m.v.Set.Questions) <= autoAnswers {
				cmds = append(cmds, m.readAnswers())
			}
		}
		m.draw()
		if v := msg.v; v.Items != nil { // the dataset screen shows this run's correctness
			cmds = append(cmds, func() tea.Msg { return runResultsMsg{v: v} })
		}
		return tea.Batch(cmds...)
	case tea.KeyMsg:
		cmd, _ := m.keys.handle(msg)
		m.draw()
		return cmd
	}
	return nil
}

// draw precomputes the screen's lines.
func (m *evalModel) draw() {
	st := &m.e.st
	w := max(20, m.w-1)
	var l []string
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
		case m.e.sess.Dataset.Path == "":
			l = append(l, st.Muted.Render(fit(" The set names no dataset; add `dataset: FILE.jsonl` to evaluate it.", w)))
		case n == 0:
			l = append(l, st.Muted.Render(fit(" loading the dataset…", w)))
		default:
			l = append(l, fit(fmt.Sprintf(" r evaluates the working set over %d items (stored as a run; x cancels, R resumes).", n), w))
		}
	}
	if m.stale != "" {
		for _, s := range wrapText(m.stale, w-1, 6) {
			l = append(l, st.Warn.Render(" "+s))
		}
	}
	if m.ld.active {
		l = append(l, st.Muted.Render(fit(m.ld.line(), w)))
	} else if m.v != nil && !m.answersRead() {
		l = append(l, st.Muted.Render(fit(fmt.Sprintf(" report of run %s from its stored summary · enter reads its answers (provider confidence, noul confusion, costs)", m.v.Run.ID), w)))
	}
	if m.v != nil {
		l = append(l, "")
		l = append(l, m.metricsTable(w)...)
		if pl := m.probes.section(w); len(pl) > 0 {
			l = append(append(l, ""), pl...)
		}
		if qs := m.v.Report.Questions; m.qi < len(qs) {
			rep := qs[m.qi]
			l = append(l, "")
			if rep.Box != nil {
				l = append(l, boxDetail(st, rep, w)...) // evalbox.go
				m.lines = l
				m.scroll.setLen(len(l))
				return
			}
			l = append(l, m.coverage(rep, w)...)
			l = append(l, m.costLines(rep.ID, w)...)
			l = append(l, "")
			l = append(l, m.reliability(rep, w)...)
			l = append(l, "")
			if rep.Type == "noul" && !m.answersRead() {
				l = append(l, st.Focused.Render(fit(" Confusion · rows = true label, columns = decision (numbered as the rows)", w)),
					st.Muted.Render(fit(" "+m.needsAnswers(), w)))
			} else {
				l = append(l, confusionLines(st, rep, m.v.Confusion(rep.ID), w)...)
			}
		}
	}
	m.lines = l
	m.scroll.setLen(len(l))
}

func (m *evalModel) view(w, h int) string {
	if v, ok := m.probes.view(w, h); ok {
		return v
	}
	return joinLines(m.scroll.render(m.lines, nil))
}

// needsAnswers says what a per-item view waits for while the run's
// answers are not read.
func (m *evalModel) needsAnswers() string {
	if m.ld.active && m.answersFor != "" {
		return "needs the run's answers: reading them…"
	}
	return "needs the run's answers: enter reads them"
}

// coverage draws accuracy against coverage at the cut-point.
func (m *evalModel) coverage(rep *workbench.QuestionReport, w int) []string {
	st := &m.e.st
	sel := rep.Selective
	name := workbench.ConfidenceLabel(sel.ConfidenceName)
	l := []string{st.Focused.Render(fit(fmt.Sprintf(" Accuracy–coverage · %s ≥ cut-point (←/→ moves it)", name), w))}
	if len(sel.Curve) == 0 {
		return append(l, st.Muted.Render(fit(" no labelled answers", w)))
	}
	// The curve point for the cut: the lowest threshold at or above it.
	curve := append([]workbench.CurvePoint(nil), sel.Curve...)
	sort.Slice(curve, func(i, j int) bool { return curve[i].Threshold < curve[j].Threshold })
	var pt *workbench.CurvePoint
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
	if c := sel.Cutpoint; c != nil {
		l = append(l, st.Muted.Render(fit(fmt.Sprintf(" fitted cut-point %.3f for %.0f%% accuracy: holdout accuracy %.3f, coverage %.3f", c.Cutpoint, 100*c.Target, c.HoldoutAccuracy, c.HoldoutCoverage), w)))
	} else if sel.Refused != "" {
		l = append(l, st.Muted.Render(fit(" no cut-point fitted: "+sel.Refused, w)))
	}
	if rt := sel.Routing; rt != nil {
		l = append(l, fit(" "+rt.String(), w)) // the set's min_confidence: what routing below it does
	}
	return l
}

// reliability draws a bar per bin with the bin's mean confidence marked ┃
// (the diagonal) and its count. For a noul the bar is the observed
// frequency of true and ┃ the mean P(true); otherwise the bar is the
// observed accuracy and ┃ the mean top prob or confidence.
func (m *evalModel) reliability(rep *workbench.QuestionReport, w int) []string {
	st := &m.e.st
	title := " Reliability · bar = observed frequency of true, ┃ = mean P(true) (the diagonal)"
	obs, conf := "true", "P(true)"
	if rep.Type != "noul" {
		name := workbench.ConfidenceLabel(rep.Selective.ConfidenceName)
		title = fmt.Sprintf(" Reliability · bar = observed accuracy, ┃ = mean %s (the diagonal)", name)
		obs, conf = "acc", name
	}
	l := []string{st.Focused.Render(fit(title, w))}
	if len(rep.Reliability) == 0 {
		return append(l, st.Muted.Render(fit(" no labelled answers", w)))
	}
	tail := fmt.Sprintf(" %s 0.00 %s 0.00 n=0000", obs, conf)
	barW := max(10, w-10-len([]rune(tail)))
	for _, b := range rep.Reliability {
		bar := []rune(Bar(b.Observed, barW))
		pos := min(barW-1, max(0, int(b.Confidence*float64(barW))))
		bar[pos] = '┃'
		style := st.Bar
		if math.Abs(b.Observed-b.Confidence) > 0.1 && b.N >= 10 {
			style = st.Warn
		}
		l = append(l, fit(fmt.Sprintf(" %.1f–%.1f %s %s %.2f %s %.2f n=%d", b.Lo, b.Hi, style.Render(string(bar)), obs, b.Observed, conf, b.Confidence, b.N), w))
	}
	return l
}
