// Package bars draws probability bars as plain text with eighth-block runes
// (▏▎▍▌▋▊▉█), giving eight steps per cell: in a 40-cell bar, 0.53 and 0.55
// differ by six eighths. It is pure and has no dependencies, so commands and
// the TUI can share it.
package bars

import (
	"math"
	"strings"
)

// eighths are the partial cells for 1/8 .. 7/8.
var eighths = [8]string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// Full is the rune of a whole cell.
const Full = "█"

// Bar returns frac of width cells drawn with eighth blocks and padded with
// spaces to exactly width cells. frac is clamped to [0, 1]; NaN draws
// nothing. Rounding is to the nearest eighth, so any non-zero frac of at
// least 1/16 of a cell shows.
func Bar(frac float64, width int) string {
	if width <= 0 {
		return ""
	}
	n := Eighths(frac, width)
	var b strings.Builder
	b.Grow(width * 3)
	full, part := n/8, n%8
	for i := 0; i < full; i++ {
		b.WriteString(Full)
	}
	cells := full
	if part > 0 {
		b.WriteString(eighths[part])
		cells++
	}
	for ; cells < width; cells++ {
		b.WriteByte(' ')
	}
	return b.String()
}

// Eighths returns how many eighths of a cell Bar fills for frac in width
// cells.
func Eighths(frac float64, width int) int {
	if math.IsNaN(frac) || frac <= 0 || width <= 0 {
		return 0
	}
	if frac >= 1 {
		return width * 8
	}
	return int(math.Round(frac * float64(width*8)))
}

// Column returns the cell (0..width-1) where a marker for frac sits, e.g.
// a threshold or an expected score on a scale.
func Column(frac float64, width int) int {
	if width <= 0 || math.IsNaN(frac) || frac <= 0 {
		return 0
	}
	c := int(frac * float64(width))
	if c >= width {
		c = width - 1
	}
	return c
}

// Marker returns a line of width cells, blank except for mark at the
// Column of frac.
func Marker(frac float64, width int, mark rune) string {
	if width <= 0 {
		return ""
	}
	col := Column(frac, width)
	return strings.Repeat(" ", col) + string(mark) + strings.Repeat(" ", width-col-1)
}
