package dataset

import (
	"strings"
	"testing"

	"github.com/jevlab/jevlab/fixtures"
)

// TestBOMAndUTF8InDatasets: the text rule of question sets
// (questionset.DecodeText) holds for datasets too — a leading UTF-8
// byte-order mark is skipped, and invalid UTF-8 is refused at its line and
// column without quoting the bytes. Before, JSON Lines read invalid bytes
// as U+FFFD and CSV kept them, so a label or state changed silently.
func TestBOMAndUTF8InDatasets(t *testing.T) {
	set, err := fixtures.LoadSet(fixtures.DemoTriageSet)
	if err != nil {
		t.Fatal(err)
	}
	const bom, bad = "\xef\xbb\xbf", "\xff\xfe"
	cases := map[string]struct{ ok, broken, want string }{
		"d.jsonl": {
			`{"id": "a", "state": "héllo"}` + "\n" + `{"id": "b", "state": "x"}` + "\n",
			`{"id": "a", "state": "héllo"}` + "\n" + `{"id": "b", "state": "x` + bad + `"}` + "\n",
			"d.jsonl:2:24: not valid UTF-8 from here on; save the file as UTF-8"},
		"d.csv": {
			"id,state\na,héllo\nb,x\n",
			"id,state\na,héllo\nb,x" + bad + "\n",
			"d.csv:3:3: field 2 is not valid UTF-8; save the file as UTF-8"},
	}
	for file, c := range cases {
		for _, withBOM := range []bool{false, true} {
			prefix := map[bool]string{true: bom}[withBOM]
			var states []string
			err := Parse(file, strings.NewReader(prefix+c.ok), Options{}, set, func(it Item) error {
				states = append(states, string(it.State))
				return nil
			})
			if err != nil || len(states) != 2 || states[0] != `"héllo"` {
				t.Errorf("%s, BOM %v, valid: %v, states %q", file, withBOM, err, states)
			}
			states = nil
			err = Parse(file, strings.NewReader(prefix+c.broken), Options{}, set, func(it Item) error {
				states = append(states, string(it.State))
				return nil
			})
			if err == nil || err.Error() != c.want {
				t.Errorf("%s, BOM %v, invalid UTF-8:\n got %v\nwant %s", file, withBOM, err, c.want)
			} else if strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\ufffd") {
				t.Errorf("%s: the message quotes the bytes: %q", file, err)
			}
			if len(states) != 1 {
				t.Errorf("%s: the row with invalid UTF-8 was read: %q", file, states)
			}
		}
	}
}
