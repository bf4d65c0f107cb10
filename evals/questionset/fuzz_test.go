package questionset

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/jevlab/jevlab/provider"
)

// FuzzLoadQuestionSet: the loader never panics; a set it accepts saves,
// and the saved form (re-encoded through the node tree, not the
// unchanged-file shortcut) loads back to the same set.
func FuzzLoadQuestionSet(f *testing.F) {
	f.Add([]byte(designExample), "s.yaml")
	for _, c := range malformedSets {
		f.Add([]byte(c.in), c.file)
	}
	f.Add([]byte("questions:\n  a: &x {type: noul}\n  b: *x\n  c:\n    <<: *x\n    instructions: hi\n"), "m.yaml")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		s, err := Parse(name, data)
		if err != nil {
			return
		}
		want := s.canonicalJSON()
		s.orig = nil
		out, err := s.Marshal()
		if err != nil {
			t.Fatalf("accepted set does not marshal: %v", err)
		}
		back, err := Parse(name, out)
		if err != nil {
			t.Fatalf("saved set does not load: %v\ninput:\n%s\nsaved:\n%s", err, data, out)
		}
		if got := back.canonicalJSON(); !bytes.Equal(got, want) {
			t.Fatalf("saved set differs:\n got %s\nwant %s\nsaved:\n%s", got, want, out)
		}
	})
}

// FuzzEmitText: any text in any slot (state, instructions, option label
// and description, level) survives the emitter: what a new set writes
// loads back to the same set.
func FuzzEmitText(f *testing.F) {
	for _, s := range []string{"", " lead", "trail ", "tab\there", "line\nbreak\n", "\n\nblank first", "keep\n\n", "- dash", ": colon", "# hash", "%percent", "@at", "`tick", "'quote", "\"dq", "yes", "no", "~", "null", "1e3", "0x1F", "2001-12-14", "\u2028sep", "\r\ncrlf", "\ufeffbom", "é ü 漢字 🙂", "a: b", "{flow}", "[list]", "*alias", "&anchor", "!tag", "|", ">", "\x7f", "x\x00y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		s := New(text)
		s.State = provider.String(text)
		q := provider.Question{Type: provider.Choice, Instructions: provider.String(text),
			Options: []provider.Option{{Label: "fixed", Description: provider.String(text)}, {Label: "other", Description: json.RawMessage("null")}}}
		if labelOK(text) && text != "fixed" && text != "other" {
			q.Options = append(q.Options, provider.Option{Label: text, Description: json.RawMessage("null")})
		}
		if err := s.AddQuestion("q", q, -1); err != nil {
			t.Fatal(err)
		}
		if err := s.AddQuestion("s", provider.Question{Type: provider.Score, Levels: []json.RawMessage{provider.String(text), provider.String("x")}}, -1); err != nil {
			t.Fatal(err)
		}
		if text != "" && text != "*" && text != "q" && text != "s" {
			if err := s.AddQuestion(text, provider.Question{Type: provider.Noul}, -1); err != nil {
				t.Fatal(err)
			}
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("e.yaml", out)
		if err != nil {
			if s.Request(nil).Validate() != nil {
				return // the text made the set itself invalid (e.g. a control character in a label)
			}
			t.Fatalf("emitted set does not load: %v\n%s", err, out)
		}
		if !bytes.Equal(back.canonicalJSON(), s.canonicalJSON()) {
			t.Fatalf("emitted set loads differently:\n got %s\nwant %s\n%s", back.canonicalJSON(), s.canonicalJSON(), out)
		}
	})
}

func labelOK(s string) bool {
	return s != "" && strings.TrimSpace(s) == s && !strings.ContainsFunc(s, unicode.IsControl)
}

// styledSet has text in every YAML scalar style, for FuzzEditText.
const styledSet = `questions:
  plain:
    type: choice
    instructions: plain words
    criteria:
      single: 'single quoted'
      double: "double quoted"
      flow: {x: [a, 'b', "c"]}
  lit:
    type: score
    instructions: |
      literal
      block
    criteria:
      - >
        folded
        block
      - plain level
      - 'quoted level'
`

// FuzzEditText: replacing text written in any YAML style with any text
// saves a file that loads back to the edited set.
func FuzzEditText(f *testing.F) {
	for _, s := range []string{"", "x", "two\nlines", "\ttab\n", " lead\n", "trail \nx", "'", "\"", "a\r\nb", "#", "- x", "é\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		s, err := Parse("s.yaml", []byte(styledSet))
		if err != nil {
			t.Fatal(err)
		}
		v := provider.String(text)
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.SetInstructions("plain", v))
		must(s.SetInstructions("lit", v))
		must(s.SetOptionDescription("plain", "single", v))
		must(s.SetOptionDescription("plain", "double", v))
		must(s.SetLevel("lit", 0, v))
		must(s.SetLevel("lit", 2, v))
		if labelOK(text) && text != "double" && text != "flow" {
			must(s.RenameOption("plain", "single", text))
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("s.yaml", out)
		if err != nil {
			t.Fatalf("edited file does not load: %v\n%s", err, out)
		}
		if !bytes.Equal(back.canonicalJSON(), s.canonicalJSON()) {
			t.Fatalf("edited file loads differently:\n got %s\nwant %s\n%s", back.canonicalJSON(), s.canonicalJSON(), out)
		}
	})
}
