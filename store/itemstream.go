package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/klauspost/compress/zstd"

	"github.com/jevlab/jevlab/provider"
)

// A finished run's item stream (table item_streams, migration
// 20261207_0100) is what ForEachItemNoRaw returns for it, stored in that
// order: every item's answers as one group, groupsPerChunk groups a chunk.
// A comparison reads two runs whole in item id order; from item_results
// that costs a SQLite row, an inflate and the answers' strings per item,
// about half of a 100,000-item comparison's time. From the stream it is a
// row per chunk and a few bytes per answer.
//
// The stream is derived, never the record: saveItemStream writes it from
// the rows in one transaction, SaveItems deletes it with the run's
// summaries, and a run without one is read from its rows.
//
// A chunk is stored compressed with zstd (a tenth of its size: its
// groups repeat each other, and inflating it costs less than a tenth of
// what reading the rows did); inflated it is
//
//	byte    streamVersion
//	uvarint number of strings, then each as str: the chunk's question ids,
//	        label texts, error kinds, types and choices, referred to below
//	        by their index
//	uvarint number of groups, then each:
//	  uvarint length of the prefix shared with the previous group's item id
//	          (0 for a chunk's first), then str the rest of the id
//	  svarint seq
//	  uvarint number of answers, then each:
//	    uvarint flags (st* below)
//	    uvarint question id, label text, error kind (string indexes)
//	    svarint repeat                          (stRepeat: not 0)
//	    dist    latency_ms, one number          (stLatency: differs from the
//	            group's previous answer's; the first's from 0)
//	    svarint label index                     (stLabel)
//	    uvarint type (string index)             (stAnswer)
//	    dist    p                               (stP: p's bits are not 0)
//	    dist    score                           (stScore)
//	    uvarint choice (string index)           (stChoice)
//	    dist    confidence                      (stConfidence)
//	    dist    probabilities                   (stProbs)
//	    dist    the box's top, bottom, left, right (stBox)
//	    uvarint answer id (string index)        (stID: differs from the
//	            question id)
//	    (stHasConfidence, no bytes: the answer has a confidence, even 0)
//
// where str is a uvarint length and the bytes and dist is dist.go's form,
// so every number reads back bit for bit.

const streamVersion = 1

// groupsPerChunk is how many items a chunk holds: about 150 KB inflated
// (15 KB stored) at the scale benchmark's 8 questions.
const groupsPerChunk = 1024

// maxChunkBytes bounds a chunk inflated, maxChunkStrings its strings and
// maxGroupAnswers one item's answers (1,000 questions × 16 repeats), so a
// damaged or hostile database cannot make a reader allocate without
// limit. A run with a larger item keeps no stream.
const (
	maxChunkBytes   = 64 << 20
	maxChunkStrings = 1 << 20
	maxGroupAnswers = 1 << 14
)

const (
	stRepeat = 1 << iota
	stLatency
	stLabel
	stAnswer
	stP
	stScore
	stChoice
	stConfidence
	stProbs
	stBox
	stID
	stHasConfidence
)

// runKeySQL is a runs row's key for its item stream: the last update and
// the totals every SaveItems changes. A stream is read only while its
// run_key equals its run's: a jevlab from before streams, writing to the
// same database, changes the run without dropping the stream.
const runKeySQL = `updated_at || '|' || done || '|' || errors || '|' || input_tokens || '|' || output_tokens || '|' || quote(cost_usd)`

// errNotStreamable says an answer holds what a stream does not carry (a
// raw answer, provenance, decided text or error message): the run is then
// read from its rows.
var errNotStreamable = errors.New("answer not streamable")

// streamEncoder builds one chunk.
type streamEncoder struct {
	strs   map[string]uint64
	table  []byte // the strings, each as str
	nstrs  uint64
	body   []byte // the groups
	groups int
	lastID string
	one    [1]float64
}

func (e *streamEncoder) reset() {
	clear(e.strs)
	e.table, e.nstrs, e.body, e.groups, e.lastID = e.table[:0], 0, e.body[:0], 0, ""
}

func (e *streamEncoder) str(s string) uint64 {
	if i, ok := e.strs[s]; ok {
		return i
	}
	if e.strs == nil {
		e.strs = map[string]uint64{}
	}
	i := e.nstrs
	e.strs[s] = i
	e.nstrs++
	e.table = binary.AppendUvarint(e.table, uint64(len(s)))
	e.table = append(e.table, s...)
	return i
}

func (e *streamEncoder) num(b []byte, v float64) []byte {
	e.one[0] = v
	return appendDist(b, e.one[:])
}

// add appends one group, the answers of item id at seq.
func (e *streamEncoder) add(id string, seq int, group []ItemAnswer) error {
	if len(group) > maxGroupAnswers {
		return errNotStreamable
	}
	shared := 0
	for shared < len(id) && shared < len(e.lastID) && id[shared] == e.lastID[shared] {
		shared++
	}
	b := binary.AppendUvarint(e.body, uint64(shared))
	b = binary.AppendUvarint(b, uint64(len(id)-shared))
	b = append(b, id[shared:]...)
	b = binary.AppendVarint(b, int64(seq))
	b = binary.AppendUvarint(b, uint64(len(group)))
	prevLatency := 0.0
	for i := range group {
		a := &group[i]
		if a.ItemID != id || a.Seq != seq || a.Decided != "" || a.ErrMsg != "" {
			return errNotStreamable
		}
		var flags uint64
		if a.Repeat != 0 {
			flags |= stRepeat
		}
		if math.Float64bits(a.LatencyMS) != math.Float64bits(prevLatency) {
			flags |= stLatency
		}
		if a.Label != nil {
			flags |= stLabel
		}
		an := a.Answer
		if an != nil {
			if an.Raw != nil || an.Provenance != (provider.Provenance{}) {
				return errNotStreamable
			}
			flags |= stAnswer
			if math.Float64bits(an.P) != 0 {
				flags |= stP
			}
			if math.Float64bits(an.Score) != 0 {
				flags |= stScore
			}
			if an.Choice != "" {
				flags |= stChoice
			}
			if math.Float64bits(an.Confidence) != 0 {
				flags |= stConfidence
			}
			if an.HasConfidence {
				flags |= stHasConfidence
			}
			if an.Probs != nil {
				flags |= stProbs
			}
			if an.Box != nil {
				flags |= stBox
			}
			if an.ID != a.QuestionID {
				flags |= stID
			}
		}
		b = binary.AppendUvarint(b, flags)
		b = binary.AppendUvarint(b, e.str(a.QuestionID))
		b = binary.AppendUvarint(b, e.str(a.LabelText))
		b = binary.AppendUvarint(b, e.str(a.ErrKind))
		if flags&stRepeat != 0 {
			b = binary.AppendVarint(b, int64(a.Repeat))
		}
		if flags&stLatency != 0 {
			b = e.num(b, a.LatencyMS)
			prevLatency = a.LatencyMS
		}
		if flags&stLabel != 0 {
			b = binary.AppendVarint(b, int64(*a.Label))
		}
		if an == nil {
			continue
		}
		b = binary.AppendUvarint(b, e.str(string(an.Type)))
		if flags&stP != 0 {
			b = e.num(b, an.P)
		}
		if flags&stScore != 0 {
			b = e.num(b, an.Score)
		}
		if flags&stChoice != 0 {
			b = binary.AppendUvarint(b, e.str(an.Choice))
		}
		if flags&stConfidence != 0 {
			b = e.num(b, an.Confidence)
		}
		if flags&stProbs != 0 {
			b = appendDist(b, an.Probs)
		}
		if flags&stBox != 0 {
			x := an.Box
			b = appendDist(b, []float64{x.Top, x.Bottom, x.Left, x.Right})
		}
		if flags&stID != 0 {
			b = binary.AppendUvarint(b, e.str(an.ID))
		}
	}
	e.body, e.lastID = b, id
	e.groups++
	return nil
}

// chunk is the chunk built so far.
func (e *streamEncoder) chunk() []byte {
	out := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(e.table)+len(e.body))
	out = append(out, streamVersion)
	out = binary.AppendUvarint(out, e.nstrs)
	out = append(out, e.table...)
	out = binary.AppendUvarint(out, uint64(e.groups))
	return append(out, e.body...)
}

// saveItemStream stores run's item stream, unless it has one of the run
// as it is (SaveItems deletes it whenever the run changes, and its
// run_key says whether anything else did). It reads
// the rows and writes the stream in one transaction, so the stream is
// whole and of the rows as they are. A run whose answers a stream cannot
// carry keeps none.
func (db *DB) saveItemStream(ctx context.Context, runID string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		return writeItemStream(ctx, tx, runID, nil)
	})
	if err != nil {
		return fmt.Errorf("item stream of run %s: %w", runID, err)
	}
	return nil
}

// writeItemStream is saveItemStream in tx; item, when set, hears of each
// item read.
func writeItemStream(ctx context.Context, tx *sql.Tx, runID string, item func()) error {
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM item_streams WHERE run_id = ? AND run_key = (SELECT `+runKeySQL+` FROM runs WHERE id = ?)`,
		runID, runID).Scan(&have); err != nil {
		return err
	}
	if have > 0 {
		return nil
	}
	// Any other stream of the run is of rows as they were.
	if _, err := tx.ExecContext(ctx, `DELETE FROM item_streams WHERE run_id = ?`, runID); err != nil {
		return err
	}
	// A savepoint, so a run whose answers a stream cannot carry leaves
	// nothing behind in a transaction that goes on (a migration's).
	if _, err := tx.ExecContext(ctx, `SAVEPOINT item_stream`); err != nil {
		return err
	}
	var enc streamEncoder
	z, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return err
	}
	defer z.Close()
	var body []byte
	chunk := 0
	flush := func() error {
		if enc.groups == 0 {
			return nil
		}
		body = z.EncodeAll(enc.chunk(), body[:0])
		if _, err := tx.ExecContext(ctx, `INSERT INTO item_streams (run_id, chunk, run_key, body) SELECT ?, ?, `+runKeySQL+`, ? FROM runs WHERE id = ?`,
			runID, chunk, body, runID); err != nil {
			return err
		}
		chunk++
		enc.reset()
		return nil
	}
	err = forEachItemRows(ctx, tx, runID, func(group []ItemAnswer) error {
		id, seq := "", 0
		if len(group) > 0 {
			id, seq = group[0].ItemID, group[0].Seq
		}
		if err := enc.add(id, seq, group); err != nil {
			return err
		}
		if item != nil {
			item()
		}
		// A group adds at most 5 strings an answer: a chunk past half its
		// bound ends, so none passes it.
		if enc.groups == groupsPerChunk || enc.nstrs > maxChunkStrings/2 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if errors.Is(err, errNotStreamable) {
		_, err = tx.ExecContext(ctx, `ROLLBACK TO item_stream`)
	}
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `RELEASE item_stream`)
	return err
}

// streamDoneRuns is migration 20261207_0100's Go step: every run that is
// done stores its item stream, as FinishRun now does.
func streamDoneRuns(ctx context.Context, tx *sql.Tx, pr *progress) error {
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM item_results
		WHERE run_id IN (SELECT id FROM runs WHERE status = ?) GROUP BY run_id, item_id)`, string(StatusDone)).Scan(&total); err != nil {
		return fmt.Errorf("item streams: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM runs WHERE status = ? ORDER BY id`, string(StatusDone))
	if err != nil {
		return fmt.Errorf("item streams: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("item streams: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("item streams: %w", err)
	}
	pr.start("storing finished runs in item order", total)
	var done int64
	for _, id := range ids {
		if err := writeItemStream(ctx, tx, id, func() { done++; pr.update(done) }); err != nil {
			return fmt.Errorf("item stream of run %s: %w", id, err)
		}
	}
	pr.finish()
	return nil
}

// forEachStreamedItem is ForEachItemNoRaw from run's item stream. It
// reports false, having called fn never, when the run has none of its
// current rows.
func (db *DB) forEachStreamedItem(ctx context.Context, runID string, fn func([]ItemAnswer) error) (bool, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT body FROM item_streams
		WHERE run_id = ? AND run_key = (SELECT `+runKeySQL+` FROM runs WHERE id = ?) ORDER BY chunk`, runID, runID)
	if err != nil {
		return false, fmt.Errorf("answers of run %s: %w", runID, db.check(err))
	}
	defer rows.Close()
	dec := streamDecoder{items: itemDecoder{reuse: true, lean: true}}
	var body sql.RawBytes
	var plain []byte
	var z *zstd.Decoder
	read := false
	for rows.Next() {
		read = true
		if err := rows.Scan(&body); err != nil {
			return true, fmt.Errorf("answers of run %s: %w", runID, err)
		}
		if z == nil {
			if z, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxChunkBytes)); err != nil {
				return true, err
			}
			defer z.Close()
		}
		if plain, err = z.DecodeAll(body, plain[:0]); err != nil {
			return true, fmt.Errorf("answers of run %s: item stream: %w", runID, err)
		}
		if err := dec.chunk(plain, fn); err != nil {
			return true, fmt.Errorf("answers of run %s: item stream: %w", runID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return true, fmt.Errorf("answers of run %s: %w", runID, db.check(err))
	}
	return read, nil
}

// streamDecoder reads chunks, handing each group to fn in storage it
// reuses for the next.
type streamDecoder struct {
	items itemDecoder // its slabs and interner
	prev  string      // the last group's item id, of this chunk or the one before
	strs  []string
	group []ItemAnswer
	id    []byte
	one   []float64
}

func (d *streamDecoder) num(r *reader) float64 {
	v := r.dist(func(int) []float64 { return d.one[:0] })
	if len(v) != 1 {
		r.fail()
		return 0
	}
	return v[0]
}

func (d *streamDecoder) str(r *reader) string {
	i := r.uvarint()
	if i >= uint64(len(d.strs)) {
		r.fail()
		return ""
	}
	return d.strs[i]
}

// chunk reads one chunk, calling fn for each of its groups.
func (d *streamDecoder) chunk(b []byte, fn func([]ItemAnswer) error) error {
	if len(b) == 0 || b[0] != streamVersion {
		return fmt.Errorf("%w: unknown version", errPacked)
	}
	if d.one == nil {
		d.one = make([]float64, 0, 1)
	}
	r := reader{b: b[1:]}
	n := r.uvarint()
	if n > uint64(len(r.b)) || n > maxChunkStrings {
		return errPacked
	}
	d.strs = d.strs[:0]
	for range n {
		d.strs = append(d.strs, d.items.in.get(r.bytes()))
	}
	groups := r.uvarint()
	if r.err != nil || groups > uint64(len(r.b)) {
		return errPacked
	}
	d.id = d.id[:0]
	for range groups {
		shared := r.uvarint()
		rest := r.bytes()
		if shared > uint64(len(d.id)) {
			r.fail()
		}
		if r.err != nil {
			return r.err
		}
		d.id = append(d.id[:shared], rest...)
		if string(d.id) < d.prev {
			return fmt.Errorf("%w: item %q after %q, out of id order", errPacked, d.id, d.prev)
		}
		id := string(d.id)
		d.prev = id
		seq := int(r.varint())
		na := r.uvarint()
		if r.err != nil || na > uint64(len(r.b)) || na > maxGroupAnswers {
			return errPacked
		}
		latency := 0.0
		for range na {
			flags := r.uvarint()
			a := ItemAnswer{ItemID: id, Seq: seq}
			a.QuestionID, a.LabelText, a.ErrKind = d.str(&r), d.str(&r), d.str(&r)
			if flags&stRepeat != 0 {
				a.Repeat = int(r.varint())
			}
			if flags&stLatency != 0 {
				latency = d.num(&r)
			}
			a.LatencyMS = latency
			if flags&stLabel != 0 {
				a.Label = d.items.newLabel(int(r.varint()))
			}
			if flags&stAnswer != 0 {
				an := d.items.newAnswer()
				an.ID = a.QuestionID
				an.Type = provider.QuestionType(d.str(&r))
				if flags&stP != 0 {
					an.P = d.num(&r)
				}
				if flags&stScore != 0 {
					an.Score = d.num(&r)
				}
				if flags&stChoice != 0 {
					an.Choice = d.str(&r)
				}
				if flags&stConfidence != 0 {
					an.Confidence = d.num(&r)
				}
				an.HasConfidence = flags&stHasConfidence != 0
				if flags&stProbs != 0 {
					an.Probs = r.dist(d.items.floatBuf)
				}
				if flags&stBox != 0 {
					if e := r.dist(d.items.floatBuf); len(e) == 4 {
						an.Box = &provider.Edges{Top: e[0], Bottom: e[1], Left: e[2], Right: e[3]}
					} else {
						r.fail()
					}
				}
				if flags&stID != 0 {
					an.ID = d.str(&r)
				}
				a.Answer = an
			}
			if r.err != nil {
				return r.err
			}
			d.group = append(d.group, a)
		}
		if err := fn(d.group); err != nil {
			return err
		}
		clear(d.group)
		d.group = d.group[:0]
		d.items.recycle()
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes left over", errPacked, len(r.b))
	}
	return nil
}
