//go:build unix

package dataset

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/internal/testutil"
)

// Issue 10 item 3: every resource attack ends within 10 s, with a clear
// message naming its limit, under 200 MB resident. Each test sets its own
// limits and runs in a child process whose peak memory is measured.
const (
	attackTime = 10 * time.Second
	attackRSS  = 200 << 20
)

// gzipBomb writes a multi-member gzip file: members copies of one member
// holding block decompressed. A 1 MB block of 'x' compresses to about
// 1 KB, so 1024 members are a ~1 MB file that decompresses to 1 GB with
// no newline: one 1 GB line.
func gzipBomb(t *testing.T, path string, block []byte, members int) {
	t.Helper()
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	zw.Write(block)
	zw.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < members; i++ {
		if _, err := f.Write(one.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGzipBombOneHugeLine(t *testing.T) {
	testutil.Bounded(t, attackTime, attackRSS, func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "bomb.jsonl.gz")
		gzipBomb(t, p, bytes.Repeat([]byte("x"), 1<<20), 1024)
		if st, _ := os.Stat(p); st.Size() > 2<<20 {
			t.Fatalf("bomb is %d bytes", st.Size())
		}
		err := Stream(p, Options{MaxLineBytes: 4 << 20}, nil, func(Item) error { return nil })
		want := p + ":1: this line is longer than 4MB, the limit for one line (raise it with --max-line-size); stopped reading"
		if err == nil || err.Error() != want {
			t.Fatalf("err %v\nwant %s", err, want)
		}
	})
}

func TestGzipBombDecompressionCap(t *testing.T) {
	testutil.Bounded(t, attackTime, attackRSS, func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "bomb.jsonl.gz")
		// 1 GB of blank lines: each line is short, so only the
		// decompression cap stops it early.
		gzipBomb(t, p, bytes.Repeat([]byte(strings.Repeat(" ", 1023)+"\n"), 1024), 1024)
		err := Stream(p, Options{MaxDecompressedBytes: 32 << 20}, nil, func(Item) error { return nil })
		want := "decompressed dataset " + p + " is larger than 32MB, the limit (raise it with --max-decompressed)"
		if err == nil || err.Error() != want {
			t.Fatalf("err %v\nwant %s", err, want)
		}
	})
}

// TestHugeLinePlainFile: a plain file with one line far over the cap, as
// JSONL and as a CSV record (a quoted field spanning many short lines).
func TestHugeLinePlainFile(t *testing.T) {
	testutil.Bounded(t, attackTime, attackRSS, func(t *testing.T) {
		dir := t.TempDir()
		jl := filepath.Join(dir, "d.jsonl")
		f, err := os.Create(jl)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"id": "a", "state": "x"}` + "\n" + `{"id": "b", "state": "`)
		chunk := bytes.Repeat([]byte("y"), 1<<20)
		for i := 0; i < 64; i++ { // one 64 MB line
			f.Write(chunk)
		}
		f.WriteString("\"}\n")
		f.Close()
		err = Stream(jl, Options{MaxLineBytes: 1 << 20}, nil, func(Item) error { return nil })
		if err == nil || !strings.Contains(err.Error(), jl+":2: this line is longer than 1MB") {
			t.Fatalf("jsonl: %v", err)
		}
		cs := filepath.Join(dir, "d.csv")
		f, _ = os.Create(cs)
		f.WriteString("id,state\na,x\nb,\"")
		line := []byte(strings.Repeat("z", 99) + "\n")
		for i := 0; i < 80000; i++ { // 8 MB in one quoted field
			f.Write(line)
		}
		f.WriteString("\"\n")
		f.Close()
		err = Stream(cs, Options{MaxLineBytes: 1 << 20}, nil, func(Item) error { return nil })
		if err == nil || !strings.Contains(err.Error(), cs+":3: this record is longer than 1MB, the limit for one record (raise it with --max-line-size)") {
			t.Fatalf("csv: %v", err)
		}
		// Under the cap, the same kind of file reads.
		if err := Stream(cs, Options{MaxLineBytes: 16 << 20}, nil, func(Item) error { return nil }); err != nil {
			t.Fatalf("csv under a raised cap: %v", err)
		}
	})
}

// TestNotRegularFiles: /dev/zero, a FIFO (nobody writing) and a directory
// as the dataset are refused at once.
func TestNotRegularFiles(t *testing.T) {
	testutil.Bounded(t, attackTime, attackRSS, func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "fifo.jsonl")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		for path, kind := range map[string]string{"/dev/zero": "a character device", fifo: "a FIFO (named pipe)", dir: "a directory"} {
			err := Stream(path, Options{}, nil, func(Item) error { return nil })
			if !inputfile.IsNotRegular(err) || !strings.Contains(err.Error(), "dataset "+path+" is "+kind+", not a regular file") {
				t.Errorf("%s: %v", path, err)
			}
		}
	})
}
