package dataset

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// genReader produces n JSONL items of about size bytes each on the fly,
// so a large dataset exists only as it is read.
type genReader struct {
	n, i int
	pad  string
	csv  bool
	buf  []byte
}

func newGenReader(n, size int) *genReader {
	return &genReader{n: n, pad: strconv.Quote(strings.Repeat("lorem ipsum ", size/12))}
}

// newGenCSV is newGenReader's CSV twin (plain-text states).
func newGenCSV(n, size int) *genReader {
	return &genReader{n: n, pad: strings.Repeat("lorem ipsum ", size/12), csv: true, buf: []byte("id,state,queue,urgency,refund_request\n")}
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		if g.csv {
			g.buf = fmt.Appendf(g.buf[:0], "item-%07d,%s %d,billing,%d,%t\n", g.i, g.pad, g.i, g.i%4, g.i%2 == 0)
		} else {
			g.buf = fmt.Appendf(g.buf[:0], `{"id":"item-%07d","state":{"message":%s,"n":%d},"labels":{"queue":"billing","urgency":%d,"refund_request":%t}}`+"\n",
				g.i, g.pad, g.i, g.i%4, g.i%2 == 0)
		}
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// TestStreamingMemoryIsFlat streams a 50 MB dataset (kept at 50 MB rather
// than 1 GB so CI stays fast; memory per item is what matters, and it is
// the same at any size) and checks the live heap never comes near the
// data's size: the reader holds one line, and the duplicate-id index 16
// bytes of hash per item.
func TestStreamingMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 2 × 50 MB")
	}
	set := demoSet(t)
	const items, size = 50_000, 1000 // ≈ 50 MB per format
	for _, c := range []struct {
		name string
		r    io.Reader
	}{{"big.jsonl", newGenReader(items, size)}, {"big.csv", newGenCSV(items, size)}} {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		var peak uint64
		count, bytesSeen := 0, 0
		err := Parse(c.name, c.r, Options{}, set, func(it Item) error {
			count++
			bytesSeen += len(it.State)
			if len(it.Labels) != 3 {
				t.Fatalf("%s: item %s has %d labels", c.name, it.ID, len(it.Labels))
			}
			if count%5000 == 0 {
				runtime.GC() // measure what is live, not garbage awaiting collection
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if count != items || bytesSeen < 45<<20 {
			t.Fatalf("%s: streamed %d items, %d state bytes", c.name, count, bytesSeen)
		}
		grown := int64(peak) - int64(base)
		t.Logf("%s: streamed %d MB of states; live heap grew by %.1f MB", c.name, bytesSeen>>20, float64(grown)/(1<<20))
		if grown > 8<<20 {
			t.Errorf("%s: live heap grew by %d bytes while streaming %d bytes: the reader is holding data", c.name, grown, bytesSeen)
		}
	}
}

// BenchmarkStreamJSONL measures reading and checking JSONL items (1 KB
// states, three labels each).
func BenchmarkStreamJSONL(b *testing.B) {
	set := demoSet(b)
	const items = 10_000
	var total int64
	for i := 0; i < b.N; i++ {
		r := &countingReader{r: newGenReader(items, 1000)}
		if err := Parse("b.jsonl", r, Options{}, set, func(Item) error { return nil }); err != nil {
			b.Fatal(err)
		}
		total += r.n
	}
	b.SetBytes(total / int64(b.N))
	b.ReportMetric(float64(items*b.N)/b.Elapsed().Seconds(), "items/s")
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// BenchmarkStreamCSV measures reading and checking CSV rows (1 KB
// plain-text states, three label columns).
func BenchmarkStreamCSV(b *testing.B) {
	set := demoSet(b)
	const items = 10_000
	var total int64
	for i := 0; i < b.N; i++ {
		r := &countingReader{r: newGenCSV(items, 1000)}
		if err := Parse("b.csv", r, Options{}, set, func(Item) error { return nil }); err != nil {
			b.Fatal(err)
		}
		total += r.n
	}
	b.SetBytes(total / int64(b.N))
	b.ReportMetric(float64(items*b.N)/b.Elapsed().Seconds(), "items/s")
}
