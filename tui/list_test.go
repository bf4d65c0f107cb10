package tui

import (
	"fmt"
	"strings"
	"testing"
)

func TestListCursorScrollPaging(t *testing.T) {
	l := newList()
	l.setHeight(5)
	l.setLen(289)
	tab := bindings(l.navBindings(DefaultKeyMap(), "Navigate"))
	press := func(k string, times int) {
		for i := 0; i < times; i++ {
			if _, ok := tab.handle(keyMsg(k)); !ok {
				t.Fatalf("%s not handled", k)
			}
		}
	}
	check := func(what string, cursor, top int) {
		t.Helper()
		if l.cursor != cursor || l.top != top {
			t.Fatalf("%s: cursor %d top %d, want %d %d", what, l.cursor, l.top, cursor, top)
		}
	}
	press("up", 1)
	check("up at top", 0, 0)
	press("down", 6)
	check("down 6", 6, 2)
	press("pgdown", 1)
	check("page down", 10, 6)
	press("end", 1)
	check("end", 288, 284)
	press("down", 1)
	check("down at end", 288, 284)
	if got := l.more(); got != "285–289 of 289" {
		t.Fatalf("more %q", got)
	}
	press("pgup", 1)
	check("page up", 284, 284)
	press("home", 1)
	check("home", 0, 0)
	// Every row is reachable: nothing is cut.
	seen := 0
	for i := 0; i < 400; i++ {
		if idx, ok := l.selected(); ok && idx == seen {
			seen++
		}
		l.down()
	}
	if seen != 289 {
		t.Fatalf("reached %d of 289 rows", seen)
	}
	// render marks the cursor row only.
	drawn := make([]string, 289)
	for i := range drawn {
		drawn[i] = fmt.Sprint(i)
	}
	l.home()
	l.down()
	got := strings.Join(l.render(drawn, func(s string) string { return "[" + s + "]" }), " ")
	if got != "0 [1] 2 3 4" {
		t.Fatalf("render %q", got)
	}
}

// The filter hook keeps the cursor on the same data row when it still
// passes, and clamps it when it does not.
func TestListFilterKeepsSelection(t *testing.T) {
	l := newList()
	l.setHeight(3)
	l.setLen(10)
	for i := 0; i < 7; i++ {
		l.down()
	}
	even := func(i int) bool { return i%2 == 0 }
	l.filter(10, func(i int) bool { return i%2 == 1 })
	if idx, _ := l.selected(); idx != 7 || l.len() != 5 {
		t.Fatalf("selected %d of %d, want 7 of 5", idx, l.len())
	}
	l.filter(10, even)
	if idx, ok := l.selected(); !ok || idx%2 != 0 {
		t.Fatalf("selected %d after refilter", idx)
	}
	l.filter(10, func(int) bool { return false })
	if _, ok := l.selected(); ok || l.len() != 0 {
		t.Fatal("empty list has a selection")
	}
	l.down()
	l.end()
	if l.cursor != 0 || l.top != 0 {
		t.Fatalf("empty list moved: %+v", l)
	}
}

func TestScrollOnly(t *testing.T) {
	l := newScroll()
	l.setHeight(4)
	l.setLen(10)
	l.down()
	l.down()
	if s, e := l.window(); s != 2 || e != 6 {
		t.Fatalf("window %d,%d", s, e)
	}
	l.end()
	if s, e := l.window(); s != 6 || e != 10 {
		t.Fatalf("end window %d,%d", s, e)
	}
	l.down()
	if l.top != 6 {
		t.Fatalf("scrolled past the end: top %d", l.top)
	}
	l.setLen(3) // shorter text than the view: top 0
	if l.top != 0 {
		t.Fatalf("top %d", l.top)
	}
	drawn := []string{"a", "b", "c"}
	if got := strings.Join(l.render(drawn, func(s string) string { return "[" + s + "]" }), ""); got != "abc" {
		t.Fatalf("scroll view marked a row: %q", got)
	}
}
