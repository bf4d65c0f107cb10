package tui

import (
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jevlab/jevlab/provider"
)

func TestBarResolution(t *testing.T) {
	tests := []struct {
		p     float64
		width int
		want  string
	}{
		{0, 4, "    "},
		{1, 4, "████"},
		{0.5, 4, "██  "},
		{0.53, 40, strings.Repeat("█", 21) + "▎" + strings.Repeat(" ", 18)}, // 169.6 → 170 eighths = 21 full + 2
		{0.55, 40, strings.Repeat("█", 22) + strings.Repeat(" ", 18)},       // 176 eighths = 22 full
		{1.7, 3, "███"},
		{-1, 3, "   "},
	}
	for _, tc := range tests {
		got := Bar(tc.p, tc.width)
		if got != tc.want {
			t.Errorf("Bar(%v, %d) = %q, want %q", tc.p, tc.width, got, tc.want)
		}
		if w := ansi.StringWidth(got); w != tc.width {
			t.Errorf("Bar(%v, %d) is %d cells", tc.p, tc.width, w)
		}
	}
	if Bar(0.53, 40) == Bar(0.55, 40) {
		t.Error("0.53 and 0.55 draw the same 40-cell bar")
	}
}

func TestJSONErrorLineCol(t *testing.T) {
	tests := []struct {
		in   string
		want string // prefix: "line:col"
	}{
		{`{"a": 1}`, ""},
		{"{\n  \"a\": 1,\n  \"b\" 2\n}", "3:7"},
		{"{\n  \"a\": [1, 2\n", "3:1"},
		{`{"a":1} x`, "1:9"},
		{`[1,]`, "1:4"},
	}
	for _, tc := range tests {
		err := jsonError([]byte(tc.in))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: unexpected error %v", tc.in, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want+":")):
			t.Errorf("%q: error %v, want it at %s", tc.in, err, tc.want)
		}
	}
}

// TestEditorKeys drives the question editor: add, rename, move, delete,
// change type and back, each through the set's mutation helpers.
func TestEditorKeys(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	labels := func() string {
		var s []string
		for _, o := range set.Questions[0].Question.Options {
			s = append(s, o.Label)
		}
		return strings.Join(s, ",")
	}
	drive(m, keys("e")...)
	drive(m, press(tea.KeyDown), press(tea.KeyDown)) // billing
	drive(m, keys("a")...)                           // new option after billing, rename opened
	drive(m, press(tea.KeyCtrlU))
	drive(m, keys("refunds")...)
	drive(m, press(tea.KeyEnter))
	if got := labels(); got != "billing,refunds,orders,shipping" {
		t.Fatalf("after add+rename: %s", got)
	}
	drive(m, keys("J")...) // refunds down
	if got := labels(); got != "billing,orders,refunds,shipping" {
		t.Errorf("after move down: %s", got)
	}
	drive(m, keys("K")...)
	drive(m, keys("K")...)
	if got := labels(); got != "refunds,billing,orders,shipping" {
		t.Errorf("after move up twice: %s", got)
	}
	drive(m, keys("d")...)
	if got := labels(); got != "billing,orders,shipping" {
		t.Errorf("after delete: %s", got)
	}
	drive(m, keys("n")...)
	drive(m, press(tea.KeyCtrlU))
	drive(m, keys("orders")...)
	drive(m, press(tea.KeyEnter))
	if !strings.Contains(m.View(), "already exists") || labels() != "billing,orders,shipping" {
		t.Errorf("renaming onto a taken label was not refused:\n%s", m.View())
	}
	drive(m, press(tea.KeyEsc)) // the second esc discards
	if m.design.edInput || !m.design.editing {
		t.Fatal("esc on the refused rename did not just close the field")
	}
	drive(m, keys("t")...)
	if q := set.Questions[0].Question; q.Type != provider.Score || len(q.Levels) != 3 {
		t.Errorf("choice → score: %s with %d levels", q.Type, len(q.Levels))
	}
	drive(m, keys("tt")...) // → noul → choice
	if q := set.Questions[0].Question; q.Type != provider.Choice || labels() != "billing,orders,shipping" {
		t.Errorf("type cycle did not restore the options: %s %s", q.Type, labels())
	}
	if !m.e.dirty {
		t.Error("edits did not mark the set unsaved")
	}
}

func TestParseSlot(t *testing.T) {
	for _, tc := range []struct {
		text   string
		asJSON bool
		want   string
		bad    bool
	}{
		{"plain text", false, `"plain text"`, false},
		{"", false, "null", false},
		{`{"what": "x"}`, true, `{"what":"x"}`, false},
		{`{"what": }`, true, "", true},
		{`say "hi"`, false, `"say \"hi\""`, false},
	} {
		got, err := parseSlot(tc.text, tc.asJSON)
		if (err != nil) != tc.bad || (!tc.bad && string(got) != tc.want) {
			t.Errorf("parseSlot(%q, %v) = %s, %v", tc.text, tc.asJSON, got, err)
		}
	}
}

// TestStylesAdapt: colours follow the background; without colour (NO_COLOR
// gives the Ascii profile) nothing is styled and text stays intact.
func TestStylesAdapt(t *testing.T) {
	mk := func(p termenv.Profile, dark bool) Styles {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(p)
		r.SetHasDarkBackground(dark)
		return NewStyles(r)
	}
	light := mk(termenv.TrueColor, false).Title.Render("x")
	dark := mk(termenv.TrueColor, true).Title.Render("x")
	if !strings.Contains(light, "63;192") || !strings.Contains(dark, "183;166;255") || light == dark {
		t.Errorf("title colours do not adapt: light %q dark %q", light, dark)
	}
	if got := mk(termenv.Ascii, true).Selected.Render("row"); got != "row" {
		t.Errorf("ascii selected row = %q, want plain", got)
	}
}

// TestStateEditorValidates: the state editor reports JSON errors with line
// and column as you type, refuses to apply invalid JSON on the first esc,
// and applies a valid edit.
func TestStateEditorValidates(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(m, keys("s")...)
	drive(m, keys(",")...)
	if v := m.View(); !strings.Contains(v, "✗ JSON 3:2: unexpected data after the JSON value") {
		t.Fatalf("no line:col error shown:\n%s", v)
	}
	drive(m, press(tea.KeyEsc))
	if m.design.focus != paneState || !strings.Contains(m.View(), "esc again to discard") {
		t.Fatal("invalid state applied or editor closed on the first esc")
	}
	drive(m, press(tea.KeyBackspace))
	drive(m, press(tea.KeyUp), press(tea.KeyEnd))
	drive(m, keys(`, "order": "A-104"`)...)
	if v := m.View(); !strings.Contains(v, "✓ valid") {
		t.Fatalf("valid JSON not accepted:\n%s", v)
	}
	drive(m, press(tea.KeyEsc))
	if got := string(set.State); got != `{"message":"I was charged twice: refund the charges on my invoice for order A-104","order":"A-104"}` {
		t.Errorf("state = %s", got)
	}
	if !m.e.dirty || m.design.focus != paneList {
		t.Error("state edit not applied")
	}
}

// TestFastKeys: runes that arrive together ("2f") act as separate keys.
func TestFastKeys(t *testing.T) {
	m := newModel(t, demoTriage(t))
	drive(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	runCmd(m, m.Init(), 0)
	drive(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2f")})
	if m.active != screenDataset || m.screens[screenDataset].(*datasetModel).filter != filterWrong {
		t.Errorf("screen %d, filter %d after \"2f\"", m.active, m.screens[screenDataset].(*datasetModel).filter)
	}
}

// TestSaveFromEditor: ctrl+s inside the state editor applies the edit and
// saves; with invalid JSON it refuses and keeps the editor open.
func TestSaveFromEditor(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(m, keys("s")...)
	drive(m, keys(",")...)
	drive(m, press(tea.KeyCtrlS))
	if m.design.focus != paneState || !strings.Contains(m.View(), "before saving") {
		t.Fatalf("invalid state saved:\n%s", m.View())
	}
	drive(m, press(tea.KeyBackspace), press(tea.KeyCtrlS))
	if m.design.focus == paneState || m.e.dirty {
		t.Fatalf("ctrl+s in the editor did not apply and save (dirty %v)", m.e.dirty)
	}
	_ = set
}

// TestUndo: u undoes edits one at a time, back to the file as loaded.
func TestUndo(t *testing.T) {
	m, set, _ := newTriage(t)
	drive(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	orig, _ := set.Marshal()
	drive(m, keys("e")...)
	drive(m, press(tea.KeyDown), press(tea.KeyDown))
	drive(m, keys("d")...) // delete billing
	drive(m, keys("J")...) // move orders down
	drive(m, keys("t")...) // to score
	if set.Questions[0].Question.Type != "score" {
		t.Fatalf("setup: type %s", set.Questions[0].Question.Type)
	}
	drive(m, keys("u")...)
	if q := set.Questions[0].Question; q.Type != "choice" || q.Options[0].Label != "shipping" {
		t.Errorf("after one undo: %s %v", q.Type, q.Options)
	}
	drive(m, keys("uu")...)
	got, _ := set.Marshal()
	if string(got) != string(orig) {
		t.Errorf("three undos do not restore the file:\n%s", got)
	}
	if m.e.dirty {
		t.Error("undoing every edit left the set marked unsaved")
	}
	drive(m, keys("u")...)
	if !strings.Contains(m.View(), "nothing to undo") {
		t.Error("a fourth undo did not say there is nothing to undo")
	}
}

// TestFilterKey: typed keys edit the filter line, enter keeps the query,
// esc clears it; both end typing and blur the line.
func TestFilterKey(t *testing.T) {
	tests := []struct {
		name       string
		last       tea.KeyMsg
		wantTyping bool
		wantQuery  string
	}{
		{"edit", tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("c")}, true, "abc"},
		{"enter keeps", tea.KeyMsg{Type: tea.KeyEnter}, false, "ab"},
		{"esc clears", tea.KeyMsg{Type: tea.KeyEsc}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := newTextInput("/")
			in.Focus()
			for _, r := range "ab" {
				filterKey(&in, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			}
			typing, query, _ := filterKey(&in, tc.last)
			if typing != tc.wantTyping || query != tc.wantQuery {
				t.Errorf("typing, query = %v, %q; want %v, %q", typing, query, tc.wantTyping, tc.wantQuery)
			}
			if in.Value() != tc.wantQuery {
				t.Errorf("line holds %q, want %q", in.Value(), tc.wantQuery)
			}
			if in.Focused() != tc.wantTyping {
				t.Errorf("line focused = %v after typing = %v", in.Focused(), typing)
			}
		})
	}
}
