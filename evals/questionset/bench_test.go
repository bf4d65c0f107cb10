package questionset

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

func banking77(b *testing.B) []byte {
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(b), "fixtures", "banking77", "questions.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParseBanking77 loads the 77-option default example.
func BenchmarkParseBanking77(b *testing.B) {
	data := banking77(b)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse("q.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalEditedBanking77 saves the default example after a
// one-option edit: the structural sync plus the YAML encoder, what the TUI
// pays per save.
func BenchmarkMarshalEditedBanking77(b *testing.B) {
	data := banking77(b)
	s, err := Parse("q.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		label := "x"
		if i%2 == 1 {
			label = "y"
		}
		if err := s.SetOptionDescription("intent", "age_limit", []byte(`"`+label+`"`)); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalUnchangedBanking77 is the unchanged-file shortcut.
func BenchmarkMarshalUnchangedBanking77(b *testing.B) {
	s, err := Parse("q.yaml", banking77(b))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := s.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLargeJSON parses a one-line 2 MB wire request (200
// questions × 50 options): positions are tracked in linear time.
func BenchmarkParseLargeJSON(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"model":"jev-latest","state":"s","questions":{`)
	for q := 0; q < 200; q++ {
		if q > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `"q%d":{"type":"choice","instructions":"Which one?","criteria":{`, q)
		for o := 0; o < 50; o++ {
			if o > 0 {
				buf.WriteByte(',')
			}
			fmt.Fprintf(&buf, `"option_%d":"a description of option %d that is long enough to matter %s"`, o, o, strings.Repeat("é", 100))
		}
		buf.WriteString("}}")
	}
	buf.WriteString("}}")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse("big.json", data); err != nil {
			b.Fatal(err)
		}
	}
}
