// Package formats reads and writes the files other Jev tools keep on disk
// — jev-packs pack folders, jevassert prediction files, jevkit JEVL v1
// records and jev-eval configs, rows and caches — and turns them into
// jevlab's own forms: a question set, a dataset, recorded exchanges
// (fixtures) and the answers of recorded runs.
//
// Each reader enforces its format's own rules and fails with file:line
// when a file breaks them. What a format carries that jevlab has no slot
// for is returned as a note (the caller prints it and keeps it in the
// written set's header), never dropped silently.
package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/internal/srcpos"
)

// MaxFileBytes caps each file an import reads whole (a pack's cases, a
// recording, a cache): 512 MiB, far above any real one, so a stranger's
// file cannot exhaust memory; pipes and devices are refused outright.
const MaxFileBytes = 512 << 20

// readFile reads a regular file of at most MaxFileBytes.
func readFile(path, what string) ([]byte, error) {
	return inputfile.ReadFile(path, what, MaxFileBytes, "")
}

// Error is one rule a file breaks, at file:line.
type Error struct {
	File string
	Line int
	Msg  string
}

// Error formats file:line: message.
func (e *Error) Error() string { return srcpos.Format(e.File, e.Line, 0) + ": " + e.Msg }

func errAt(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Folder is what an import writes: a question set with its dataset and
// recordings beside it, and the notes on what had no slot.
type Folder struct {
	// Set is the question set (its Dataset and Fixtures name files of
	// Files, relative to the folder).
	Set *questionset.Set
	// Files holds each file to write beside the set, by relative name.
	Files map[string][]byte
	// Notes name what the source carries that jevlab cannot represent.
	Notes []string
	// Runs are the recorded runs the source holds (jevassert rounds, a
	// jev-eval cache), to be stored.
	Runs []Run
	// Source names the imported input, for the header comment.
	Source string
	// Format is the source format's name.
	Format string
}

// Run is one recorded run: the answers of every round (repeat) per
// dataset item.
type Run struct {
	// Name is the run's name (the recording's file name).
	Name string
	// Model is the requested model ("" when unknown).
	Model string
	// Rounds holds one slice per repeat, each in recording order.
	Rounds [][]Record
	// Notes are the run's own notes.
	Notes []string
}

// Record is one recorded answer to one item's request.
type Record struct {
	// ItemID is the dataset item answered.
	ItemID string
	// Model is the resolved model ("" when unknown).
	Model string
	// LatencyMS is the recorded latency, 0 when unknown.
	LatencyMS float64
	// InputTokens and OutputTokens are the response usage (-1 when
	// unknown).
	InputTokens, OutputTokens int64
	// Answers is the response's answers object as recorded (nil on error).
	Answers json.RawMessage
	// Error is the recorded error text ("" on success).
	Error string
	// Line is where the record is in its file.
	Line int
}

// Marshal renders the folder's question set with a header naming the
// source and every note.
func (f *Folder) Marshal() ([]byte, error) {
	body, err := f.Set.Marshal()
	if err != nil {
		return nil, fmt.Errorf("marshal imported set: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Imported by jevlab from %s (%s).\n", oneLine(f.Source), f.Format)
	for _, n := range f.Notes {
		for _, l := range strings.Split("Note: "+n, "\n") {
			b.WriteString("# ")
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	b.Write(body)
	return b.Bytes(), nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// jsonLines calls fn for every line of data with its 1-based number;
// blank lines are passed too (the caller decides).
func jsonLines(data []byte, fn func(line int, text []byte) error) error {
	line := 0
	for len(data) > 0 {
		line++
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		if line == 1 {
			l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
		}
		if err := fn(line, bytes.TrimRight(l, "\r")); err != nil {
			return err
		}
	}
	return nil
}

// object decodes one JSON object line, keeping its keys in order.
func object(file string, line int, text []byte) (map[string]json.RawMessage, []string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(text, &m); err != nil {
		if json.Valid(text) {
			return nil, nil, errAt(file, line, "each line must be a JSON object")
		}
		return nil, nil, errAt(file, line, "invalid JSON: %v", err)
	}
	if m == nil {
		return nil, nil, errAt(file, line, "each line must be a JSON object, not null")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m, keys, nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// jsonString reads raw as a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// plural returns "n word" or "n words".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
