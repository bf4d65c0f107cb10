package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// Running the working state from the design screen, and the way forward
// when an offline run misses: the stand-in, one key away.

// run asks the working state through workbench.RequestWith and workbench.Ask
// (one request; on an offline miss each question alone, so the ones with
// answers still show) in a tea.Cmd. The request is a validated deep copy
// built here, so later edits cannot race with the Cmd.
func (d *designModel) run() tea.Cmd {
	if d.running {
		d.e.say("already running — x cancels")
		return nil
	}
	if d.e.prov == nil {
		if d.e.connErr != nil {
			d.e.fail("cannot run: %v", firstLine(d.e.connErr.Error()))
			return nil
		}
		d.pending = true
		d.e.say("will run when the recorded answers are loaded…")
		return nil
	}
	// Every variant is asked beside its question in the same request (the
	// same state, only its question tokens added), so the answer pane can
	// draw each under its base with what changed.
	req, err := workbench.RequestWith(d.e.set, nil, d.e.requestedModel(), d.e.sess.VariantsToAsk(d.e.sess.AskVariants))
	if err != nil {
		d.e.fail("not sent: %v", firstLine(err.Error()))
		return nil
	}
	ctx, cancel := context.WithCancel(d.e.ctx)
	d.cancel, d.running = cancel, true
	d.seq++
	seq, prov := d.seq, d.e.prov
	d.started = d.e.now() // the workbench's clock (fixed in tests)
	d.e.say("running %d question(s)…", len(req.Questions))
	ask := func() tea.Msg {
		defer cancel()
		asked, err := workbench.Ask(ctx, prov, req)
		return runDoneMsg{seq: seq, asked: asked, err: err}
	}
	return tea.Batch(ask, d.spin.Tick)
}

func (d *designModel) cancelRun() tea.Cmd {
	if d.running && d.cancel != nil {
		d.cancel()
		d.e.say("cancelling…")
	}
	return nil
}

func (d *designModel) finishRun(msg runDoneMsg) {
	if msg.seq != d.seq {
		return
	}
	d.running, d.cancel = false, nil
	e := d.e
	d.notice, d.missed = "", false
	if msg.err != nil {
		switch {
		case provider.KindOf(msg.err) == provider.KindCanceled || errors.Is(msg.err, context.Canceled):
			e.say("run cancelled")
		case provider.KindOf(msg.err) == provider.KindMiss:
			// Nothing answered: every question missed.
			fails := map[string]error{}
			for _, qe := range e.set.Questions {
				fails[qe.ID] = msg.err
			}
			d.ans.failed(fails)
			d.missedOffline(e.set.Questions.IDs())
		default:
			e.fail("run failed: %s", firstLine(workbench.DescribeError(msg.err)))
		}
		return
	}
	res := msg.asked.Result
	if res.Model != "" {
		e.resolved = res.Model
	}
	e.latency, e.tokens, e.costUSD = res.Latency, res.Usage.InputTokens+res.Usage.OutputTokens, res.CostUSD
	d.ans.answered(msg.asked)
	var missed []string
	for _, id := range msg.asked.Request.Questions.IDs() {
		if err, ok := msg.asked.Failed[id]; ok && provider.KindOf(err) == provider.KindMiss {
			missed = append(missed, id)
		}
	}
	switch {
	case len(missed) > 0:
		d.missedOffline(missed)
	case len(msg.asked.Failed) > 0:
		e.fail("%d answered, %d failed (see the chart)", len(res.Answers), len(msg.asked.Failed))
	default:
		e.say("%d answered in %s", len(res.Answers), d.e.now().Sub(d.started).Round(time.Millisecond))
	}
	d.updateConfidence()
}

// missedOffline says, in full, why questions got no answer and what to do:
// the one key that starts the stand-in, or a key for Jev.
func (d *designModel) missedOffline(ids []string) {
	d.missed = true
	e := d.e
	e.fail("%d question(s) have no recorded answer — see the note above the answers", len(ids))
	names := strings.Join(ids, ", ")
	if len(ids) > 3 {
		names = strings.Join(ids[:3], ", ") + fmt.Sprintf(" and %d more", len(ids)-3)
	}
	msg := fmt.Sprintf("No recorded answer for %s as it is now: without a key jevlab can only replay answers Jev gave before, and an edited question was never asked.", termsafe.String(names))
	if e.opt.StandIn != nil {
		msg += " Press S to start the in-process stand-in for this session: it answers what has no recording with synthetic answers (model " + workbench.StandInModel + "), shown as such and never saved as recordings."
	}
	msg += " For Jev's own answers, quit, set TYPESAFE_API_KEY and open the set again (save it first)."
	d.notice, d.noticeBad = msg, true
}

// standInOffered: a run missed, a stand-in can be started and none runs.
func (d *designModel) standInOffered() bool {
	return d.missed && d.e.opt.StandIn != nil && d.e.mode != workbench.StandInMode && !d.running
}

// startStandIn puts the stand-in in front of the provider for the rest of
// the session (in a Cmd: it builds a server) and re-runs.
func (d *designModel) startStandIn() tea.Cmd {
	start, prim := d.e.opt.StandIn, d.e.prov
	d.e.say("starting the stand-in…")
	return func() tea.Msg {
		p, err := start(prim)
		return standInMsg{p: p, err: err}
	}
}

func (d *designModel) standInStarted(msg standInMsg) tea.Cmd {
	if msg.err != nil {
		d.e.fail("cannot start the stand-in: %v", msg.err)
		return nil
	}
	d.e.prov, d.e.mode = msg.p, workbench.StandInMode
	d.missed = false
	d.notice, d.noticeBad = "The stand-in answers for this session: questions without a recording get synthetic answers marked "+workbench.StandInModel+" (not Jev's); they are never written to a fixture file.", false
	return d.run()
}
