package tui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
)

// Styles holds every style the workbench draws with, built once from a
// renderer so colours adapt to the terminal: AdaptiveColor picks the light or
// dark variant from the detected background, and a renderer whose profile is
// Ascii (NO_COLOR, or a dumb terminal) drops colour entirely while bold,
// faint and reverse keep the screen readable.
type Styles struct {
	Header    lipgloss.Style // the top bar
	Title     lipgloss.Style // set name
	Tab       lipgloss.Style // inactive screen tab
	TabActive lipgloss.Style // active screen tab
	Mode      lipgloss.Style // live / cached / offline / stand-in badge
	Dirty     lipgloss.Style // unsaved-changes marker
	Status    lipgloss.Style // the status line
	Muted     lipgloss.Style // secondary text
	Faint     lipgloss.Style // ghost bars, hints
	Selected  lipgloss.Style // the row under the cursor
	Focused   lipgloss.Style // pane title with focus
	Pane      lipgloss.Style // pane title without focus
	Bar       lipgloss.Style // the filled part of a bar
	BarChosen lipgloss.Style // the chosen option's bar
	BarTrue   lipgloss.Style // the true label's bar
	Ghost     lipgloss.Style // the previous answer's bar
	Good      lipgloss.Style // correct, valid, improvement
	Bad       lipgloss.Style // wrong, invalid, regression
	Warn      lipgloss.Style // warnings, low confidence
	Key       lipgloss.Style // a key in the key bar
	Dialog    lipgloss.Style // modal prompts
	Heat      []lipgloss.Style
	Help      help.Styles
}

// NewStyles builds the styles for renderer r (nil: lipgloss's default
// renderer, which honours NO_COLOR and detects the background).
func NewStyles(r *lipgloss.Renderer) Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	ns := r.NewStyle
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
	accent := c("#5A3FC0", "#B7A6FF")
	text := c("#1F1F1F", "#E8E8E8")
	muted := c("#5F5F5F", "#A0A0A0")
	s := Styles{
		Header:    ns().Bold(true).Foreground(text),
		Title:     ns().Bold(true).Foreground(accent),
		Tab:       ns().Foreground(muted),
		TabActive: ns().Bold(true).Underline(true).Foreground(accent),
		Mode:      ns().Bold(true).Foreground(c("#005F87", "#5FD7FF")),
		Dirty:     ns().Bold(true).Foreground(c("#AF5F00", "#FFAF5F")),
		Status:    ns().Foreground(text),
		Muted:     ns().Foreground(muted),
		Faint:     ns().Faint(true).Foreground(muted),
		Selected:  ns().Bold(true).Reverse(true),
		Focused:   ns().Bold(true).Foreground(accent),
		Pane:      ns().Foreground(muted),
		Bar:       ns().Foreground(c("#3A6EA5", "#6CA0DC")),
		BarChosen: ns().Bold(true).Foreground(c("#5A3FC0", "#C3B1FF")),
		BarTrue:   ns().Foreground(c("#1E7B34", "#7FD88F")),
		Ghost:     ns().Faint(true).Foreground(c("#A8A8A8", "#585858")),
		Good:      ns().Foreground(c("#1E7B34", "#7FD88F")),
		Bad:       ns().Bold(true).Foreground(c("#B00020", "#FF6B6B")),
		Warn:      ns().Foreground(c("#8A5A00", "#FFD75F")),
		Key:       ns().Bold(true).Foreground(accent),
		Dialog:    ns().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
	}
	// Heat shades for the confusion matrix: background intensity from low to
	// high, with the text colour flipped so every cell stays readable.
	heat := []lipgloss.AdaptiveColor{
		c("#F2F2F2", "#262626"), c("#D6E4F5", "#1F3A5A"), c("#A9C8EC", "#2D5C8F"),
		c("#6CA0DC", "#3F7FC4"), c("#3A6EA5", "#6CA0DC"), c("#1D4F85", "#A9C8EC"),
	}
	for i, h := range heat {
		st := ns().Background(h).Foreground(text)
		if i >= 4 {
			st = st.Foreground(c("#FFFFFF", "#101010")).Bold(true)
		}
		s.Heat = append(s.Heat, st)
	}
	s.Help = help.Styles{
		Ellipsis:       s.Muted,
		ShortKey:       s.Key,
		ShortDesc:      s.Muted,
		ShortSeparator: s.Faint,
		FullKey:        s.Key,
		FullDesc:       s.Muted,
		FullSeparator:  s.Faint,
	}
	return s
}
