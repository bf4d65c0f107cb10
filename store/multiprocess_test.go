package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as a second process: with
// JEVLAB_STORE_HELPER=writer it writes to $JEVLAB_STORE_DB and exits.
func TestMain(m *testing.M) {
	if os.Getenv("JEVLAB_STORE_HELPER") == "writer" {
		if err := helperWriter(os.Getenv("JEVLAB_STORE_DB"), os.Getenv("JEVLAB_STORE_DURATION")); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperWriter is the "eval" process: it creates a run and saves batches of
// items and exchanges for the given duration.
func helperWriter(path, dur string) error {
	d, err := time.ParseDuration(dur)
	if err != nil {
		return err
	}
	db, err := Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	h, err := db.SaveQuestionSet(ctx, "writer", "", []byte(`{"name":"writer"}`))
	if err != nil {
		return err
	}
	r, err := db.CreateRun(ctx, NewRun{Name: "writer", SetHash: h, SetName: "writer"})
	if err != nil {
		return err
	}
	fmt.Println(r.ID)
	deadline := time.Now().Add(d)
	seq := 0
	for time.Now().Before(deadline) {
		batch := make([]ItemResult, 50)
		for i := range batch {
			batch[i] = sampleItem(fmt.Sprint("item", seq), seq, 0, 0.5)
			seq++
		}
		if _, err := db.SaveItems(ctx, r.ID, batch); err != nil {
			return err
		}
		if err := db.SaveExchange(WithRunID(ctx, r.ID), sampleExchange(seq)); err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
	return db.FinishRun(ctx, r.ID, StatusDone, "")
}

// TestTwoProcessesShareOneDatabase runs a writer process (like a CLI eval)
// while this process reads and writes (like the workbench), and asserts no
// "database is locked" failure on either side.
func TestTwoProcessesShareOneDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "JEVLAB_STORE_HELPER=writer", "JEVLAB_STORE_DB="+path, "JEVLAB_STORE_DURATION=3s")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A failing test must not leave the writer running.
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// Open concurrently with the writer's own Open (both may migrate).
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	own := newRun(t, db, "reader", "jev-latest")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// duringWrite counts the passes begun while the writer was still
	// running and maxSeen the writer's answers they saw; the last pass
	// starts after it exited.
	reads, duringWrite, maxSeen := 0, 0, 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer process failed: %v\n%s", err, errb.String())
			}
			running = false
		default:
		}
		if running {
			duringWrite++
		}
		runs, err := db.Runs(ctx, RunFilter{})
		if err != nil {
			t.Fatalf("reader: %v", err)
		}
		for _, r := range runs {
			if r.Name == "writer" {
				n := 0
				if err := db.ForEachAnswer(ctx, r.ID, func(*ItemAnswer) error { n++; return nil }); err != nil {
					t.Fatalf("reader answers: %v", err)
				}
				if running && n > maxSeen {
					maxSeen = n
				}
			}
		}
		if err := db.ForEachExchange(ctx, func(pe providerExchange) error { return nil }); err != nil {
			t.Fatalf("reader exchanges: %v", err)
		}
		// The reader process writes too (the TUI saves its own runs).
		if _, err := db.SaveItems(ctx, own.ID, []ItemResult{sampleItem(fmt.Sprint("r", reads), reads, 0, 0.1)}); err != nil {
			t.Fatalf("reader write: %v", err)
		}
		reads++
		time.Sleep(5 * time.Millisecond)
	}
	writerID := strings.TrimSpace(out.String())
	r, err := db.Run(ctx, writerID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusDone || r.Done == 0 || r.Done%50 != 0 {
		t.Errorf("writer run = %+v", r)
	}
	t.Logf("reader made %d passes (%d while the writer ran); saw up to %d answers while writing; writer stored %d items", reads, duringWrite, maxSeen, r.Done)
	// A pass reads every answer stored so far, so it slows as the writer
	// fills the table (18 passes in 3s once, under -race on a loaded
	// machine): ask only for real overlap, a few passes that saw the
	// writer's answers while it was writing.
	if duringWrite < 3 || maxSeen == 0 {
		t.Errorf("reader passes while writing = %d, max answers seen then = %d; want overlap", duringWrite, maxSeen)
	}
}
