package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider/standin"
)

// variantSet writes demo-triage's questions (no fixtures, no gates) with
// two variants of queue and one of urgency, and its dataset, into dir.
func variantSet(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage")
	y, err := os.ReadFile(filepath.Join(src, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(y)
	s = s[:strings.Index(s, "fixtures:\n")]
	s = strings.Replace(s, "      unknown: Cannot tell from the message.\n", `      unknown: Cannot tell from the message.
    variants:
      v2: {instructions: "Which team should take this support message: payments and refunds, product errors, or something else?"}
      v3:
        criteria:
          billing: Charges, refunds, invoices and payment problems.
          technical: Errors, crashes, outages, login or integration problems.
          other: Anything else.
          unknown: Cannot tell from the message.
`, 1)
	s = strings.Replace(s, "      - Cannot tell from the message.\n", `      - Cannot tell from the message.
    variants:
      terse: {instructions: "How urgent is this message?"}
`, 1)
	data, err := os.ReadFile(filepath.Join(src, "dataset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "triage.yaml")
	os.WriteFile(set, []byte(s), 0o600)
	os.WriteFile(filepath.Join(dir, "dataset.jsonl"), data, 0o600)
	return set
}

// countingStandin serves a synthetic stand-in and records every System One
// request body it receives.
func countingStandin(t *testing.T) (string, func() []string) {
	t.Helper()
	srv, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/systemone") {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return hs.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := bodies
		bodies = nil
		return out
	}
}

type evalJSON struct {
	Run struct {
		ID string `json:"id"`
	} `json:"run"`
	Variants []compare.VariantComparison `json:"variants"`
}

// TestEvalVariantsOneRequestEqualsCompare is the must-show: one
// `eval --variants` run sends exactly one request per item carrying base
// and variants, and its paired figures equal `jevlab compare` of a run of
// the base and a run of the promoted variant over the same items.
func TestEvalVariantsOneRequestEqualsCompare(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	set := variantSet(t, dir)
	db := filepath.Join(dir, "runs.db")
	url, sent := countingStandin(t)
	base := []string{"--base-url", url, "--db", db, "--rps", "0", "--fresh"}

	// Dry run: what the variants add.
	code, out, errOut := runJevlab(t, append([]string{"eval", set, "--dry-run", "--variants"}, base...)...)
	if code != 0 || !strings.Contains(out, "10 items × 1 repeat = 10 requests") || !strings.Contains(out, "of which 3 variant(s):") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := len(sent()); n != 0 {
		t.Fatalf("dry run sent %d requests", n)
	}

	code, out, errOut = runJevlab(t, append([]string{"eval", set, "--variants", "--json", "--name", "with-variants"}, base...)...)
	if code != 0 {
		t.Fatalf("eval --variants: exit %d\n%s\n%s", code, out, errOut)
	}
	bodies := sent()
	if len(bodies) != 10 {
		t.Fatalf("eval --variants sent %d requests, want one per item (10)", len(bodies))
	}
	for _, b := range bodies {
		var req struct {
			Questions map[string]json.RawMessage `json:"questions"`
		}
		if err := json.Unmarshal([]byte(b), &req); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"refund_request", "queue", "urgency", "queue~v2", "queue~v3", "urgency~terse"} {
			if _, ok := req.Questions[id]; !ok {
				t.Fatalf("request lacks %s: %s", id, b)
			}
		}
		if len(req.Questions) != 6 || strings.Contains(b, "variants") {
			t.Fatalf("request body: %s", b)
		}
	}
	var withV evalJSON
	if err := json.Unmarshal([]byte(out), &withV); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(withV.Variants) != 3 {
		t.Fatalf("variants in report: %d\n%s", len(withV.Variants), out)
	}

	// The base alone, and the set with queue~v2 promoted, as two runs.
	code, out, errOut = runJevlab(t, append([]string{"eval", set, "--json", "--name", "base"}, base...)...)
	if code != 0 {
		t.Fatalf("base eval: exit %d\n%s", code, errOut)
	}
	var runA evalJSON
	json.Unmarshal([]byte(out), &runA)
	s, err := questionset.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PromoteVariant("queue", "v3", ""); err != nil {
		t.Fatal(err)
	}
	promoted := filepath.Join(dir, "promoted.yaml")
	if err := s.Save(promoted); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runJevlab(t, append([]string{"eval", promoted, "--data", filepath.Join(dir, "dataset.jsonl"), "--json", "--name", "promoted"}, base...)...)
	if code != 0 {
		t.Fatalf("promoted eval: exit %d\n%s", code, errOut)
	}
	var runB evalJSON
	json.Unmarshal([]byte(out), &runB)
	if n := len(sent()); n != 20 {
		t.Fatalf("the two plain runs sent %d requests, want 20", n)
	}
	code, out, errOut = runJevlab(t, "compare", runA.Run.ID, runB.Run.ID, "--db", db, "--json")
	if code != 0 && code != 1 {
		t.Fatalf("compare: exit %d\n%s", code, errOut)
	}
	var cmp compare.Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var want compare.QuestionComparison
	for _, q := range cmp.Questions {
		if q.ID == "queue" {
			want = q
		}
	}
	var got compare.QuestionComparison
	for _, v := range withV.Variants {
		if v.ID == "queue~v3" {
			got = v.Comparison
		}
	}
	if got.PairedLabelled != 10 || want.PairedLabelled != 10 || got.Drift.MeanTV == 0 {
		t.Fatalf("paired %d / %d", got.PairedLabelled, want.PairedLabelled)
	}
	if fmt.Sprint(got.Deltas) != fmt.Sprint(want.Deltas) || got.McNemar.P != want.McNemar.P ||
		got.McNemar.ARightBWrong != want.McNemar.ARightBWrong || got.McNemar.AWrongBRight != want.McNemar.AWrongBRight ||
		fmt.Sprint(got.Flips) != fmt.Sprint(want.Flips) || got.Drift != want.Drift || got.BrierP != want.BrierP {
		t.Fatalf("variant figures differ from compare:\n got %+v\nwant %+v", got, want)
	}
	t.Logf("queue~v3 vs queue: %d decisions changed of %d, mean TV %.4g, Δaccuracy %+.3g (same in compare)",
		got.Drift.ChangedDecisions, got.Drift.N, got.Drift.MeanTV, got.Deltas[0].Delta.Value)

	// The text, Markdown and JUnit reports pair the variants too.
	md, junit := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.xml")
	code, out, errOut = runJevlab(t, "show", withV.Run.ID, "--db", db)
	if code != 0 || !strings.Contains(out, "queue~v2 vs queue:") || !strings.Contains(out, "McNemar exact:") {
		t.Fatalf("show: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runJevlab(t, append([]string{"eval", set, "--variants", "queue:v3", "--markdown", md, "--junit", junit}, base...)...)
	if code != 0 {
		t.Fatalf("eval --variants queue:v3: exit %d\n%s", code, errOut)
	}
	mdb, _ := os.ReadFile(md)
	xb, _ := os.ReadFile(junit)
	if !strings.Contains(string(mdb), "`queue~v3`") || strings.Contains(string(mdb), "queue~v2") || !strings.Contains(string(xb), `name="queue~v3 variant vs queue"`) {
		t.Fatalf("markdown:\n%s\njunit:\n%s", mdb, xb)
	}
	// A resume restores the variants the run asked; asking others is refused.
	if code, out, errOut := runJevlab(t, append([]string{"eval", "--resume", withV.Run.ID}, base...)...); code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runJevlab(t, append([]string{"eval", set, "--resume", withV.Run.ID, "--variants=queue:v2"}, base...)...); code != 2 || !strings.Contains(errOut, "same --variants") {
		t.Fatalf("resume with other variants: exit %d\n%s", code, errOut)
	}
	// An unknown variant is a usage error naming what there is.
	code, _, errOut = runJevlab(t, append([]string{"eval", set, "--variants=queue:v9"}, base...)...)
	if code != 2 || !strings.Contains(errOut, `has no variant "v9" (it has v2, v3)`) {
		t.Fatalf("unknown variant: exit %d\n%s", code, errOut)
	}
}

// TestAskVariants: ask sends the variants in the same request and draws
// them after the questions; --variants none leaves them out.
func TestAskVariants(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	set := variantSet(t, dir)
	url, sent := countingStandin(t)
	code, out, errOut := runJevlab(t, "ask", set, "--base-url", url, "--rps", "0", "--fresh")
	if code != 0 || !strings.Contains(out, "queue~v2 (choice)") || !strings.Contains(out, "urgency~terse (score)") {
		t.Fatalf("ask: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := len(sent()); n != 1 {
		t.Fatalf("ask sent %d requests", n)
	}
	code, out, _ = runJevlab(t, "ask", set, "--base-url", url, "--rps", "0", "--fresh", "--variants", "none")
	if code != 0 || strings.Contains(out, "queue~v2") {
		t.Fatalf("ask --variants none: exit %d\n%s", code, out)
	}
}
