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

// midTrunc cuts plain text s to at most w cells by replacing its middle
// with an ellipsis, so labels sharing a long prefix stay distinguishable
// ("balance_n…_update" and "balance_n…_delay", not "balance_not_update…"
// twice).
func midTrunc(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, w, "")
	}
	r := []rune(s)
	tail := (w - 1) / 2
	head := w - 1 - tail
	for head+tail+1 > w || ansi.StringWidth(string(r[:head]))+1+ansi.StringWidth(string(r[len(r)-tail:])) > w {
		if head > tail {
			head--
		} else {
			tail--
		}
	}
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// joinLines joins lines for a screen body.
func joinLines(l []string) string { return strings.Join(l, "\n") }
