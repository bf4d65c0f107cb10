package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// rowText is an editor row as shown.
func (e *questionEditor) rowText(r edRow) string {
	id, q := e.q()
	set := e.d.e.set
	switch r.kind {
	case rowType:
		return "type: " + string(q.Type) + "   (t changes it)"
	case rowInstructions:
		return "instructions: " + termsafe.String(oneLine(q.Instructions))
	case rowItem:
		if q.Type == provider.Score {
			return fmt.Sprintf("level %d: %s", r.item, termsafe.String(oneLine(q.Levels[r.item])))
		}
		return fmt.Sprintf("%s: %s", termsafe.String(q.Options[r.item].Label), termsafe.String(oneLine(q.Options[r.item].Description)))
	case rowThreshold:
		return fmt.Sprintf("threshold (caller-side, never sent): %g", set.Threshold(id))
	case rowMinConfidence:
		v := "— (none)"
		if mc, ok := set.MinConfidence(id); ok {
			v = strconv.FormatFloat(mc, 'g', -1, 64)
		}
		return "min_confidence (caller-side, never sent): " + v
	case rowGate:
		g := set.Gates[id]
		v := "—"
		if x, _ := g.Field(r.gate); x != nil {
			v = strconv.FormatFloat(*x, 'g', -1, 64)
		}
		if all := set.Gates["*"]; id != "*" {
			if x, _ := all.Field(r.gate); x != nil && v == "—" {
				v = "— (* gate: " + strconv.FormatFloat(*x, 'g', -1, 64) + ")"
			}
		}
		return "gate " + r.gate + ": " + v
	}
	return ""
}

// view draws the editor: a window of rows around the cursor, then the
// open field and any error, wrapped.
func (e *questionEditor) view(sel *provider.QuestionEntry, w, h int) []string {
	st := &e.d.e.st
	title := "Edit " + termsafe.String(sel.ID)
	if err := e.d.valid[sel.ID]; err != nil {
		title += " — ✗ " + firstLine(err.Error())
	}
	lines := []string{e.d.paneTitle(title, paneEditor, w)}
	rows := e.rows()
	budget := max(3, h/2-1)
	if e.input {
		budget = max(2, h/2-e.area.Height()-2)
	}
	top := 0
	if e.row >= budget {
		top = e.row - budget + 1
	}
	for i := top; i < len(rows) && i < top+budget; i++ {
		text := e.rowText(rows[i])
		if i == e.row && e.d.focus == paneEditor {
			lines = append(lines, st.Selected.Render(fit("› "+text, w)))
		} else {
			lines = append(lines, fit("  "+text, w))
		}
	}
	if len(rows) > budget {
		lines = append(lines, st.Faint.Render(fit(fmt.Sprintf("  rows %d–%d of %d", top+1, min(len(rows), top+budget), len(rows)), w)))
	}
	if e.input {
		r, _ := e.cur()
		switch {
		case e.kind == editRename:
			lines = append(lines, st.Focused.Render("new label (enter applies; labels with the old name follow it)"), e.line.View())
		case e.kind == editNumber && r.kind == rowThreshold:
			lines = append(lines, st.Focused.Render("threshold 0..1 (enter applies)"), e.line.View())
		case e.kind == editNumber:
			lines = append(lines, st.Focused.Render(strings.TrimSpace(strings.SplitN(e.rowText(r), ":", 2)[0])+" (enter applies; empty removes it)"), e.line.View())
		default:
			mode := "text"
			if e.asJSON {
				mode = "JSON"
			}
			lines = append(lines, st.Focused.Render(fmt.Sprintf("editing as %s (ctrl+j toggles; esc applies)", mode)))
			lines = append(lines, strings.Split(e.area.View(), "\n")...)
		}
	}
	if e.err != "" {
		for _, l := range wrapText("✗ "+e.err, w, 4) {
			lines = append(lines, st.Bad.Render(l))
		}
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	return lines
}
