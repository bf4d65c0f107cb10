package dialects

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/questionset"
)

// Real share links from TypeSafe's published documentation decode to the
// JSON npm lz-string 1.5.0 decodes them to (testdata/playground/gen.js).
func TestDecodeRealLinks(t *testing.T) {
	for _, name := range []string{"intent-routing", "insurance-claim", "entity-pair", "skill-shortlist"} {
		t.Run(name, func(t *testing.T) {
			link := strings.TrimSpace(string(readFile(t, "playground/"+name+".link")))
			want := readFile(t, "playground/"+name+".decoded.json")
			got, err := DecodeShare(link)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("decoded\n got %.200s\nwant %.200s", got, want)
			}
			// The bare payload decodes the same.
			bare, err := DecodeShare(link[strings.Index(link, "#share/")+7:])
			if err != nil || string(bare) != string(want) {
				t.Fatalf("bare payload: %v", err)
			}
		})
	}
}

func TestImportRealLinks(t *testing.T) {
	t.Run("intent-routing (/decode path, no state, no selectedModels)", func(t *testing.T) {
		im, err := Import(Playground, "link", readFile(t, "playground/intent-routing.link"))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"model":"jev-latest","state":null,"questions":{` +
			`"intent":{"type":"choice","instructions":"The primary intent of this customer message","criteria":{"order_status":"Asking about an existing order","product_question":"Asking about a product before buying","return_exchange":"Wants to return or exchange something","complaint":"Unhappy with experience, wants resolution"}},` +
			`"complexity":{"type":"score","instructions":"How complex is this request to resolve","criteria":["Simple lookup or standard procedure","Requires some judgment or multi-step process","Unusual situation, edge case, or escalation needed"]}}}`
		if got := wire(t, im.Set); got != want {
			t.Errorf("wire\n got %s\nwant %s", got, want)
		}
		if im.Set.Model != "" || im.Set.State != nil || len(im.Notes) != 0 {
			t.Errorf("model %q state %s notes %q", im.Set.Model, im.Set.State, im.Notes)
		}
		checkFileRoundTrip(t, im, Playground)
	})
	t.Run("insurance-claim (/playground path, structured documentText)", func(t *testing.T) {
		im, err := Import(Playground, "link", readFile(t, "playground/insurance-claim.link"))
		if err != nil {
			t.Fatal(err)
		}
		s := im.Set
		if s.Model != "jev-latest" {
			t.Errorf("model %q", s.Model)
		}
		// documentText is JSON text: it becomes the structured state.
		var state struct {
			Claim struct {
				Claim struct {
					ClaimID string `json:"claim_id"`
				} `json:"claim"`
			} `json:"claim"`
		}
		if err := json.Unmarshal(s.State, &state); err != nil || state.Claim.Claim.ClaimID != "CLM-55029" {
			t.Errorf("state %.80s: %v", s.State, err)
		}
		ids := s.Questions.IDs()
		if len(ids) != 14 || ids[0] != "covered" || ids[1] != "exclusion" || ids[2] != "on_circuit" {
			t.Errorf("questions %v, want 14 starting covered, exclusion, on_circuit", ids)
		}
		for _, e := range s.Questions {
			if e.Question.Type != "noul" {
				t.Errorf("%s: type %s", e.ID, e.Question.Type)
			}
		}
		checkFileRoundTrip(t, im, Playground)
	})
}

func TestImportMoreRealLinks(t *testing.T) {
	cases := []struct {
		file, model, ids, stateKeys string
	}{
		{"entity-pair", "jev-1.12", "link_state,same_name,same_brewery,same_style", "entity_a,entity_b"},
		{"skill-shortlist", "jev-1.12", "which,fits::powerpoint,fits::pptx-author,fits::chroma", "request,recent_context"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			im, err := Import(Playground, "link", readFile(t, "playground/"+c.file+".link"))
			if err != nil {
				t.Fatal(err)
			}
			if im.Set.Model != c.model {
				t.Errorf("model %q, want %q", im.Set.Model, c.model)
			}
			if got := strings.Join(im.Set.Questions.IDs(), ","); got != c.ids {
				t.Errorf("questions %s, want %s", got, c.ids)
			}
			var keys []string
			o, err := (&importer{}).parseObject("", im.Set.State)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range o.fields {
				keys = append(keys, f.Key)
			}
			if got := strings.Join(keys, ","); got != c.stateKeys {
				t.Errorf("state keys %s, want %s (in documentText order)", got, c.stateKeys)
			}
			checkFileRoundTrip(t, im, Playground)
		})
	}
}

func TestDocumentState(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"  \n", ""},
		{"plain text", `"plain text"`},
		{`{"a": [1, 2.0]}`, `{"a":[1,2.0]}`},
		{` [ "x" ] `, `["x"]`},
		{`{not json`, `"{not json"`},
		{`42`, `"42"`},
		{`"quoted"`, `"\"quoted\""`},
	}
	for _, c := range cases {
		if got := string(documentState(c.in)); got != c.want {
			t.Errorf("documentState(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Export builds the link the Playground's own builder makes: the expected
// links were computed by npm lz-string from the wire requests
// (testdata/playground/gen.js), independently of this package.
func TestExportMatchesPlaygroundBuilder(t *testing.T) {
	var pairs []struct {
		Request json.RawMessage `json:"request"`
		Link    string          `json:"link"`
	}
	if err := json.Unmarshal(readFile(t, "playground/export-links.json"), &pairs); err != nil {
		t.Fatal(err)
	}
	if len(pairs) < 2 {
		t.Fatal("too few pairs")
	}
	for i, p := range pairs {
		set, err := questionset.Parse("request.json", p.Request)
		if err != nil {
			t.Fatal(err)
		}
		sh, notes, err := ShareFor(set)
		if err != nil {
			t.Fatal(err)
		}
		if len(notes) != 0 {
			t.Errorf("pair %d: notes %q", i, notes)
		}
		if got := sh.Link(); got != p.Link {
			gotJSON, _ := sh.MarshalJSON()
			wantJSON, _ := DecodeShare(p.Link)
			t.Errorf("pair %d: link differs\n got %s\nwant %s", i, gotJSON, wantJSON)
		}
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	set, err := questionset.Parse("s.yaml", []byte(`name: rt
model: jev-1.13.0
state: {ticket: "charged twice <b>"}
questions:
  refund:
    type: noul
    instructions: Does it ask for a refund?
    threshold: 0.7
  team:
    type: choice
    instructions: Which team?
    criteria: {billing: null, orders: {what: delivery}}
    min_confidence: 0.4
`))
	if err != nil {
		t.Fatal(err)
	}
	sh, notes, err := ShareFor(set)
	if err != nil {
		t.Fatal(err)
	}
	wantNotes := []string{
		`question "refund": threshold 0.7 is caller-side and has no place in a Playground share`,
		`question "team": min_confidence 0.4 is caller-side and has no place in a Playground share`,
	}
	if strings.Join(notes, "\n") != strings.Join(wantNotes, "\n") {
		t.Errorf("notes %q", notes)
	}
	if sh.DocumentText != "{\n  \"ticket\": \"charged twice <b>\"\n}" {
		t.Errorf("documentText %q", sh.DocumentText)
	}
	im, err := Import(Playground, "link", []byte(sh.Link()))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := wire(t, im.Set), wire(t, set); g != w {
		t.Errorf("round trip\n got %s\nwant %s", g, w)
	}
}

func TestShareForJSONLikeTextState(t *testing.T) {
	set, err := questionset.Parse("s.yaml", []byte("state: '{\"a\": 1}'\nquestions:\n  q: {type: noul}\n"))
	if err != nil {
		t.Fatal(err)
	}
	sh, notes, err := ShareFor(set)
	if err != nil {
		t.Fatal(err)
	}
	if sh.DocumentText != `{"a": 1}` || len(notes) != 1 || !strings.Contains(notes[0], "reads as JSON") {
		t.Errorf("documentText %q notes %q", sh.DocumentText, notes)
	}
}

func TestShareForRejectsInvalid(t *testing.T) {
	_, _, err := ShareFor(&questionset.Set{})
	if err == nil || err.Error() != "the set has no questions to share" {
		t.Errorf("error %v", err)
	}
}

func TestSelectedModelsNote(t *testing.T) {
	link := Share{APIVersion: "v1", DocumentText: "x", PromptsText: `{"q":{"type":"noul"}}`, SelectedModels: []string{"jev-1.13.0", "jev-1.14.0"}}.Link()
	im, err := Import(Playground, "link", []byte(link))
	if err != nil {
		t.Fatal(err)
	}
	want := "the share selects 2 models (jev-1.13.0, jev-1.14.0); a question set names one model, so this set uses jev-1.13.0: evaluate the others with --model."
	if im.Set.Model != "jev-1.13.0" || len(im.Notes) != 1 || im.Notes[0] != want {
		t.Errorf("model %q notes %q", im.Set.Model, im.Notes)
	}
	if string(im.Set.State) != `"x"` {
		t.Errorf("state %s", im.Set.State)
	}
}

func FuzzImport(f *testing.F) {
	for _, c := range failCases {
		f.Add(string(c.dialect), c.input)
	}
	f.Add(string(Noetic), `{"kind":"routeSwitch","decide":{"kind":"decide","questions":{"b":{"type":"boolean","instructions":"x"}}},"on":"b","cases":{"true":1}}`)
	f.Add(string(Noetic), "kind: decide\nquestions:\n  t: {type: score, levels: [{label: a}, b]}\n  c: {type: choice, choices: [x, y]}\n")
	f.Add(string(StandardAgents), "questions: &q\n  a: {type: boolean, instructions: [*q]}\n")
	f.Fuzz(func(t *testing.T, d, in string) {
		im, err := Import(Dialect(d), "fuzz", []byte(in))
		if err != nil {
			return
		}
		out, err := im.Marshal(Dialect(d), "fuzz")
		if err != nil {
			t.Fatalf("marshal after a successful import: %v", err)
		}
		if _, err := questionset.Parse("imported.yaml", out); err != nil {
			t.Fatalf("a successful import wrote a file that does not load: %v\n%s", err, out)
		}
	})
}

// BenchmarkImportPlaygroundLink decodes and imports a real 14-question
// share link with a structured state.
func BenchmarkImportPlaygroundLink(b *testing.B) {
	link, err := os.ReadFile("testdata/playground/insurance-claim.link")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Import(Playground, "link", link); err != nil {
			b.Fatal(err)
		}
	}
}
