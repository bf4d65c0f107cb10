package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"support-triage", "support-triage"},
		{"Überweisung 送金 👩‍💻", "Überweisung 送金 👩‍💻"},
		{"\x1b]0;pwned\x07\x1b[2J", `\u001b]0;pwned\u0007\u001b[2J`},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"del\x7f", `del\u007f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"zw\u200bsp", `zw\u200bsp`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
	}
	for _, c := range cases {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if Safe(c.in) != (c.in == c.want) {
			t.Errorf("Safe(%q) = %v", c.in, Safe(c.in))
		}
	}
}

func TestTextKeepsLines(t *testing.T) {
	in := "line one\n\tline \x1b[31mtwo\r\n"
	want := "line one\n\tline \\u001b[31mtwo\\r\n"
	if got := Text(in); got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

// TestEscapedIsPrintable: whatever goes in, nothing that reaches the
// terminal is a control character.
func TestEscapedIsPrintable(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	all = append(all, []byte("\u0085\u009b\u061c\u200e\u202a\u202e\u2066\u2069\ufeff")...)
	for _, s := range []string{String(string(all)), Text(string(all))} {
		for _, r := range s {
			if r == '\n' || r == '\t' {
				if s == String(string(all)) {
					t.Fatalf("String kept %q", r)
				}
				continue
			}
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || unsafeRune(r) || r == utf8.RuneError {
				t.Fatalf("escaped output still has %U", r)
			}
		}
	}
}

// TestEscapesStayValidJSON: an escaped string inside a JSON string literal
// decodes to the original text, so the Writer may sit under a JSON encoder.
func TestEscapesStayValidJSON(t *testing.T) {
	orig := "name \u009b \u202e \x7f \ufeff end"
	var buf bytes.Buffer
	enc := json.NewEncoder(NewWriter(&buf))
	if err := enc.Encode(map[string]string{"name": orig}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(buf.String(), 0x9b) || strings.ContainsRune(buf.String(), 0x202e) {
		t.Fatalf("raw control in %q", buf.String())
	}
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("escaped JSON does not parse: %v\n%s", err, buf.String())
	}
	if back["name"] != orig {
		t.Errorf("round trip %q, want %q", back["name"], orig)
	}
}

func TestWriterSplitRunes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	in := []byte("é→\u009b送x\x1b")
	for i := range in {
		if n, err := w.Write(in[i : i+1]); n != 1 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := `é→\u009b送x\u001b`; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	w.Write([]byte("tail \xe2\x86"))
	w.Flush()
	if want := `tail \xe2\x86`; buf.String() != want {
		t.Errorf("flushed %q, want %q", buf.String(), want)
	}
}

func FuzzString(f *testing.F) {
	f.Add("\x1b]0;x\x07")
	f.Add("plain")
	f.Add("\xff\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !Safe(out) {
			t.Fatalf("String(%q) = %q is not safe", s, out)
		}
		if Safe(s) && out != s {
			t.Fatalf("safe %q changed to %q", s, out)
		}
		if strings.ContainsAny(out, "\n\t") {
			t.Fatalf("String kept a newline or tab: %q", out)
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for i := 0; i < len(s); i += 3 {
			w.Write([]byte(s[i:min(i+3, len(s))]))
		}
		w.Flush()
		if buf.String() != Text(s) {
			t.Fatalf("Writer in pieces %q, Text %q", buf.String(), Text(s))
		}
	})
}
