package standin_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
)

// TestSyntheticHandComputed pins synthetic answers to values computed by
// hand from the documented formula (beta = 4).
func TestSyntheticHandComputed(t *testing.T) {
	s := newServer(t, standin.Config{Synthetic: true})
	tests := []struct {
		name, state, question, want string
	}{
		// No overlap and no "false" criterion: sigmoid(4·(0 − 0.25)) = 0.2689.
		{"noul baseline", `"x y"`, `{"type":"noul","instructions":"zzz"}`,
			`{"type":"noul","noul":0.27}`},
		// Nothing overlaps: uniform, first option chosen, confidence 0.
		{"choice uniform", `"gamma delta"`, `{"type":"choice","criteria":{"alpha":null,"beta":null}}`,
			`{"type":"choice","choice":"alpha","confidence":0.0,"probabilities":{"alpha":0.5,"beta":0.5}}`},
		// refund: 2/sqrt(2) = 1.414; e^(4·1.414) = 286.0; p = 286/287 = 0.9965;
		// confidence (0.9965 − 0.5)/0.5 = 0.993.
		{"choice overlap", `"refund please"`, `{"type":"choice","criteria":{"refund":null,"other":null}}`,
			`{"type":"choice","choice":"refund","confidence":0.99,"probabilities":{"refund":1.0,"other":0.0}}`},
		// level 1: 1/sqrt(2) = 0.707; e^2.828 = 16.92; p1 = 16.92/18.92 = 0.894,
		// p0 = p2 = 0.0529; score = 1.0; confidence 1 − 0.1057/(2/3) = 0.841.
		{"score overlap", `{"msg":"angry"}`, `{"type":"score","criteria":["calm","angry customer",{"what":"furious"}]}`,
			`{"type":"score","score":1.0,"confidence":0.84,"legend":{"0":"calm","1":"angry customer","2":{"what":"furious"}},"probabilities":{"0":0.05,"1":0.89,"2":0.05}}`},
		// Uniform thirds: 33+33+33 = 0.99, score 1.0, confidence clipped to 0.
		{"score uniform", `"nothing"`, `{"type":"score","criteria":["a1","b2","c3"]}`,
			`{"type":"score","score":1.0,"confidence":0.0,"legend":{"0":"a1","1":"b2","2":"c3"},"probabilities":{"0":0.33,"1":0.33,"2":0.33}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"jev-latest","state":` + tt.state + `,"questions":{"q":` + tt.question + `}}`
			code, _, got := post(t, s, body)
			if code != 200 {
				t.Fatalf("status %d: %s", code, got)
			}
			model, answers := answersOf(t, got)
			_, want := answersOf(t, []byte(`{"answers":{"q":`+tt.want+`}}`))
			if model != standin.SyntheticModel {
				t.Errorf("model %q", model)
			}
			if !jsonEqual(answers["q"], want["q"]) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

type b77item struct {
	state json.RawMessage
	gold  string
}

// banking77 returns the recorded banking77 question set and its 500 states
// with gold labels.
func banking77(t testing.TB) (provider.Questions, []b77item) {
	t.Helper()
	dir := testutil.Testdata(t, "banking77")
	raw, err := os.ReadFile(filepath.Join(dir, "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs provider.Questions
	if err := json.Unmarshal(raw, &qs); err != nil {
		t.Fatal(err)
	}
	var items []b77item
	testutil.EachLine(t, filepath.Join(dir, "dataset.source.jsonl"), func(_ int, data []byte) bool {
		var row struct {
			Text string `json:"text"`
			Gold string `json:"gold_label"`
		}
		if err := json.Unmarshal(data, &row); err != nil {
			t.Fatal(err)
		}
		items = append(items, b77item{state: provider.String(row.Text), gold: row.Gold})
		return true
	})
	return qs, items
}

// TestSyntheticContract sends the 500 Banking77 states with the 77-way
// choice plus a score and a noul: every answer passes provider.Check, sums
// lie in [0.99, 1.00], the model is a stand-in's, the same request gives
// the same bytes on another server with the same seed, and the key order of
// probabilities is not the request's.
func TestSyntheticContract(t *testing.T) {
	qs, items := banking77(t)
	qs = append(qs,
		provider.QuestionEntry{ID: "urgency", Question: provider.Question{Type: provider.Score, Instructions: provider.String("How urgent?"),
			Levels: []json.RawMessage{provider.String("no hurry"), provider.String("soon"), provider.String("urgent card blocked now")}}},
		provider.QuestionEntry{ID: "lost", Question: provider.Question{Type: provider.Noul, Instructions: provider.String("Is a card lost or stolen?"),
			Options: []provider.Option{{Label: "true", Description: provider.String("lost stolen card")}, {Label: "false", Description: provider.String("anything else")}}}},
	)
	a := newServer(t, standin.Config{Synthetic: true, Seed: 7})
	b := newServer(t, standin.Config{Synthetic: true, Seed: 7})
	correct, reordered := 0, 0
	for i, it := range items {
		req := &provider.Request{Model: "jev-latest", State: it.state, Questions: qs}
		body, _ := json.Marshal(req)
		code, _, got := post(t, a, string(body))
		if code != 200 {
			t.Fatalf("item %d: status %d: %s", i, code, got)
		}
		if _, _, again := post(t, b, string(body)); !bytes.Equal(got, again) {
			t.Fatalf("item %d: two servers with the same seed answered differently:\n%s\n%s", i, got, again)
		}
		var resp provider.Response
		if err := json.Unmarshal(got, &resp); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(resp.Model, "standin-") {
			t.Fatalf("model %q", resp.Model)
		}
		answers, err := provider.Check(req, &resp)
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		for _, an := range answers {
			if an.Type == provider.Noul {
				continue
			}
			sum := 0.0
			for _, p := range an.Probs {
				sum += p
			}
			if sum < 0.99-1e-9 || sum > 1+1e-9 {
				t.Fatalf("item %d %s: sum %v", i, an.ID, sum)
			}
			if an.Type == provider.Choice && an.Probs[qs[0].Question.OptionIndex(an.Choice)] < maxOf(an.Probs)-0.011 {
				t.Errorf("item %d: choice %s is not the argmax", i, an.Choice)
			}
		}
		if answers[0].Choice == it.gold {
			correct++
		}
		if !bytes.Contains(resp.Answers["intent"], []byte(`"probabilities":{"activate_my_card":`)) {
			reordered++
		}
	}
	acc := float64(correct) / float64(len(items))
	t.Logf("synthetic Banking77 accuracy %.3f (chance 0.013); %d/%d answers with shuffled keys", acc, reordered, len(items))
	if acc < 0.05 {
		t.Errorf("synthetic accuracy %.3f: lexical overlap should beat chance (0.013) clearly", acc)
	}
	if reordered < len(items)*9/10 {
		t.Errorf("only %d of %d answers shuffled the probability keys", reordered, len(items))
	}
}

func maxOf(ps []float64) float64 {
	m := math.Inf(-1)
	for _, p := range ps {
		m = math.Max(m, p)
	}
	return m
}

// TestSyntheticSeedOnlyMovesKeyOrder: another seed reorders keys but keeps
// every value.
func TestSyntheticSeedOnlyMovesKeyOrder(t *testing.T) {
	body := `{"model":"m","state":"card lost abroad","questions":{"c":{"type":"choice","criteria":{"lost":null,"abroad":null,"card":null,"fee":null,"pin":null,"atm":null}}}}`
	_, _, x := post(t, newServer(t, standin.Config{Synthetic: true, Seed: 1}), body)
	_, _, y := post(t, newServer(t, standin.Config{Synthetic: true, Seed: 2}), body)
	if bytes.Equal(x, y) {
		t.Errorf("seeds 1 and 2 gave identical bytes; the key order should differ")
	}
	_, ax := answersOf(t, x)
	_, ay := answersOf(t, y)
	if !jsonEqual(ax, ay) {
		t.Errorf("values differ between seeds:\n%s\n%s", x, y)
	}
}

// BenchmarkStandinSynthetic measures one synthetic answer to the 8-question,
// ~3.8 KB request of BenchmarkClientOverhead through ServeHTTP: "repeat"
// sends the same bytes (the response cache answers), "fresh" a new state
// every time (decode, validate, tokenise, answer).
func BenchmarkStandinSynthetic(b *testing.B) {
	req := benchRequest()
	body, _ := json.Marshal(req)
	s, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("request %d bytes, %d questions", len(body), len(req.Questions))
	b.Run("repeat", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if code, _, _ := post(b, s, string(body)); code != 200 {
				b.Fatal(code)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		// A new state per request, spliced in without re-encoding, so only
		// the server's work is timed.
		req.State = provider.String("My card payment was declined at the shop, ticket #")
		tmpl, _ := json.Marshal(req)
		cut := bytes.Index(tmpl, []byte(`#"`)) + 1
		buf := make([]byte, 0, len(tmpl)+20)
		b.ReportAllocs()
		b.SetBytes(int64(len(tmpl)))
		i := 0
		for b.Loop() {
			i++
			buf = append(strconv.AppendInt(append(buf[:0], tmpl[:cut]...), int64(i), 10), tmpl[cut:]...)
			if code, _, _ := post(b, s, string(buf)); code != 200 {
				b.Fatal(code)
			}
		}
	})
}

// benchRequest builds the ~3.8 KB benchmark request: a choice over 22
// options, a choice over 15, two scores and four nouls.
func benchRequest() *provider.Request {
	opts := func(n int, prefix string) []provider.Option {
		out := make([]provider.Option, n)
		for i := range out {
			out[i] = provider.Option{Label: prefix + strconv.Itoa(i),
				Description: provider.String("Customer asks about " + prefix + " topic number " + strconv.Itoa(i) + " and related issues")}
		}
		return out
	}
	levels := func(n int) []json.RawMessage {
		out := make([]json.RawMessage, n)
		for i := range out {
			out[i] = provider.String("level " + strconv.Itoa(i) + ": how strongly the message shows it")
		}
		return out
	}
	qs := provider.Questions{
		{ID: "intent", Question: provider.Question{Type: provider.Choice, Instructions: provider.String("Which intent does the message express?"), Options: opts(22, "intent_")}},
		{ID: "product", Question: provider.Question{Type: provider.Choice, Instructions: provider.String("Which product is it about?"), Options: opts(15, "product_")}},
		{ID: "urgency", Question: provider.Question{Type: provider.Score, Instructions: provider.String("How urgent is it?"), Levels: levels(4)}},
		{ID: "frustration", Question: provider.Question{Type: provider.Score, Instructions: provider.String("How frustrated is the customer?"), Levels: levels(5)}},
	}
	for _, n := range []string{"refund", "fraud", "complaint", "escalate"} {
		qs = append(qs, provider.QuestionEntry{ID: n, Question: provider.Question{Type: provider.Noul,
			Instructions: provider.String("Does the message ask for or show " + n + "?"),
			Options:      []provider.Option{{Label: "true", Description: provider.String("clearly " + n)}, {Label: "false", Description: provider.String("no sign of " + n)}}}})
	}
	return &provider.Request{Model: "jev-latest", State: provider.String("My card payment was declined at the shop and I need a refund today."), Questions: qs}
}
