package tui

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
)

// A screen's load of a stored run: it runs as a tea.Cmd with its own
// cancellable context, reports how far it has read as loadProgressMsg
// messages (the waitProgress pattern), and carries a sequence number so a
// newer load supersedes an older one (whose messages are then dropped).

// loadProgressMsg is how far load seq of screen for_ has read.
type loadProgressMsg struct {
	for_ screenID
	seq  int
	p    workbench.LoadProgress
	ch   <-chan workbench.LoadProgress
}

// loader is one screen's current load.
type loader struct {
	for_   screenID
	seq    int
	active bool
	what   string // "reading run r-…", drawn before the counts
	unit   string // what is counted: "answers"
	after  string // drawn instead once every answer is read ("" keeps the counts)
	p      workbench.LoadProgress
	cancel context.CancelFunc
}

// begin supersedes any load in flight with a new one described by what:
// it returns the load's context and sequence number, the progress callback
// to hand the workbench (called from the loading goroutine: it never
// blocks, a report the screen has not taken yet is dropped) and the
// command that turns progress into messages. The load's command must call
// done(ch) — close the channel — when it returns.
func (l *loader) begin(parent context.Context, what, unit string) (ctx context.Context, seq int, progress func(workbench.LoadProgress), ch chan workbench.LoadProgress, wait tea.Cmd) {
	l.stop()
	l.seq++
	ctx, l.cancel = context.WithCancel(parent)
	l.active, l.what, l.unit, l.after, l.p = true, what, unit, "", workbench.LoadProgress{}
	ch = make(chan workbench.LoadProgress, 4)
	progress = func(p workbench.LoadProgress) {
		select {
		case ch <- p:
		default: // the screen is behind: a later report follows
		}
	}
	return ctx, l.seq, progress, ch, waitLoad(l.for_, l.seq, ch)
}

// waitLoad turns one load's progress channel into messages.
func waitLoad(to screenID, seq int, ch <-chan workbench.LoadProgress) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return loadProgressMsg{for_: to, seq: seq, p: p, ch: ch}
	}
}

// progress takes a progress message: false when it belongs to another
// screen or an older load; otherwise the next wait to return.
func (l *loader) progress(msg loadProgressMsg) (tea.Cmd, bool) {
	if msg.for_ != l.for_ || msg.seq != l.seq || !l.active {
		return nil, msg.for_ == l.for_
	}
	l.p = msg.p
	return waitLoad(l.for_, msg.seq, msg.ch), true
}

// finished reports whether a result with sequence seq is the current
// load's, and if so ends it.
func (l *loader) finished(seq int) bool {
	if seq != l.seq || !l.active {
		return false
	}
	l.active = false
	if l.cancel != nil {
		l.cancel()
		l.cancel = nil
	}
	return true
}

// stop cancels the load in flight (its result, if one still arrives, is
// dropped); it reports whether there was one.
func (l *loader) stop() bool {
	was := l.active
	if l.cancel != nil {
		l.cancel()
		l.cancel = nil
	}
	l.active = false
	l.seq++ // whatever the cancelled load still sends is older
	return was
}

// line is the progress line: "reading run r-… 412,000 of 800,000 answers ·
// esc cancels".
func (l *loader) line() string {
	if l.after != "" && l.p.Total > 0 && l.p.Read >= l.p.Total {
		return " " + l.after + " · esc cancels"
	}
	n := ""
	switch {
	case l.p.Total > 0:
		n = fmt.Sprintf(" %s of %s %s", thousands(l.p.Read), thousands(l.p.Total), l.unit)
	case l.p.Read > 0:
		n = fmt.Sprintf(" %s %s", thousands(l.p.Read), l.unit)
	}
	return fmt.Sprintf(" %s%s · esc cancels", l.what, n)
}

// thousands writes n with comma separators: 412,000.
func thousands(n int) string {
	s := fmt.Sprintf("%d", n)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
