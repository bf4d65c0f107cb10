package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// stripForSelect removes styling so a selected row is drawn in one style,
// and marks it with › so the selection shows without colour (NO_COLOR)
// too.
func stripForSelect(s string) string {
	s = ansi.Strip(s)
	if strings.HasPrefix(s, " ") {
		s = "›" + s[1:]
	}
	return s
}
