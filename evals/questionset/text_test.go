package questionset

import (
	"strings"
	"testing"
)

// TestBOMAndUTF8SameInYAMLAndJSON: issue 10 item 12 — a leading UTF-8
// byte-order mark was accepted in YAML but refused in JSON ("1:2: invalid
// JSON"), and invalid UTF-8 was refused in YAML without a place but read
// in JSON as U+FFFD. The rule is now one: the mark is skipped in both (and
// positions count after it), invalid UTF-8 is refused in both at its line
// and column, without quoting the bytes.
func TestBOMAndUTF8SameInYAMLAndJSON(t *testing.T) {
	const bom, bad = "\xef\xbb\xbf", "\xff\xfe"
	docs := map[string]struct{ file, ok, broken, want string }{
		"yaml": {"s.yaml",
			"questions:\n  a:\n    type: noul\n    instructions: héllo\n",
			"questions:\n  a:\n    type: noul\n    instructions: héllo " + bad + "\n",
			"s.yaml:4:25: not valid UTF-8 from here on; save the file as UTF-8"},
		"json": {"s.json",
			"{\"questions\": {\"a\": {\"type\": \"noul\",\n  \"instructions\": \"héllo\"}}}",
			"{\"questions\": {\"a\": {\"type\": \"noul\",\n  \"instructions\": \"héllo " + bad + "\"}}}",
			"s.json:2:26: not valid UTF-8 from here on; save the file as UTF-8"},
	}
	for format, d := range docs {
		for _, withBOM := range []bool{false, true} {
			prefix := map[bool]string{true: bom}[withBOM]
			s, err := Parse(d.file, []byte(prefix+d.ok))
			if err != nil {
				t.Errorf("%s, BOM %v, valid: %v", format, withBOM, err)
			} else if got := string(s.Questions[0].Question.Instructions); got != `"héllo"` {
				t.Errorf("%s, BOM %v: instructions %s", format, withBOM, got)
			}
			_, err = Parse(d.file, []byte(prefix+d.broken))
			if err == nil || err.Error() != d.want {
				t.Errorf("%s, BOM %v, invalid UTF-8:\n got %v\nwant %s", format, withBOM, err, d.want)
			} else if strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\ufffd") || strings.Contains(err.Error(), "xff") {
				t.Errorf("%s: the message quotes the bytes: %q", format, err)
			}
		}
	}
	// A JSON file's positions count after the mark, as an editor shows.
	_, err := Parse("s.json", []byte(bom+`{"questions": {"a": {"type": "noul",}}}`))
	if err == nil || !strings.HasPrefix(err.Error(), "s.json:1:37: invalid JSON") {
		t.Errorf("JSON syntax error after a BOM: %v", err)
	}
	// A UTF-16 file is named as one.
	_, err = Parse("s.yaml", []byte("\xff\xfeq\x00u\x00"))
	if err == nil || err.Error() != "s.yaml:1:1: the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8" {
		t.Errorf("UTF-16: %v", err)
	}
}
