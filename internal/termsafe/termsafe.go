// Package termsafe makes text that came from a file or a server safe to
// print on a terminal.
//
// A question set's name, a question id, an option label, a model name or a
// server's error message may carry control characters: ESC starts the
// sequences that retitle a terminal, clear the screen, move the cursor or
// (OSC 52) write the clipboard; a bare carriage return overwrites what was
// printed; bidirectional overrides reorder what the reader sees. Printed
// as they are, such strings drive the terminal of whoever runs jevlab.
// This package shows them escaped instead, so the user sees what the file
// says and the terminal does nothing.
//
// Escapes are spelled so that they stay valid inside a JSON string and
// read the same in plain text: bytes below 0x20 (except a kept newline or
// tab) as \n, \r, \t or \u00XX; DEL, the C1 controls (U+0080–U+009F), the
// bidirectional controls and other invisible format characters as \uXXXX;
// a byte that is not UTF-8 as \xNN. Printable text, including every
// non-Latin script and emoji, passes through unchanged.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every control character escaped, newline and tab
// included: for one-line values such as names, ids, labels and models.
func String(s string) string {
	if safe(s, false) {
		return s
	}
	var b strings.Builder
	appendEscaped(&b, s, false)
	return b.String()
}

// Text returns s with every control character escaped except newline and
// tab: for messages that may span lines.
func Text(s string) string {
	if safe(s, true) {
		return s
	}
	var b strings.Builder
	appendEscaped(&b, s, true)
	return b.String()
}

// Safe reports whether s prints as itself (String(s) == s).
func Safe(s string) bool { return safe(s, false) }

// Strings returns a copy of ss with String applied to each.
func Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = String(s)
	}
	return out
}

func safe(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if !(keepLines && (c == '\n' || c == '\t')) {
					return false
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return false
		}
		i += n
	}
	return true
}

// unsafeRune reports whether a non-ASCII rune must be escaped: C1
// controls and format characters (bidirectional overrides and isolates,
// zero-width characters, the BOM), line and paragraph separators.
// Variation selectors and the zero-width joiner are kept: emoji need them.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200d: // zero-width joiner (emoji sequences)
		return false
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func appendEscaped(b *strings.Builder, s string, keepLines bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '\n' && keepLines, c == '\t' && keepLines:
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20 || c == 0x7f:
				fmt.Fprintf(b, `\u%04x`, c)
			default:
				b.WriteByte(c)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case unsafeRune(r):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// Writer escapes everything written through it as Text does (newlines
// and tabs kept), so a command's whole output is safe whatever it
// prints. A UTF-8 sequence split across two writes is held until it is
// complete; Flush writes out (escaped) whatever is still held.
type Writer struct {
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence at the end of the last write
}

// NewWriter returns a Writer that escapes onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p onto the underlying writer. It reports len(p) written
// when the underlying write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending, p...)
		w.pending = nil
	}
	// Hold back a trailing sequence that may be the start of a rune.
	cut := len(data)
	for k := 1; k <= utf8.UTFMax-1 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				cut = len(data) - k
			}
			break
		}
	}
	if cut < len(data) {
		w.pending = append([]byte(nil), data[cut:]...)
		data = data[:cut]
	}
	s := string(data)
	if !safe(s, true) {
		s = Text(s)
	}
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes out a held incomplete sequence (escaped as bytes that are
// not UTF-8).
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	s := Text(string(w.pending))
	w.pending = nil
	_, err := io.WriteString(w.w, s)
	return err
}
