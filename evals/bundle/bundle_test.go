package bundle

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

const setYAML = `name: triage
model: jev-latest
questions:
  team:
    type: choice
    instructions: Which team handles this?
    criteria:
      billing: charges & refunds <html>
      orders: delivery
      account: login
  urgent:
    type: noul
    instructions: Is it urgent?
  mood:
    type: score
    instructions: How upset?
    criteria: [calm, annoyed, furious]
`

// fake answers deterministically; item 3 fails.
type fake struct{}

func (fake) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	if strings.Contains(string(req.State), "ticket 3:") {
		return nil, &provider.Error{Kind: provider.KindRejected, Status: 500, Message: "boom"}
	}
	h := len(req.State)
	res := &provider.Result{Model: "jev-1.13.0", Usage: provider.Usage{InputTokens: 100 + int64(h), OutputTokens: 7}, CostUSD: 0.0000042 * float64(h), Latency: time.Millisecond}
	for _, e := range req.Questions {
		a := provider.Answer{ID: e.ID, Type: e.Question.Type, Provenance: provider.Provenance{Source: provider.SourceLive, Model: "jev-1.13.0",
			RecordedAt: time.Date(2026, 12, 3, 6, 0, 0, 123456789, time.UTC)}, Raw: json.RawMessage(`{"x":1}`)}
		switch e.Question.Type {
		case provider.Noul:
			a.P = float64(h%10) / 10 // includes 0
		default:
			k := e.Question.Size()
			a.Probs = make([]float64, k)
			a.Probs[h%k] = 0.7
			a.Probs[(h+1)%k] = 0.3
			a.Confidence, a.HasConfidence = 0.55, true
			if e.Question.Type == provider.Choice {
				a.Choice = e.Question.Options[h%k].Label
			} else {
				a.Score = float64(h%k) + 0.3
			}
		}
		res.Answers = append(res.Answers, a)
	}
	return res, nil
}

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jevlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// storedRun makes a run of n items (repeat 2) in db.
func storedRun(t testing.TB, db *store.DB, n int) string {
	t.Helper()
	set, err := questionset.Parse("triage.yaml", []byte(setYAML))
	if err != nil {
		t.Fatal(err)
	}
	teams := []string{"billing", "orders", "account"}
	items := make([]dataset.Item, n)
	for i := range items {
		st, _ := json.Marshal(map[string]string{"message": fmt.Sprintf("ticket %d: %s", i, strings.Repeat("x", i%7))})
		items[i] = dataset.Item{ID: fmt.Sprintf("it-%03d", i), State: st, Line: i + 1,
			Labels: map[string]dataset.Label{"team": {Index: i % 3, Text: teams[i%3]}}}
	}
	id, err := runner.Run(context.Background(), runner.Config{Set: set, Items: items, Provider: fake{}, DB: db, Repeat: 2, DatasetPath: "/data/cases.jsonl"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func export(t testing.TB, db *store.DB, id string) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := Export(context.Background(), db, id, "v-test (commit x, go)", &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t testing.TB, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.jevrun")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// lines decompresses a bundle into its lines.
func lines(t testing.TB, b []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

func pack(t testing.TB, ls []string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(strings.Join(ls, "\n") + "\n"))
	zw.Close()
	return b.Bytes()
}

func TestRoundTripBetweenDatabases(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	id := storedRun(t, src, 12)
	data := export(t, src, id)
	path := writeFile(t, data)

	b, err := Read(path, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Run.ID != id || len(b.Items) != 12 || len(b.Results) != 24 {
		t.Fatalf("bundle run %s items %d results %d", b.Run.ID, len(b.Items), len(b.Results))
	}
	dst := openDB(t)
	sum, err := Import(ctx, dst, b)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Imported || sum.Answers != 24*3 {
		t.Fatalf("summary %+v", sum)
	}
	// The run reads back field for field, answers and items included.
	r1, _ := src.Run(ctx, id)
	r2, err := dst.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := json.Marshal(r1)
	j2, _ := json.Marshal(r2)
	if !bytes.Equal(j1, j2) {
		t.Errorf("run header differs:\n%s\n%s", j1, j2)
	}
	if r2.Errors != 2 || r2.Done != 24 {
		t.Errorf("imported run: %d done, %d errors (want 24, 2: item 3 failed twice)", r2.Done, r2.Errors)
	}
	a1, _ := src.RunAnswers(ctx, id)
	a2, _ := dst.RunAnswers(ctx, id)
	j1, _ = json.Marshal(a1)
	j2, _ = json.Marshal(a2)
	if !bytes.Equal(j1, j2) {
		t.Errorf("answers differ")
	}
	// Provenance survives: source, model, recorded time to the nanosecond.
	if a2[0].Answer == nil || a2[0].Answer.Provenance.RecordedAt.Nanosecond() != 123456789 || a2[0].Answer.Provenance.Source != provider.SourceLive {
		t.Errorf("provenance lost: %+v", a2[0].Answer)
	}
	// Same content hash from either database.
	h1, _ := ContentHash(ctx, src, id)
	h2, _ := ContentHash(ctx, dst, id)
	if h1 != h2 || h1 != b.SHA256 {
		t.Errorf("content hashes %s %s %s", h1, h2, b.SHA256)
	}
	// Importing again changes nothing.
	sum, err = Import(ctx, dst, b)
	if err != nil || sum.Imported {
		t.Fatalf("second import: %+v %v", sum, err)
	}
	var n int
	runs, _ := dst.Runs(ctx, store.RunFilter{})
	n = len(runs)
	if n != 1 {
		t.Errorf("%d runs after two imports", n)
	}
	items := 0
	dst.ForEachItemResult(ctx, id, func(*store.ItemResult) error { items++; return nil })
	if items != 24 {
		t.Errorf("%d item results after two imports, want 24", items)
	}
	// A re-export from the second database is byte-for-byte the same body.
	l1, l2 := lines(t, data), lines(t, export(t, dst, id))
	if strings.Join(l1[1:], "\n") != strings.Join(l2[1:], "\n") {
		t.Error("re-exported body differs")
	}
}

func TestSameIDDifferentContentRefused(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	id := storedRun(t, src, 5)
	ls := lines(t, export(t, src, id))
	dst := openDB(t)
	b, err := Read(writeFile(t, pack(t, ls)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, dst, b); err != nil {
		t.Fatal(err)
	}
	// Another run under the same id: rename the run in the source.
	if err := src.FinishRun(ctx, id, store.StatusInterrupted, "edited"); err != nil {
		t.Fatal(err)
	}
	b2, err := Read(writeFile(t, export(t, src, id)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Import(ctx, dst, b2)
	if err == nil || !strings.Contains(err.Error(), "different run with this id") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewerVersionRefused(t *testing.T) {
	src := openDB(t)
	ls := lines(t, export(t, src, storedRun(t, src, 3)))
	ls[0] = strings.Replace(ls[0], `"version":1`, `"version":2`, 1)
	ls[0] = strings.Replace(ls[0], `"jevlab":"v-test (commit x, go)"`, `"jevlab":"v9.0.0"`, 1)
	_, err := Read(writeFile(t, pack(t, ls)), Limits{})
	var ne *NewerError
	if !errors.As(err, &ne) || ne.Version != 2 {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"version 2", "jevlab v9.0.0", "newer than this jevlab reads (version 1)", "upgrade jevlab"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestAlteredOrBrokenRefused(t *testing.T) {
	src := openDB(t)
	ls := lines(t, export(t, src, storedRun(t, src, 4)))
	find := func(kind string) int {
		for i, l := range ls {
			if strings.HasPrefix(l, `{"kind":"`+kind+`"`) {
				return i
			}
		}
		t.Fatalf("no %s line", kind)
		return -1
	}
	edit := func(f func([]string) []string) []string {
		c := append([]string(nil), ls...)
		return f(c)
	}
	cases := []struct {
		name  string
		ls    []string
		want  string
		notOK bool
	}{
		{"answer changed", edit(func(c []string) []string {
			i := find("result")
			c[i] = strings.Replace(c[i], `"confidence":0.55`, `"confidence":0.99`, 1)
			return c
		}), "content hash", false},
		{"hash recomputed but dataset replaced", nil, "", false},
		{"truncated", edit(func(c []string) []string { return c[:len(c)-2] }), "truncated", false},
		{"unknown kind", edit(func(c []string) []string {
			return append(c[:2], append([]string{`{"kind":"attachment"}`}, c[2:]...)...)
		}), `unknown record kind "attachment"`, false},
		{"not a bundle", []string{`{"hello":1}`}, "not a jevlab run bundle", true},
		{"trailing data", append(append([]string(nil), ls...), `{"kind":"run"}`), "after the end record", false},
	}
	for _, c := range cases {
		if c.ls == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(writeFile(t, pack(t, c.ls)), Limits{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if IsNotBundle(err) != c.notOK {
				t.Errorf("IsNotBundle = %v", !c.notOK)
			}
		})
	}
	// A bundle whose hashes are all recomputed after swapping a state
	// still cannot pass for its dataset: the dataset hash is the run's.
	t.Run("dataset swapped, content hash fixed", func(t *testing.T) {
		c := append([]string(nil), ls...)
		i := find("item")
		c[i] = strings.Replace(c[i], "ticket 0", "ticket 9", 1)
		c = rehash(t, c)
		_, err := Read(writeFile(t, pack(t, c)), Limits{})
		if err == nil || !strings.Contains(err.Error(), "dataset items hash to") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("counts inflated, content hash fixed", func(t *testing.T) {
		c := append([]string(nil), ls...)
		i := find("run")
		c[i] = strings.Replace(c[i], `"done":8`, `"done":80`, 1)
		c = rehash(t, c)
		_, err := Read(writeFile(t, pack(t, c)), Limits{})
		if err == nil || !strings.Contains(err.Error(), "says 80 items") {
			t.Fatalf("err = %v", err)
		}
	})
}

// rehash rewrites the end record for the edited lines.
func rehash(t *testing.T, ls []string) []string {
	t.Helper()
	body := ls[1 : len(ls)-1]
	var all bytes.Buffer
	for _, l := range body {
		all.WriteString(l + "\n")
	}
	sum := sha256Hex(all.Bytes())
	ls[len(ls)-1] = fmt.Sprintf(`{"kind":"end","records":%d,"content_sha256":"%s"}`, len(body), sum)
	return ls
}

func TestLimitsAndFileKinds(t *testing.T) {
	src := openDB(t)
	data := export(t, src, storedRun(t, src, 30))
	path := writeFile(t, data)
	var tl *inputfile.TooLargeError
	if _, err := Read(path, Limits{MaxFileBytes: int64(len(data)) - 1}); !errors.As(err, &tl) || !strings.Contains(err.Error(), "--max-bundle-size") {
		t.Errorf("file cap: %v", err)
	}
	if _, err := Read(path, Limits{MaxDecompressedBytes: 2000}); !errors.As(err, &tl) || !strings.Contains(err.Error(), "--max-decompressed") {
		t.Errorf("decompression cap: %v", err)
	}
	if _, err := Read(path, Limits{MaxLineBytes: 300}); !errors.As(err, &tl) || !strings.Contains(err.Error(), "--max-line-size") {
		t.Errorf("line cap: %v", err)
	}
	// A gzip bomb: 1 GiB of newlines in a few MB stops at the cap.
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write([]byte(lines(t, data)[0] + "\n"))
	zeros := make([]byte, 1<<20)
	for i := range zeros {
		zeros[i] = ' '
	}
	for i := 0; i < 64; i++ {
		zw.Write(zeros)
	}
	zw.Close()
	if _, err := Read(writeFile(t, bomb.Bytes()), Limits{MaxDecompressedBytes: 8 << 20, MaxLineBytes: 128 << 20}); !errors.As(err, &tl) {
		t.Errorf("bomb: %v", err)
	}
	// A directory and a FIFO are refused without blocking.
	if _, err := Read(t.TempDir(), Limits{}); !inputfile.IsNotRegular(err) {
		t.Errorf("directory: %v", err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo.jevrun")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		if _, err := Read(fifo, Limits{}); !inputfile.IsNotRegular(err) {
			t.Errorf("fifo: %v", err)
		}
		if Sniff(fifo) {
			t.Error("a FIFO sniffed as a bundle")
		}
	}
	if !Sniff(path) {
		t.Error("a bundle did not sniff as one")
	}
	plain := filepath.Join(t.TempDir(), "latest")
	os.WriteFile(plain, []byte("not gzip"), 0o600)
	if Sniff(plain) {
		t.Error("a text file sniffed as a bundle")
	}
}

func TestImportResumesKilledImport(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	id := storedRun(t, src, 6)
	b, err := Read(writeFile(t, export(t, src, id)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	dst := openDB(t)
	// A killed import: the run row and some items, marked as importing.
	if _, err := dst.SaveQuestionSet(ctx, b.Set.Name, b.Set.Path, b.Set.Body); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, dst, b); err != nil {
		t.Fatal(err)
	}
	half := *b.Run
	half.Status, half.Reason = "running", store.ImportingReason
	other := openDB(t)
	if _, err := other.SaveQuestionSet(ctx, b.Set.Name, b.Set.Path, b.Set.Body); err != nil {
		t.Fatal(err)
	}
	other.SaveDataset(ctx, b.Run.DatasetHash, b.Run.DatasetPath, func(yield func(store.DatasetItem) error) error {
		for _, it := range b.Items {
			yield(it)
		}
		return nil
	})
	hr := half.storeRun()
	hr.Done, hr.Errors, hr.InputTokens, hr.OutputTokens, hr.CostUSD = 0, 0, 0, 0, 0
	// Simulate: insert the run and the first 3 results, leave it importing.
	if err := other.ImportRun(ctx, hr, b.Results[:3]); err != nil {
		t.Fatal(err)
	}
	sum, err := Import(ctx, other, b)
	if err != nil || !sum.Imported {
		t.Fatalf("resume: %+v %v", sum, err)
	}
	h, _ := ContentHash(ctx, other, id)
	if h != b.SHA256 {
		t.Error("resumed import differs from the bundle")
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
