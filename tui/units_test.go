package tui

import (
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
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
