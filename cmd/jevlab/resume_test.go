package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/store"
)

// storedRun reads the latest run of the database at path.
func storedRun(t *testing.T, path string) *store.Run {
	t.Helper()
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.ResolveRun(context.Background(), "latest")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEvalSIGKILLThenResumeWithNoFlags kills a real jevlab eval started
// with non-default settings (--data, --model, --max-cost, --concurrency,
// --rps, --timeout) partway, checks that the run reads as interrupted,
// resumes it with nothing but --resume RUN (no FILE, no flags), and checks
// it ends with exactly the settings, items and spend of an uninterrupted
// run with the same flags. The answers the killed process paid for but
// had not stored yet are answered on resume from the exchanges it
// recorded, and their spend is the run's: the totals match to the token.
func TestEvalSIGKILLThenResumeWithNoFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := jevlabBinary(t)
	_, url := startStandin(t, standin.Config{Synthetic: true, APIKey: "fake-key-for-tests", Seed: 5,
		Faults: standin.Faults{Latency: 4 * time.Millisecond, LatencyJitter: time.Millisecond}})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 1500)
	killedDB, fullDB := filepath.Join(dir, "killed.db"), filepath.Join(dir, "full.db")
	env := func(db string) []string {
		return append(os.Environ(), "TYPESAFE_API_KEY=fake-key-for-tests", "TYPESAFE_BASE_URL="+url, "JEVLAB_DB="+db, "XDG_DATA_HOME="+dir)
	}
	started := []string{"eval", setPath, "--data", dataPath, "--model", "jev-1.13.0", "--max-cost", "5",
		"--concurrency", "3", "--rps", "800", "--timeout", "7s"}

	cmd := exec.Command(bin, append(started, "--name", "run")...)
	cmd.Env = env(killedDB)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	startProcess(t, cmd)
	var runID string
	for deadline := time.Now().Add(60 * time.Second); runID == "" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		db, err := store.OpenReadOnly(killedDB)
		if err != nil {
			continue
		}
		rs, err := db.Runs(context.Background(), store.RunFilter{})
		db.Close()
		if err == nil && len(rs) == 1 && rs[0].Done >= 200 {
			if rs[0].Status != store.StatusRunning {
				t.Fatalf("a live run reads %s", rs[0].Status)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			runID = rs[0].ID
		}
	}
	cmd.Wait()
	if runID == "" {
		t.Fatalf("the run never stored 200 items; stderr:\n%s", stderr.String())
	}
	killed := storedRun(t, killedDB)
	if killed.Done >= 1500 {
		t.Fatalf("the kill came too late (%d stored)", killed.Done)
	}
	// Dead, not running forever: jevlab runs says interrupted at once.
	t.Setenv("JEVLAB_DB", killedDB)
	code, out, errOut := runJevlab(t, "runs", "--json")
	var listed []store.Run
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0].Status != store.StatusInterrupted {
		t.Fatalf("runs after SIGKILL: exit %d %s %s", code, out, errOut)
	}

	resume := exec.Command(bin, "eval", "--resume", runID)
	resume.Env = env(killedDB)
	resumed, err := resume.CombinedOutput()
	if err != nil {
		t.Fatalf("resume with no flags: %v\n%s", err, resumed)
	}
	if strings.Contains(string(resumed), "overrides") || !strings.Contains(string(resumed), "done  1500/1500 items  0 errors") {
		t.Errorf("resume output:\n%s", resumed)
	}
	full := exec.Command(bin, append(started, "--name", "run")...)
	full.Env = env(fullDB)
	if out, err := full.CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}

	a, b := storedRun(t, killedDB), storedRun(t, fullDB)
	sa, _ := runner.ParseSettings(a)
	sb, _ := runner.ParseSettings(b)
	if !bytes.Equal(a.Settings, b.Settings) {
		t.Errorf("settings differ:\nresumed        %s\nuninterrupted  %s", a.Settings, b.Settings)
	}
	if sa.Fresh || sa.Model != "jev-1.13.0" || sa.MaxCostUSD != 5 || sa.Concurrency != 3 || sa.RPS != 800 ||
		time.Duration(sa.Timeout) != 7*time.Second || sa.Data != dataPath || sa.Set != setPath {
		t.Errorf("resumed run's settings %+v are not the ones it started with", sa)
	}
	_ = sb
	if a.Status != store.StatusDone || a.Done != 1500 || a.Errors != 0 || a.Done != b.Done || a.Errors != b.Errors ||
		a.Model != b.Model || a.Repeat != b.Repeat || a.Name != b.Name || a.BaseURL != b.BaseURL || a.ProviderKind != b.ProviderKind {
		t.Errorf("runs differ:\nresumed       %+v\nuninterrupted %+v", a, b)
	}
	if a.InputTokens != b.InputTokens || math.Abs(a.CostUSD-b.CostUSD) > 1e-12 {
		t.Errorf("spend: resumed %d tokens $%.10f, uninterrupted %d tokens $%.10f", a.InputTokens, a.CostUSD, b.InputTokens, b.CostUSD)
	}
	got, perQ := storedAnswers(t, killedDB, a.ID)
	want, _ := storedAnswers(t, fullDB, b.ID)
	if len(got) != 4500 || len(want) != 4500 || perQ["team"] != 1500 {
		t.Fatalf("answers: resumed %d, uninterrupted %d; want 4500", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: resumed %q, uninterrupted %q", k, got[k], v)
			break
		}
	}
}

// TestEvalPrintedResumeCommandWorks: the resume command printed when the
// spend cap stops a run (with --data, --db and --base-url given) works as
// printed, restoring the cap (so it stops again at once, asking nothing),
// and with a higher --max-cost added it overrides the cap, says so, and
// finishes.
func TestEvalPrintedResumeCommandWorks(t *testing.T) {
	isolate(t)
	_, url := startStandin(t, standin.Config{Synthetic: true})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 300)
	dbPath := filepath.Join(dir, "cap.db")
	code, _, errOut := runJevlab(t, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", dbPath, "--rps", "0", "--max-cost", "0.0001")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var line string
	for _, l := range strings.Split(errOut, "\n") {
		if _, after, ok := strings.Cut(l, "resume with: "); ok {
			line = after
		}
	}
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "jevlab" || strings.Contains(line, "--data") || !strings.Contains(line, "--db "+dbPath) || !strings.Contains(line, "--base-url "+url) {
		t.Fatalf("printed resume command %q", line)
	}
	before := storedRun(t, dbPath)
	// show prints a continue line that works too: the set by its absolute
	// path, and the --db it was given.
	if code, out, _ := runJevlab(t, "show", "latest", "--db", dbPath); code != 0 ||
		!strings.Contains(out, "continue with jevlab eval "+setPath+" --resume "+before.ID+" --db "+dbPath) {
		t.Errorf("show's continue line:\n%s", out)
	}

	code, _, errOut = runJevlab(t, fields[1:]...)
	if code != 1 || !strings.Contains(errOut, "spend cap $0.0001 reached") || strings.Contains(errOut, "names no dataset") {
		t.Fatalf("the printed command: exit %d\n%s", code, errOut)
	}
	if again := storedRun(t, dbPath); again.Done != before.Done || again.CostUSD != before.CostUSD {
		t.Errorf("a resume under the same cap asked more: %d → %d items", before.Done, again.Done)
	}

	code, _, errOut = runJevlab(t, append(fields[1:], "--max-cost", "1")...)
	if code != 0 || !strings.Contains(errOut, "--max-cost $1 overrides the run's $0.0001") {
		t.Fatalf("resume with a higher cap: exit %d\n%s", code, errOut)
	}
	r := storedRun(t, dbPath)
	s, _ := runner.ParseSettings(r)
	if r.Status != store.StatusDone || r.Done != 300 || s.MaxCostUSD != 1 {
		t.Errorf("after the override: %s %d/300, max cost %g", r.Status, r.Done, s.MaxCostUSD)
	}

	// What a resume cannot change is refused, naming the flag.
	for _, extra := range [][]string{{"--repeat", "2"}, {"--fresh"}, {"--model", "jev-1.13.0"}} {
		code, _, errOut = runJevlab(t, append(fields[1:], extra...)...)
		if code != 2 || !strings.Contains(errOut, extra[0]) || !strings.Contains(errOut, "cannot change") {
			t.Errorf("resume %v: exit %d\n%s", extra, code, errOut)
		}
	}
	// Another server than the run's is refused unless chosen explicitly.
	_, other := startStandin(t, standin.Config{Synthetic: true})
	t.Setenv("TYPESAFE_BASE_URL", other)
	code, _, errOut = runJevlab(t, "eval", "--resume", r.ID, "--db", dbPath, "--retry-errors")
	if code != 2 || !strings.Contains(errOut, "--base-url "+url) {
		t.Errorf("resume against another server: exit %d\n%s", code, errOut)
	}
}

// TestReadCommandsOpenTheDatabaseReadOnly: runs, show and compare work on
// a database they cannot write (a read-only mount where the test may
// mount one; else a plain copy, checked byte for byte), and never create
// a database that does not exist.
func TestReadCommandsOpenTheDatabaseReadOnly(t *testing.T) {
	isolate(t)
	_, url := startStandin(t, standin.Config{Synthetic: true})
	dir := t.TempDir()
	setPath, dataPath := writeGenerated(t, dir, 40)
	src := filepath.Join(dir, "src.db")
	for i := 0; i < 2; i++ {
		if code, _, errOut := runJevlab(t, "eval", setPath, "--data", dataPath, "--base-url", url, "--db", src, "--rps", "0", "--fresh"); code != 0 {
			t.Fatalf("eval: %d %s", code, errOut)
		}
	}
	dbDir := dir
	if os.Geteuid() == 0 {
		mnt := t.TempDir()
		if exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt).Run() == nil {
			t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
			dbDir = mnt
		}
	}
	path := filepath.Join(dbDir, "copy.db")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if dbDir != dir {
		if out, err := exec.Command("mount", "-o", "remount,ro", dbDir).CombinedOutput(); err != nil {
			t.Fatalf("remount ro: %v %s", err, out)
		}
		t.Log("database on a read-only tmpfs")
	}
	for _, args := range [][]string{{"runs"}, {"runs", "--json"}, {"show", "latest"}, {"show", "latest", "--json"}, {"compare", "latest~1", "latest"}} {
		code, out, errOut := runJevlab(t, append(args, "--db", path)...)
		if code != 0 || out == "" {
			t.Errorf("%v on a read-only database: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Error("a read command changed the database file")
	}
	missing := filepath.Join(dir, "none", "jevlab.db")
	if code, out, _ := runJevlab(t, "runs", "--db", missing); code != 0 || !strings.Contains(out, "no runs in") {
		t.Errorf("runs on a missing database: %d %s", code, out)
	}
	if code, _, errOut := runJevlab(t, "show", "latest", "--db", missing); code != 2 || !strings.Contains(errOut, "no database yet") {
		t.Errorf("show on a missing database: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Dir(missing)); err == nil {
		t.Error("a read command created the database directory")
	}
}

// TestEvalOnAFullFixtureDiskStopsAndCountsEverySpend records to a fixture
// file on a 64 KB tmpfs (root only; skipped elsewhere): the run stops at
// the first write that fails, is marked failed with the reason, and counts
// every answer the server sent. The server replays real Jev recordings
// (banking77, ~9 KB an exchange), so the answers are recordable. The old
// build went on through all 500 items reporting the cost of the few it
// could record.
func TestEvalOnAFullFixtureDiskStopsAndCountsEverySpend(t *testing.T) {
	isolate(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	root := filepath.Join(testutil.RepoRoot(t), "fixtures", "banking77")
	exs, _, err := fixtures.ReadFile(filepath.Join(root, "recorded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	srv, url := startStandin(t, standin.Config{Exchanges: exs})
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "full.db")
	rec := filepath.Join(mnt, "recorded.jsonl")
	code, out, errOut := runJevlab(t, "eval", filepath.Join(root, "questions.yaml"), "--base-url", url, "--db", dbPath, "--rps", "0",
		"--concurrency", "4", "--fresh", "--fixtures", rec, "--max-cost", "1")
	if code != 1 || !strings.Contains(errOut, "no space left on device") || !strings.Contains(errOut, "resume with: jevlab eval") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	r := storedRun(t, dbPath)
	st := srv.Stats()
	if r.Status != store.StatusFailed || !strings.Contains(r.Reason, "no space left") {
		t.Errorf("run %s (%q), want failed", r.Status, r.Reason)
	}
	if st.Requests > 40 {
		t.Errorf("%d requests were sent; the run must stop at the first failed write", st.Requests)
	}
	db, _ := store.OpenReadOnly(dbPath)
	defer db.Close()
	billed := 0
	db.ForEachItemResult(context.Background(), r.ID, func(it *store.ItemResult) error {
		if it.CostUSD > 0 && it.Usage.InputTokens > 0 {
			billed++
		}
		return nil
	})
	if int64(billed) != st.OK || int64(r.Done) != st.OK || r.Errors == 0 {
		t.Errorf("the server answered %d requests; the run stored %d items (%d failed), %d of them with their cost", st.OK, r.Done, r.Errors, billed)
	}
	t.Logf("stopped after %d requests: %d items stored, %d failed on the write, %d tokens $%.6f", st.Requests, r.Done, r.Errors, r.InputTokens, r.CostUSD)
}
