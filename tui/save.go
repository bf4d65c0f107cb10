package tui

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// savedMsg reports a finished save: the set written to path and, when
// asked, the dataset's labels rewritten through the session's renames.
type savedMsg struct {
	path string
	data []byte
	err  error // the set was not saved (errSaveCancelled: the user backed out)
	// labelsErr is a failure to rewrite the labels after the set was saved.
	labelsErr error
	// rewrote is how many labels were rewritten; renames the renames the
	// rewrite applied (so the items in memory follow).
	rewrote int
	renames map[string]map[string]string
	// kept: the user kept the dataset's labels as they are.
	kept bool
	// ds is the dataset as saved with a new copy of the example.
	ds *workbench.DatasetSource
}

// errSaveCancelled is the savedMsg error of a save the user backed out of.
var errSaveCancelled = errors.New("not saved")

// save is the top-level ctrl+s: the design screen saves, and when it asks
// something first (where, whether to rewrite labels) it is shown.
func (m *Model) save() tea.Cmd {
	cmd := m.design.save()
	if m.design.prompt != nil && m.active != screenDesign {
		m.switchTo(screenDesign)
	}
	return cmd
}

// save writes the set. The shipped example (no file) asks for a folder
// first; pending option renames ask whether to rewrite the dataset's
// labels to match (or keep them, which leaves them stale and says so).
func (d *designModel) save() tea.Cmd {
	if d.prompt != nil {
		return nil
	}
	set := d.e.set
	data, err := set.Marshal()
	if err != nil {
		d.e.fail("cannot save: %v", err)
		return nil
	}
	cancelled := func() tea.Cmd { return func() tea.Msg { return savedMsg{err: errSaveCancelled} } }
	if set.Path == "" && d.e.opt.SaveNew != nil {
		def := d.e.opt.SaveNewDir
		if def == "" {
			def = "./" + strings.TrimSuffix(defaultSavePath(set), ".yaml") + "/"
		}
		what := d.e.opt.SaveNewDesc
		if what == "" {
			what = "the set with its dataset"
		}
		cmd := d.askLine("Save the example", "Folder to save "+termsafe.String(what)+" in; it is created, and an existing one is never overwritten:", def,
			func(dir string) (tea.Cmd, error) {
				if dir == "" {
					return nil, fmt.Errorf("type a folder, e.g. %s", def)
				}
				return d.askRenames(true, func(rewrite bool) tea.Cmd { return d.writeNew(dir, data, rewrite) }), nil
			})
		d.prompt.cancel = cancelled
		return cmd
	}
	path := set.Path
	if path == "" {
		path = defaultSavePath(set)
	}
	return d.askRenames(false, func(rewrite bool) tea.Cmd { return d.writeFile(path, data, rewrite) })
}

// askRenames asks, when the session renamed options that dataset labels
// still use, whether to rewrite those labels; then runs write with the
// answer. With no pending renames it writes at once.
func (d *designModel) askRenames(newCopy bool, write func(rewrite bool) tea.Cmd) tea.Cmd {
	sess := d.e.sess
	n := sess.PendingRenames(d.e.items)
	if n == 0 {
		if len(sess.Renames()) > 0 {
			// Renames no label uses: nothing to rewrite.
			return write(false)
		}
		return write(false)
	}
	var parts []string
	rn := sess.Renames()
	for _, q := range slices.Sorted(maps.Keys(rn)) {
		for _, old := range slices.Sorted(maps.Keys(rn[q])) {
			parts = append(parts, fmt.Sprintf("%s: %s → %s", q, old, rn[q][old]))
		}
	}
	file := filepath.Base(sess.Dataset.Path)
	if newCopy {
		file += " (the saved copy)"
	}
	noun := "labels use"
	if n == 1 {
		noun = "label uses"
	}
	body := fmt.Sprintf("%d %s an option name renamed in this session (%s). Rewrite them in %s to the new names (in place, atomically, nothing else in the file changes), or keep the file as it is: the old names then name no option, and the workbench, jevlab lint and jevlab eval all report and exclude them.",
		n-sess.PendingIndexShifts(), noun, strings.Join(parts, "; "), file)
	if k := sess.PendingIndexShifts(); k > 0 {
		body = fmt.Sprintf("%d score label(s) in %s are level numbers whose level moved in this session (levels reordered, added or removed). Rewrite them to their level's new number (in place, atomically), or keep the file as it is: each number would then name another level when the set is read again.", k, file)
		if len(parts) > 0 {
			body += fmt.Sprintf(" Also %d label(s) use an option renamed in this session (%s) and are rewritten with them.", n-k, strings.Join(parts, "; "))
		}
	}
	d.prompt = &prompt{
		title: "Rewrite the dataset's labels?",
		body:  termsafe.String(body),
		choices: []promptChoice{
			{key: "w", desc: "save and rewrite the labels", do: func() tea.Cmd { return write(true) }},
			{key: "k", desc: "save and keep the labels as they are", do: func() tea.Cmd {
				cmd := write(false)
				return func() tea.Msg {
					msg := cmd().(savedMsg)
					msg.kept = true
					return msg
				}
			}},
		},
		cancel: func() tea.Cmd { return func() tea.Msg { return savedMsg{err: errSaveCancelled} } },
	}
	d.prompt.build(d)
	return nil
}

// writeFile writes the set to path (and rewrites labels on a fork of the
// session, so the Cmd never shares the session with Update).
func (d *designModel) writeFile(path string, data []byte, rewrite bool) tea.Cmd {
	var fork *workbench.Session
	if rewrite {
		fork = d.e.sess.Fork()
	}
	d.e.say("saving to %s…", filepath.Base(path))
	return func() tea.Msg {
		msg := savedMsg{path: path, data: data}
		if msg.err = questionset.WriteFileAtomic(path, data, 0o644); msg.err != nil {
			return msg
		}
		if fork != nil {
			msg.renames = fork.Renames()
			msg.rewrote, msg.labelsErr = fork.SaveRenames()
		}
		return msg
	}
}

// writeNew saves the example into folder dir through Options.SaveNew.
func (d *designModel) writeNew(dir string, data []byte, rewrite bool) tea.Cmd {
	saveNew := d.e.opt.SaveNew
	var fork *workbench.Session
	if rewrite {
		fork = d.e.sess.Fork()
	}
	d.e.say("saving a copy of the example in %s…", termsafe.String(dir))
	return func() tea.Msg {
		path, ds, err := saveNew(dir, data)
		msg := savedMsg{path: path, data: data, err: err, ds: &ds}
		if err != nil || fork == nil {
			return msg
		}
		fork.Dataset = ds
		msg.renames = fork.Renames()
		msg.rewrote, msg.labelsErr = fork.SaveRenames()
		return msg
	}
}

// saved2 takes a finished save.
func (d *designModel) saved2(msg savedMsg) {
	e := d.e
	if errors.Is(msg.err, errSaveCancelled) {
		e.say("not saved")
		return
	}
	if msg.err != nil {
		e.fail("%v", msg.err)
		return
	}
	shown := filepath.Base(msg.path)
	if e.set.Path == "" {
		e.set.Path = msg.path
		shown = msg.path // a new file: say where
		if msg.ds != nil && msg.ds.Path != "" {
			e.sess.Dataset = *msg.ds
		}
		d.saved = msg.path
	}
	d.clean = msg.data
	if cur, err := e.set.Marshal(); err == nil && bytes.Equal(cur, msg.data) {
		e.dirty = false
	}
	d.notice = ""
	switch {
	case msg.labelsErr != nil:
		e.fail("saved %s, but the dataset's labels were not rewritten: %v", shown, msg.labelsErr)
		return
	case msg.renames != nil:
		e.items = workbench.Reindexed(e.set, workbench.Relabel(e.items, msg.renames))
		e.sess.ForgetRenames()
		e.say("saved %s and rewrote %d label(s) in %s", shown, msg.rewrote, filepath.Base(e.sess.Dataset.Path))
	case msg.kept:
		e.sess.ForgetRenames()
		e.say("saved %s; the dataset keeps its labels", shown)
	default:
		e.say("saved %s", shown)
	}
	// Labels the set as saved no longer has (kept after a rename, or an
	// option deleted): the sentence lint and eval print too.
	if _, stale := e.sess.Labelled(e.items); len(stale) > 0 {
		d.notice, d.noticeBad = workbench.StaleSummary(stale, 5)+". jevlab lint and jevlab eval report the same; fix the dataset or the options.", true
	}
	if d.saved != "" && d.saved == msg.path {
		d.notice, d.noticeBad = "Saved the example to "+termsafe.String(filepath.Dir(msg.path))+". Reopen it with: jevlab "+termsafe.String(msg.path), false
	}
}

// farewell is what the workbench prints when it ends: how to reopen the
// example saved in this session.
func (d *designModel) farewell() string {
	if d.saved == "" {
		return ""
	}
	return fmt.Sprintf("jevlab: the example was saved to %s; reopen it with:\n  jevlab %s", filepath.Dir(d.saved), d.saved)
}
