package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
)

// list is the one scrolling list of the workbench: a cursor over rows, the
// window of rows in view, paging, home/end, and a filter hook. Screens keep
// their data; the list keeps which of it passes the filter (rows, indices
// into the data) and where the cursor and the window are. With
// scrollOnly it is a scrolling text view: no cursor, ↑/↓ move the window.
//
// It never draws styled text itself: window gives the visible range and
// render picks the visible lines of rows the screen drew, marking the
// cursor row.
type list struct {
	rows       []int // data indices passing the filter, in order
	cursor     int   // position in rows
	top        int   // first row in view
	height     int   // rows in view (≥ 1)
	scrollOnly bool
}

// newList returns a list with a cursor; newScroll a scrolling text view.
func newList() list   { return list{height: 1} }
func newScroll() list { return list{height: 1, scrollOnly: true} }

// setLen shows all n data rows (no filter).
func (l *list) setLen(n int) { l.filter(n, nil) }

// filter keeps the data rows 0..n-1 for which keep reports true (nil: all).
// The cursor stays on the same data row when it still passes, else on the
// nearest position.
func (l *list) filter(n int, keep func(i int) bool) {
	cur, had := l.selected()
	l.rows = l.rows[:0]
	at := -1
	for i := 0; i < n; i++ {
		if keep != nil && !keep(i) {
			continue
		}
		if had && i == cur {
			at = len(l.rows)
		}
		l.rows = append(l.rows, i)
	}
	if at >= 0 && !l.scrollOnly {
		l.cursor = at
	}
	l.clamp()
}

// setHeight sets how many rows are in view.
func (l *list) setHeight(h int) {
	l.height = max(1, h)
	l.clamp()
}

// len is the number of rows passing the filter.
func (l *list) len() int { return len(l.rows) }

// selected is the data index under the cursor.
func (l *list) selected() (int, bool) {
	if l.cursor < 0 || l.cursor >= len(l.rows) {
		return -1, false
	}
	return l.rows[l.cursor], true
}

// position is the cursor's position among the rows (scrollOnly: the top).
func (l *list) position() int {
	if l.scrollOnly {
		return l.top
	}
	return l.cursor
}

// move moves the cursor (scrollOnly: the window) by d rows.
func (l *list) move(d int) {
	if l.scrollOnly {
		l.top += d
	} else {
		l.cursor += d
	}
	l.clamp()
}

func (l *list) up()       { l.move(-1) }
func (l *list) down()     { l.move(1) }
func (l *list) pageUp()   { l.move(-max(1, l.height-1)) }
func (l *list) pageDown() { l.move(max(1, l.height-1)) }
func (l *list) home()     { l.cursor, l.top = 0, 0 }
func (l *list) end() {
	l.cursor = len(l.rows) - 1
	l.top = len(l.rows)
	l.clamp()
}

// clamp keeps the cursor on a row and the window on the cursor.
func (l *list) clamp() {
	n := len(l.rows)
	if l.scrollOnly {
		l.top = max(0, min(l.top, n-l.height))
		l.cursor = l.top
		return
	}
	l.cursor = max(0, min(l.cursor, n-1))
	if l.cursor < l.top {
		l.top = l.cursor
	}
	if l.cursor >= l.top+l.height {
		l.top = l.cursor - l.height + 1
	}
	l.top = max(0, min(l.top, n-l.height))
}

// window is the visible range [start, end) of row positions.
func (l *list) window() (start, end int) {
	return l.top, min(len(l.rows), l.top+l.height)
}

// render returns the visible lines of drawn, which holds one line per row
// position; the cursor row goes through sel (nil: unchanged). A scrollOnly
// list never marks a row.
func (l *list) render(drawn []string, sel func(string) string) []string {
	s, e := l.window()
	e = min(e, len(drawn))
	if s >= e {
		return nil
	}
	out := make([]string, 0, e-s)
	for i := s; i < e; i++ {
		if i == l.cursor && sel != nil && !l.scrollOnly {
			out = append(out, sel(drawn[i]))
		} else {
			out = append(out, drawn[i])
		}
	}
	return out
}

// more says where the window is when the rows do not all fit: "12–31 of
// 289"; "" when they do.
func (l *list) more() string {
	s, e := l.window()
	if s == 0 && e >= len(l.rows) {
		return ""
	}
	return fmt.Sprintf("%d–%d of %d", s+1, e, len(l.rows))
}

// navBindings are the list's rows for a screen's key table, under group.
func (l *list) navBindings(k KeyMap, group string) []binding {
	do := func(f func()) func() tea.Cmd { return func() tea.Cmd { f(); return nil } }
	up, down := "up", "down"
	if l.scrollOnly {
		up, down = "scroll up", "scroll down"
	}
	return []binding{
		bind(k.Up, group, do(l.up)).withDesc(up),
		bind(k.Down, group, do(l.down)).withDesc(down),
		bind(k.PageUp, group, do(l.pageUp)),
		bind(k.PageDown, group, do(l.pageDown)),
		bind(k.Top, group, do(l.home)),
		bind(k.Bottom, group, do(l.end)),
	}
}
