package tui

import "github.com/charmbracelet/x/ansi"

// stripForSelect removes styling so a selected row is drawn in one style.
func stripForSelect(s string) string { return ansi.Strip(s) }
