// Package tui is jevlab's workbench: a Bubble Tea program with one model per
// screen (design, dataset, evaluation, runs, compare) under a top-level model
// that routes messages, draws the header, the status line and the
// context-sensitive key bar, and guards unsaved edits.
//
// Every slow operation (asking the provider, saving, loading the dataset,
// querying the database) runs as a tea.Cmd and reports back with a message;
// View only joins strings prepared in Update.
package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
)

// Options configure the workbench.
type Options struct {
	// Session is the set being designed with its dataset source and the
	// run template cmd built (database, version, base URL, concurrency,
	// rps, settings); the template's provider and mode are the
	// workbench's own (Provider/Connect, Mode) when a run starts. nil:
	// a session over Set with no dataset and no database.
	Session *workbench.Session
	// Set is the question set to design when Session is nil.
	Set *questionset.Set
	// Provider answers requests (live client, cache, offline replay or the
	// stand-in). Either Provider or Connect is required.
	Provider provider.Provider
	// Connect builds the provider in the background when Provider is nil,
	// so the first frame never waits for answer caches to load. It returns
	// the provider, its mode, and a note to show (warnings), if any.
	Connect func(ctx context.Context) (p provider.Provider, mode, note string, err error)
	// Mode names how Provider answers: "live", "cached", "offline" or
	// "stand-in". It is shown in the header and recorded with runs.
	Mode string
	// Model overrides the set's requested model when not empty.
	Model string
	// SaveNew saves a set that came from no file (the shipped example)
	// into folder dir (asked of the user, SaveNewDir by default) and
	// returns the set's path and the dataset as saved there (so its labels
	// can be rewritten); SaveNewDesc says what is saved, for the prompts.
	// nil: the set's name as a YAML file in the working directory.
	SaveNew     func(dir string, data []byte) (path string, ds workbench.DatasetSource, err error)
	SaveNewDir  string
	SaveNewDesc string
	// StandIn starts the in-process stand-in for this session in front of
	// the provider as it is (nil: offline misses stay misses). It is
	// offered, as one key, when a run misses.
	StandIn func(primary provider.Provider) (provider.Provider, error)
	// RunOnStart asks the working state once at start (free when answers
	// are cached or replayed).
	RunOnStart bool
	// Renderer draws the styles (nil: lipgloss's default, which honours
	// NO_COLOR and detects light backgrounds).
	Renderer *lipgloss.Renderer
	// Input and Output replace the terminal (tests); nil means stdin/stdout.
	Input  io.Reader
	Output io.Writer
	// NoAltScreen keeps the program in the normal screen buffer.
	NoAltScreen bool
	// Mouse enables mouse wheel scrolling.
	Mouse bool
	// PollEvery is how often the runs screen looks for runs stored by
	// other processes; 0 means every 2s, negative never (tests).
	PollEvery time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Run starts the workbench and blocks until the user quits or ctx ends.
func Run(ctx context.Context, opt Options) error {
	m, err := New(ctx, opt)
	if err != nil {
		return err
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if !opt.NoAltScreen {
		popts = append(popts, tea.WithAltScreen())
	}
	if opt.Mouse {
		popts = append(popts, tea.WithMouseCellMotion())
	}
	if opt.Input != nil {
		popts = append(popts, tea.WithInput(opt.Input))
	}
	if opt.Output != nil {
		popts = append(popts, tea.WithOutput(opt.Output))
	}
	_, err = tea.NewProgram(m, popts...).Run()
	if f := m.design.farewell(); f != "" && err == nil {
		// After the screen is gone: how to reopen what was saved.
		var out io.Writer = os.Stdout
		if opt.Output != nil {
			out = opt.Output
		}
		fmt.Fprintln(out, f)
	}
	if err != nil && ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("workbench: %w", err)
	}
	return nil
}

// screenID names a screen.
type screenID int

const (
	screenDesign screenID = iota
	screenDataset
	screenEval
	screenRuns
	screenCompare
)

var screenNames = [...]string{"design", "dataset", "evaluate", "runs", "compare"}

// env is what every screen shares: options, styles, keys, the session (the
// working set, its dataset and run template) and the status line's figures.
type env struct {
	ctx   context.Context
	opt   Options
	st    Styles
	keys  KeyMap
	sess  *workbench.Session
	set   *questionset.Set // sess.Set
	dirty bool
	now   func() time.Time

	items   []workbench.Item  // the dataset as loaded: labels as text, resolved by sess.Labelled on every use
	prov    provider.Provider // nil until connected
	mode    string
	connErr error

	flash    string // last status message
	flashBad bool

	resolved  string // model that answered last
	latency   time.Duration
	tokens    int64
	costUSD   float64
	confident string // confidence text of the selected answer
}

func (e *env) say(format string, a ...any) {
	e.flash, e.flashBad = fmt.Sprintf(format, a...), false
}

func (e *env) fail(format string, a ...any) {
	e.flash, e.flashBad = fmt.Sprintf(format, a...), true
}

// db is the run database, nil when there is none (it travels inside the
// session's run template; the screens never name its type).
func (e *env) hasDB() bool { return e.sess.Template != nil && e.sess.Template.DB != nil }

// runTemplate is the session's template with the workbench's provider and
// mode as they are now (a stand-in started in this session records as
// one); offline runs record no base URL, as eval does.
func (e *env) runTemplate() *workbench.RunTemplate {
	t := *e.sess.Template
	t.Provider, t.ProviderKind = e.prov, e.mode
	if e.mode == "offline" {
		t.BaseURL = ""
	}
	return &t
}

// requestedModel is the model the workbench asks for.
func (e *env) requestedModel() string {
	if e.opt.Model != "" {
		return e.opt.Model
	}
	return e.set.ModelName()
}

// screen is one screen's model.
type screen interface {
	// update handles a message routed to this screen.
	update(msg tea.Msg) tea.Cmd
	// view draws the body in w×h cells.
	view(w, h int) string
	// resize is called with the body size.
	resize(w, h int)
	// help returns the bindings valid right now.
	help() helpMap
	// capturing reports whether the screen takes every key (a text field
	// has focus), so global keys must not fire.
	capturing() bool
}

// Model is the top-level Bubble Tea model.
type Model struct {
	e       *env
	help    help.Model
	width   int
	height  int
	active  screenID
	screens [5]screen
	design  *designModel

	showHelp    bool
	confirmQuit bool
	quitting    bool
}

// New builds the workbench model. It does no I/O: loading happens in Init's
// commands.
func New(ctx context.Context, opt Options) (*Model, error) {
	if opt.Session == nil && opt.Set != nil {
		opt.Session = workbench.NewSession(opt.Set, workbench.DatasetSource{}, nil)
	}
	if opt.Session == nil || opt.Session.Set == nil {
		return nil, fmt.Errorf("workbench: no question set")
	}
	opt.Set = opt.Session.Set
	if opt.Provider == nil && opt.Connect == nil {
		return nil, fmt.Errorf("workbench: no provider")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	e := &env{ctx: ctx, opt: opt, st: NewStyles(opt.Renderer), keys: DefaultKeyMap(), sess: opt.Session, set: opt.Session.Set, now: now,
		prov: opt.Provider, mode: opt.Mode}
	// The workbench's runs ask every variant beside its question: the same
	// request and state, only the variant's question tokens added, and the
	// evaluate screen's variants table pairs them.
	e.sess.AskVariants = true
	h := help.New()
	h.Styles = e.st.Help
	m := &Model{e: e, help: h, width: 80, height: 24}
	m.design = newDesign(e)
	m.screens = [5]screen{m.design, newDatasetScreen(e, m.design), newEvalScreen(e), newRunsScreen(e), newCompareScreen(e)}
	m.resize(80, 24)
	return m, nil
}

// Init starts the asynchronous loads.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.design.init()}
	if m.e.prov == nil {
		connect, ctx := m.e.opt.Connect, m.e.ctx
		m.e.say("loading recorded answers…")
		cmds = append(cmds, func() tea.Msg {
			p, mode, note, err := connect(ctx)
			return connectedMsg{p: p, mode: mode, note: note, err: err}
		})
	}
	for _, s := range m.screens[1:] {
		if i, ok := s.(interface{ init() tea.Cmd }); ok {
			cmds = append(cmds, i.init())
		}
	}
	return tea.Batch(cmds...)
}

const chromeRows = 4 // header, tabs, status, key bar

func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.help.Width = w - 1
	bw, bh := w, max(1, h-chromeRows)
	for _, s := range m.screens {
		s.resize(bw, bh)
	}
}

// connectedMsg reports the provider built by Options.Connect.
type connectedMsg struct {
	p    provider.Provider
	mode string
	note string
	err  error
}

// gotoScreenMsg asks the top-level model to switch screens.
type gotoScreenMsg struct{ to screenID }

// Update routes msg: window size and global keys here, everything else to
// the screens (results go to every screen; keys to the active one).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k := m.e.keys
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case connectedMsg:
		if msg.err != nil {
			m.e.connErr = msg.err
			m.e.fail("cannot answer: %v", firstLine(msg.err.Error()))
			return m, nil
		}
		m.e.prov, m.e.mode = msg.p, msg.mode
		if msg.note != "" {
			m.e.say("%s", firstLine(msg.note))
		} else {
			m.e.say("ready (%s)", msg.mode)
		}
		return m, m.design.connected()
	case gotoScreenMsg:
		m.switchTo(msg.to)
		return m, nil
	case savedMsg:
		cmd := m.design.update(msg)
		if m.quitting && msg.err == nil {
			return m, tea.Quit
		}
		m.quitting = false
		return m, cmd
	case tea.MouseMsg:
		// The wheel scrolls: the design screen scrolls its answer; the
		// other screens move their cursor as ↑/↓ would.
		if m.active == screenDesign || m.screens[m.active].capturing() || m.showHelp || m.confirmQuit {
			return m, m.screens[m.active].update(msg)
		}
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			return m, m.screens[m.active].update(tea.KeyMsg{Type: tea.KeyUp})
		case tea.MouseButtonWheelDown:
			return m, m.screens[m.active].update(tea.KeyMsg{Type: tea.KeyDown})
		}
		return m, nil
	case tea.KeyMsg:
		// Keys typed faster than the terminal is read arrive as one
		// message ("2f"); outside a text field each is its own command.
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.screens[m.active].capturing() {
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				_, c := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
				cmds = append(cmds, c)
			}
			return m, tea.Batch(cmds...)
		}
		if m.confirmQuit {
			switch {
			case key.Matches(msg, k.Yes):
				m.confirmQuit, m.quitting = false, true
				return m, m.save()
			case msg.String() == "n" || msg.String() == "N":
				return m, tea.Quit
			case key.Matches(msg, k.Back), msg.String() == "c":
				m.confirmQuit = false
				m.e.say("quit cancelled")
			}
			return m, nil
		}
		if msg.String() == "ctrl+c" {
			return m.quit()
		}
		if m.showHelp {
			if key.Matches(msg, k.Help, k.Back, k.Quit) {
				m.showHelp = false
			}
			return m, nil
		}
		if key.Matches(msg, k.Save) && m.active == screenDesign && m.design.capturing() {
			// ctrl+s inside an editor applies the edit, then saves.
			if m.design.commitOpen() {
				return m, m.save()
			}
			return m, nil
		}
		if !m.screens[m.active].capturing() {
			switch {
			case key.Matches(msg, k.Quit):
				return m.quit()
			case key.Matches(msg, k.Help):
				m.showHelp = true
				return m, nil
			case key.Matches(msg, k.Save):
				return m, m.save()
			case key.Matches(msg, k.Design):
				m.switchTo(screenDesign)
				return m, nil
			case key.Matches(msg, k.Dataset):
				m.switchTo(screenDataset)
				return m, nil
			case key.Matches(msg, k.Eval):
				m.switchTo(screenEval)
				return m, nil
			case key.Matches(msg, k.Runs):
				m.switchTo(screenRuns)
				return m, nil
			case key.Matches(msg, k.Compare):
				m.switchTo(screenCompare)
				return m, nil
			}
		}
		return m, m.screens[m.active].update(msg)
	}
	// Results and ticks go to every screen; each ignores what is not its own.
	var cmds []tea.Cmd
	for _, s := range m.screens {
		if c := s.update(msg); c != nil {
			cmds = append(cmds, c)
		}
	}
	return m, tea.Batch(cmds...)
}

// switchTo makes screen to active. The status line said something about
// the screen left behind; it is cleared so it never reads as the new
// screen's (a message the new screen sends afterwards replaces it).
func (m *Model) switchTo(to screenID) {
	if to != m.active {
		m.e.flash, m.e.flashBad = "", false
	}
	m.active = to
}

func (m *Model) quit() (tea.Model, tea.Cmd) {
	if m.e.dirty {
		m.confirmQuit = true
		return m, nil
	}
	return m, tea.Quit
}

// View draws the frame: header, tabs, the active screen, status and keys.
func (m *Model) View() string {
	w, h := m.width, m.height
	var b strings.Builder
	b.WriteString(m.header(w))
	b.WriteByte('\n')
	b.WriteString(m.tabs(w))
	b.WriteByte('\n')
	bh := max(1, h-chromeRows)
	var body string
	switch {
	case m.confirmQuit:
		body = m.quitDialog(w, bh)
	case m.showHelp:
		body = m.fullHelp(w, bh)
	default:
		body = m.screens[m.active].view(w, bh)
	}
	b.WriteString(clampBlock(body, w, bh))
	b.WriteByte('\n')
	b.WriteString(m.statusLine(w))
	b.WriteByte('\n')
	b.WriteString(m.keyBar(w))
	return b.String()
}
