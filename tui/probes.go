package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// Messages of the evaluate screen's probe pane.
type (
	// probeLinesMsg carries the stability lines of one question against
	// one run, read in a command.
	probeLinesMsg struct {
		lines []workbench.ProbeLine
		err   error
		seq   int
	}
	probeProgressMsg struct {
		p  workbench.Progress
		ch <-chan workbench.Progress
	}
	probeDoneMsg struct {
		kind workbench.ProbeKind
		qid  string
		res  *workbench.ProbeResult
		err  error
	}
)

// probePane is the evaluate screen's probe results for the selected
// question: one stability line per kind measured against the run shown
// (workbench.ProbeLines), the worst items of every kind in a scrolling
// list (w), and a probe of the selected question run from here (p, then
// the kind's key), through the session's run template in a tea.Cmd.
type probePane struct {
	e *env

	run, qid string // what the lines are for
	lines    []workbench.ProbeLine
	loading  bool
	loadErr  string
	seq      int

	running  bool
	cancel   context.CancelFunc
	kind     workbench.ProbeKind
	progress workbench.Progress
	lastErr  string
	// resume is the probe run an interruption left, by kind and
	// question: choosing that kind again for that question continues it.
	resume     string
	resumeKind workbench.ProbeKind
	resumeQID  string

	// choose is the kind prompt, open while non-nil: the kinds that apply
	// to the selected question, each on its own key.
	choose     []workbench.ProbeKind
	chooseKeys bindings

	worstOpen bool
	worst     list
	worstRows []string
	worstKeys bindings
	w         int
}

// probeKindKeys are the kind prompt's keys, one letter per kind.
var probeKindKeys = map[workbench.ProbeKind]string{
	"repeat": "r", "shuffle": "s", "negation": "n", "distractor": "d",
	"noul-vs-choice": "c", "injection": "i", "perturb": "p",
}

func newProbePane(e *env) *probePane {
	p := &probePane{e: e, worst: newList()}
	k := e.keys
	p.worstKeys = bindings{
		bind(withHelp(k.Back, "esc", "close"), "Worst items", p.closeWorst).inBar(),
		bind(k.Worst, "Worst items", p.closeWorst).withDesc("close"),
	}
	nav := p.worst.navBindings(k, "Navigate")
	nav[1] = nav[1].inBar()
	p.worstKeys = append(p.worstKeys, nav...)
	return p
}

// bindings are the pane's rows of the evaluate screen's key table; sel
// reports the run shown and the selected question ("" when none), idle
// whether no evaluation runs.
func (p *probePane) bindings(k KeyMap, sel func() (run, qid string), idle func() bool) bindings {
	selected := func() bool { _, q := sel(); return q != "" }
	return bindings{
		bind(k.Probe, "Probes", func() tea.Cmd { r, q := sel(); return p.ask(r, q) }).inBar().
			enabledWhen(func() bool { return selected() && idle() && !p.running }),
		bind(k.Worst, "Probes", p.openWorst).inBar().enabledWhen(func() bool { return len(p.worstRows) > 0 }),
		bind(k.Cancel, "Probes", p.stop).inBar().enabledWhen(func() bool { return p.running }).withDesc("cancel the probe"),
	}
}

// modal reports whether the kind prompt or the worst list has the keys.
func (p *probePane) modal() bool { return p.choose != nil || p.worstOpen }

func (p *probePane) help() helpMap {
	if p.choose != nil {
		return p.chooseKeys.help()
	}
	return p.worstKeys.help()
}

func (p *probePane) key(msg tea.KeyMsg) tea.Cmd {
	if p.choose != nil {
		cmd, _ := p.chooseKeys.handle(msg)
		return cmd
	}
	cmd, _ := p.worstKeys.handle(msg)
	return cmd
}

func (p *probePane) resize(w, h int) {
	p.w = w
	p.worst.setHeight(max(1, h-2))
	p.rebuildWorst()
}

// load reads the stability lines of qid against run in a command, unless
// they are the ones shown.
func (p *probePane) load(run, qid string, force bool) tea.Cmd {
	if !p.e.hasDB() || run == "" || qid == "" {
		p.run, p.qid, p.lines, p.loadErr = run, qid, nil, ""
		p.rebuildWorst()
		return nil
	}
	if !force && run == p.run && qid == p.qid {
		return nil
	}
	if run != p.run || qid != p.qid {
		p.lines = nil
		p.rebuildWorst()
	}
	p.run, p.qid, p.loading, p.loadErr = run, qid, true, ""
	p.seq++
	seq, ctx, db, set := p.seq, p.e.ctx, p.e.sess.Template.DB, p.e.set.Clone()
	return func() tea.Msg {
		lines, err := workbench.ProbeLines(ctx, db, set, run, qid)
		return probeLinesMsg{lines: lines, err: err, seq: seq}
	}
}

// show loads the lines of qid against run unless they are shown.
func (p *probePane) show(run, qid string) tea.Cmd { return p.load(run, qid, false) }

// ask opens the kind prompt for question qid of the run shown.
func (p *probePane) ask(run, qid string) tea.Cmd {
	e := p.e
	switch {
	case !e.hasDB():
		e.fail("no database: probes are stored runs (--db)")
		return nil
	case e.prov == nil:
		e.fail("the provider is not ready yet")
		return nil
	case len(e.items) == 0:
		e.fail("no dataset items to probe (add `dataset:` to the set)")
		return nil
	}
	kinds := workbench.ProbeKindsFor(e.set, qid)
	if len(kinds) == 0 {
		e.fail("no probe applies to question %s", termsafe.String(qid))
		return nil
	}
	p.choose, p.chooseKeys = kinds, nil
	for _, kind := range kinds {
		kind := kind
		desc := string(kind)
		if p.resume != "" && kind == p.resumeKind && qid == p.resumeQID {
			desc += " (resumes " + p.resume + ")"
		}
		kb := key.NewBinding(key.WithKeys(probeKindKeys[kind]), key.WithHelp(probeKindKeys[kind], desc))
		p.chooseKeys = append(p.chooseKeys, bind(kb, "Probe kind", func() tea.Cmd {
			p.choose = nil
			return p.start(run, qid, kind)
		}).inBar())
	}
	p.chooseKeys = append(p.chooseKeys, bind(withHelp(e.keys.Back, "esc", "cancel"), "Probe kind", func() tea.Cmd {
		p.choose = nil
		e.say("cancelled")
		return nil
	}).inBar())
	return nil
}

// start runs a probe of kind for qid against run through the session's
// run template (the provider, database and spend cap `jevlab probe`
// uses), in a command; progress arrives as messages.
func (p *probePane) start(run, qid string, kind workbench.ProbeKind) tea.Cmd {
	e := p.e
	spec, _ := e.sess.PrepareRun(e.items, "", "", e.opt.Model)
	ps := workbench.ProbeSpec{Run: spec, Kind: kind, Question: qid, Base: run, Seed: 1}
	if p.resume != "" && kind == p.resumeKind && qid == p.resumeQID {
		ps.Resume = p.resume
	}
	p.resume = ""
	tmpl := e.runTemplate()
	ctx, cancel := context.WithCancel(e.ctx)
	p.running, p.cancel, p.kind, p.lastErr = true, cancel, kind, ""
	p.progress = workbench.Progress{}
	ch := make(chan workbench.Progress, 64)
	e.say("probing %s: %s…", termsafe.String(qid), kind)
	run1 := func() tea.Msg {
		res, err := tmpl.RunProbe(ctx, ps, func(pr workbench.Progress) {
			select {
			case ch <- pr:
			case <-ctx.Done():
			}
		})
		close(ch)
		return probeDoneMsg{kind: kind, qid: qid, res: res, err: err}
	}
	return tea.Batch(waitProbeProgress(ch), run1)
}

func waitProbeProgress(ch <-chan workbench.Progress) tea.Cmd {
	return func() tea.Msg {
		pr, ok := <-ch
		if !ok {
			return nil
		}
		return probeProgressMsg{p: pr, ch: ch}
	}
}

func (p *probePane) stop() tea.Cmd {
	if p.running && p.cancel != nil {
		p.cancel()
		p.e.say("cancelling the probe — answers so far are kept")
	}
	return nil
}

func (p *probePane) openWorst() tea.Cmd {
	p.worstOpen = true
	return nil
}

func (p *probePane) closeWorst() tea.Cmd {
	p.worstOpen = false
	return nil
}

// update handles the pane's own messages; handled is false for others.
func (p *probePane) update(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	switch msg := msg.(type) {
	case probeLinesMsg:
		if msg.seq != p.seq {
			return nil, true
		}
		p.loading = false
		if msg.err != nil {
			p.loadErr = firstLine(msg.err.Error())
		}
		p.lines = msg.lines
		p.rebuildWorst()
		return nil, true
	case probeProgressMsg:
		p.progress = msg.p
		return waitProbeProgress(msg.ch), true
	case probeDoneMsg:
		p.running, p.cancel = false, nil
		switch {
		case errors.Is(msg.err, workbench.ErrInterrupted):
			p.resume, p.resumeKind, p.resumeQID = p.progress.RunID, msg.kind, msg.qid
			p.lastErr = fmt.Sprintf("probe %s interrupted — p then %s resumes run %s", msg.kind, probeKindKeys[msg.kind], p.resume)
			p.e.say("%s", p.lastErr)
		case msg.err != nil:
			p.lastErr = firstLine(msg.err.Error())
			p.e.fail("probe %s failed: %s", msg.kind, p.lastErr)
		default:
			p.e.say("probe %s of %s done: run %s", msg.kind, termsafe.String(msg.qid), strings.Join(msg.res.Runs, ", "))
		}
		return p.load(p.run, p.qid, true), true
	}
	return nil, false
}

// rebuildWorst draws the worst-items list's rows: every kind's worst
// items, largest effect first within a kind.
func (p *probePane) rebuildWorst() {
	p.worstRows = nil
	for _, l := range p.lines {
		for _, w := range l.Worst {
			row := fmt.Sprintf(" %-15s %-24s %7.3f  %s", l.Kind, midTrunc(termsafe.String(w.Item), 24), w.Value, termsafe.String(w.Note))
			p.worstRows = append(p.worstRows, fit(row, max(20, p.w-1)))
		}
	}
	p.worst.setLen(len(p.worstRows))
	if len(p.worstRows) == 0 {
		p.worstOpen = false
	}
}

// section draws the pane's lines for the evaluate screen, w cells wide:
// a heading, a running probe's progress, one stability line per kind
// (wrapped, never cut), its gate.
func (p *probePane) section(w int) []string {
	st := &p.e.st
	if p.qid == "" {
		return nil
	}
	if len(p.lines) == 0 && !p.running && p.choose == nil && p.lastErr == "" && p.loadErr == "" {
		what := " Probes · none of %s against this run yet · p runs one"
		if p.loading {
			what = " Probes · reading the probe runs of %s…"
		}
		return []string{st.Muted.Render(fit(fmt.Sprintf(what, termsafe.String(p.qid)), w))}
	}
	l := []string{st.Focused.Render(fit(fmt.Sprintf(" Probes of %s vs run %s · p probe · w worst items", termsafe.String(p.qid), p.run), w))}
	if p.choose != nil {
		var ks []string
		for _, k := range p.choose {
			ks = append(ks, probeKindKeys[k]+" "+string(k))
		}
		l = append(l, st.Focused.Render("▌Probe which kind?"))
		for _, s := range wrapText(strings.Join(ks, " · ")+" · esc cancels", w-2, 4) {
			l = append(l, "  "+s)
		}
	}
	if p.running {
		pr := p.progress
		l = append(l, fit(fmt.Sprintf(" probe %s running: %d/%d · %d errors · $%.4f (x cancels)", p.kind, pr.Done, pr.Total, pr.Errors, pr.CostUSD), w))
	}
	if p.lastErr != "" {
		for _, s := range wrapText(p.lastErr, w-1, 3) {
			l = append(l, st.Warn.Render(" "+s))
		}
	}
	switch {
	case p.loadErr != "":
		l = append(l, st.Bad.Render(fit(" cannot read the probes: "+p.loadErr, w)))
	case p.loading && len(p.lines) == 0:
		l = append(l, st.Muted.Render(fit(" reading the probe runs…", w)))
	case len(p.lines) == 0:
		l = append(l, st.Muted.Render(fit(" none against this run yet", w)))
	}
	const kw = 15
	for _, pl := range p.lines {
		text := pl.Line
		wrapped := wrapText(text, max(10, w-kw-3), 4)
		for i, s := range wrapped {
			head := strings.Repeat(" ", kw)
			if i == 0 {
				head = fmt.Sprintf("%-*s", kw, pl.Kind)
			}
			l = append(l, " "+head+" "+s)
		}
		if g := pl.Gate; g != nil {
			mark, style := "PASS", st.Good
			if !g.Passed {
				mark, style = "FAIL", st.Bad
			}
			l = append(l, style.Render(fit(fmt.Sprintf(" %s gate %s %s: %s", strings.Repeat(" ", kw), mark, g.Gate, termsafe.String(g.Msg)), w)))
		}
	}
	return l
}

// view draws the open worst-items list (ok false when it is closed).
func (p *probePane) view(w, h int) (string, bool) {
	if !p.worstOpen {
		return "", false
	}
	st := &p.e.st
	title := fmt.Sprintf(" Worst items · %s against run %s · largest effect first within a kind", termsafe.String(p.qid), p.run)
	if more := p.worst.more(); more != "" {
		title += " · " + more
	}
	l := []string{st.Focused.Render(fit(title, w)),
		st.Muted.Render(fit(fmt.Sprintf(" %-15s %-24s %7s  %s", "kind", "item", "effect", "what moved"), w))}
	l = append(l, p.worst.render(p.worstRows, func(s string) string { return st.Selected.Render(s) })...)
	return joinLines(l), true
}
