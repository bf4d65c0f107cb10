package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scaleSet is the 8-question set of the scale measurements: a choice over
// 22 options, a choice over 15, two scores and four nouls.
func scaleSet() string {
	var b strings.Builder
	b.WriteString("name: scale\nmodel: jev-latest\nstate: \"hello\"\nquestions:\n")
	choice := func(id string, n int) {
		fmt.Fprintf(&b, "  %s:\n    type: choice\n    instructions: Which %s fits the ticket best?\n    criteria:\n", id, id)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "      %s_%02d: Tickets about topic %d of %s, with words like w%d and v%d.\n", id, i, i, id, i, i)
		}
	}
	choice("intent", 22)
	choice("product", 15)
	for _, id := range []string{"urgency", "sentiment"} {
		fmt.Fprintf(&b, "  %s:\n    type: score\n    instructions: How much %s does the ticket show?\n    criteria: [none, some, clear, strong, extreme]\n", id, id)
	}
	for _, id := range []string{"refund", "churn", "abuse", "escalate"} {
		fmt.Fprintf(&b, "  %s:\n    type: noul\n    instructions: Does the ticket ask to %s?\n", id, id)
	}
	b.WriteString("dataset: data.jsonl\n")
	return b.String()
}

// writeScaleData writes n generated items with labels for every question.
func writeScaleData(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `{"id":"it-%07d","state":{"subject":"ticket %d","body":"words w%d v%d about topic %d, order A-%d, please help"},"labels":{"intent":"intent_%02d","product":"product_%02d","urgency":%d,"sentiment":%d,"refund":%t,"churn":%t,"abuse":%t,"escalate":%t}}`+"\n",
			i, i, i%22, i%15, i%7, i, i%22, i%15, i%5, (i/5)%5, i%3 == 0, i%4 == 0, i%11 == 0, i%2 == 0)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// measured is one process run: wall time and peak resident memory.
type measured struct {
	wall   time.Duration
	maxRSS int64 // bytes
	out    string
}

func runMeasured(ctx context.Context, bin string, env []string, args ...string) (measured, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	t0 := time.Now()
	err := cmd.Run()
	m := measured{wall: time.Since(t0), out: out.String()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.maxRSS = ru.Maxrss * 1024 // Linux reports KiB
	}
	if err != nil {
		return m, fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, m.out)
	}
	return m, nil
}

// repeats is how many times the bench runs show and compare: one run on
// a shared machine varies by up to 1.5×, so it reports their median wall
// time (with the fastest and slowest) and their largest RSS.
const repeats = 3

// runRepeated runs the command repeats times.
func runRepeated(ctx context.Context, bin string, env []string, args ...string) ([]measured, error) {
	var ms []measured
	for range repeats {
		m, err := runMeasured(ctx, bin, env, args...)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// spread is the median, fastest and slowest wall time of ms, and their
// largest RSS.
func spread(ms []measured) (median, fastest, slowest time.Duration, maxRSS int64) {
	walls := make([]time.Duration, len(ms))
	for i, m := range ms {
		walls[i] = m.wall
		maxRSS = max(maxRSS, m.maxRSS)
	}
	slices.Sort(walls)
	return walls[len(walls)/2], walls[0], walls[len(walls)-1], maxRSS
}

func fileSize(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// BenchmarkScale measures the commands as processes, end to end: a
// `jevlab eval` process against a separate `jevlab serve --synthetic`, then
// `jevlab show latest` and `jevlab compare` of two such runs, for each size
// in $JEVLAB_SCALE (default 10000,100000; `make bench-scale`). It reports
// eval's peak RSS, DB bytes per item, and show's and compare's wall time
// and RSS (show and compare: the median of three runs, with the slowest, and
// the largest RSS). It is skipped unless $JEVLAB_SCALE is set, so `make bench`
// stays short.
func BenchmarkScale(b *testing.B) {
	sizes := os.Getenv("JEVLAB_SCALE")
	if sizes == "" {
		b.Skip("set JEVLAB_SCALE=10000,100000 (make bench-scale) to measure the commands end to end")
	}
	// The binary make built (bench-scale passes it), else one built here.
	bin := os.Getenv("JEVLAB_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "jevlab")
		if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	} else if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			b.Fatalf("JEVLAB_SCALE: %q is not a size", s)
		}
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				scaleOnce(b, bin, n)
			}
		})
	}
}

func scaleOnce(b *testing.B, bin string, n int) {
	dir := b.TempDir()
	// $JEVLAB_SCALE_DIR keeps the generated files and database there (one
	// subdirectory per size) for inspection, e.g. with sqlite3's dbstat.
	if keep := os.Getenv("JEVLAB_SCALE_DIR"); keep != "" {
		dir = filepath.Join(keep, fmt.Sprintf("items-%d", n))
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "questions.yaml"), []byte(scaleSet()), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := writeScaleData(filepath.Join(dir, "data.jsonl"), n); err != nil {
		b.Fatal(err)
	}
	db := filepath.Join(dir, "jevlab.db")
	env := append(os.Environ(), "JEVLAB_DB="+db, "TYPESAFE_API_KEY=", "XDG_DATA_HOME="+dir, "NO_COLOR=1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()

	serve := exec.CommandContext(ctx, bin, "serve", "--synthetic", "--addr", "127.0.0.1:0")
	serve.Env = env
	stdout, err := serve.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	sc := bufio.NewScanner(stdout)
	base := ""
	re := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		b.Fatal("jevlab serve printed no address")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	set := filepath.Join(dir, "questions.yaml")
	b.ResetTimer()
	evals := make([]measured, 2)
	for k := range evals {
		m, err := runMeasured(ctx, bin, env, "eval", "--base-url", base, "--concurrency", "16", "--rps", "1000000", set)
		if err != nil {
			b.Fatal(err)
		}
		evals[k] = m
	}
	dbBytes := fileSize(db, db+"-wal")
	shows, err := runRepeated(ctx, bin, env, "show", "latest")
	if err != nil {
		b.Fatal(err)
	}
	showJSON, err := runMeasured(ctx, bin, env, "show", "latest", "--json")
	if err != nil {
		b.Fatal(err)
	}
	var probe struct {
		Questions []json.RawMessage `json:"questions"`
	}
	if err := json.Unmarshal([]byte(showJSON.out), &probe); err != nil || len(probe.Questions) != 8 {
		b.Fatalf("show --json: %v (%d questions)", err, len(probe.Questions))
	}
	cmps, err := runRepeated(ctx, bin, env, "compare", "latest~1", "latest")
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	mb := func(v int64) float64 { return float64(v) / (1 << 20) }
	b.ReportMetric(evals[0].wall.Seconds(), "eval-s")
	b.ReportMetric(mb(evals[0].maxRSS), "eval-RSS-MB")
	b.ReportMetric(float64(dbBytes)/float64(2*n), "DB-B/item")
	b.ReportMetric(mb(dbBytes), "DB-MB(2runs)")
	showMed, _, showMax, showRSS := spread(shows)
	b.ReportMetric(showMed.Seconds(), "show-s")
	b.ReportMetric(showMax.Seconds(), "show-s-max")
	b.ReportMetric(mb(showRSS), "show-RSS-MB")
	cmpMed, cmpMin, cmpMax, cmpRSS := spread(cmps)
	b.ReportMetric(cmpMed.Seconds(), "compare-s")
	b.ReportMetric(cmpMin.Seconds(), "compare-s-min")
	b.ReportMetric(cmpMax.Seconds(), "compare-s-max")
	b.ReportMetric(mb(cmpRSS), "compare-RSS-MB")
}
