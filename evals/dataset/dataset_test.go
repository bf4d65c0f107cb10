package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/fixtures"
	"github.com/jevlab/jevlab/internal/testutil"
)

// TestBanking77SourceAsIs reads the upstream file with field mapping, as
// `--id-field id --state-field text --label intent=gold_label` would.
func TestBanking77SourceAsIs(t *testing.T) {
	set, err := fixtures.DefaultSet()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testutil.Testdata(t, "banking77"), "dataset.source.jsonl")
	opt := Options{IDField: "id", StateField: "text"}
	if err := opt.ParseLabelFlag("intent=gold_label"); err != nil {
		t.Fatal(err)
	}
	items, err := Load(path, opt, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 500 {
		t.Fatalf("%d items", len(items))
	}
	first := items[0]
	if first.ID != "2" || string(first.State) != `"I ordered a card but it has not arrived. Help please!"` || first.Line != 1 {
		t.Errorf("first item %+v", first)
	}
	// card_arrival is option 11 (0-based) in questions.json's order.
	if l := first.Labels["intent"]; l.Text != "card_arrival" || l.Index != 11 {
		t.Errorf("label %+v", l)
	}
}

func demoSet(t testing.TB) *questionset.Set {
	t.Helper()
	set, err := fixtures.LoadSet(fixtures.DemoTriageSet)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestLabelsPerType pins how every accepted label spelling resolves.
func TestLabelsPerType(t *testing.T) {
	set := demoSet(t)
	// A structured score level, to check labelling by its "label".
	structured, err := questionset.Parse("s.yaml", []byte("questions:\n  s:\n    type: score\n    criteria: [{label: low, summary: calm}, {label: high}, plain]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		set      *questionset.Set
		question string
		raw      string
		want     Label
	}{
		{set, "queue", `"billing"`, Label{Index: 0, Text: "billing"}},
		{set, "queue", `"unknown"`, Label{Index: 3, Text: "unknown"}},
		{set, "urgency", `2`, Label{Index: 2, Text: "Stated impact or time pressure; needs a response today.", ByIndex: true}},
		{set, "urgency", `2.0`, Label{Index: 2, Text: "Stated impact or time pressure; needs a response today.", ByIndex: true}},
		{set, "urgency", `"3"`, Label{Index: 3, Text: "Cannot tell from the message.", ByIndex: true}},
		{set, "urgency", `"A normal request; a response within a few days is fine."`, Label{Index: 1, Text: "A normal request; a response within a few days is fine."}},
		{set, "refund_request", `true`, Label{Index: 1, Text: "true"}},
		{set, "refund_request", `false`, Label{Index: 0, Text: "false"}},
		{set, "refund_request", `"TRUE"`, Label{Index: 1, Text: "true"}},
		{set, "refund_request", `"Yes"`, Label{Index: 1, Text: "true"}},
		{set, "refund_request", `"no"`, Label{Index: 0, Text: "false"}},
		{set, "refund_request", `1`, Label{Index: 1, Text: "true"}},
		{set, "refund_request", `0`, Label{Index: 0, Text: "false"}},
		{set, "refund_request", `"0"`, Label{Index: 0, Text: "false"}},
		{structured, "s", `"high"`, Label{Index: 1, Text: "high"}},
		{structured, "s", `"low"`, Label{Index: 0, Text: "low"}},
		{structured, "s", `"plain"`, Label{Index: 2, Text: "plain"}},
		{structured, "s", `0`, Label{Index: 0, Text: "low", ByIndex: true}},
	}
	for _, c := range cases {
		line := `{"id":"x","state":"s","labels":{"` + c.question + `":` + c.raw + `}}`
		items, err := parseAll(t, "d.jsonl", line, Options{}, c.set)
		if err != nil {
			t.Errorf("%s=%s: %v", c.question, c.raw, err)
			continue
		}
		if got := items[0].Labels[c.question]; got != c.want {
			t.Errorf("%s=%s: got %+v, want %+v", c.question, c.raw, got, c.want)
		}
	}
	// null and a missing question are unlabelled, not errors.
	items, err := parseAll(t, "d.jsonl", `{"id":"x","state":"s","labels":{"queue":null}}`, Options{}, set)
	if err != nil || len(items[0].Labels) != 0 {
		t.Errorf("null label: %v %+v", err, items)
	}
}

func parseAll(t testing.TB, name, in string, opt Options, set *questionset.Set) ([]Item, error) {
	t.Helper()
	var items []Item
	err := Parse(name, strings.NewReader(in), opt, set, func(it Item) error {
		items = append(items, it)
		return nil
	})
	return items, err
}

func TestCSV(t *testing.T) {
	set := demoSet(t)
	in := "\xef\xbb\xbfid,state,queue,urgency,refund_request,note\n" +
		"a,\"{\"\"message\"\": \"\"refund me\"\"}\",billing,2,yes,ignored\n" +
		"b,plain text state,,\"0\",,\n" +
		"c,\"two\nlines\",other,low-is-not-a-level-text-so-this-fails,no,x\n"
	_, err := parseAll(t, "d.csv", in, Options{}, set)
	want := `d.csv:5:14: item "c": question "urgency": "low-is-not-a-level-text-so-this-fails" is neither a level index (0..3) nor a level's exact text`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	in = strings.Replace(in, "low-is-not-a-level-text-so-this-fails", "1", 1)
	items, err := parseAll(t, "d.csv", in, Options{}, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 {
		t.Fatalf("%d items", len(items))
	}
	if string(items[0].State) != `{"message":"refund me"}` || items[0].Labels["queue"] != (Label{Index: 0, Text: "billing"}) || items[0].Labels["refund_request"] != (Label{Index: 1, Text: "true"}) {
		t.Errorf("row a: %s %+v", items[0].State, items[0].Labels)
	}
	if string(items[1].State) != `"plain text state"` || len(items[1].Labels) != 1 || items[1].Labels["urgency"].Index != 0 {
		t.Errorf("row b: %s %+v", items[1].State, items[1].Labels)
	}
	if string(items[2].State) != `"two\nlines"` || items[2].Line != 4 || items[2].Labels["urgency"].Index != 1 {
		t.Errorf("row c: %s line %d %+v", items[2].State, items[2].Line, items[2].Labels)
	}
	// Mapped columns, TSV by extension.
	tsv := "key\ttext\tgold\n1\thello\ttechnical\n"
	opt := Options{IDField: "key", StateField: "text", LabelFields: map[string]string{"queue": "gold"}}
	items, err = parseAll(t, "d.tsv", tsv, opt, set)
	if err != nil || len(items) != 1 || items[0].ID != "1" || items[0].Labels["queue"].Index != 1 {
		t.Errorf("tsv: %v %+v", err, items)
	}
}

func TestJSONLDetails(t *testing.T) {
	set := demoSet(t)
	long := strings.Repeat("x", 200<<10) // longer than the read buffer
	in := `{"id": 12, "state": {"b": 1, "a": [1.50, 2]}, "labels": {"queue": "other"}, "labels_source": {"queue": "whatever"}}` + "\r\n" +
		"   \n" +
		`{"id": "long", "state": "` + long + `"}` + "\n" +
		`{"text": "mapped", "key": 3.0, "gold": "billing", "labels": {"urgency": 1}}`
	items, err := parseAll(t, "d.jsonl", in[:strings.LastIndex(in, "\n")+1], Options{}, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID != "12" || string(items[0].State) != `{"b":1,"a":[1.50,2]}` || items[0].Labels["queue"].Index != 2 {
		t.Errorf("items %+v", items[0])
	}
	if items[1].Line != 3 || len(items[1].State) != len(long)+2 {
		t.Errorf("long line: line %d len %d", items[1].Line, len(items[1].State))
	}
	opt := Options{IDField: "key", StateField: "text", LabelFields: map[string]string{"queue": "gold"}}
	items, err = parseAll(t, "d.jsonl", in[strings.LastIndex(in, "\n")+1:], opt, set)
	if err != nil {
		t.Fatal(err)
	}
	if items[0].ID != "3.0" || items[0].Labels["queue"].Index != 0 || items[0].Labels["urgency"].Index != 1 {
		t.Errorf("mapped: %+v", items[0])
	}
	// Without a set, labels are kept as text.
	items, err = parseAll(t, "d.jsonl", `{"id":"a","state":"s","labels":{"anything":"goes","n":3}}`, Options{}, nil)
	if err != nil || items[0].Labels["anything"] != (Label{Index: -1, Text: "goes"}) || items[0].Labels["n"] != (Label{Index: -1, Text: "3"}) {
		t.Errorf("no set: %v %+v", err, items)
	}
}

func TestStopOnCallerError(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	err := Parse("d.jsonl", strings.NewReader("{\"id\":1,\"state\":\"a\"}\n{\"id\":2,\"state\":\"b\"}\n"), Options{}, nil, func(Item) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("err %v after %d items", err, n)
	}
}

func TestTooManyErrors(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "{\"id\":%d,\"state\":%d}\n", i, i)
	}
	err := Parse("d.jsonl", strings.NewReader(b.String()), Options{}, nil, func(Item) error { return nil })
	var el ErrorList
	if !errors.As(err, &el) || len(el) != maxErrors+1 || el[maxErrors].Msg != "too many problems; stopped reading" {
		t.Fatalf("got %d errors: %v", len(el), err)
	}
}

func TestLoadExamples(t *testing.T) {
	dir := t.TempDir()
	for _, name := range fixtures.Names() {
		p, err := fixtures.Extract(name, filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		set, err := questionset.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		np, err := set.DatasetPath(nil)
		if err != nil {
			t.Fatal(err)
		}
		items, err := Load(np.Path, Options{}, set)
		if err != nil {
			t.Fatal(err)
		}
		labelled := 0
		for _, it := range items {
			labelled += len(it.Labels)
		}
		// Every question of every item is labelled in the shipped examples.
		if labelled != len(items)*len(set.Questions) {
			t.Errorf("%s: %d labels for %d items × %d questions", name, labelled, len(items), len(set.Questions))
		}
	}
}

func TestStreamGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("id,state,queue\na,hello,billing\n"))
	zw.Close()
	p := filepath.Join(t.TempDir(), "d.csv.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := Load(p, Options{}, demoSet(t))
	if err != nil || len(items) != 1 || items[0].Labels["queue"].Index != 0 {
		t.Fatalf("%v %+v", err, items)
	}
	if err := os.WriteFile(p, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, Options{}, nil); err == nil || !strings.Contains(err.Error(), "d.csv.gz: not a gzip file") {
		t.Errorf("got %v", err)
	}
}

// IDSet finds a repeated id whatever line it was first seen on (line 0
// included: items built in memory have none) and keeps no id.
func TestIDSet(t *testing.T) {
	s := NewIDSet()
	if _, dup := s.Add("a", 0); dup {
		t.Fatal("first a reported as a duplicate")
	}
	if _, dup := s.Add("b", 7); dup {
		t.Fatal("b reported as a duplicate")
	}
	if first, dup := s.Add("a", 9); !dup || first != 0 {
		t.Fatalf("second a: first %d, dup %v; want line 0, true", first, dup)
	}
	if first, dup := s.Add("b", 12); !dup || first != 7 {
		t.Fatalf("second b: first %d, dup %v; want line 7, true", first, dup)
	}
	for i := range 10000 {
		if _, dup := s.Add(fmt.Sprint("id-", i), i+20); dup {
			t.Fatalf("id-%d reported as a duplicate", i)
		}
	}
}
