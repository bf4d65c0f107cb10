package lint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
)

// Every shipped example lints without errors (warnings are allowed: the
// demo-triage urgency ladder really has a "Cannot tell" level).
func TestShippedExamplesHaveNoErrors(t *testing.T) {
	root := testutil.RepoRoot(t)
	sets, err := filepath.Glob(filepath.Join(root, "fixtures", "*", "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) == 0 {
		t.Fatal("no shipped examples found under fixtures/")
	}
	for _, p := range sets {
		t.Run(filepath.Base(filepath.Dir(p)), func(t *testing.T) {
			fs, err := LintFile(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				if f.Severity == SeverityError {
					t.Errorf("%s", f)
				}
			}
		})
	}
}

// The demo-triage example's known issue is reported, and only it.
func TestDemoTriageWarning(t *testing.T) {
	p := filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage", "questions.yaml")
	if _, err := os.Stat(p); err != nil {
		t.Skip("demo-triage example not present")
	}
	fs, err := LintFile(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(fs)
	want := []string{"warning non-ordinal-level urgency"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings %q, want %q", got, want)
	}
}

func summarize(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%s %s %s", f.Severity, f.ID, f.Question)
	}
	return out
}

// A file seeded with one trigger per warning reports exactly those ids, at
// the positions of the triggers.
func TestSeededFile(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/seeded/questions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/seeded/dataset.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// One item with a ~140 kB state: state + the longest question is over
	// 32k tokens at bytes/4, the whole request under 64k.
	big, _ := json.Marshal(map[string]any{"id": "big", "state": map[string]any{"ticket": map[string]any{
		"messages": []any{map[string]string{"text": strings.Repeat("long complaint ", 140000/15)}}}}})
	data = append(data, big...)
	data = append(data, '\n')
	set := filepath.Join(dir, "questions.yaml")
	if err := os.WriteFile(set, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dataset.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := LintFile(set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%d:%d %s %s %s", f.Line, f.Col, f.Severity, f.ID, f.Question))
		if f.File != set || f.Fix == "" || f.Message == "" {
			t.Errorf("finding without file, fix or message: %+v", f)
		}
	}
	// Positions counted by hand in testdata/seeded/questions.yaml.
	want := []string{
		"8:3 warning token-budget team",           // team: the longest question
		"11:5 warning no-catch-all team",          // criteria:
		"13:7 warning duplicate-description team", // payments:
		"18:40 warning non-ordinal-level mood",    // Unknown
		"21:5 warning unresolved-path refund",     // instructions: `ticket.mesages[0].text`
		"23:7 warning negated-true refund",        // "true": The customer does not …
		"26:5 warning numeric-task items",         // How many
		"29:5 warning double-negative lost",       // not unlikely
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ids := map[string]bool{}
	for _, f := range fs {
		ids[f.ID] = true
	}
	for _, r := range Rules() {
		if !ids[r.ID] {
			t.Errorf("the seeded file does not trigger %s", r.ID)
		}
	}
	for _, f := range fs {
		if f.ID == IDTokenBudget && !strings.Contains(f.Message, "approximately") {
			t.Errorf("token budget message does not say it is approximate: %s", f.Message)
		}
		if f.ID == IDTokenBudget && !strings.Contains(f.Message, `dataset item "big"`) {
			t.Errorf("token budget message does not name the item: %s", f.Message)
		}
	}
}

// Errors carry file:line:col from the loaders.
func TestErrorLocations(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	set := write("bad.yaml", `name: bad
state: hello
questions:
  team:
    type: choice
    criteria:
      only: null
`)
	fs, err := LintFile(set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 {
		t.Fatalf("findings %v", fs)
	}
	f := fs[0]
	if f.ID != IDSchema || f.Severity != SeverityError || f.File != set || f.Line == 0 || f.Col == 0 || f.Question != "team" {
		t.Errorf("finding %+v", f)
	}
	if !strings.HasPrefix(f.String(), fmt.Sprintf("%s:%d:%d: error[schema]: question \"team\": ", set, f.Line, f.Col)) {
		t.Errorf("String() = %s", f)
	}
	if f.Line != 6 {
		t.Errorf("line %d, want 6 (criteria:)", f.Line)
	}

	good := write("good.yaml", `name: good
state: {ticket: "x"}
questions:
  team:
    type: choice
    criteria: {billing: null, other: null}
dataset: data.jsonl
`)
	write("data.jsonl", `{"id": "1", "state": "a", "labels": {"team": "billing"}}
{"id": "2", "state": "b", "labels": {"team": "shipping"}}
{"id": "3", "state": "c", "labels": {"nope": "billing"}}
{"id": "4", "state": "d", "labels": {"team": 7}}
`)
	fs, err = LintFile(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A label naming no option (or a question the set no longer has) is
	// stale: a located warning, excluded by eval with the same sentence.
	// A label of the wrong kind is an error.
	var lines []string
	for _, f := range fs {
		if f.File != filepath.Join(dir, "data.jsonl") {
			t.Errorf("file %s", f.File)
		}
		lines = append(lines, fmt.Sprintf("%d %s %s %s", f.Line, f.Question, f.ID, f.Severity))
	}
	if got := strings.Join(lines, ","); got != "4 team dataset error,2 team stale-label warning,3 nope stale-label warning" {
		t.Errorf("dataset findings %q", got)
	}
	if !HasErrors(fs) {
		t.Error("HasErrors false")
	}
	for _, f := range fs {
		if f.Line == 2 && !strings.Contains(f.Message, `item 2: team="shipping": "shipping" is not an option of team`) {
			t.Errorf("stale message %q", f.Message)
		}
	}

	fs, err = LintFile(good, Options{Data: filepath.Join(dir, "missing.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].ID != IDDataset || !strings.Contains(fs[0].Message, "missing.jsonl") {
		t.Errorf("missing dataset: %v", fs)
	}
	fs, err = LintFile(good, Options{NoData: true})
	if err != nil || len(fs) != 0 {
		t.Errorf("NoData: %v %v", fs, err)
	}
	if _, err := LintFile(filepath.Join(dir, "nope.yaml"), Options{}); err == nil {
		t.Error("unreadable file: no error")
	}
}

// ruleCase is one question (with a working state) and the warning ids it
// must produce: the negative cases guard against false positives.
type ruleCase struct {
	name  string
	state string // YAML
	q     string // YAML of one question named q
	want  string // comma-separated ids, "" for none
}

var ruleCases = []ruleCase{
	// no-catch-all
	{"choice without catch-all", `x`, `{type: choice, criteria: {a: null, b: null}}`, "no-catch-all"},
	{"label other_issue", `x`, `{type: choice, criteria: {a: null, other_issue: null}}`, ""},
	{"label None", `x`, `{type: choice, criteria: {a: null, None: null}}`, ""},
	{"label n/a", `x`, `{type: choice, criteria: {a: null, n/a: null}}`, ""},
	{"label not-mentioned", `x`, `{type: choice, criteria: {jan: null, not-mentioned: null}}`, ""},
	{"label unknown", `x`, `{type: choice, criteria: {a: null, unknown: null}}`, ""},
	{"description anything else", `x`, `{type: choice, criteria: {a: null, general: "Docs, praise or anything else."}}`, ""},
	{"label nonetheless is not none", `x`, `{type: choice, criteria: {a: null, nonetheless: null}}`, "no-catch-all"},
	// non-ordinal-level
	{"level N/A", `x`, `{type: score, criteria: [low, N/A, high]}`, "non-ordinal-level"},
	{"level not applicable (structured)", `x`, `{type: score, criteria: [low, high, {summary: "Not applicable here"}]}`, "non-ordinal-level"},
	{"level insufficient information", `x`, `{type: score, criteria: [Insufficient information to judge, low, high]}`, "non-ordinal-level"},
	{"level Unclear alone", `x`, `{type: score, criteria: [Unclear, low, high]}`, "non-ordinal-level"},
	{"clarity ladder bottom", `x`, `{type: score, criteria: ["Unclear request, needs clarification", Mostly clear, Clear]}`, ""},
	{"level None of the details", `x`, `{type: score, criteria: ["None of the claim's details appear", Some, All]}`, ""},
	{"level Not at all", `x`, `{type: score, criteria: [Not at all, Somewhat, Very]}`, ""},
	{"level Narrow", `x`, `{type: score, criteria: [Narrow, Wide]}`, ""},
	// duplicate-description
	{"same option text up to case and spaces", `x`, `{type: choice, criteria: {a: "Same  text", b: "same text", other: null}}`, "duplicate-description"},
	{"null descriptions are not duplicates", `x`, `{type: choice, criteria: {a: null, b: null, other: null}}`, ""},
	{"same structured descriptions", `x`, `{type: choice, criteria: {a: {what: x}, b: {what: x}, other: null}}`, "duplicate-description"},
	{"duplicate levels", `x`, `{type: score, criteria: [low, low, high]}`, "duplicate-description"},
	// negated-true
	{"true with negation", `x`, `{type: noul, criteria: {"true": "No refund is requested"}}`, "negated-true"},
	{"structured true with negation", `x`, `{type: noul, criteria: {"true": {what: "doesn't ask for money"}}}`, "negated-true"},
	{"negation after the first clause", `x`, `{type: noul, criteria: {"true": "asks for money back, not just an apology"}}`, ""},
	{"negated question", `x`, `{type: noul, instructions: "Is the message not about billing?"}`, "negated-true"},
	{"isn't question", `x`, `{type: noul, instructions: "Isn't this spam?"}`, "negated-true"},
	{"positive question with or not", `x`, `{type: noul, instructions: "Does the customer ask for a refund, or not?"}`, ""},
	{"positive question mentioning nothing", `x`, `{type: noul, instructions: "Does the message mention a refund?"}`, ""},
	{"is there no", `x`, `{type: noul, instructions: "Is there no price in the message?"}`, "negated-true"},
	{"is there any", `x`, `{type: noul, instructions: "Is there any price in the message?"}`, ""},
	{"without in a positive criterion", `x`, `{type: noul, instructions: "Is the parcel intact?", criteria: {"true": "Delivered without damage"}}`, ""},
	{"knot is not not", `x`, `{type: noul, criteria: {"true": "ties a knot"}}`, ""},
	// unresolved-path
	{"dotted path resolves", `{ticket: {messages: [{text: hi}]}}`, `{type: noul, instructions: "Is ` + "`ticket.messages[0].text`" + ` rude?"}`, ""},
	{"path relative to a nested object", `{claim: {policy: {deductible: 500}}}`, `{type: noul, instructions: "Is ` + "`policy.deductible`" + ` high?"}`, ""},
	{"index out of range", `{ticket: {messages: [{text: hi}]}}`, `{type: noul, instructions: "Is ` + "`ticket.messages[1].text`" + ` rude?"}`, "unresolved-path"},
	{"typo in a key", `{ticket: {message: hi}}`, `{type: noul, instructions: "Is ` + "`ticket.mesage`" + ` rude?"}`, "unresolved-path"},
	{"single identifier not a key, object state", `{quote: q}`, `{type: noul, instructions: "Does ` + "`claim`" + ` hold?"}`, "unresolved-path"},
	{"single identifier, text state", `just text`, `{type: noul, instructions: "Does ` + "`claim`" + ` hold?"}`, ""},
	{"dotted path, text state", `just text`, `{type: noul, instructions: "Is ` + "`ticket.message`" + ` rude?"}`, ""},
	{"single identifier nested key", `{a: {claim: c}}`, `{type: noul, instructions: "Does ` + "`claim`" + ` hold?"}`, ""},
	{"not path-like words", `{a: b}`, `{type: noul, instructions: "Is the order ` + "`A-104`" + ` or ` + "`charged twice`" + ` or ` + "`true`" + ` or ` + "`1.5`" + `?"}`, ""},
	{"key of the instructions object", `{source_text: s}`, `{type: noul, instructions: {field: f, extracted_value: "4471", question: "Does ` + "`extracted_value`" + ` match ` + "`field`" + ` in ` + "`source_text`" + `?"}}`, ""},
	{"option label in backticks", `{a: b}`, `{type: choice, instructions: "Pick ` + "`billing`" + ` for charges", criteria: {billing: null, other: null}}`, ""},
	{"path in a criterion", `{a: b}`, `{type: choice, criteria: {billing: "when ` + "`ticket.amount`" + ` is set", other: null}}`, "unresolved-path"},
	// numeric-task / double-negative
	{"how many", `x`, `{type: noul, instructions: "How many refunds are requested? More than one?"}`, "numeric-task"},
	{"a number of is not counting", `x`, `{type: noul, instructions: "Does the message mention a number of issues?"}`, ""},
	{"not uncommon", `x`, `{type: noul, instructions: "It is not uncommon for this; is it a refund?"}`, "double-negative"},
	{"not clear is a single negative", `x`, `{type: noul, instructions: "Is the refund request clear and not vague?"}`, ""},
}

func TestRules(t *testing.T) {
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			src := "state: " + c.state + "\nquestions:\n  q: " + c.q + "\n"
			set, err := questionset.Parse("t.yaml", []byte(src))
			if err != nil {
				t.Fatalf("test set does not load: %v\n%s", err, src)
			}
			fs := Lint(set, nil, Options{})
			var ids []string
			for _, f := range fs {
				ids = append(ids, f.ID)
				if f.Line != 3 || f.Question != "q" {
					t.Errorf("finding at %d:%d question %q: %s", f.Line, f.Col, f.Question, f)
				}
			}
			if got := strings.Join(ids, ","); got != c.want {
				t.Errorf("ids %q, want %q\n%v", got, c.want, fs)
			}
		})
	}
}

// Dataset states count for path resolution: a path missing from the
// working state but present in an item does not warn.
func TestPathResolvesInDataset(t *testing.T) {
	set, err := questionset.Parse("t.yaml", []byte("state: {a: 1}\nquestions:\n  q: {type: noul, instructions: \"Is `order.total` high?\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fs := Lint(set, nil, Options{}); len(fs) != 1 || fs[0].ID != IDUnresolvedPath {
		t.Fatalf("without items: %v", fs)
	}
	items := []dataset.Item{{ID: "1", State: json.RawMessage(`{"order":{"total":3}}`)}}
	if fs := Lint(set, items, Options{}); len(fs) != 0 {
		t.Fatalf("with items: %v", fs)
	}
}

func TestTokenBudgetRequest(t *testing.T) {
	// Small budgets so the test stays small: 100 questions of ~200 bytes
	// is ~20 kB ≈ 5,000 tokens by bytes/4.
	var b strings.Builder
	b.WriteString("state: short\nquestions:\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "  q%d: {type: noul, instructions: %q}\n", i, strings.Repeat("word ", 36))
	}
	set, err := questionset.Parse("t.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	fs := Lint(set, nil, Options{MaxRequestTokens: 4000})
	if len(fs) != 1 || fs[0].ID != IDTokenBudget || !strings.Contains(fs[0].Message, "approximately") || fs[0].Line != 2 {
		t.Fatalf("findings %v", fs)
	}
	if fs := Lint(set, nil, Options{MaxRequestTokens: 6000}); len(fs) != 0 {
		t.Fatalf("under budget: %v", fs)
	}
}

func TestMarshalFindings(t *testing.T) {
	out, err := MarshalFindings(nil)
	if err != nil || string(out) != "{\n  \"errors\": 0,\n  \"warnings\": 0,\n  \"findings\": []\n}" {
		t.Errorf("%s %v", out, err)
	}
	out, _ = MarshalFindings([]Finding{{ID: "x", Severity: SeverityWarning, File: "f", Line: 1, Col: 2, Message: "m"}})
	var back struct {
		Warnings int
		Findings []Finding
	}
	if err := json.Unmarshal(out, &back); err != nil || back.Warnings != 1 || back.Findings[0].Col != 2 {
		t.Errorf("%s", out)
	}
}

func TestRulesDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(readme), "`"+r.ID+"`") {
			t.Errorf("README.md does not document warning %s", r.ID)
		}
	}
}

func TestUnresolvedPathSuggestion(t *testing.T) {
	cases := []struct{ state, path, want string }{
		{`{ticket: {message: hi}}`, "ticket.mesage", "did you mean `ticket.message`?"},
		{`{ticket: {messages: [{text: hi}]}}`, "ticket.mesages[0].text", "did you mean `ticket.messages[0].text`?"},
		{`{claim: {policy: {deductible: 5}}}`, "policy.deductable", "did you mean `policy.deductible`?"},
		{`{quote: q, claim: c}`, "claimm", "did you mean `claim`?"},
		{`{ticket: {message: hi}}`, "order.total", "correct the path (top-level state keys: ticket)"},
		{`{ticket: {message: hi}}`, "ticket.sender", "correct the path (top-level state keys: ticket)"},
	}
	for _, c := range cases {
		src := "state: " + c.state + "\nquestions:\n  q: {type: noul, instructions: \"Is `" + c.path + "` set?\"}\n"
		set, err := questionset.Parse("t.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		fs := Lint(set, nil, Options{})
		if len(fs) != 1 || !strings.HasPrefix(fs[0].Fix, c.want) {
			t.Errorf("%s in %s: %v, want fix starting %q", c.path, c.state, fs, c.want)
		}
	}
}

func TestRequestSizeLimitIsAnError(t *testing.T) {
	set, err := questionset.Parse("t.yaml", []byte("state: short\nquestions:\n  q: {type: noul, instructions: \"Is it long\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	huge, _ := json.Marshal(strings.Repeat("x", 8<<20))
	fs := Lint(set, []dataset.Item{{ID: "huge", State: huge}}, Options{})
	var got []string
	for _, f := range fs {
		got = append(got, f.Severity.String()+" "+f.ID)
	}
	// The 8 MiB state is also far over both token budgets.
	want := "error limits,warning token-budget,warning token-budget"
	if strings.Join(got, ",") != want {
		t.Fatalf("findings %v, want %s", fs, want)
	}
	if !strings.Contains(fs[0].Message, `dataset item "huge"`) || !HasErrors(fs) {
		t.Errorf("message %s", fs[0].Message)
	}
}
