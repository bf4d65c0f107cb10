// Package bundle writes and reads run bundles: one portable, versioned,
// gzip-compressed file (.jevrun) holding a stored run with everything show
// and compare need — the question-set and dataset snapshots, the run's
// header and every item result with its answers and their provenance — so a
// run recorded in one database can be compared, or loaded, in another (a
// CI job comparing against the main branch's baseline).
//
// The file is gzip'd JSON Lines. The first line is the header
// {"format": "jevlab-run-bundle", "version": 1, "jevlab": "<version>",
// "run": "<id>"}; then one record per line ("run", "question_set",
// "dataset", one "item" per dataset item, one "result" per item × repeat
// with its answers); the last line is {"kind": "end", "records": N,
// "content_sha256": H}, H the SHA-256 of every record line between header
// and end. A run exported twice, from any database that holds it, has the
// same H: import is idempotent by run id and H.
//
// Bundles are files from strangers: only regular files are read, the file
// and its decompressed stream and each line are capped, a version newer
// than this jevlab's is refused, every hash the bundle claims is checked,
// and nothing in a bundle (a path, an id) is ever used to open or write a
// file.
package bundle

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// Format is the header's "format" value.
const Format = "jevlab-run-bundle"

// Version is the bundle format version this package writes and the newest
// it reads.
const Version = 1

// Ext is the conventional file extension of a run bundle.
const Ext = ".jevrun"

// Header is a bundle's first line.
type Header struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Jevlab  string    `json:"jevlab"` // the version of jevlab that wrote it
	Run     string    `json:"run"`
	Written time.Time `json:"written_at,omitzero"`
}

// RunRecord is the run's header as a bundle carries it: the fields of
// store.Run that describe what was asked and what came back. It is its own
// type so the file format does not move when store.Run grows.
type RunRecord struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	SetHash      string          `json:"question_set_hash"`
	SetName      string          `json:"question_set"`
	SetPath      string          `json:"question_set_path"`
	DatasetHash  string          `json:"dataset_hash"`
	DatasetPath  string          `json:"dataset"`
	ProviderKind string          `json:"provider"`
	BaseURL      string          `json:"base_url"`
	Model        string          `json:"model"`
	Models       []string        `json:"resolved_models"`
	Status       string          `json:"status"`
	Reason       string          `json:"reason"`
	StartedAt    time.Time       `json:"started_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	FinishedAt   time.Time       `json:"finished_at,omitzero"`
	Repeat       int             `json:"repeat"`
	Total        int             `json:"total"`
	Done         int             `json:"done"`
	Errors       int             `json:"errors"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	CostUSD      float64         `json:"cost_usd"`
	Version      string          `json:"jevlab_version"`
	Settings     json.RawMessage `json:"settings"`
}

// record is one body line; Kind says which fields are set.
type record struct {
	Kind string `json:"kind"`
	// run
	Run *RunRecord `json:"run,omitempty"`
	// question_set, dataset
	Hash string          `json:"hash,omitempty"`
	Name string          `json:"name,omitempty"`
	Path string          `json:"path,omitempty"`
	Body json.RawMessage `json:"body,omitempty"`
	N    *int            `json:"items,omitempty"`
	// item
	Seq    *int            `json:"seq,omitempty"`
	ID     string          `json:"id,omitempty"`
	State  json.RawMessage `json:"state,omitempty"`
	Labels json.RawMessage `json:"labels,omitempty"`
	// result
	Result *resultRecord `json:"result,omitempty"`
	// end
	Records int    `json:"records,omitempty"`
	SHA256  string `json:"content_sha256,omitempty"`
}

// resultRecord is one item × repeat with its answers.
type resultRecord struct {
	ItemID    string             `json:"item_id"`
	Seq       int                `json:"seq"`
	Repeat    int                `json:"repeat"`
	LatencyMS float64            `json:"latency_ms"`
	Usage     provider.Usage     `json:"usage"`
	CostUSD   float64            `json:"cost_usd"`
	Model     string             `json:"model"`
	RequestID string             `json:"request_id"`
	Attempts  int                `json:"attempts"`
	ErrKind   string             `json:"error_kind"`
	ErrMsg    string             `json:"error"`
	Answers   []store.ItemAnswer `json:"answers"`
}

// Summary says what a bundle holds (and, for Import, what happened).
type Summary struct {
	Run      string // run id
	SHA256   string // content hash
	Jevlab   string // version that wrote it
	Items    int    // dataset items
	Results  int    // item × repeats
	Answers  int
	Imported bool // Import: false when the database already held this run, unchanged
}

// Export writes run (an id already resolved) of db to w as a bundle.
// jevlabVersion is recorded in the header.
func Export(ctx context.Context, db *store.DB, runID, jevlabVersion string, w io.Writer) (*Summary, error) {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(zw, 1<<16)
	hd := Header{Format: Format, Version: Version, Jevlab: jevlabVersion, Run: runID, Written: time.Now().UTC().Truncate(time.Second)}
	if err := writeJSONLine(bw, hd); err != nil {
		return nil, err
	}
	sum, err := writeBody(ctx, db, runID, bw)
	if err != nil {
		return nil, err
	}
	sum.Jevlab = jevlabVersion
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return sum, nil
}

// ContentHash returns the content hash a bundle of run would carry,
// without writing one: Import compares it with a bundle's to tell the same
// run from a different one under the same id.
func ContentHash(ctx context.Context, db *store.DB, runID string) (string, error) {
	sum, err := writeBody(ctx, db, runID, io.Discard)
	if err != nil {
		return "", err
	}
	return sum.SHA256, nil
}

// writeBody writes every record line and the end line; the hash covers the
// record lines.
func writeBody(ctx context.Context, db *store.DB, runID string, out io.Writer) (*Summary, error) {
	r, err := db.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	w := &countingWriter{w: io.MultiWriter(out, h)}
	sum := &Summary{Run: r.ID}
	rr := runRecordOf(r)
	if err := w.record(record{Kind: "run", Run: rr}); err != nil {
		return nil, err
	}
	snap, err := db.QuestionSet(ctx, r.SetHash)
	if err != nil {
		return nil, fmt.Errorf("export run %s: %w", r.ID, err)
	}
	// The run's own name and path, not the snapshot's first-seen ones, so
	// every database holding the run writes the same bytes.
	if err := w.record(record{Kind: "question_set", Hash: snap.Hash, Name: r.SetName, Path: r.SetPath, Body: snap.Body}); err != nil {
		return nil, err
	}
	if r.DatasetHash != "" {
		var items []store.DatasetItem
		if err := db.ForEachDatasetItem(ctx, r.DatasetHash, func(it store.DatasetItem) error {
			items = append(items, it)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("export run %s: %w", r.ID, err)
		}
		n := len(items)
		if err := w.record(record{Kind: "dataset", Hash: r.DatasetHash, Path: r.DatasetPath, N: &n}); err != nil {
			return nil, err
		}
		for _, it := range items {
			seq := it.Seq
			if err := w.record(record{Kind: "item", Seq: &seq, ID: it.ID, State: it.State, Labels: it.Labels}); err != nil {
				return nil, err
			}
		}
		sum.Items = n
	}
	var results []*resultRecord
	index := map[store.ItemKey]*resultRecord{}
	if err := db.ForEachItemResult(ctx, r.ID, func(it *store.ItemResult) error {
		rec := &resultRecord{ItemID: it.ItemID, Seq: it.Seq, Repeat: it.Repeat, LatencyMS: it.LatencyMS, Usage: it.Usage,
			CostUSD: it.CostUSD, Model: it.Model, RequestID: it.RequestID, Attempts: it.Attempts, ErrKind: it.ErrKind, ErrMsg: it.ErrMsg,
			Answers: []store.ItemAnswer{}}
		results = append(results, rec)
		index[store.ItemKey{ItemID: it.ItemID, Repeat: it.Repeat}] = rec
		return nil
	}); err != nil {
		return nil, fmt.Errorf("export run %s: %w", r.ID, err)
	}
	if err := db.ForEachAnswer(ctx, r.ID, func(a *store.ItemAnswer) error {
		rec := index[store.ItemKey{ItemID: a.ItemID, Repeat: a.Repeat}]
		if rec == nil {
			return fmt.Errorf("export run %s: answer of item %s repeat %d has no item result", r.ID, a.ItemID, a.Repeat)
		}
		rec.Answers = append(rec.Answers, *a)
		sum.Answers++
		return nil
	}); err != nil {
		return nil, err
	}
	for _, rec := range results {
		if err := w.record(record{Kind: "result", Result: rec}); err != nil {
			return nil, err
		}
	}
	sum.Results = len(results)
	sum.SHA256 = hex.EncodeToString(h.Sum(nil))
	if err := writeJSONLine(out, record{Kind: "end", Records: w.n, SHA256: sum.SHA256}); err != nil {
		return nil, err
	}
	return sum, nil
}

func runRecordOf(r *store.Run) *RunRecord {
	models := r.Models
	if models == nil {
		models = []string{}
	}
	settings := r.Settings
	if len(settings) == 0 {
		settings = json.RawMessage("{}")
	}
	return &RunRecord{ID: r.ID, Name: r.Name, SetHash: r.SetHash, SetName: r.SetName, SetPath: r.SetPath, DatasetHash: r.DatasetHash,
		DatasetPath: r.DatasetPath, ProviderKind: r.ProviderKind, BaseURL: r.BaseURL, Model: r.Model, Models: models,
		Status: string(r.Status), Reason: r.Reason, StartedAt: r.StartedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), FinishedAt: r.FinishedAt.UTC(),
		Repeat: r.Repeat, Total: r.Total, Done: r.Done, Errors: r.Errors, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CostUSD: r.CostUSD, Version: r.Version, Settings: settings}
}

func (rr *RunRecord) storeRun() *store.Run {
	return &store.Run{ID: rr.ID, Name: rr.Name, SetHash: rr.SetHash, SetName: rr.SetName, SetPath: rr.SetPath, DatasetHash: rr.DatasetHash,
		DatasetPath: rr.DatasetPath, ProviderKind: rr.ProviderKind, BaseURL: rr.BaseURL, Model: rr.Model, Models: rr.Models,
		Status: store.Status(rr.Status), Reason: rr.Reason, StartedAt: rr.StartedAt, UpdatedAt: rr.UpdatedAt, FinishedAt: rr.FinishedAt,
		Repeat: rr.Repeat, Total: rr.Total, Done: rr.Done, Errors: rr.Errors, InputTokens: rr.InputTokens, OutputTokens: rr.OutputTokens,
		CostUSD: rr.CostUSD, Version: rr.Version, Settings: rr.Settings}
}

type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) record(r record) error {
	c.n++
	return writeJSONLine(c.w, r)
}

// writeJSONLine writes v as one line of compact JSON (HTML characters
// left as they are, so the bytes are stable).
func writeJSONLine(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Limits bound what reading a bundle may cost.
type Limits struct {
	MaxFileBytes         int64 // the compressed file
	MaxDecompressedBytes int64 // the decompressed stream
	MaxLineBytes         int64 // one line (a record)
}

// Default limits.
const (
	DefaultMaxFileBytes         = 1 << 30
	DefaultMaxDecompressedBytes = 4 << 30
	DefaultMaxLineBytes         = 64 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxDecompressedBytes <= 0 {
		l.MaxDecompressedBytes = DefaultMaxDecompressedBytes
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	return l
}

// Error is a bundle that breaks the format, with where.
type Error struct {
	Path string
	Line int // 0 when not about one line
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// NewerError is a bundle written in a format version newer than this
// jevlab reads.
type NewerError struct {
	Path    string
	Version int
	Jevlab  string
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("%s: run bundle format version %d (written by jevlab %s) is newer than this jevlab reads (version %d): upgrade jevlab to read it",
		e.Path, e.Version, e.Jevlab, Version)
}

// NotBundleError says a file is not a run bundle at all.
type NotBundleError struct {
	Path string
	Why  string
}

func (e *NotBundleError) Error() string {
	return fmt.Sprintf("%s is not a jevlab run bundle (%s); make one with 'jevlab runs export RUN -o FILE%s'", e.Path, e.Why, Ext)
}

// IsNotBundle reports whether err says the file is not a bundle at all (as
// opposed to a bundle that is broken, too new or too large).
func IsNotBundle(err error) bool {
	var nb *NotBundleError
	return errors.As(err, &nb)
}

// Bundle is a bundle read into memory and checked.
type Bundle struct {
	Header  Header
	Run     *RunRecord
	Set     store.QuestionSetSnapshot
	Items   []store.DatasetItem
	Results []store.ItemResult
	SHA256  string

	types map[string]provider.QuestionType // question id → type, from Set
}

// Summary says what b holds.
func (b *Bundle) Summary() *Summary {
	s := &Summary{Run: b.Run.ID, SHA256: b.SHA256, Jevlab: b.Header.Jevlab, Items: len(b.Items), Results: len(b.Results)}
	for _, r := range b.Results {
		s.Answers += len(r.Answers)
	}
	return s
}

// Read opens the bundle at path (a regular file only) and reads and
// checks it within lim.
func Read(path string, lim Limits) (*Bundle, error) {
	lim = lim.withDefaults()
	f, size, err := inputfile.Open(path, "run bundle")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > lim.MaxFileBytes {
		return nil, &inputfile.TooLargeError{What: "run bundle", Path: path, Limit: lim.MaxFileBytes, Setting: "--max-bundle-size"}
	}
	return decode(path, io.LimitReader(f, lim.MaxFileBytes+1), lim)
}

// Sniff reports whether the file at path opens as a run bundle: a regular
// file, gzip, whose first line is a bundle header. It reads at most a few
// KB.
func Sniff(path string) bool {
	f, _, err := inputfile.Open(path, "run bundle")
	if err != nil {
		return false
	}
	defer f.Close()
	zr, err := gzip.NewReader(io.LimitReader(f, 1<<20))
	if err != nil {
		return false
	}
	br := bufio.NewReaderSize(inputfile.CapReader(zr, 64<<10, errors.New("too long")), 4096)
	line, err := br.ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return false
	}
	var h Header
	return json.Unmarshal(bytes.TrimSpace(line), &h) == nil && h.Format == Format
}

func decode(path string, r io.Reader, lim Limits) (*Bundle, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, &NotBundleError{Path: path, Why: "not gzip-compressed"}
	}
	defer zr.Close()
	tooBig := &inputfile.TooLargeError{What: "decompressed run bundle", Path: path, Limit: lim.MaxDecompressedBytes, Setting: "--max-decompressed"}
	sc := bufio.NewScanner(inputfile.CapReader(zr, lim.MaxDecompressedBytes, tooBig))
	sc.Buffer(make([]byte, 0, min(1<<16, lim.MaxLineBytes)), int(min(lim.MaxLineBytes, 1<<40)))
	line := 0
	bad := func(format string, args ...any) error {
		return &Error{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	next := func() ([]byte, bool) {
		// A read error (a cap reached, a corrupt stream) ends the scan
		// even though the scanner still hands out the partial line.
		if !sc.Scan() || sc.Err() != nil {
			return nil, false
		}
		line++
		return sc.Bytes(), true
	}
	scanErr := func() error {
		err := sc.Err()
		if errors.Is(err, bufio.ErrTooLong) {
			return &inputfile.TooLargeError{What: fmt.Sprintf("line %d of run bundle", line+1), Path: path, Limit: lim.MaxLineBytes, Setting: "--max-line-size"}
		}
		var tl *inputfile.TooLargeError
		if errors.As(err, &tl) {
			return err
		}
		if err != nil {
			return &Error{Path: path, Line: line + 1, Msg: fmt.Sprintf("unreadable: %v (a truncated or corrupt file?)", err)}
		}
		return &Error{Path: path, Line: line, Msg: "ends before its end record: the file is truncated"}
	}

	first, ok := next()
	if !ok {
		if err := sc.Err(); err != nil {
			return nil, &NotBundleError{Path: path, Why: err.Error()}
		}
		return nil, &NotBundleError{Path: path, Why: "empty"}
	}
	b := &Bundle{}
	if err := json.Unmarshal(first, &b.Header); err != nil || b.Header.Format != Format {
		return nil, &NotBundleError{Path: path, Why: fmt.Sprintf("its first line is not a header with \"format\": %q", Format)}
	}
	if b.Header.Version > Version {
		return nil, &NewerError{Path: path, Version: b.Header.Version, Jevlab: b.Header.Jevlab}
	}
	if b.Header.Version < 1 {
		return nil, bad("header version %d: versions start at 1", b.Header.Version)
	}

	h := sha256.New()
	records := 0
	var ended bool
	var endRec record
	var datasetN = -1
	results := map[store.ItemKey]bool{}
	items := map[string]int{}
	for !ended {
		raw, ok := next()
		if !ok {
			return nil, scanErr()
		}
		var rec record
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, bad("not a bundle record: %v", err)
		}
		if rec.Kind != "end" {
			records++
			writeHashed(h, raw)
		}
		switch rec.Kind {
		case "run":
			if b.Run != nil {
				return nil, bad("a second run record")
			}
			if rec.Run == nil {
				return nil, bad("run record without \"run\"")
			}
			if err := checkRun(rec.Run, b.Header.Run); err != nil {
				return nil, bad("%v", err)
			}
			b.Run = rec.Run
		case "question_set":
			if b.Run == nil {
				return nil, bad("question_set before the run record")
			}
			if b.Set.Body != nil {
				return nil, bad("a second question_set record")
			}
			if !json.Valid(rec.Body) {
				return nil, bad("question_set body is not JSON")
			}
			if got := store.HashBytes(rec.Body); got != rec.Hash || got != b.Run.SetHash {
				return nil, bad("question_set hash %s does not match its body (%s) or the run's (%s): the bundle was altered", short(rec.Hash), short(got), short(b.Run.SetHash))
			}
			set, err := runner.ParseSnapshot(rec.Name, rec.Body)
			if err != nil {
				return nil, bad("%v", err)
			}
			b.types = map[string]provider.QuestionType{}
			for _, e := range set.Questions {
				b.types[e.ID] = e.Question.Type
			}
			b.Set = store.QuestionSetSnapshot{Hash: rec.Hash, Name: rec.Name, Path: rec.Path, Body: rec.Body}
		case "dataset":
			if b.Run == nil || b.Run.DatasetHash == "" {
				return nil, bad("dataset record but the run names no dataset")
			}
			if datasetN >= 0 {
				return nil, bad("a second dataset record")
			}
			if rec.Hash != b.Run.DatasetHash || rec.N == nil || *rec.N < 0 {
				return nil, bad("dataset record: hash %s (run's %s), items %v", short(rec.Hash), short(b.Run.DatasetHash), rec.N)
			}
			datasetN = *rec.N
		case "item":
			if datasetN < 0 {
				return nil, bad("item before the dataset record")
			}
			if rec.Seq == nil || *rec.Seq != len(b.Items) {
				return nil, bad("item seq %v: expected %d (items in dataset order)", rec.Seq, len(b.Items))
			}
			if len(b.Items) >= datasetN {
				return nil, bad("more items than the dataset record's %d", datasetN)
			}
			if rec.ID == "" || !json.Valid(rec.State) {
				return nil, bad("item %d: needs an id and a JSON state", *rec.Seq)
			}
			if _, dup := items[rec.ID]; dup {
				return nil, bad("item id %q appears twice", rec.ID)
			}
			if len(rec.Labels) > 0 {
				if _, err := runner.ParseLabels(rec.Labels); err != nil {
					return nil, bad("item %q: %v", rec.ID, err)
				}
			}
			items[rec.ID] = *rec.Seq
			b.Items = append(b.Items, store.DatasetItem{Seq: *rec.Seq, ID: rec.ID, State: rec.State, Labels: rec.Labels})
		case "result":
			if b.Set.Body == nil {
				return nil, bad("result before the question_set record")
			}
			if rec.Result == nil {
				return nil, bad("result record without \"result\"")
			}
			res, err := checkResult(rec.Result, b, items, datasetN)
			if err != nil {
				return nil, bad("%v", err)
			}
			k := store.ItemKey{ItemID: res.ItemID, Repeat: res.Repeat}
			if results[k] {
				return nil, bad("item %s repeat %d appears twice", res.ItemID, res.Repeat)
			}
			results[k] = true
			b.Results = append(b.Results, *res)
		case "end":
			ended, endRec = true, rec
		default:
			return nil, bad("unknown record kind %q (a newer bundle format?)", rec.Kind)
		}
	}
	if sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			return nil, bad("data after the end record")
		}
	}
	b.SHA256 = hex.EncodeToString(h.Sum(nil))
	if endRec.Records != records {
		return nil, bad("end record counts %d records, the bundle holds %d", endRec.Records, records)
	}
	if endRec.SHA256 != b.SHA256 {
		return nil, bad("content hash %s does not match the records (%s): the bundle was altered or damaged", short(endRec.SHA256), short(b.SHA256))
	}
	if b.Run == nil || b.Set.Body == nil {
		return nil, &Error{Path: path, Msg: "no run or no question_set record"}
	}
	if b.Run.DatasetHash != "" {
		if datasetN < 0 || len(b.Items) != datasetN {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("the dataset record promises %d items, the bundle holds %d", datasetN, len(b.Items))}
		}
		if err := checkDatasetHash(b); err != nil {
			return nil, &Error{Path: path, Msg: err.Error()}
		}
	}
	if err := checkTotals(b); err != nil {
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	return b, nil
}

func writeHashed(h hash.Hash, raw []byte) {
	h.Write(raw)
	h.Write([]byte{'\n'})
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// checkRun checks the run record's fields a stranger could get wrong.
func checkRun(r *RunRecord, headerRun string) error {
	if err := checkID(r.ID); err != nil {
		return fmt.Errorf("run id: %w", err)
	}
	if r.ID != headerRun {
		return fmt.Errorf("run record %q, header names %q", r.ID, headerRun)
	}
	if r.SetHash == "" {
		return errors.New("run names no question-set snapshot")
	}
	switch store.Status(r.Status) {
	case store.StatusDone, store.StatusInterrupted, store.StatusFailed, store.StatusRunning:
	default:
		return fmt.Errorf("run status %q: want done, interrupted, failed or running", r.Status)
	}
	if r.Repeat < 1 || r.Done < 0 || r.Errors < 0 || r.Total < 0 || r.InputTokens < 0 || r.OutputTokens < 0 || r.CostUSD < 0 {
		return errors.New("run counters out of range (repeat < 1 or a negative count)")
	}
	if len(r.Settings) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r.Settings, &obj); err != nil {
			return errors.New("run settings are not a JSON object")
		}
	}
	return nil
}

// checkID accepts the ids jevlab and its importers make: printable, no
// spaces, at most 200 bytes.
func checkID(id string) error {
	if id == "" || len(id) > 200 {
		return fmt.Errorf("%q: want 1 to 200 characters", id)
	}
	for _, c := range id {
		if c <= ' ' || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return fmt.Errorf("%q: no spaces or control characters", id)
		}
	}
	return nil
}

func checkResult(rr *resultRecord, b *Bundle, items map[string]int, datasetN int) (*store.ItemResult, error) {
	if rr.ItemID == "" {
		return nil, errors.New("result without item_id")
	}
	if datasetN >= 0 {
		seq, ok := items[rr.ItemID]
		if !ok {
			return nil, fmt.Errorf("result for item %q, which the dataset does not have", rr.ItemID)
		}
		if seq != rr.Seq {
			return nil, fmt.Errorf("result for item %q at seq %d, the dataset has it at %d", rr.ItemID, rr.Seq, seq)
		}
	}
	if rr.Repeat < 0 || rr.Repeat >= b.Run.Repeat {
		return nil, fmt.Errorf("item %q: repeat %d outside the run's %d", rr.ItemID, rr.Repeat, b.Run.Repeat)
	}
	known := b.types
	seen := map[string]bool{}
	for _, a := range rr.Answers {
		typ, ok := known[a.QuestionID]
		if !ok {
			return nil, fmt.Errorf("item %q: answer to question %q, which the question set does not have", rr.ItemID, a.QuestionID)
		}
		if a.ItemID != rr.ItemID || a.Repeat != rr.Repeat || a.Seq != rr.Seq {
			return nil, fmt.Errorf("item %q: an answer names item %q repeat %d seq %d", rr.ItemID, a.ItemID, a.Repeat, a.Seq)
		}
		if seen[a.QuestionID] {
			return nil, fmt.Errorf("item %q: question %q answered twice", rr.ItemID, a.QuestionID)
		}
		seen[a.QuestionID] = true
		if a.Answer == nil && a.ErrKind == "" {
			return nil, fmt.Errorf("item %q question %q: neither an answer nor an error", rr.ItemID, a.QuestionID)
		}
		if a.Answer != nil && a.Answer.Type != typ {
			return nil, fmt.Errorf("item %q question %q: a %s answer to a %s question", rr.ItemID, a.QuestionID, a.Answer.Type, typ)
		}
	}
	return &store.ItemResult{ItemID: rr.ItemID, Seq: rr.Seq, Repeat: rr.Repeat, LatencyMS: rr.LatencyMS, Usage: rr.Usage,
		CostUSD: rr.CostUSD, Model: rr.Model, RequestID: rr.RequestID, Attempts: rr.Attempts, ErrKind: rr.ErrKind, ErrMsg: rr.ErrMsg,
		Answers: rr.Answers}, nil
}

// checkDatasetHash recomputes the dataset snapshot's hash as a run does:
// a bundle cannot plant a dataset under another dataset's hash.
func checkDatasetHash(b *Bundle) error {
	h := runner.NewDatasetHasher()
	for _, it := range b.Items {
		labels, err := runner.ParseLabels(it.Labels)
		if err != nil {
			return fmt.Errorf("item %q: %w", it.ID, err)
		}
		h.Add(&dataset.Item{ID: it.ID, State: it.State, Labels: labels})
	}
	if got := h.Sum(); got != b.Run.DatasetHash {
		return fmt.Errorf("dataset items hash to %s, the run names %s: the bundle was altered", short(got), short(b.Run.DatasetHash))
	}
	return nil
}

// checkTotals checks the run's counters against its results, so an
// imported run's header never claims what its answers do not hold.
func checkTotals(b *Bundle) error {
	var done, errs int
	var in, out int64
	var cost float64
	for _, r := range b.Results {
		done++
		if r.ErrKind != "" {
			errs++
		}
		in += r.Usage.InputTokens
		out += r.Usage.OutputTokens
		cost += r.CostUSD
	}
	r := b.Run
	if done != r.Done || errs != r.Errors || in != r.InputTokens || out != r.OutputTokens {
		return fmt.Errorf("run %s says %d items (%d failed), %d/%d tokens, but its results hold %d (%d failed), %d/%d: the bundle was altered",
			r.ID, r.Done, r.Errors, r.InputTokens, r.OutputTokens, done, errs, in, out)
	}
	if d := cost - r.CostUSD; d > 1e-9*(1+r.CostUSD) || d < -1e-9*(1+r.CostUSD) {
		return fmt.Errorf("run %s says $%g, its results add to $%g", r.ID, r.CostUSD, cost)
	}
	return nil
}

// Import stores b in db unless db already holds it: the same run id with
// the same content hash is left as it is (Summary.Imported false); the
// same id with different content is an error that says so.
func Import(ctx context.Context, db *store.DB, b *Bundle) (*Summary, error) {
	sum := b.Summary()
	if existing, err := db.Run(ctx, b.Run.ID); err == nil && existing.Reason != store.ImportingReason {
		have, err := ContentHash(ctx, db, b.Run.ID)
		if err != nil {
			return nil, fmt.Errorf("import run %s: %w", b.Run.ID, err)
		}
		if have == b.SHA256 {
			return sum, nil
		}
		return nil, fmt.Errorf("import run %s: %s already holds a different run with this id (content %s, the bundle's %s); import it into another database (--db)",
			b.Run.ID, db.Path(), short(have), short(b.SHA256))
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	hash, err := db.SaveQuestionSet(ctx, b.Set.Name, b.Set.Path, b.Set.Body)
	if err != nil {
		return nil, err
	}
	if hash != b.Run.SetHash {
		return nil, fmt.Errorf("import run %s: question set hashes to %s, the run names %s", b.Run.ID, short(hash), short(b.Run.SetHash))
	}
	if b.Run.DatasetHash != "" {
		err := db.SaveDataset(ctx, b.Run.DatasetHash, b.Run.DatasetPath, func(yield func(store.DatasetItem) error) error {
			for _, it := range b.Items {
				if err := yield(it); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := db.ImportRun(ctx, b.Run.storeRun(), b.Results); err != nil {
		return nil, err
	}
	// What was stored must read back as what was sent.
	have, err := ContentHash(ctx, db, b.Run.ID)
	if err != nil {
		return nil, err
	}
	if have != b.SHA256 {
		return nil, fmt.Errorf("import run %s: the stored run reads back as %s, not the bundle's %s (a jevlab bug: please report it)", b.Run.ID, short(have), short(b.SHA256))
	}
	sum.Imported = true
	return sum, nil
}
