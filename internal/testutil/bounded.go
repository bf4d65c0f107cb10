//go:build unix

package testutil

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// boundedEnv names the test a re-executed test binary is to run as the
// bounded child.
const boundedEnv = "JEVLAB_BOUNDED_CHILD"

// Bounded runs fn in a child process (the test binary re-executed for
// this test alone) and fails unless it finishes within timeout, passes,
// and stays under maxRSS bytes of peak resident memory: the measure a
// resource attack (a gzip bomb, /dev/zero, a FIFO) must pass. In the
// child, Bounded just runs fn. Tests that call it must not be parallel
// with tests that share state on disk.
func Bounded(t *testing.T, timeout time.Duration, maxRSS int64, fn func(t *testing.T)) {
	t.Helper()
	if os.Getenv(boundedEnv) == t.Name() {
		fn(t)
		return
	}
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	bin := childBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run="+strings.Join(parts, "/"), "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), boundedEnv+"="+t.Name())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("still running after %v (killed)\n%s", timeout, out)
	}
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child ran no test:\n%s", out)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss)
		if runtime.GOOS == "linux" {
			rss *= 1024 // kilobytes on Linux, bytes on macOS
		}
	}
	t.Logf("bounded child: %v, peak resident %.1f MB", took.Round(time.Millisecond), float64(rss)/(1<<20))
	if rss > maxRSS {
		t.Fatalf("peak resident memory %.1f MB, over the %.0f MB bound", float64(rss)/(1<<20), float64(maxRSS)/(1<<20))
	}
}

var (
	plainOnce sync.Once
	plainBin  string
	plainErr  error
)

// childBinary is the test binary the bounded child runs: this one, except
// under the race detector, whose shadow memory and slowdown would measure
// the detector rather than jevlab — then the package's test binary is
// built once without it (go test -c in the package's directory, where
// tests run), so the bound is checked on the code as users run it.
func childBinary(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return os.Args[0]
	}
	plainOnce.Do(func() {
		// One fixed path per package directory, rebuilt each run: runs
		// leave no new temporary directories behind.
		wd, err := os.Getwd()
		if err != nil {
			plainErr = err
			return
		}
		sum := sha256.Sum256([]byte(wd))
		plainBin = filepath.Join(os.TempDir(), fmt.Sprintf("jevlab-bounded-%x.test", sum[:6]))
		cmd := exec.Command("go", "test", "-c", "-buildvcs=false", "-o", plainBin, ".")
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			plainErr = fmt.Errorf("build the bounded child without -race: %v\n%s", err, out)
		}
	})
	if plainErr != nil {
		t.Fatal(plainErr)
	}
	return plainBin
}
