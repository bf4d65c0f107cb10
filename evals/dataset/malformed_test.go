package dataset

import (
	"errors"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/fixtures"
)

// malformedData are datasets with one kind of mistake each (checked
// against the demo-triage set: refund_request noul; queue choice billing,
// technical, other, unknown; urgency score with 4 levels) and the exact
// message, with file:line[:col], the reader must give.
var malformedData = []struct {
	name, file string
	opt        Options
	in, want   string
}{
	{"invalid json", "d.jsonl", Options{}, `{"id": "a", "state": "x"` + "\n", "d.jsonl:1: invalid JSON: unexpected end of JSON input"},
	{"not object", "d.jsonl", Options{}, `["a"]` + "\n", "d.jsonl:1: each line must be a JSON object like {\"id\": …, \"state\": …, \"labels\": {…}}"},
	{"string line", "d.jsonl", Options{}, `"a"` + "\n", "d.jsonl:1: each line must be a JSON object like {\"id\": …, \"state\": …, \"labels\": {…}}"},
	{"missing id", "d.jsonl", Options{}, `{"state": "x"}` + "\n", "d.jsonl:1: missing \"id\"; every item needs an id (or name the field with --id-field)"},
	{"empty id", "d.jsonl", Options{}, `{"id": "", "state": "x"}` + "\n", "d.jsonl:1: id: is empty; every item needs an id"},
	{"null id", "d.jsonl", Options{}, `{"id": null, "state": "x"}` + "\n", "d.jsonl:1: id: is null; every item needs an id"},
	{"bool id", "d.jsonl", Options{}, `{"id": true, "state": "x"}` + "\n", "d.jsonl:1: id: must be a string or number, not a boolean"},
	{"missing state", "d.jsonl", Options{}, `{"id": "a"}` + "\n", "d.jsonl:1: item \"a\": missing \"state\"; every item needs a state (or name the field with --state-field)"},
	{"state number", "d.jsonl", Options{}, `{"id": "a", "state": 42}` + "\n", "d.jsonl:1: item \"a\": state: must be a string, object or array, not a number"},
	{"state null", "d.jsonl", Options{}, `{"id": "a", "state": null}` + "\n", "d.jsonl:1: item \"a\": state: is null; give a string, object or array"},
	{"state bool", "d.jsonl", Options{}, `{"id": "a", "state": false}` + "\n", "d.jsonl:1: item \"a\": state: must be a string, object or array, not a boolean"},
	{"duplicate id", "d.jsonl", Options{}, `{"id": "a", "state": "x"}` + "\n\n" + `{"id": "b", "state": "y"}` + "\n" + `{"id": "a", "state": "z"}` + "\n", "d.jsonl:4: item \"a\": duplicate id (first at line 1); ids must be unique"},
	{"duplicate numeric id", "d.jsonl", Options{}, `{"id": 7, "state": "x"}` + "\n" + `{"id": "7", "state": "y"}` + "\n", "d.jsonl:2: item \"7\": duplicate id (first at line 1); ids must be unique"},
	{"unknown option", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"queue": "biling"}}` + "\n", "d.jsonl:1: item \"a\": question \"queue\": unknown option \"biling\"; options are billing, technical, other, unknown"},
	{"option case", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"queue": "Billing"}}` + "\n", "d.jsonl:1: item \"a\": question \"queue\": unknown option \"Billing\"; labels are case-sensitive: did you mean \"billing\"?"},
	{"option trailing space", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"queue": "billing "}}` + "\n", "d.jsonl:1: item \"a\": question \"queue\": unknown option \"billing \" (it has leading or trailing space; the option is \"billing\")"},
	{"empty label", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"queue": ""}}` + "\n", "d.jsonl:1: item \"a\": question \"queue\": empty label; use null or leave the question out for an unlabelled item"},
	{"choice number", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"queue": 1}}` + "\n", "d.jsonl:1: item \"a\": question \"queue\": a choice label is an option label (text), not a number"},
	{"level out of range", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"urgency": 4}}` + "\n", "d.jsonl:1: item \"a\": question \"urgency\": level 4 is out of range; the scale has levels 0..3"},
	{"level negative", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"urgency": -1}}` + "\n", "d.jsonl:1: item \"a\": question \"urgency\": level -1 is out of range; the scale has levels 0..3"},
	{"level fraction", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"urgency": 1.5}}` + "\n", "d.jsonl:1: item \"a\": question \"urgency\": level 1.5 is not a whole number; use 0..3"},
	{"level unknown text", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"urgency": "high"}}` + "\n", "d.jsonl:1: item \"a\": question \"urgency\": \"high\" is neither a level index (0..3) nor a level's exact text"},
	{"level bool", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"urgency": true}}` + "\n", "d.jsonl:1: item \"a\": question \"urgency\": a score label is a level index (0..3) or a level's exact text, not a boolean"},
	{"noul maybe", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"refund_request": "maybe"}}` + "\n", "d.jsonl:1: item \"a\": question \"refund_request\": \"maybe\" is not a noul label; use true/false, yes/no or 1/0"},
	{"noul 2", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"refund_request": 2}}` + "\n", "d.jsonl:1: item \"a\": question \"refund_request\": 2 is not a noul label; use true/false, yes/no or 1/0"},
	{"missing question", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"priority": "high"}}` + "\n", "d.jsonl:1: item \"a\": question \"priority\": no such question in the set (questions: refund_request, queue, urgency)"},
	{"labels not object", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": ["billing"]}` + "\n", "d.jsonl:1: item \"a\": labels: must be an object mapping question id to label"},
	{"label flag unknown question", "d.jsonl", Options{LabelFields: map[string]string{"intent": "gold"}}, `{"id": "a", "state": "x"}` + "\n", "d.jsonl: question \"intent\": --label intent=gold: no such question in the set (questions: refund_request, queue, urgency)"},
	{"label field never present", "d.jsonl", Options{LabelFields: map[string]string{"queue": "gold"}}, `{"id": "a", "state": "x"}` + "\n", "d.jsonl: --label queue=gold: no row has a field \"gold\""},
	{"empty file", "d.jsonl", Options{}, "\n\n", "d.jsonl: no items; a dataset needs at least one row"},
	{"two errors one line", "d.jsonl", Options{}, `{"id": "a", "state": "x", "labels": {"queue": "x", "urgency": 9}}` + "\n", "d.jsonl:1: item \"a\": question \"queue\": unknown option \"x\"; options are billing, technical, other, unknown\nd.jsonl:1: item \"a\": question \"urgency\": level 9 is out of range; the scale has levels 0..3"},
	{"csv bad quoting", "d.csv", Options{}, "id,state,queue\na,\"unterminated,billing\n", "d.csv:2:25: invalid CSV: extraneous or missing \" in quoted-field"},
	{"csv bare quote", "d.csv", Options{}, "id,state,queue\na,say \"hi\",billing\n", "d.csv:2:7: invalid CSV: bare \" in non-quoted-field"},
	{"csv field count", "d.csv", Options{}, "id,state,queue\na,x\nb,y,billing\n", "d.csv:2:1: invalid CSV: wrong number of fields; every row needs one field per header column"},
	{"csv no state column", "d.csv", Options{}, "id,text,queue\na,x,billing\n", "d.csv:1: no \"state\" column; name the state column with --state-field (columns: id, text, queue)"},
	{"csv no id column", "d.csv", Options{}, "key,state\na,x\n", "d.csv:1: no \"id\" column; name the id column with --id-field (columns: key, state)"},
	{"csv duplicate column", "d.csv", Options{}, "id,state,state\na,x,y\n", "d.csv:1: duplicate column \"state\" in the header"},
	{"csv unknown option", "d.csv", Options{}, "id,state,queue\na,x,billing\nb,y,shipping\n", "d.csv:3:5: item \"b\": question \"queue\": unknown option \"shipping\"; options are billing, technical, other, unknown"},
	{"csv level out of range", "d.csv", Options{}, "id,state,urgency\na,x,7\n", "d.csv:2:5: item \"a\": question \"urgency\": level 7 is out of range; the scale has levels 0..3"},
	{"csv empty id", "d.csv", Options{}, "id,state\n,x\n", "d.csv:2: id: is empty; every item needs an id"},
	{"csv label column missing", "d.csv", Options{LabelFields: map[string]string{"queue": "gold"}}, "id,state\na,x\n", "d.csv:1: --label queue=gold: no \"gold\" column (columns: id, state)"},
	{"csv duplicate id", "d.csv", Options{}, "id,state\na,x\na,y\n", "d.csv:3: item \"a\": duplicate id (first at line 2); ids must be unique"},
	{"csv header only", "d.csv", Options{}, "id,state\n", "d.csv: no items; a dataset needs at least one row"},
}

func TestMalformedData(t *testing.T) {
	set, err := fixtures.LoadSet(fixtures.DemoTriageSet)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range malformedData {
		t.Run(c.name, func(t *testing.T) {
			var lines []int
			err := Parse(c.file, strings.NewReader(c.in), c.opt, set, func(it Item) error { lines = append(lines, it.Line); return nil })
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if err.Error() != c.want {
				t.Errorf("\n got %q\nwant %q", err.Error(), c.want)
			}
			// Streaming hands over the rows before the first problem, never
			// one at or after it.
			var el ErrorList
			if errors.As(err, &el) && el[0].Line > 0 {
				for _, l := range lines {
					if l >= el[0].Line {
						t.Errorf("fn got the row at line %d, at or after the problem at line %d", l, el[0].Line)
					}
				}
			}
		})
	}
}
