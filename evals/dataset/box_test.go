package dataset

import (
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

func boxLabelSet(t *testing.T) *questionset.Set {
	t.Helper()
	set, err := questionset.Parse("s.yaml", []byte("model: jev-1.14.0\nquestions:\n  mug:\n    type: box\n    instructions: the mug in photo\n  present:\n    type: noul\n    instructions: Is there a mug in photo?\n"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A box label is read from an object, a mapped nested field and a CSV
// cell, into its edges and its canonical text (what the store keeps).
func TestBoxLabels(t *testing.T) {
	set := boxLabelSet(t)
	in := `{"id": "a", "state": "x", "labels": {"mug": {"left": 0.4, "top": 0.25, "right": 0.9, "bottom": 0.8}, "present": true}}` + "\n" +
		`{"id": "b", "state": "y", "labels": {"mug": null}}` + "\n" +
		`{"id": "c", "state": "z", "labels": {"mug": {"top": 0, "bottom": 1, "left": 0, "right": 1}}}` + "\n"
	items, err := parseAll(t, "d.jsonl", in, Options{}, set)
	if err != nil {
		t.Fatal(err)
	}
	l := items[0].Labels["mug"]
	want := provider.Edges{Top: 0.25, Bottom: 0.8, Left: 0.4, Right: 0.9}
	if l.Box == nil || *l.Box != want || l.Index != 0 || l.Text != `{"top":0.25,"bottom":0.8,"left":0.4,"right":0.9}` {
		t.Errorf("label a = %+v (box %v)", l, l.Box)
	}
	if _, ok := items[1].Labels["mug"]; ok {
		t.Errorf("null box label kept: %+v", items[1].Labels)
	}
	if l := items[2].Labels["mug"]; l.Text != `{"top":0,"bottom":1,"left":0,"right":1}` {
		t.Errorf("whole-image label = %q", l.Text)
	}
	// The canonical text resolves to the same box (ResolveLabels reads
	// labels by their text).
	r, has, msg := ResolveLabel(&set.Questions[0].Question, provider.String(l.Text))
	if msg != "" || !has || r.Box == nil || *r.Box != want || r.Text != l.Text {
		t.Errorf("resolve canonical text = %+v, %v, %q", r, has, msg)
	}
	// From the set file's mapping (a nested field).
	opt := Options{LabelFields: map[string]string{"mug": "expect.box"}}
	items, err = parseAll(t, "d.jsonl", `{"id": "a", "state": "x", "expect": {"box": {"top": 0.1, "bottom": 0.2, "left": 0.3, "right": 0.4}}}`+"\n", opt, set)
	if err != nil || items[0].Labels["mug"].Box == nil || items[0].Labels["mug"].Box.Right != 0.4 {
		t.Errorf("mapped box label: %+v, %v", items, err)
	}
	// A CSV cell holds the object as text.
	items, err = parseAll(t, "d.csv", "id,state,mug\na,x,\"{\"\"top\"\": 0.1, \"\"bottom\"\": 0.5, \"\"left\"\": 0.2, \"\"right\"\": 0.6}\"\nb,y,\n", Options{}, set)
	if err != nil || items[0].Labels["mug"].Box == nil || *items[0].Labels["mug"].Box != (provider.Edges{Top: 0.1, Bottom: 0.5, Left: 0.2, Right: 0.6}) {
		t.Errorf("CSV box label: %+v, %v", items, err)
	}
	if len(items) == 2 {
		if _, ok := items[1].Labels["mug"]; ok {
			t.Error("an empty CSV cell is a box label")
		}
	}
	if ts := BoxLabelText(provider.Edges{Top: 0.1, Bottom: 0.30000000000000004, Left: 0, Right: 1}); ts != `{"top":0.1,"bottom":0.30000000000000004,"left":0,"right":1}` {
		t.Errorf("BoxLabelText = %s", ts)
	}
}

// Every bad box label fails its row with file:line, item, question and
// what to write instead.
func TestBoxLabelErrors(t *testing.T) {
	set := boxLabelSet(t)
	for _, c := range []struct{ name, label, want string }{
		{"string", `"mug"`, `a box label is an object, not text; write it as {"top": 0.1`},
		{"number", `0.5`, `a box label is an object, not a number`},
		{"array", `[0.1, 0.2, 0.3, 0.4]`, `a box label is an object, not an array`},
		{"missing edge", `{"top": 0.1, "bottom": 0.2, "left": 0.3}`, `box label is missing [right]`},
		{"text edge", `{"top": "0.1", "bottom": 0.2, "left": 0.3, "right": 0.4}`, `box top is text, not a number`},
		{"above one", `{"top": 0.1, "bottom": 1.5, "left": 0.3, "right": 0.4}`, `box bottom 1.5 is outside [0, 1]; edges are fractions of the image (divide pixels by its width or height)`},
		{"pixels", `{"top": 10, "bottom": 200, "left": 30, "right": 400}`, `box top 10 is outside [0, 1]`},
		{"negative", `{"top": -0.1, "bottom": 0.2, "left": 0.3, "right": 0.4}`, `box top -0.1 is outside [0, 1]`},
		{"reversed vertical", `{"top": 0.8, "bottom": 0.2, "left": 0.3, "right": 0.4}`, `box top 0.8 is below its bottom 0.2 (top ≤ bottom, measured down from the image's top); swap them`},
		{"reversed horizontal", `{"top": 0.1, "bottom": 0.2, "left": 0.9, "right": 0.4}`, `box left 0.9 is right of its right 0.4 (left ≤ right); swap them`},
		{"unknown field", `{"top": 0.1, "bottom": 0.2, "left": 0.3, "right": 0.4, "width": 0.1}`, `box label has an unknown field "width"`},
		{"flat with box key", `{"box": {"top": 0.1, "bottom": 0.2, "left": 0.3, "right": 0.4}}`, `box label is missing [top bottom left right]`},
	} {
		in := `{"id": "ok", "state": "x"}` + "\n" + `{"id": "it-7", "state": "x", "labels": {"mug": ` + c.label + `}}` + "\n"
		_, err := parseAll(t, "d.jsonl", in, Options{}, set)
		prefix := `d.jsonl:2: item "it-7": question "mug": `
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant %s…%s", c.name, err, prefix, c.want)
		}
	}
	// KeepStale does not keep a malformed box label: it is wrong in the
	// file, not made wrong by an edit of the set.
	_, err := parseAll(t, "d.jsonl", `{"id": "a", "state": "x", "labels": {"mug": {"top": 2}}}`+"\n", Options{KeepStale: true}, set)
	if err == nil {
		t.Error("KeepStale kept a malformed box label")
	}
	// A noul label on the box question and a box label on the noul.
	_, err = parseAll(t, "d.jsonl", `{"id": "a", "state": "x", "labels": {"present": {"top": 0.1, "bottom": 0.2, "left": 0.3, "right": 0.4}}}`+"\n", Options{}, set)
	if err == nil || !strings.Contains(err.Error(), `question "present"`) {
		t.Errorf("box label on a noul: %v", err)
	}
}
