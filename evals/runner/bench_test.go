package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
	"github.com/jevlab/jevlab/store"
)

// streamItems yields n generated items without holding them.
func streamItems(n int) func(fn func(dataset.Item) error) error {
	teams := []string{"billing", "orders", "account"}
	return func(fn func(dataset.Item) error) error {
		for i := 0; i < n; i++ {
			text := fmt.Sprintf("ticket %d: %s %s %s", i, words[i%len(words)], words[(i*7)%len(words)], words[(i*5+3)%len(words)])
			st, _ := json.Marshal(text)
			it := dataset.Item{ID: "item-" + strconv.Itoa(i), State: st, Line: i + 1,
				Labels: map[string]dataset.Label{"q0": {Index: i % 3, Text: teams[i%3]}}}
			if err := fn(it); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkEvalThroughput evaluates b.N items of 8 choice questions against
// a stand-in answering instantly over loopback HTTP, persisting every answer
// to a temporary database. Target: >= 3,000 items/s on 2 cores.
func BenchmarkEvalThroughput(b *testing.B) {
	c, _ := standinClient(b, standin.Faults{}, systemone.Config{Concurrency: 16})
	set := wideSet(b, 8)
	db := openDB(b)
	n := max(b.N, 100)
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	id, err := Run(context.Background(), Config{Set: set, Source: streamItems(n), Provider: c, DB: db, Concurrency: 16}, nil)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	r, _ := db.Run(context.Background(), id)
	if r.Done != n || r.Errors != 0 {
		b.Fatalf("stored %d items with %d errors, want %d and 0", r.Done, r.Errors, n)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "items/s")
	// CPU per item covers client, stand-in and store together; on a shared
	// machine it is steadier than the wall-clock rate.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n), "cpu-µs/item")
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRateLimitSaturation runs 1,000 items against a stand-in that
// admits 200 requests/s (429 above it) with 50 ms latency, the client
// limited to 200 requests/s. It reports achieved/limit (target >= 0.95)
// and fails if any item is lost or fails.
func BenchmarkRateLimitSaturation(b *testing.B) {
	const limit, n = 200.0, 1000
	c, srv := standinClient(b, standin.Faults{RateLimitRPS: limit, Latency: 50 * time.Millisecond},
		systemone.Config{Concurrency: 32, RPS: limit, BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
	set := testSet(b)
	var ratio float64
	for i := 0; i < b.N; i++ {
		db := openDB(b)
		start := time.Now()
		id, err := Run(context.Background(), Config{Set: set, Source: streamItems(n), Provider: c, DB: db, Concurrency: 32}, nil)
		elapsed := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		r, _ := db.Run(context.Background(), id)
		if r.Done != n || r.Errors != 0 {
			b.Fatalf("stored %d items with %d errors; want %d, 0 (none lost)", r.Done, r.Errors, n)
		}
		ratio = float64(n) / elapsed.Seconds() / limit
	}
	st := srv.Stats()
	b.ReportMetric(ratio, "achieved/limit")
	b.ReportMetric(float64(st.RateLimited), "429s")
}

// TestMain lets the test binary run one memory probe as a child process
// (JEVLAB_RUNNER_MEM=N): a run of N items, printing its peak RSS.
func TestMain(m *testing.M) {
	if v := os.Getenv("JEVLAB_RUNNER_MEM"); v != "" {
		n, _ := strconv.Atoi(v)
		if err := memProbe(n, os.Getenv("JEVLAB_RUNNER_MEM_DIR")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// memProbe evaluates n streamed items (3 questions) against an in-process
// stand-in over loopback and prints "peakRSS_kB items".
func memProbe(n int, dir string) error {
	srv, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		return err
	}
	hs := newLoopbackServer(srv)
	defer hs.Close()
	c, err := systemone.New(systemone.Config{BaseURL: hs.URL, Concurrency: 16})
	if err != nil {
		return err
	}
	db, err := store.Open(filepath.Join(dir, "mem.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	set := wideSet(nil, 3)
	id, err := Run(context.Background(), Config{Set: set, Source: streamItems(n), Provider: c, DB: db, Concurrency: 16}, nil)
	if err != nil {
		return err
	}
	r, err := db.Run(context.Background(), id)
	if err != nil {
		return err
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Printf("%s %d\n", strings.Fields(line)[1], r.Done)
		}
	}
	return nil
}

// BenchmarkEvalMemory reports the peak resident memory of a whole run of
// 10,000 and of 100,000 items, each in a fresh process. Items are streamed
// and answers go straight to the database, so the two should be close.
func BenchmarkEvalMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "JEVLAB_RUNNER_MEM="+strconv.Itoa(n), "JEVLAB_RUNNER_MEM_DIR="+b.TempDir())
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("probe: %v", err)
				}
				f := strings.Fields(string(out))
				if len(f) != 2 || f[1] != strconv.Itoa(n) {
					b.Fatalf("probe printed %q", out)
				}
				kb, _ := strconv.Atoi(f[0])
				b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
			}
		})
	}
}
