package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/store"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// TestMain removes the binary jevlabBinary built, so test runs leave no
// jevlab-bin-* directories behind in the temporary directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// jevlabBinary builds cmd/jevlab once per test binary.
func jevlabBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "jevlab-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "jevlab")
		// -buildvcs=false: VCS stamping fails where git refuses the
		// checkout (owned by another user, as in some CI containers).
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", binPath, ".")
		cmd.Dir = filepath.Join(testutil.RepoRoot(t), "cmd", "jevlab")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// startProcess starts cmd and kills it when the test ends, so a test that
// fails midway leaves no eval running on (and loading the machine).
func startProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
}

func TestEvalBanking77Offline(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "b77.db")
	set := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "questions.yaml")
	code, out, errOut := runJevlab(t, "eval", "--offline", "--db", db, set)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// 389/500 = 0.778 per ../shared/testdata/banking77/README.md.
	for _, want := range []string{"done  500/500 items  0 errors", "jev-latest → jev-1.13.0", "0.778 [", "(389/500)", "offline"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// runs and show read the same run back.
	code, out, _ = runJevlab(t, "runs", "--db", db, "--json")
	var runs []store.Run
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 || runs[0].Done != 500 || runs[0].Status != store.StatusDone {
		t.Fatalf("runs --json: exit %d %s", code, out)
	}
	code, out, _ = runJevlab(t, "show", "--db", db, "latest", "--json")
	var shown struct {
		Run       store.Run `json:"run"`
		Questions []struct {
			ID       string `json:"question"`
			N        int    `json:"n"`
			Accuracy struct {
				Value float64 `json:"value"`
			} `json:"accuracy"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil {
		t.Fatalf("show --json: exit %d %v\n%s", code, err, out)
	}
	if shown.Run.ID != runs[0].ID || len(shown.Questions) != 1 || shown.Questions[0].N != 500 || shown.Questions[0].Accuracy.Value != 0.778 {
		t.Errorf("show = %+v", shown)
	}
	code, out, _ = runJevlab(t, "runs", "--db", db)
	if code != 0 || !strings.Contains(out, runs[0].ID) || !strings.Contains(out, "banking77/dataset.jsonl") || !strings.Contains(out, "jev-1.13.0") {
		t.Errorf("runs: exit %d\n%s", code, out)
	}
	code, out, _ = runJevlab(t, "show", "--db", db, runs[0].ID[:14])
	if code != 0 || !strings.Contains(out, "(389/500)") {
		t.Errorf("show by prefix: exit %d\n%s", code, out)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	set := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "questions.yaml")
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"id":"1","state":"hi","labels":{"intent":3}}`+"\n"), 0o600)
	noData := filepath.Join(dir, "nodata.yaml")
	os.WriteFile(noData, []byte("name: x\nquestions:\n  q:\n    type: noul\n    instructions: Is it?\n"), 0o600)
	tests := []struct {
		name string
		args []string
		code int
		has  string
	}{
		{"no dataset", []string{"eval", "--db", db, noData}, 2, "--data"},
		{"bad label", []string{"eval", "--db", db, "--offline", "--data", bad, set}, 2, "a choice label is an option label (text), not a number"},
		{"repeat 0", []string{"eval", "--db", db, "--repeat", "0", set}, 2, "--repeat"},
		{"repeat offline", []string{"eval", "--db", db, "--offline", "--repeat", "2", set}, 2, "--repeat 2 asks System One again"},
		{"retry without resume", []string{"eval", "--db", db, "--retry-errors", set}, 2, "use it with --resume"},
		{"no file", []string{"eval", "--db", db}, 2, "needs a question-set FILE"},
		{"unknown run", []string{"show", "--db", db, "r-none"}, 2, "no run"},
		{"resume unknown", []string{"eval", "--db", db, "--offline", "--resume", "r-none", set}, 2, "no run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runJevlab(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.has) {
				t.Errorf("exit %d (want %d), stderr %q lacks %q; stdout %s", code, tt.code, errOut, tt.has, out)
			}
		})
	}
}

func TestEvalDryRun(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "x.db")
	set := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "questions.yaml")
	code, out, errOut := runJevlab(t, "eval", "--db", db, "--dry-run", "--repeat", "2", "--max-cost", "0.01", set)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// 3,413,740 request bytes (the 500 recorded requests re-serialised
	// compactly with Python's json.dumps and summed) / 4 × 2 repeats =
	// 1,706,870 tokens × $0.042/M = $0.0717.
	for _, want := range []string{"500 items × 2 repeat = 1000 requests", "3,413,740 bytes", "~1,706,870", "~$0.0717", "ABOVE the cap", "approximate"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(db); err == nil {
		if d, err := store.Open(db); err == nil {
			rs, _ := d.Runs(context.Background(), store.RunFilter{})
			d.Close()
			if len(rs) != 0 {
				t.Errorf("dry run stored %d runs", len(rs))
			}
		}
	}
}

// writeGenerated writes a 3-question set and an n-item labelled dataset.
func writeGenerated(t *testing.T, dir string, n int) (setPath, dataPath string) {
	t.Helper()
	setPath = filepath.Join(dir, "triage.yaml")
	os.WriteFile(setPath, []byte(`name: triage
questions:
  team:
    type: choice
    instructions: Which team should handle this ticket?
    criteria:
      billing: charges, refunds, invoices
      orders: delivery and order status
      account: login and profile
  urgent:
    type: noul
    instructions: Does this need attention today?
  anger:
    type: score
    instructions: How upset is the customer?
    criteria: [calm, annoyed, furious]
`), 0o600)
	words := []string{"charged", "twice", "refund", "delivery", "late", "login", "password", "invoice", "order", "angry", "today", "urgent"}
	teams := []string{"billing", "orders", "account"}
	var b strings.Builder
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("ticket %d: %s %s %s", i, words[i%len(words)], words[(i*7)%len(words)], words[(i*5+3)%len(words)])
		fmt.Fprintf(&b, `{"id":"t%05d","state":%q,"labels":{"team":%q}}`+"\n", i, text, teams[i%3])
	}
	dataPath = filepath.Join(dir, "tickets.jsonl")
	os.WriteFile(dataPath, []byte(b.String()), 0o600)
	return setPath, dataPath
}

// storedAnswers maps "item/question/repeat" to a comparable rendering of
// the stored answer, failing on a duplicate.
func storedAnswers(t *testing.T, dbPath, runID string) (map[string]string, map[string]int) {
	t.Helper()
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	perQ := map[string]int{}
	err = db.ForEachAnswer(context.Background(), runID, func(a *store.ItemAnswer) error {
		k := fmt.Sprintf("%s/%s/%d", a.ItemID, a.QuestionID, a.Repeat)
		if _, dup := out[k]; dup {
			t.Errorf("duplicate answer %s", k)
		}
		if a.Answer == nil {
			out[k] = "error " + a.ErrKind
		} else {
			out[k] = fmt.Sprintf("%s %v %v %v", a.Decided, a.Answer.P, a.Answer.Probs, a.Answer.Confidence)
		}
		perQ[a.QuestionID]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, perQ
}

// TestEvalResumeAfterSIGKILL kills a real jevlab eval process partway
// through 2,000 items, resumes it, and checks the result equals an
// uninterrupted run: 2,000 answers per question, no duplicates.
func TestEvalResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := jevlabBinary(t)
	_, url := startStandin(t, standin.Config{Synthetic: true, APIKey: "fake-key-for-tests", Seed: 3,
		Faults: standin.Faults{Latency: 4 * time.Millisecond, LatencyJitter: time.Millisecond}})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 2000)
	env := append(os.Environ(), "TYPESAFE_API_KEY=fake-key-for-tests", "TYPESAFE_BASE_URL=", "JEVLAB_DB=", "XDG_DATA_HOME="+dir)
	args := func(db string, extra ...string) []string {
		return append([]string{"eval", setPath, "--data", dataPath, "--base-url", url, "--db", db, "--rps", "0", "--concurrency", "4"}, extra...)
	}

	killedDB := filepath.Join(dir, "killed.db")
	cmd := exec.Command(bin, args(killedDB, "--name", "killed")...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	startProcess(t, cmd)
	var runID string
	var atKill int
	deadline := time.Now().Add(60 * time.Second)
	for runID == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		db, err := store.Open(killedDB)
		if err != nil {
			continue
		}
		rs, err := db.Runs(context.Background(), store.RunFilter{})
		db.Close()
		if err == nil && len(rs) == 1 && rs[0].Done >= 300 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			runID, atKill = rs[0].ID, rs[0].Done
		}
	}
	cmd.Wait()
	if runID == "" {
		t.Fatalf("the run never stored 300 items; stderr:\n%s", stderr.String())
	}
	d, _ := store.Open(killedDB)
	r, _ := d.Run(context.Background(), runID)
	d.Close()
	// Its process is gone, so the run reads as interrupted (its lease), not
	// running forever.
	if r.Status != store.StatusInterrupted || r.Done >= 2000 {
		t.Fatalf("killed run: status %s done %d; the kill came too late to test resume", r.Status, r.Done)
	}
	t.Logf("killed at %d stored items (DB then held %d)", atKill, r.Done)

	resume := exec.Command(bin, args(killedDB, "--resume", runID)...)
	resume.Env = env
	out, err := resume.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "done  2000/2000 items  0 errors") {
		t.Errorf("resume output:\n%s", out)
	}

	fullDB := filepath.Join(dir, "full.db")
	full := exec.Command(bin, args(fullDB)...)
	full.Env = env
	if out, err := full.CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	d, _ = store.Open(fullDB)
	rs, _ := d.Runs(context.Background(), store.RunFilter{})
	// Every request's raw exchange is kept, linked to its run.
	if n, err := d.ExchangeCount(context.Background(), rs[0].ID); err != nil || n != 2000 {
		t.Errorf("uninterrupted run kept %d exchanges (%v), want 2000", n, err)
	}
	d.Close()

	got, perQ := storedAnswers(t, killedDB, runID)
	want, _ := storedAnswers(t, fullDB, rs[0].ID)
	for _, q := range []string{"team", "urgent", "anger"} {
		if perQ[q] != 2000 {
			t.Errorf("question %s: %d answers, want exactly 2000", q, perQ[q])
		}
	}
	if len(got) != 6000 || len(want) != 6000 {
		t.Fatalf("answers: resumed %d, uninterrupted %d; want 6000", len(got), len(want))
	}
	diff := 0
	for k, v := range want {
		if got[k] != v {
			if diff < 3 {
				t.Errorf("%s: resumed %q, uninterrupted %q", k, got[k], v)
			}
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%d answers differ", diff)
	}
}

// TestEvalSIGINTMarksInterrupted sends Ctrl-C (SIGINT) to a real eval: it
// must keep what finished, mark the run interrupted, say how to resume and
// exit 1.
func TestEvalSIGINTMarksInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := jevlabBinary(t)
	_, url := startStandin(t, standin.Config{Synthetic: true, Faults: standin.Faults{Latency: 20 * time.Millisecond}})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 2000)
	dbPath := filepath.Join(dir, "int.db")
	cmd := exec.Command(bin, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", dbPath, "--rps", "0", "--concurrency", "2")
	cmd.Env = append(os.Environ(), "TYPESAFE_API_KEY=", "XDG_DATA_HOME="+dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	startProcess(t, cmd)
	sent := false
	for deadline := time.Now().Add(30 * time.Second); !sent && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		db, err := store.Open(dbPath)
		if err != nil {
			continue
		}
		rs, _ := db.Runs(context.Background(), store.RunFilter{})
		db.Close()
		if len(rs) == 1 && rs[0].Done >= 20 {
			cmd.Process.Signal(os.Interrupt)
			sent = true
		}
	}
	err := cmd.Wait()
	if !sent {
		t.Fatalf("never interrupted; stderr:\n%s", stderr.String())
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want 1\n%s\n%s", err, stdout.String(), stderr.String())
	}
	db, _ := store.Open(dbPath)
	defer db.Close()
	r, err := db.ResolveRun(context.Background(), "latest")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusInterrupted || r.Done < 20 || r.Done >= 2000 {
		t.Errorf("run after SIGINT: status %s done %d", r.Status, r.Done)
	}
	if !strings.Contains(stderr.String(), "resume with: jevlab eval "+setPath+" --resume "+r.ID) {
		t.Errorf("stderr lacks the resume command:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "interrupted") || !strings.Contains(stdout.String(), fmt.Sprintf("%d/2000 items", r.Done)) {
		t.Errorf("summary:\n%s", stdout.String())
	}
}

func TestEvalMaxCostStopsTheRun(t *testing.T) {
	isolate(t)
	_, url := startStandin(t, standin.Config{Synthetic: true})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 2000)
	dbPath := filepath.Join(dir, "cap.db")
	// The stand-in bills len(body)/4+1 tokens, ~190 here: ~$8e-6 a request,
	// so a $0.0001 cap allows about a dozen.
	code, out, errOut := runJevlab(t, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", dbPath, "--rps", "0", "--max-cost", "0.0001")
	if code != 1 || !strings.Contains(errOut, "spend cap $0.0001 reached") || !strings.Contains(errOut, "--resume") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	db, _ := store.Open(dbPath)
	defer db.Close()
	r, _ := db.ResolveRun(context.Background(), "latest")
	if r.Status != store.StatusInterrupted || r.CostUSD > 0.0001 || r.Done < 5 || r.Done > 20 {
		t.Errorf("capped run: status %s cost $%g done %d", r.Status, r.CostUSD, r.Done)
	}
}

// TestEvalAndReaderShareTheDatabase runs a real jevlab eval process while
// this process reads (and writes, as the workbench does) the same
// database: neither side may fail with "database is locked".
func TestEvalAndReaderShareTheDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := jevlabBinary(t)
	_, url := startStandin(t, standin.Config{Synthetic: true, Faults: standin.Faults{Latency: 2 * time.Millisecond}})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 2000)
	dbPath := filepath.Join(dir, "shared.db")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cmd := exec.Command(bin, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", dbPath, "--rps", "0", "--concurrency", "4")
	cmd.Env = append(os.Environ(), "TYPESAFE_API_KEY=", "XDG_DATA_HOME="+dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	startProcess(t, cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctx := context.Background()
	// passes counts the reader's passes begun while the eval still ran
	// and seen the most answers they saw; the last pass starts after it
	// exited.
	passes, seen := 0, 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("eval failed: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			running = false
		default:
		}
		if running {
			passes++
		}
		runs, err := db.Runs(ctx, store.RunFilter{})
		if err != nil {
			t.Fatalf("reader: %v", err)
		}
		for _, r := range runs {
			n := 0
			if err := db.ForEachAnswer(ctx, r.ID, func(*store.ItemAnswer) error { n++; return nil }); err != nil {
				t.Fatalf("reader: %v", err)
			}
			if running {
				seen = max(seen, n)
			}
		}
		if _, err := db.SaveQuestionSet(ctx, "reader", "", []byte(fmt.Sprintf(`{"pass":%d}`, passes))); err != nil {
			t.Fatalf("reader write: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(stderr.String(), "locked") {
		t.Errorf("eval stderr mentions a lock:\n%s", stderr.String())
	}
	r, err := db.ResolveRun(ctx, "latest")
	if err != nil || r.Done != 2000 || r.Status != store.StatusDone {
		t.Fatalf("run: %+v, %v", r, err)
	}
	t.Logf("reader made %d passes while the eval ran, seeing up to %d answers", passes, seen)
	// A pass reads every stored answer, so it slows as the run grows
	// (and under -race on a loaded machine): a few passes that saw the
	// eval's answers while it ran are overlap enough.
	if passes < 3 || seen == 0 {
		t.Errorf("reader passes %d, answers seen %d: the two did not overlap", passes, seen)
	}
}

func TestEvalRepeatAsksAgain(t *testing.T) {
	isolate(t)
	srv, url := startStandin(t, standin.Config{Synthetic: true})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 50)
	dbPath := filepath.Join(dir, "rep.db")
	code, out, errOut := runJevlab(t, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", dbPath, "--rps", "0", "--repeat", "3", "--name", "noise")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "150/150 items") || !strings.Contains(out, "repeat 3") {
		t.Errorf("summary:\n%s", out)
	}
	// Every asking reached the server: repeats bypass the answer cache,
	// and an item's first asking finishes before its repeats record
	// answers it could otherwise be answered from (it once came out 149).
	if st := srv.Stats(); st.OK != 150 {
		t.Errorf("server answered %d requests, want 150 (50 items × 3)", st.OK)
	}
	_, perQ := storedAnswers(t, dbPath, strings.Fields(out)[1])
	if perQ["team"] != 150 || perQ["urgent"] != 150 || perQ["anger"] != 150 {
		t.Errorf("answers per question = %v, want 150 each", perQ)
	}
}

func TestEvalWrongKeyAndChangedSetExit2(t *testing.T) {
	isolate(t)
	_, url := startStandin(t, standin.Config{Synthetic: true, APIKey: "the-right-fake-key"})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 30)
	dbPath := filepath.Join(dir, "k.db")
	t.Setenv("TYPESAFE_API_KEY", "a-wrong-fake-key")
	code, out, errOut := runJevlab(t, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", dbPath, "--rps", "0")
	if code != 2 || !strings.Contains(errOut, "auth") || !strings.Contains(errOut, "TYPESAFE_API_KEY") || strings.Contains(errOut+out, "a-wrong-fake-key") {
		t.Fatalf("wrong key: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "failed") {
		t.Errorf("summary should show the failed run:\n%s", out)
	}
	// Resuming after the set file changed is refused as an input error.
	t.Setenv("TYPESAFE_API_KEY", "the-right-fake-key")
	body, _ := os.ReadFile(setPath)
	os.WriteFile(setPath, []byte(strings.Replace(string(body), "attention today", "attention within hours", 1)), 0o600)
	code, _, errOut = runJevlab(t, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", dbPath, "--rps", "0", "--resume", "latest")
	if code != 2 || !strings.Contains(errOut, "question set changed") {
		t.Errorf("changed set resume: exit %d\n%s", code, errOut)
	}
}

func TestEvalOfflineMissesAreListed(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 12)
	code, out, errOut := runJevlab(t, "eval", setPath, "--data", dataPath, "--db", filepath.Join(dir, "m.db"), "--offline")
	if code != 1 || !strings.Contains(errOut, "every item of run") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"12/12 items  12 errors", "failed items (12, first 5):", "  t00000: cache_miss", "12 items have no recorded answer", "12 (cache_miss 12)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// A label that names no option of the set as it is now (an option renamed
// or deleted, or a typo) is named and excluded, in the same sentence lint
// and the workbench print; the run goes on with the other labels.
func TestEvalExcludesStaleLabelsLoudly(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	set := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "questions.yaml")
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77", "dataset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")[:3]
	var it struct {
		ID     string            `json:"id"`
		State  json.RawMessage   `json:"state"`
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &it); err != nil {
		t.Fatal(err)
	}
	it.Labels["intent"] = "no_such_intent"
	b, _ := json.Marshal(it)
	lines[1] = string(b) + "\n"
	data := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(data, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	code, out, errOut := runJevlab(t, "eval", "--db", db, "--offline", "--json", "--data", data, set)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "1 label names nothing in the set as it is now and is excluded from the metrics: item " + it.ID + `: intent="no_such_intent": "no_such_intent" is not an option of intent`
	if !strings.Contains(errOut, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, errOut)
	}
	var rep struct {
		Questions []struct {
			N        int `json:"n"`
			Labelled int `json:"labelled"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Questions) != 1 || rep.Questions[0].N != 3 || rep.Questions[0].Labelled != 2 {
		t.Fatalf("questions %+v, want n 3 with 2 labelled", rep.Questions)
	}
}
