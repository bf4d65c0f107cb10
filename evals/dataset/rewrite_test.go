package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/fixtures"
	"github.com/jevlab/jevlab/internal/testutil"
)

// put writes data to name in a fresh temporary directory.
func put(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// copyTo copies the file at src into a fresh temporary directory.
func copyTo(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return put(t, filepath.Base(src), string(data))
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// only asserts that after is before with exactly one change: old replaced
// by new, once, at the first occurrence after the first occurrence of at.
func only(t *testing.T, before, after, at, old, new string) {
	t.Helper()
	i := strings.Index(before, at)
	if i < 0 {
		t.Fatalf("anchor %q not in the file", at)
	}
	j := strings.Index(before[i:], old)
	if j < 0 {
		t.Fatalf("%q not after %q", old, at)
	}
	j += i
	want := before[:j] + new + before[j+len(old):]
	if after != want {
		t.Errorf("file differs beyond the label:\n got %q\nwant %q", after, want)
	}
}

func edit(id, q, v string) LabelEdit {
	var raw json.RawMessage
	if v != "" {
		raw = json.RawMessage(v)
	}
	return LabelEdit{ItemID: id, Question: q, Value: raw}
}

func mustRewrite(t *testing.T, p string, opt Options, want int, edits ...LabelEdit) {
	t.Helper()
	n, err := RewriteLabels(p, opt, edits)
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("%d labels changed, want %d", n, want)
	}
}

// byID loads path with set and indexes the items by id.
func byID(t *testing.T, p string, opt Options, set *questionset.Set) map[string]Item {
	t.Helper()
	items, err := Load(p, opt, set)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Item{}
	for _, it := range items {
		m[it.ID] = it
	}
	return m
}

// sameExcept asserts that after holds the same items as before, with the
// same states and lines, and the same labels except those in changed
// (item → question → label; a zero Label with Index -2 means removed).
func sameExcept(t *testing.T, before, after map[string]Item, changed map[string]map[string]Label) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%d items after, %d before", len(after), len(before))
	}
	for id, b := range before {
		a, ok := after[id]
		if !ok {
			t.Fatalf("item %s lost", id)
		}
		if !bytes.Equal(a.State, b.State) || a.Line != b.Line {
			t.Errorf("item %s: state or line changed", id)
		}
		want := map[string]Label{}
		for q, l := range b.Labels {
			want[q] = l
		}
		for q, l := range changed[id] {
			if l.Index == -2 {
				delete(want, q)
			} else {
				want[q] = l
			}
		}
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(a.Labels, want) {
			t.Errorf("item %s: labels %v, want %v", id, a.Labels, want)
		}
	}
}

// noTemp asserts the directory holds only the dataset (no temporary file
// was left behind).
func noTemp(t *testing.T, p string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v", names)
	}
}

func demoCopies(t *testing.T) []string {
	root := testutil.RepoRoot(t)
	paths := []string{copyTo(t, filepath.Join(root, "fixtures", "demo-triage", "dataset.jsonl"))}
	shared := filepath.Join(testutil.Testdata(t, "demo-triage"), "dataset.jsonl")
	return append(paths, copyTo(t, shared))
}

// TestRewriteJSONLOneLabel: one edit changes exactly that label's bytes.
func TestRewriteJSONLOneLabel(t *testing.T) {
	set := demoSet(t)
	for _, p := range demoCopies(t) {
		before := read(t, p)
		items := byID(t, p, Options{}, set)
		mustRewrite(t, p, Options{}, 1, edit("dt-003", "queue", `"technical"`))
		only(t, before, read(t, p), `"id": "dt-003"`, `"queue": "billing"`, `"queue": "technical"`)
		sameExcept(t, items, byID(t, p, Options{}, set), map[string]map[string]Label{"dt-003": {"queue": {Index: 1, Text: "technical"}}})
		noTemp(t, p)

		// A score index and a noul on the same line, in one call.
		before = read(t, p)
		mustRewrite(t, p, Options{}, 2, edit("dt-003", "urgency", `0`), edit("dt-003", "refund_request", `true`))
		want := strings.Replace(before, `"labels": {"refund_request": false, "queue": "technical", "urgency": 1}`, `"labels": {"refund_request": true, "queue": "technical", "urgency": 0}`, 1)
		if read(t, p) != want {
			t.Errorf("two labels:\n%s", read(t, p))
		}

		// Remove a label, then label the now unlabelled question again:
		// it comes back as the last label, and the set reads it.
		items = byID(t, p, Options{}, set)
		before = read(t, p)
		mustRewrite(t, p, Options{}, 1, edit("dt-005", "queue", ""))
		only(t, before, read(t, p), `"id": "dt-005"`, `"queue": "technical", `, ``)
		mustRewrite(t, p, Options{}, 1, edit("dt-005", "queue", `"unknown"`))
		only(t, before, read(t, p), `"id": "dt-005"`, `"queue": "technical", "urgency": 2}`, `"urgency": 2, "queue": "unknown"}`)
		sameExcept(t, items, byID(t, p, Options{}, set), map[string]map[string]Label{"dt-005": {"queue": {Index: 3, Text: "unknown"}}})
	}
}

// TestRewriteUnchanged: writing the label already there changes nothing
// and leaves the file alone.
func TestRewriteUnchanged(t *testing.T) {
	p := demoCopies(t)[0]
	fi, _ := os.Stat(p)
	before := read(t, p)
	mustRewrite(t, p, Options{}, 0, edit("dt-001", "queue", `"billing"`), edit("dt-001", "urgency", ` 2 `), edit("dt-002", "missing_q", "null"))
	fi2, _ := os.Stat(p)
	if read(t, p) != before || !fi.ModTime().Equal(fi2.ModTime()) {
		t.Error("file touched")
	}
	noTemp(t, p)
	if n, err := RewriteLabels(p, Options{}, nil); n != 0 || err != nil {
		t.Errorf("no edits: %d, %v", n, err)
	}
}

// TestRenameOtherToGeneral: an option rename carries into demo-triage's
// dataset: exactly the labelled-other lines change (labels_source, also
// "other", does not), and the renamed set reads the labels as general.
func TestRenameOtherToGeneral(t *testing.T) {
	set := demoSet(t)
	renamed := set.Clone()
	if err := renamed.RenameOption("queue", "other", "general"); err != nil {
		t.Fatal(err)
	}
	for _, p := range demoCopies(t) {
		before := read(t, p)
		items := byID(t, p, Options{}, set)
		if _, err := Load(p, Options{}, renamed); err == nil {
			t.Fatal("the renamed set reads the old labels")
		}
		n, err := RenameLabels(p, Options{}, "queue", map[string]string{"other": "general"})
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("%d labels renamed, want 2", n)
		}
		after := read(t, p)
		bl, al := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
		if len(bl) != len(al) {
			t.Fatalf("%d lines, want %d", len(al), len(bl))
		}
		var changed []int
		for i := range bl {
			if bl[i] != al[i] {
				changed = append(changed, i+1)
				want := strings.Replace(bl[i], `"queue": "other", "urgency"`, `"queue": "general", "urgency"`, 1)
				if al[i] != want || !strings.Contains(al[i], `"labels_source": {"refund_request": false, "queue": "other"`) {
					t.Errorf("line %d: %q", i+1, al[i])
				}
			}
		}
		if !reflect.DeepEqual(changed, []int{8, 10}) {
			t.Errorf("changed lines %v, want [8 10]", changed)
		}
		gen := Label{Index: 2, Text: "general"}
		sameExcept(t, items, byID(t, p, Options{}, renamed), map[string]map[string]Label{"dt-008": {"queue": gen}, "dt-010": {"queue": gen}})
		// Again: nothing left to rename.
		if n, err := RenameLabels(p, Options{}, "queue", map[string]string{"other": "general"}); n != 0 || err != nil {
			t.Errorf("second rename: %d, %v", n, err)
		}
		noTemp(t, p)
	}
}

// TestRenameSwap: renames apply at once, so a swap swaps.
func TestRenameSwap(t *testing.T) {
	p := put(t, "d.jsonl", `{"id":1,"state":"s","labels":{"q":"a"}}`+"\n"+`{"id":2,"state":"s","labels":{"q":"b","r":"a"}}`+"\n"+`{"id":3,"state":"s","labels":{"q":"c"}}`+"\n")
	n, err := RenameLabels(p, Options{}, "q", map[string]string{"a": "b", "b": "a", "same": "same"})
	if err != nil || n != 2 {
		t.Fatalf("%d, %v", n, err)
	}
	want := `{"id":1,"state":"s","labels":{"q":"b"}}` + "\n" + `{"id":2,"state":"s","labels":{"q":"a","r":"a"}}` + "\n" + `{"id":3,"state":"s","labels":{"q":"c"}}` + "\n"
	if got := read(t, p); got != want {
		t.Errorf("got\n%s", got)
	}
	if _, err := RenameLabels(p, Options{}, "q", map[string]string{"a": ""}); err == nil {
		t.Error("a rename to empty accepted")
	}
}

// TestLabelUnlabelled: a label is added where there was none, in the
// spacing the line uses, whatever shape "labels" has.
func TestLabelUnlabelled(t *testing.T) {
	lines := []string{
		`{"id": "a", "state": "x", "labels": {"r": true}}`,
		`{"id": "b", "state": "x"}`,
		`{"id":"c","state":"x","labels":null}`,
		`{"id": "d", "state": "x", "labels": {}}`,
		`{"id": "e", "state": "x", "labels": {"q": null}, "extra": 1}`,
		`{"id":"f","state":"x","labels":{"r":true,"s":1}}`,
		` {"id" : "g" , "state" : "x" } `,
	}
	want := []string{
		`{"id": "a", "state": "x", "labels": {"r": true, "q": "billing"}}`,
		`{"id": "b", "state": "x", "labels": {"q": "billing"}}`,
		`{"id":"c","state":"x","labels":{"q":"billing"}}`,
		`{"id": "d", "state": "x", "labels": {"q": "billing"}}`,
		`{"id": "e", "state": "x", "labels": {"q": "billing"}, "extra": 1}`,
		`{"id":"f","state":"x","labels":{"r":true,"s":1,"q":"billing"}}`,
		` {"id" : "g" , "state" : "x" , "labels" : {"q" : "billing"} } `,
	}
	p := put(t, "d.jsonl", strings.Join(lines, "\n")+"\n")
	var edits []LabelEdit
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		edits = append(edits, edit(id, "q", `"billing"`))
	}
	mustRewrite(t, p, Options{}, 7, edits...)
	if got := read(t, p); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	for id, it := range byID(t, p, Options{}, nil) {
		if it.Labels["q"].Text != "billing" {
			t.Errorf("item %s: %v", id, it.Labels)
		}
	}
}

// TestRemoveLabel: a removed label leaves the "labels" object without it
// (every copy of a duplicated key), the rest byte for byte.
func TestRemoveLabel(t *testing.T) {
	lines := []string{
		`{"id": "a", "state": "x", "labels": {"q": "billing", "r": true, "s": 1}}`,
		`{"id": "b", "state": "x", "labels": {"r": true, "q": "billing", "s": 1}}`,
		`{"id": "c", "state": "x", "labels": {"r": true, "s": 1, "q": "billing"}}`,
		`{"id": "d", "state": "x", "labels": {"q": "billing"}}`,
		`{"id": "e", "state": "x", "labels": {"q": "old", "r": true, "q": "billing"}}`,
		`{"id": "f", "state": "x", "labels": {"q": "billing"}}`,
	}
	want := []string{
		`{"id": "a", "state": "x", "labels": {"r": true, "s": 1}}`,
		`{"id": "b", "state": "x", "labels": {"r": true, "s": 1}}`,
		`{"id": "c", "state": "x", "labels": {"r": true, "s": 1}}`,
		`{"id": "d", "state": "x", "labels": {}}`,
		`{"id": "e", "state": "x", "labels": {"r": true}}`,
		`{"id": "f", "state": "x", "labels": {"q": "billing"}}`,
	}
	p := put(t, "d.jsonl", strings.Join(lines, "\n")+"\n")
	before := byID(t, p, Options{}, nil)
	mustRewrite(t, p, Options{}, 5, edit("a", "q", ""), edit("b", "q", "null"), edit("c", "q", ""), edit("d", "q", ""), edit("e", "q", ""))
	if got := read(t, p); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	gone := map[string]Label{"q": {Index: -2}}
	sameExcept(t, before, byID(t, p, Options{}, nil), map[string]map[string]Label{"a": gone, "b": gone, "c": gone, "d": gone, "e": gone})

	// Remove one label and add another on the same line.
	p = put(t, "d.jsonl", `{"id": "a", "state": "x", "labels": {"q": "billing"}}`)
	mustRewrite(t, p, Options{}, 2, edit("a", "q", ""), edit("a", "r", "false"))
	if got := read(t, p); got != `{"id": "a", "state": "x", "labels": {"r": false}}` {
		t.Errorf("remove and add: %s", got)
	}
}

// TestRewriteMappedField: with --label intent=gold_label the label is the
// line's gold_label field; removing it writes null; adding it appends it.
func TestRewriteMappedField(t *testing.T) {
	src := `{"id": 2, "text": "card?", "gold_label": "card_arrival", "labels": {"intent": "ignored"}}` + "\n" +
		`{"id": 3, "text": "rate?", "gold_label": "exchange_rate"}` + "\n" +
		`{"id": 4, "text": "hmm"}` + "\n"
	p := put(t, "d.jsonl", src)
	opt := Options{StateField: "text"}
	if err := opt.ParseLabelFlag("intent=gold_label"); err != nil {
		t.Fatal(err)
	}
	mustRewrite(t, p, opt, 3, edit("2", "intent", `"card_linking"`), edit("3", "intent", ""), edit("4", "intent", `"top_up"`))
	want := `{"id": 2, "text": "card?", "gold_label": "card_linking", "labels": {"intent": "ignored"}}` + "\n" +
		`{"id": 3, "text": "rate?", "gold_label": null}` + "\n" +
		`{"id": 4, "text": "hmm", "gold_label": "top_up"}` + "\n"
	if got := read(t, p); got != want {
		t.Errorf("got\n%s", got)
	}
	items := byID(t, p, opt, nil)
	if items["2"].Labels["intent"].Text != "card_linking" || items["3"].Labels != nil || items["4"].Labels["intent"].Text != "top_up" {
		t.Errorf("read back %v", items)
	}
	n, err := RenameLabels(p, opt, "intent", map[string]string{"top_up": "top_up_failed", "ignored": "x"})
	if err != nil || n != 1 || !strings.Contains(read(t, p), `"gold_label": "top_up_failed"`) {
		t.Errorf("rename mapped: %d, %v", n, err)
	}
	bad := Options{LabelFields: map[string]string{"intent": "id"}}
	if _, err := RewriteLabels(p, bad, []LabelEdit{edit("2", "intent", `"x"`)}); err == nil {
		t.Error("a label written into the id field")
	}
}

// TestRewriteLineEndings: CRLF, a missing final newline, blank lines, a
// byte-order mark, escapes and a long line all survive.
func TestRewriteLineEndings(t *testing.T) {
	long := strings.Repeat("w", 200<<10)
	src := "\xef\xbb\xbf" + `{"id":"a","state":"caf\u00e9","labels":{"q":"x"}}` + "\r\n" +
		"\r\n" +
		`{"id":"b","state":"` + long + `","labels":{"q":"x"}}` + "\r\n" +
		"\n" +
		`{"id":"c","state":"s","labels":{"q":"x"}}`
	p := put(t, "d.jsonl", src)
	mustRewrite(t, p, Options{}, 3, edit("a", "q", `"y"`), edit("b", "q", `"y"`), edit("c", "q", `"<y>"`))
	want := "\xef\xbb\xbf" + `{"id":"a","state":"caf\u00e9","labels":{"q":"y"}}` + "\r\n" +
		"\r\n" +
		`{"id":"b","state":"` + long + `","labels":{"q":"y"}}` + "\r\n" +
		"\n" +
		`{"id":"c","state":"s","labels":{"q":"<y>"}}`
	if got := read(t, p); got != want {
		t.Errorf("got %q", got[:min(len(got), 200)])
	}
	items := byID(t, p, Options{}, nil)
	if items["c"].Line != 5 || items["b"].Line != 3 {
		t.Errorf("lines %d %d", items["b"].Line, items["c"].Line)
	}
}

// TestRewriteErrors: every refusal writes nothing and says where.
func TestRewriteErrors(t *testing.T) {
	src := `{"id": "a", "state": "x", "labels": {"q": "billing"}}` + "\n" + `{"id": "b", "state": "x"}` + "\n"
	cases := []struct {
		name  string
		src   string
		edits []LabelEdit
		want  string
	}{
		{"unknown ids", src, []LabelEdit{edit("a", "q", `"x"`), edit("zz", "q", `"x"`), edit("yy", "q", `"x"`)}, `d.jsonl: unknown item ids "yy", "zz" (not in the dataset); nothing was written`},
		{"empty id", src, []LabelEdit{edit("", "q", `"x"`)}, "empty item id"},
		{"empty question", src, []LabelEdit{edit("a", "", `"x"`)}, "empty or invalid question id"},
		{"duplicate", src, []LabelEdit{edit("a", "q", `"x"`), edit("a", "q", `"y"`)}, "a second edit of the same label"},
		{"bad json", src, []LabelEdit{edit("a", "q", `billing`)}, "not valid JSON"},
		{"empty string", src, []LabelEdit{edit("a", "q", `""`)}, "use null to remove"},
		{"object", src, []LabelEdit{edit("a", "q", `{"x":1}`)}, "not an object or array"},
		{"bad file", src + "{\"id\": \"c\", \"state\": \n", []LabelEdit{edit("a", "q", `"x"`)}, "d.jsonl:3: invalid JSON"},
		{"duplicate ids", src + `{"id": "a", "state": "y"}` + "\n", []LabelEdit{edit("b", "q", `"x"`)}, "d.jsonl:3: item \"a\": duplicate id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := put(t, "d.jsonl", c.src)
			n, err := RewriteLabels(p, Options{}, c.edits)
			if err == nil || n != 0 {
				t.Fatalf("%d, %v", n, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "billing") {
				t.Errorf("error quotes file content: %v", err)
			}
			if read(t, p) != c.src {
				t.Error("file changed")
			}
			noTemp(t, p)
		})
	}
	gz := put(t, "d.jsonl.gz", "not really gzip")
	if _, err := RewriteLabels(gz, Options{}, []LabelEdit{edit("a", "q", `"x"`)}); err == nil || !strings.Contains(err.Error(), "compressed") {
		t.Errorf("gz: %v", err)
	}
	var list ErrorList
	p := put(t, "d.jsonl", src+"[1]\n")
	if _, err := RewriteLabels(p, Options{}, []LabelEdit{edit("a", "q", `"x"`)}); !errors.As(err, &list) || list[0].Line != 3 {
		t.Errorf("bad file error %v is not an ErrorList at line 3", err)
	}
}

// TestRewriteKeepsModeAndLink: the mode stays, a symlink stays a link to
// the rewritten file.
func TestRewriteKeepsModeAndLink(t *testing.T) {
	p := put(t, "d.jsonl", `{"id": "a", "state": "x", "labels": {"q": "b"}}`+"\n")
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(p, link); err != nil {
		t.Skip(err)
	}
	mustRewrite(t, link, Options{}, 1, edit("a", "q", `"c"`))
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v", err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st.Mode())
	}
	if !strings.Contains(read(t, p), `"q": "c"`) {
		t.Error("target not rewritten")
	}
	noTemp(t, p)
}

const csvSrc = "id,state,queue,urgency\n" +
	"t1,\"{\"\"message\"\": \"\"charged twice\"\"}\",billing,2\n" +
	"t2,\"a message\nover two lines, with a comma\",technical,1\n" +
	"t3,plain text,,0\n" +
	"\n" +
	"t4, spaced ,other,\n"

// TestRewriteCSV: one cell changes, in a record after a multi-line one;
// a cell that needs quotes is quoted; everything else is byte for byte.
func TestRewriteCSV(t *testing.T) {
	set := demoSet(t)
	p := put(t, "d.csv", csvSrc)
	items := byID(t, p, Options{}, set)
	mustRewrite(t, p, Options{}, 1, edit("t3", "queue", `"billing"`))
	only(t, csvSrc, read(t, p), "t3,", "plain text,,0", "plain text,billing,0")

	before := read(t, p)
	mustRewrite(t, p, Options{}, 2, edit("t2", "queue", `"other"`), edit("t2", "urgency", `3`))
	only(t, before, read(t, p), "t2,", "technical,1", "other,3")
	sameExcept(t, items, byID(t, p, Options{}, set), map[string]map[string]Label{
		"t3": {"queue": {Index: 0, Text: "billing"}},
		"t2": {"queue": {Index: 2, Text: "other"}, "urgency": {Index: 3, Text: "Cannot tell from the message.", ByIndex: true}},
	})

	// Remove the last cell, label an empty one, rename, and a cell that
	// must be quoted.
	before = read(t, p)
	mustRewrite(t, p, Options{}, 2, edit("t1", "urgency", "null"), edit("t4", "urgency", `"1"`))
	want := strings.Replace(before, "billing,2\n", "billing,\n", 1)
	want = strings.Replace(want, " spaced ,other,\n", " spaced ,other,1\n", 1)
	if got := read(t, p); got != want {
		t.Errorf("got %q", got)
	}
	n, err := RenameLabels(p, Options{}, "queue", map[string]string{"other": "general, misc"})
	if err != nil || n != 2 {
		t.Fatalf("rename: %d, %v", n, err)
	}
	want = strings.Replace(want, ",other,3\n", ",\"general, misc\",3\n", 1)
	want = strings.Replace(want, ",other,1\n", ",\"general, misc\",1\n", 1)
	if got := read(t, p); got != want {
		t.Errorf("got %q", got)
	}
	if it := byID(t, p, Options{LabelFields: map[string]string{"queue": "queue"}}, nil)["t4"]; it.Labels["queue"].Text != "general, misc" || string(it.State) != `" spaced "` {
		t.Errorf("read back %+v", it)
	}
	noTemp(t, p)
}

// TestRewriteCSVEndings: CRLF, no final newline, a BOM, TSV, a mapped
// column and a label cell on the second line of a record.
func TestRewriteCSVEndings(t *testing.T) {
	src := "\xef\xbb\xbfid,state,gold\r\n" + "a,x,one\r\n" + "b,\"two\r\nlines\",two\r\n" + "c,y,three"
	p := put(t, "d.csv", src)
	opt := Options{LabelFields: map[string]string{"q": "gold"}}
	mustRewrite(t, p, opt, 3, edit("a", "q", `"uno"`), edit("b", "q", `"needs \"quotes\""`), edit("c", "q", `"tres"`))
	want := "\xef\xbb\xbfid,state,gold\r\n" + "a,x,uno\r\n" + "b,\"two\r\nlines\",\"needs \"\"quotes\"\"\"\r\n" + "c,y,tres"
	if got := read(t, p); got != want {
		t.Errorf("got %q", got)
	}
	items := byID(t, p, opt, nil)
	if items["b"].Labels["q"].Text != `needs "quotes"` || items["c"].Line != 5 {
		t.Errorf("read back %+v", items)
	}

	tsv := "id\tstate\tq\n1\ta, b\tx\n2\t\"multi\nline\"\tx\n"
	p = put(t, "d.tsv", tsv)
	mustRewrite(t, p, Options{}, 2, edit("1", "q", `"y,z"`), edit("2", "q", `"y\tz"`))
	if got := read(t, p); got != "id\tstate\tq\n1\ta, b\ty,z\n2\t\"multi\nline\"\t\"y\tz\"\n" {
		t.Errorf("tsv got %q", got)
	}
	if it := byID(t, p, Options{LabelFields: map[string]string{"q": "q"}}, nil)["2"]; it.Labels["q"].Text != "y\tz" {
		t.Errorf("tsv read back %+v", it)
	}
}

// TestRewriteCSVErrors: no column for the question, unknown ids and a bad
// file write nothing.
func TestRewriteCSVErrors(t *testing.T) {
	p := put(t, "d.csv", csvSrc)
	_, err := RewriteLabels(p, Options{}, []LabelEdit{edit("t1", "refund_request", "true")})
	if err == nil || !strings.Contains(err.Error(), `d.csv:1: question "refund_request": no "refund_request" column in the header`) {
		t.Errorf("missing column: %v", err)
	}
	_, err = RewriteLabels(p, Options{}, []LabelEdit{edit("t9", "queue", `"x"`)})
	if err == nil || !strings.Contains(err.Error(), `unknown item id "t9"`) {
		t.Errorf("unknown id: %v", err)
	}
	if read(t, p) != csvSrc {
		t.Error("file changed")
	}
	if read(t, p) != csvSrc {
		t.Error("file changed")
	}
	_, err = RewriteLabels(p, Options{}, []LabelEdit{edit("t4", "queue", `"a\r\nb"`)})
	if err == nil || !strings.Contains(err.Error(), `d.csv:7: item "t4": question "queue": a label with a line break cannot be written`) {
		t.Errorf("CR: %v", err)
	}
	if _, err = RewriteLabels(p, Options{}, []LabelEdit{edit("t4", "queue", `"two\nlines"`)}); err == nil {
		t.Error("a label with a line break written")
	}
	if read(t, p) != csvSrc {
		t.Error("file changed")
	}
	bad := put(t, "d.csv", csvSrc+"t5,\"unterminated,x,1\n")
	if _, err := RewriteLabels(bad, Options{}, []LabelEdit{edit("t1", "queue", `"x"`)}); err == nil || !strings.Contains(err.Error(), "d.csv:8:") {
		t.Errorf("bad csv: %v", err)
	}
	noTemp(t, p)
}

// TestRewriteFormatSniffed: a file without a telling extension is
// rewritten in the format the reader chose.
func TestRewriteFormatSniffed(t *testing.T) {
	p := put(t, "data", "\n"+`{"id":"a","state":"x"}`+"\n")
	mustRewrite(t, p, Options{}, 1, edit("a", "q", `"y"`))
	if got := read(t, p); got != "\n"+`{"id":"a","state":"x","labels":{"q":"y"}}`+"\n" {
		t.Errorf("got %q", got)
	}
	p = put(t, "data", "id,state,q\na,x,\n")
	mustRewrite(t, p, Options{}, 1, edit("a", "q", `"y"`))
	if got := read(t, p); got != "id,state,q\na,x,y\n" {
		t.Errorf("got %q", got)
	}
}

// TestRewriteBanking77Source: the upstream file with field mapping, as
// `--state-field text --label intent=gold_label` reads it.
func TestRewriteBanking77Source(t *testing.T) {
	set, err := fixtures.DefaultSet()
	if err != nil {
		t.Fatal(err)
	}
	p := copyTo(t, filepath.Join(testutil.Testdata(t, "banking77"), "dataset.source.jsonl"))
	opt := Options{StateField: "text"}
	if err := opt.ParseLabelFlag("intent=gold_label"); err != nil {
		t.Fatal(err)
	}
	before := read(t, p)
	items := byID(t, p, opt, set)
	first := strings.SplitAfter(before, "\n")[0]
	mustRewrite(t, p, opt, 1, edit("2", "intent", `"card_linking"`))
	only(t, before, read(t, p), first[:10], "card_arrival", "card_linking")
	q, _ := set.Questions.Get("intent")
	sameExcept(t, items, byID(t, p, opt, set), map[string]map[string]Label{"2": {"intent": {Index: q.OptionIndex("card_linking"), Text: "card_linking"}}})
}

// TestRewriteIrregularSpacing: a line with uneven spacing keeps it all;
// a deleted member takes its own separator, the others keep theirs.
func TestRewriteIrregularSpacing(t *testing.T) {
	line := `{"id":"a", "state" :"x",  "labels": { "r":true ,"q":"billing"  ,   "s" : 1 }  }`
	p := put(t, "d.jsonl", line)
	mustRewrite(t, p, Options{}, 1, edit("a", "q", `"technical"`))
	only(t, line, read(t, p), `"labels"`, `"billing"`, `"technical"`)
	mustRewrite(t, p, Options{}, 1, edit("a", "q", ""))
	if got := read(t, p); got != `{"id":"a", "state" :"x",  "labels": { "r":true  ,   "s" : 1 }  }` {
		t.Errorf("delete: %s", got)
	}
	mustRewrite(t, p, Options{}, 1, edit("a", "q", `"other"`))
	if got := read(t, p); got != `{"id":"a", "state" :"x",  "labels": { "r":true  ,   "s" : 1  ,   "q" : "other" }  }` {
		t.Errorf("add: %s", got)
	}
}

// TestRewriteLineMoved: a line whose id is not the one the first read
// found there (the file changed between the reads) is refused.
func TestRewriteLineMoved(t *testing.T) {
	ts := []target{{q: "q", next: func(json.RawMessage) (json.RawMessage, bool) { return json.RawMessage(`"x"`), true }}}
	_, _, err := editJSONLLine([]byte(`{"id": "b", "state": "s"}`+"\n"), false, "a", ts, Options{})
	var e *Error
	if !errors.As(err, &e) || e.Msg != errChanged {
		t.Errorf("moved line: %v", err)
	}
	out, n, err := editJSONLLine([]byte(`{"id": 7, "state": "s"}`+"\n"), false, "7", ts, Options{})
	if err != nil || len(n) != 1 || string(out) != `{"id": 7, "state": "s", "labels": {"q": "x"}}`+"\n" {
		t.Errorf("numeric id: %q %v %v", out, n, err)
	}
}

// FuzzEditJSONLLine: for any JSON object line, setting or removing a label
// gives valid JSON whose fields other than labels decode as before, whose
// labels hold exactly the change, and an edit that changes nothing returns
// the line itself.
func FuzzEditJSONLLine(f *testing.F) {
	f.Add(`{"id": "a", "state": "x", "labels": {"q": "billing", "r": true}}`, "q", `"y"`)
	f.Add(`{"id":1,"state":{"a":[1,2]},"labels":null}`, "q", ``)
	f.Add(` {"id" : "a" ,"labels":{}, "state":"x", "labels" : {"q":1,"q":2}} `, "q", `3`)
	f.Add(`{"id":"a","state":"x","labels":{"\u0071":"z"}}`, "q", `false`)
	f.Fuzz(func(t *testing.T, line, q, val string) {
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &fields) != nil || fields == nil || q == "" || !utf8.ValidString(q) {
			return
		}
		if _, ok := fields["id"]; !ok {
			return
		}
		if _, msg := idText(fields["id"]); msg != "" {
			return
		}
		var oldLabels map[string]json.RawMessage
		if lr, ok := fields["labels"]; ok && !isNull(lr) {
			if json.Unmarshal(lr, &oldLabels) != nil || oldLabels == nil {
				return
			}
		}
		v, err := labelValue(json.RawMessage(val))
		if err != nil {
			return
		}
		ts := []target{{q: q, next: func(json.RawMessage) (json.RawMessage, bool) { return v, true }}}
		out, n, err := editJSONLLine([]byte(line+"\n"), false, "", ts, Options{})
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !bytes.HasSuffix(out, []byte("\n")) {
			t.Fatalf("line ending lost: %q", out)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q → %q: %v", line, out, err)
		}
		for k, raw := range fields {
			if k != "labels" && !bytes.Equal(compact(t, got[k]), compact(t, raw)) {
				t.Fatalf("field %s changed: %q → %q", k, line, out)
			}
		}
		var newLabels map[string]json.RawMessage
		if lr, ok := got["labels"]; ok && !isNull(lr) {
			if err := json.Unmarshal(lr, &newLabels); err != nil {
				t.Fatalf("labels: %q", out)
			}
		}
		cur := oldLabels[q]
		if isNull(cur) {
			cur = nil
		}
		if sameLabel(cur, v) {
			if len(n) != 0 || string(out) != line+"\n" {
				t.Fatalf("no-op edit changed %q → %q", line, out)
			}
			return
		}
		if len(n) != 1 || n[0].key != q || !sameLabel(n[0].val, v) {
			t.Fatalf("changes %v", n)
		}
		for k, raw := range oldLabels {
			if k != q && !bytes.Equal(compact(t, newLabels[k]), compact(t, raw)) {
				t.Fatalf("label %s changed: %q → %q", k, line, out)
			}
		}
		if nv, ok := newLabels[q]; v == nil && ok || v != nil && !sameLabel(compact(t, nv), v) {
			t.Fatalf("label %s: %q → %q", q, line, out)
		}
		want := len(oldLabels)
		if _, had := oldLabels[q]; v == nil {
			want--
		} else if !had {
			want++
		}
		if len(newLabels) != want {
			t.Fatalf("labels %v → %v", oldLabels, newLabels)
		}
	})
}

func compact(t *testing.T, raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzRewriteCSV: for any CSV file the reader accepts, labelling its first
// item rewrites only that record, and the file reads back with the label
// (RewriteLabels checks that itself; a failure there is a bug).
func FuzzRewriteCSV(f *testing.F) {
	f.Add("id,state,q\na,x,b\n", "new")
	f.Add("id,state,q\r\n\"a\",\"x\ny\",\"b\"\r\n\nc,d,", "with, comma")
	f.Add("q,id,state\n,a,\"{\"\"k\"\": 1}\"\n", "\"quoted\"")
	f.Add("\xef\xbb\xbfstate,id,q,z\n\" s \",  a ,b b,\nx,y,,1\n", " lead")
	f.Fuzz(func(t *testing.T, src, label string) {
		if label == "" || !utf8.ValidString(label) || strings.ContainsAny(label, "\r\n") {
			return
		}
		opt := Options{LabelFields: map[string]string{"q": "q"}}
		var first Item
		n := 0
		if Parse("d.csv", strings.NewReader(src), opt, nil, func(it Item) error {
			if n == 0 {
				first = it
			}
			n++
			return nil
		}) != nil {
			return
		}
		p := put(t, "d.csv", src)
		got, err := RewriteLabels(p, opt, []LabelEdit{{ItemID: first.ID, Question: "q", Value: jsonString(label)}})
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		after := read(t, p)
		if first.Labels["q"].Text == label {
			if got != 0 || after != src {
				t.Fatalf("no-op changed %q → %q", src, after)
			}
			return
		}
		if got != 1 {
			t.Fatalf("%d changes", got)
		}
		// Bytes before the record are untouched, and every other item
		// reads back as it was.
		lines := strings.SplitAfter(src, "\n")
		head := strings.Join(lines[:first.Line-1], "")
		if !strings.HasPrefix(after, head) {
			t.Fatalf("bytes before the record changed: %q → %q", src, after)
		}
		before := map[string]Item{}
		Parse("d.csv", strings.NewReader(src), opt, nil, func(it Item) error { before[it.ID] = it; return nil })
		sameExcept(t, before, byID(t, p, opt, nil), map[string]map[string]Label{first.ID: {"q": {Index: -1, Text: label}}})
	})
}

// TestRewriteNotRegular: a FIFO (nobody writing) or a directory is
// refused at once, never opened for a blocking read.
func TestRewriteNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "d.jsonl")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{fifo, t.TempDir()} {
		done := make(chan error, 1)
		go func() {
			_, err := RewriteLabels(p, Options{}, []LabelEdit{edit("a", "q", `"x"`)})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v", p, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: RewriteLabels blocked", p)
		}
	}
}

// benchFile writes n demo-triage-like lines, a third of them labelled
// other, and returns the path.
func benchFile(b *testing.B, n int) string {
	b.Helper()
	var sb strings.Builder
	queues := []string{"billing", "technical", "other"}
	for i := range n {
		fmt.Fprintf(&sb, `{"id": "t-%d", "state": {"message": "I was charged twice for the same order, number %d. I need the extra charge refunded today."}, "labels": {"refund_request": true, "queue": %q, "urgency": 2}}`+"\n", i, i, queues[i%3])
	}
	p := filepath.Join(b.TempDir(), "d.jsonl")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	return p
}

// BenchmarkRewriteLabels: one label fixed in a 100,000-line file (two
// full reads, one copy, one read-back).
func BenchmarkRewriteLabels(b *testing.B) {
	p := benchFile(b, 100_000)
	vals := []json.RawMessage{json.RawMessage(`"billing"`), json.RawMessage(`"technical"`)}
	b.ResetTimer()
	for i := range b.N {
		if _, err := RewriteLabels(p, Options{}, []LabelEdit{{ItemID: "t-50000", Question: "queue", Value: vals[i%2]}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenameLabels: an option renamed on every third line of a
// 100,000-line file, back and forth.
func BenchmarkRenameLabels(b *testing.B) {
	p := benchFile(b, 100_000)
	b.ResetTimer()
	for i := range b.N {
		m := map[string]string{"other": "general"}
		if i%2 == 1 {
			m = map[string]string{"general": "other"}
		}
		if n, err := RenameLabels(p, Options{}, "queue", m); err != nil || n != 33_333 {
			b.Fatal(n, err)
		}
	}
}

// TestCheckRecord: the read-back of a rewritten record fails on a label
// other than the one meant, a removed label still there, or another id.
func TestCheckRecord(t *testing.T) {
	line := []byte(`{"id": "a", "state": "x", "labels": {"q": "b"}, "g": "c"}` + "\n")
	opt := Options{Format: "jsonl"}
	ok := []labelKV{{"q", json.RawMessage(`"b"`)}}
	if err := checkRecord("d.jsonl", 3, line, opt, nil, "a", ok); err != nil {
		t.Errorf("good record: %v", err)
	}
	for name, c := range map[string]struct {
		id      string
		cols    map[string]string
		applied []labelKV
	}{
		"other label": {"a", nil, []labelKV{{"q", json.RawMessage(`"c"`)}}},
		"not removed": {"a", nil, []labelKV{{"q", nil}}},
		"other id":    {"z", nil, ok},
		"mapped":      {"a", map[string]string{"q": "g"}, ok},
	} {
		err := checkRecord("d.jsonl", 3, line, opt, c.cols, c.id, c.applied)
		if err == nil || !strings.HasPrefix(err.Error(), "d.jsonl:3: ") || !strings.Contains(err.Error(), "a jevlab bug") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRenameEscaped: a label spelled with escapes is renamed too (the
// pre-filter that skips lines without the old text sees the backslash).
func TestRenameEscaped(t *testing.T) {
	src := `{"id":1,"state":"s","labels":{"q":"\u006fther"}}` + "\n" + `{"id":2,"state":"other","labels":{"q":"x"}}` + "\n"
	p := put(t, "d.jsonl", src)
	n, err := RenameLabels(p, Options{}, "q", map[string]string{"other": "général"})
	if err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	if got := read(t, p); got != `{"id":1,"state":"s","labels":{"q":"général"}}`+"\n"+`{"id":2,"state":"other","labels":{"q":"x"}}`+"\n" {
		t.Errorf("got %s", got)
	}
}
