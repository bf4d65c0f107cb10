package provider

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// minSecret is the shortest secret searched for: shorter ones would match
// ordinary words.
const minSecret = 8

// Redacted replaces a secret in text.
const Redacted = "[redacted]"

// secretSpellings returns sec as written literally and with its
// punctuation as JSON \u escapes (lower- and upper-case hex), the way a
// server or a file can spell the same key: "tsk\u002d…" is "tsk-…".
func secretSpellings(sec string) []string {
	out := []string{sec}
	var lo, up strings.Builder
	escaped := false
	for _, r := range sec {
		if r < 0x80 && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			fmt.Fprintf(&lo, `\u%04x`, r)
			fmt.Fprintf(&up, `\u%04X`, r)
			escaped = true
			continue
		}
		lo.WriteRune(r)
		up.WriteRune(r)
	}
	if escaped {
		out = append(out, lo.String())
		if up.String() != lo.String() {
			out = append(out, up.String())
		}
	}
	return out
}

// RedactSecrets returns s with every secret of at least 8 bytes replaced
// by Redacted, whether written literally or with JSON \u escapes for its
// punctuation. Every message that may carry a server's or a file's text
// goes through it before it is shown.
func RedactSecrets(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) < minSecret {
			continue
		}
		for _, sp := range secretSpellings(sec) {
			if strings.Contains(s, sp) {
				s = strings.ReplaceAll(s, sp, Redacted)
			}
		}
	}
	return s
}

// ContainsSecret reports whether data holds secret: literally, or in a
// JSON string once its escapes are decoded ("tsk\u002d…" holds "tsk-…").
// Secrets shorter than 8 bytes are never found.
func ContainsSecret(data []byte, secret string) bool {
	if len(secret) < minSecret {
		return false
	}
	sec := []byte(secret)
	if bytes.Contains(data, sec) {
		return true
	}
	if bytes.IndexByte(data, '\\') < 0 {
		return false
	}
	if bytes.Contains(CanonicalStrings(data), sec) {
		return true
	}
	for _, sp := range secretSpellings(secret)[1:] {
		if bytes.Contains(data, []byte(sp)) {
			return true
		}
	}
	return false
}

// unsolicited is how net/http's transport reports bytes a server sent on
// an idle connection; it quotes them, and a hostile server can make them
// carry the Authorization header it was sent.
const unsolicited = "Unsolicited response received on idle HTTP channel starting with "

// LogWriter returns a writer for the standard library's log output (set
// with log.SetOutput at process start) that never lets a secret through:
// the bytes a server sent unasked, which net/http quotes, are withheld
// altogether, and what remains goes through RedactSecrets with the
// secrets secrets returns at the time of each write.
func LogWriter(w io.Writer, secrets func() []string) io.Writer {
	return &logWriter{w: w, secrets: secrets}
}

type logWriter struct {
	w       io.Writer
	secrets func() []string
}

func (l *logWriter) Write(p []byte) (int, error) {
	s := string(p)
	if i := strings.Index(s, unsolicited); i >= 0 {
		rest := s[i+len(unsolicited):]
		tail := "\n"
		if j := strings.LastIndex(rest, "; err="); j >= 0 {
			tail = rest[j:]
		}
		s = s[:i] + unsolicited + "[the server's bytes are not shown]" + tail
	}
	var sec []string
	if l.secrets != nil {
		sec = l.secrets()
	}
	if _, err := io.WriteString(l.w, RedactSecrets(s, sec)); err != nil {
		return 0, err
	}
	return len(p), nil
}
