package dataset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/fixtures"
	"github.com/jevlab/jevlab/internal/testutil"
)

// TestNestedPaths reads labels, id and state through dotted paths and JSON
// Pointers, as --label queue=expect.queue and --state-field /input/ticket.
func TestNestedPaths(t *testing.T) {
	set := demoSet(t)
	in := `{"meta": {"key": "a-1"}, "input": {"ticket": {"message": "refund me"}}, "expect": {"queue": "billing", "flags": [true, false]}}` + "\n" +
		`{"meta": {"key": 7}, "input": {"ticket": "plain text"}, "expect": {"queue": "other", "flags": [false]}}` + "\n"
	opt := Options{IDField: "meta.key", StateField: "/input/ticket"}
	for _, l := range []string{"queue=expect.queue", "refund_request=/expect/flags/0"} {
		if err := opt.ParseLabelFlag(l); err != nil {
			t.Fatal(err)
		}
	}
	items, err := parseAll(t, "d.jsonl", in, opt, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID != "a-1" || items[1].ID != "7" {
		t.Fatalf("items %+v", items)
	}
	if got := string(items[0].State); got != `{"message":"refund me"}` {
		t.Errorf("state %s", got)
	}
	if got := string(items[1].State); got != `"plain text"` {
		t.Errorf("state %s", got)
	}
	if l := items[0].Labels["queue"]; l.Text != "billing" || l.Index != 0 {
		t.Errorf("queue %+v", l)
	}
	if l := items[0].Labels["refund_request"]; l.Text != "true" {
		t.Errorf("refund %+v", l)
	}
	if l := items[1].Labels["refund_request"]; l.Text != "false" {
		t.Errorf("refund %+v", l)
	}
}

// TestPathEdgeCases: a top-level field named like a path wins; "~1" and
// "~0" unescape in a pointer; an array index must be canonical; a path
// that never resolves names the field.
func TestPathEdgeCases(t *testing.T) {
	set := demoSet(t)
	r := &rowFields{top: map[string]json.RawMessage{
		"gold.label": []byte(`"top"`),
		"gold":       []byte(`{"label": "nested", "a/b": {"c~d": "esc"}, "list": ["x", "y"]}`),
	}}
	for ref, want := range map[string]string{
		"gold.label": `"top"`, "/gold/label": `"nested"`, "/gold/a~1b/c~0d": `"esc"`,
		"gold.list.1": `"y"`, "/gold/list/0": `"x"`,
	} {
		got, ok := r.lookup(ref)
		if !ok || string(got) != want {
			t.Errorf("lookup(%q) = %s, %v; want %s", ref, got, ok, want)
		}
	}
	for _, ref := range []string{"gold.list.01", "gold.list.2", "gold.list.-1", "gold.label.x", "nope.x", "/nope"} {
		if got, ok := r.lookup(ref); ok {
			t.Errorf("lookup(%q) = %s, want missing", ref, got)
		}
	}
	opt := Options{}
	if err := opt.ParseLabelFlag("queue=expect.queue"); err != nil {
		t.Fatal(err)
	}
	_, err := parseAll(t, "d.jsonl", `{"id": "a", "state": "x", "expect": {"team": "billing"}}`+"\n", opt, set)
	if err == nil || err.Error() != `d.jsonl: --label queue=expect.queue: no row has a field "expect.queue"` {
		t.Errorf("err = %v", err)
	}
}

// TestStateFields combines several fields (paths allowed, NAME=REF
// renames) into one object state, in the order given; a row lacking one
// fails with its line.
func TestStateFields(t *testing.T) {
	set := demoSet(t)
	opt := Options{}
	if err := opt.ParseStateFields("subject, msg=mail.body"); err != nil {
		t.Fatal(err)
	}
	in := `{"id": "a", "subject": "Refund", "mail": {"body": "twice charged"}}` + "\n" +
		`{"id": "b", "subject": "Hi"}` + "\n"
	_, err := parseAll(t, "d.jsonl", in, opt, set)
	if err == nil || err.Error() != `d.jsonl:2: item "b": missing "mail.body", one of the state fields (subject, msg=mail.body)` {
		t.Fatalf("err = %v", err)
	}
	items, err := parseAll(t, "d.jsonl", strings.SplitAfter(in, "\n")[0], opt, set)
	if err != nil || len(items) != 1 || string(items[0].State) != `{"subject":"Refund","msg":"twice charged"}` {
		t.Fatalf("items %+v err %v", items, err)
	}
	csvIn := "id,subject,body,queue\na,Refund,\"{\"\"x\"\": 1}\",billing\n"
	items, err = parseAll(t, "d.csv", csvIn, Options{StateFields: []string{"subject", "body"}}, set)
	if err != nil || len(items) != 1 || string(items[0].State) != `{"subject":"Refund","body":{"x":1}}` || items[0].Labels["queue"].Text != "billing" {
		t.Fatalf("csv items %+v err %v", items, err)
	}
	if _, err := parseAll(t, "d.csv", csvIn, Options{StateFields: []string{"subject", "mail.body"}}, set); err == nil || !strings.Contains(err.Error(), `d.csv:1: no "mail.body" column for the state fields; CSV columns are flat`) {
		t.Errorf("csv path err = %v", err)
	}
	var o Options
	if err := o.ParseStateFields("a.body,b.body"); err == nil || !strings.Contains(err.Error(), `both become the state field "body"`) {
		t.Errorf("duplicate key err = %v", err)
	}
	if err := o.ParseStateFields("a,,b"); err == nil {
		t.Error("empty entry accepted")
	}
}

// TestSetMapping: the set file's dataset: mapping reads a jev-packs
// cases.jsonl as it is (expect.* labels, score level names through
// values), and flags still win field by field.
func TestSetMapping(t *testing.T) {
	dir := t.TempDir()
	src := testutil.Testdata(t, "demo-triage")
	cases, err := os.ReadFile(filepath.Join(src, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	demo, err := fixtures.ReadFile(fixtures.DemoTriageSet)
	if err != nil {
		t.Fatal(err)
	}
	y := string(demo)
	i, j := strings.Index(y, "dataset: dataset.jsonl"), strings.Index(y, "gates:")
	y = y[:i] + `dataset:
  path: cases.jsonl
  labels:
    refund_request: expect.refund_request
    queue: /expect/queue
    urgency: {field: expect.urgency, values: {low: 0, normal: 1, high: 2, unknown: 3}}
` + y[j:]
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("cases.jsonl", string(cases))
	set, err := questionset.Load(write("q.yaml", y))
	if err != nil {
		t.Fatal(err)
	}
	np, err := set.DatasetPath(nil)
	if err != nil {
		t.Fatal(err)
	}
	items, err := Load(np.Path, Options{}.ForSet(set), set)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(filepath.Join(src, "dataset.jsonl"), Options{}, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 10 || len(want) != 10 {
		t.Fatalf("%d items, want 10", len(items))
	}
	for k := range items {
		a, b := items[k], want[k]
		if a.ID != b.ID || string(a.State) != string(b.State) || len(a.Labels) != 3 {
			t.Fatalf("item %d: %+v vs %+v", k, a, b)
		}
		for q, l := range b.Labels {
			if a.Labels[q] != l {
				t.Errorf("item %s %s: %+v, want %+v", a.ID, q, a.Labels[q], l)
			}
		}
	}
	// A value missing from the values map is an error with its line.
	write("cases.jsonl", `{"id": "x", "state": {"message": "m"}, "expect": {"urgency": "extreme"}}`+"\n")
	_, err = Load(np.Path, Options{}.ForSet(set), set)
	if err == nil || !strings.Contains(err.Error(), `cases.jsonl:1: item "x": question "urgency": value "extreme" is not in the dataset mapping's values for this question (high, low, normal, unknown)`) {
		t.Errorf("err = %v", err)
	}
	// A flag wins over the set's mapping for its question.
	opt := Options{LabelFields: map[string]string{"queue": "expect.refund_request"}}.ForSet(set)
	if opt.LabelFields["queue"] != "expect.refund_request" || opt.LabelFields["refund_request"] != "expect.refund_request" {
		t.Errorf("merged %+v", opt.LabelFields)
	}
	if o := (Options{StateField: "x"}).ForSet(set); o.StateField != "x" || !o.fromSet {
		t.Errorf("merged %+v", o)
	}
}
