package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// An item result's answers are one value of item_results.answers
// (migration 20261203_0900), not a row each: the per-row keys (run id,
// item id, repeat) and provenance that every answer of an item repeats are
// stored once. The value is
//
//	uvarint dictionary id (0: the rest is as is, else deflated with that raw_dicts body)
//	packed answers:
//	  byte  packVersion
//	  str   the item's provenance: source, model, recorded_at (RFC 3339, UTC), origin
//	  uvarint number of answers, then each, in question id order:
//	  uvarint flags (ans* below)
//	  str   question id, decided, label text, error kind, error message
//	  svarint label index                (ansLabel)
//	  8 B   latency_ms, float64 bits     (ansLatency: differs from the item's)
//	  str   type                         (ansAnswer)
//	  8 B   p (noul) or score (score), float64 bits; str choice (choice)
//	  8 B   confidence, float64 bits     (ansConfidence)
//	  dist  probabilities, or a box's edges (ansProbs; dist.go)
//	  raw:  nothing (no raw); uvarint exchange id, offset, length (ansRawRef:
//	        the bytes are exchanges.response[offset:offset+length]); or the
//	        next entry of item_results.raws (ansRawInline)
//	  str   source, model, recorded_at, origin (ansProv: differs from the item's)
//
// where str is a uvarint length and the bytes. item_results.raws holds the
// inline raw answers in order, each a uvarint raw_dicts id (0: as is), a
// uvarint length and the bytes (deflated with that dictionary, see
// rawpack.go). Floats are kept as their bits and distributions as scaled
// integers or bits (dist.go), so every value reads back identical; raw
// answers are the bytes as received.
//
// Version 1 stored a distribution as str, the shortest text that parses
// back to the same float64s (appendFloats); it is still read. Version 2's
// scaled integers take a third of the bytes and read back without parsing
// text (a comparison of two runs of 100,000 items spent a tenth of its time
// parsing their distributions).

const packVersion = 2

const (
	ansAnswer = 1 << iota
	ansConfidence
	ansProbs
	ansLabel
	ansLatency
	ansRawRef
	ansRawInline
	ansProv
	ansHasP
	ansHasScore
	ansHasChoice
)

// itemsDictQuestion is the rawPacker key under which a run's dictionary
// for packed answers is kept (a question id cannot start with \x01\x01).
const itemsDictQuestion = "\x01\x01answers"

// rawRef locates a raw answer inside a stored exchange's response.
type rawRef struct {
	exchange int64
	off, n   int
}

// packedItem is what encodeItem produces for one item result.
type packedItem struct {
	answers []byte // item_results.answers before deflating
	raws    []byte // item_results.raws (nil when empty)
}

// provText is a provenance as stored.
type provText struct{ source, model, recorded, origin string }

func provOf(p provider.Provenance) provText {
	pt := provText{source: string(p.Source), model: p.Model, origin: p.Origin}
	if !p.RecordedAt.IsZero() {
		pt.recorded = p.RecordedAt.UTC().Format(time.RFC3339Nano)
	}
	return pt
}

// rawSink decides how one raw answer is kept: as a reference into a stored
// exchange (ok), else its bytes packed (dict 0: as is).
type rawSink func(questionID string, raw []byte) (ref rawRef, isRef bool, packed []byte, dict int64, err error)

// encodeItem packs it's answers. Answers are sorted by question id (then
// repeat, which is the item's own), the order they are read back in.
func encodeItem(it *ItemResult, sink rawSink) (packedItem, error) {
	return encodeItemAt(it, sink, packVersion)
}

// encodeItemAt is encodeItem writing the given version's format (1 only
// to test that databases written before version 2 still read).
func encodeItemAt(it *ItemResult, sink rawSink, version byte) (packedItem, error) {
	ans := make([]*ItemAnswer, len(it.Answers))
	for i := range it.Answers {
		ans[i] = &it.Answers[i]
	}
	slices.SortStableFunc(ans, func(a, b *ItemAnswer) int { return strings.Compare(a.QuestionID, b.QuestionID) })
	var item provText
	for _, a := range ans {
		if a.Answer != nil {
			item = provOf(a.Answer.Provenance)
			break
		}
	}
	b := make([]byte, 0, 64+96*len(ans))
	b = append(b, version)
	b = appendStr(b, item.source)
	b = appendStr(b, item.model)
	b = appendStr(b, item.recorded)
	b = appendStr(b, item.origin)
	b = binary.AppendUvarint(b, uint64(len(ans)))
	var raws []byte
	for _, a := range ans {
		var flags uint64
		an := a.Answer
		var prov provText
		var ref rawRef
		var packed []byte
		var dict int64
		var probs []float64
		if a.Label != nil {
			flags |= ansLabel
		}
		if math.Float64bits(a.LatencyMS) != math.Float64bits(it.LatencyMS) {
			flags |= ansLatency
		}
		if an != nil {
			flags |= ansAnswer
			switch an.Type {
			case provider.Noul:
				flags |= ansHasP
			case provider.Score:
				flags |= ansHasScore
			case provider.Choice:
				flags |= ansHasChoice
			}
			if an.HasConfidence {
				flags |= ansConfidence
			}
			probs = an.Probs
			if an.Type == provider.Box {
				// A box has no distribution: the field holds its edges
				// [top,bottom,left,right], so metrics read them without
				// the raw bytes.
				probs = nil
				if e, ok := an.BoxOf(); ok {
					probs = []float64{e.Top, e.Bottom, e.Left, e.Right}
				}
			}
			if probs != nil {
				flags |= ansProbs
			}
			if an.Raw != nil {
				r, isRef, p, d, err := sink(a.QuestionID, an.Raw)
				if err != nil {
					return packedItem{}, fmt.Errorf("question %s: %w", a.QuestionID, err)
				}
				if isRef {
					flags |= ansRawRef
					ref = r
				} else {
					flags |= ansRawInline
					packed, dict = p, d
				}
			}
			if prov = provOf(an.Provenance); prov != item {
				flags |= ansProv
			}
		}
		b = binary.AppendUvarint(b, flags)
		b = appendStr(b, a.QuestionID)
		b = appendStr(b, a.Decided)
		b = appendStr(b, a.LabelText)
		b = appendStr(b, a.ErrKind)
		b = appendStr(b, a.ErrMsg)
		if flags&ansLabel != 0 {
			b = binary.AppendVarint(b, int64(*a.Label))
		}
		if flags&ansLatency != 0 {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a.LatencyMS))
		}
		if an == nil {
			continue
		}
		b = appendStr(b, string(an.Type))
		switch {
		case flags&ansHasP != 0:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(an.P))
		case flags&ansHasScore != 0:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(an.Score))
		case flags&ansHasChoice != 0:
			b = appendStr(b, an.Choice)
		}
		if flags&ansConfidence != 0 {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(an.Confidence))
		}
		if flags&ansProbs != 0 {
			if version == 1 {
				b = appendStr(b, string(appendFloats(nil, probs)))
			} else {
				b = appendDist(b, probs)
			}
		}
		switch {
		case flags&ansRawRef != 0:
			b = binary.AppendUvarint(b, uint64(ref.exchange))
			b = binary.AppendUvarint(b, uint64(ref.off))
			b = binary.AppendUvarint(b, uint64(ref.n))
		case flags&ansRawInline != 0:
			raws = binary.AppendUvarint(raws, uint64(dict))
			raws = appendStr(raws, string(packed))
		}
		if flags&ansProv != 0 {
			b = appendStr(b, prov.source)
			b = appendStr(b, prov.model)
			b = appendStr(b, prov.recorded)
			b = appendStr(b, prov.origin)
		}
	}
	return packedItem{answers: b, raws: raws}, nil
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// rawSource gives back raw answers while decoding: a reference's bytes
// from its exchange, an inline entry's bytes inflated.
type rawSource interface {
	exchangeSlice(ref rawRef) ([]byte, error)
	inflate(b []byte, dict int64) ([]byte, error)
}

// itemDecoder reads packed answers. Its interner shares the strings rows
// repeat.
type itemDecoder struct {
	in     interner
	lastT  string
	lastTm time.Time
	// reuse carves Answers, labels and distributions from the slabs below
	// instead of allocating each; recycle hands them out again
	// (ForEachItemNoRaw, whose fn keeps nothing).
	reuse bool
	// lean skips what no metric reads: the provenance, the decided text
	// and the error message are left empty (ForEachItemNoRaw).
	lean   bool
	ans    []provider.Answer
	labels []int
	floats []float64
	// slots holds the string last read per answer place and field (see
	// cached).
	slots [slotAnswers * slotFields]string
}

const slotAnswers, slotFields = 16, 5

// cached is in.get(b) through the string last read at field of the i-th
// answer of an item: an item's answers mostly repeat the previous item's
// question ids, types, decisions and labels, which are then neither hashed
// nor looked up.
func (d *itemDecoder) cached(i uint64, field int, b []byte) string {
	if i >= slotAnswers {
		return d.in.get(b)
	}
	k := int(i)*slotFields + field
	if s := d.slots[k]; s == string(b) {
		return s
	}
	s := d.in.get(b)
	d.slots[k] = s
	return s
}

// newAnswer returns a zero Answer: from the slab when reusing (a full slab
// is replaced, so the Answers already handed out stay put).
func (d *itemDecoder) newAnswer() *provider.Answer {
	if !d.reuse {
		return new(provider.Answer)
	}
	if len(d.ans) == cap(d.ans) {
		d.ans = make([]provider.Answer, 0, max(64, 2*cap(d.ans)))
	}
	d.ans = d.ans[:len(d.ans)+1]
	a := &d.ans[len(d.ans)-1]
	*a = provider.Answer{}
	return a
}

// newLabel returns a pointer to l, from the slab when reusing.
func (d *itemDecoder) newLabel(l int) *int {
	if !d.reuse {
		return &l
	}
	if len(d.labels) == cap(d.labels) {
		d.labels = make([]int, 0, max(64, 2*cap(d.labels)))
	}
	d.labels = append(d.labels, l)
	return &d.labels[len(d.labels)-1]
}

// floatBuf returns an empty slice with room for exactly n floats, from the
// slab when reusing.
func (d *itemDecoder) floatBuf(n int) []float64 {
	if !d.reuse {
		return make([]float64, 0, n)
	}
	if cap(d.floats)-len(d.floats) < n {
		d.floats = make([]float64, 0, max(1024, 2*cap(d.floats), n))
	}
	m := len(d.floats)
	d.floats = d.floats[:m+n]
	return d.floats[m : m : m+n]
}

// recycle hands the slabs out again: what decode returned before is no
// longer the caller's.
func (d *itemDecoder) recycle() {
	d.ans, d.labels, d.floats = d.ans[:0], d.labels[:0], d.floats[:0]
}

var errPacked = errors.New("packed answers are damaged")

// reader reads a packed value. Its first error sticks and empties b, so
// every later read returns zero values without checking err first.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	r.err, r.b = errPacked, nil
}

// uvarint reads a uvarint; the one-byte case (lengths, flags, most
// numbers) is read directly, without binary.Uvarint's loop.
func (r *reader) uvarint() uint64 {
	b := r.b
	if len(b) == 0 || b[0] >= 0x80 {
		return r.uvarintLong()
	}
	r.b = b[1:]
	return uint64(b[0])
}

func (r *reader) uvarintLong() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varint reads a varint, the one-byte case (label indexes) directly.
func (r *reader) varint() int64 {
	if b := r.b; len(b) > 0 && b[0] < 0x80 {
		r.b = b[1:]
		return int64(b[0]>>1) ^ -int64(b[0]&1)
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) float() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (d *itemDecoder) time(b []byte) time.Time {
	if len(b) == 0 {
		return time.Time{}
	}
	if string(b) != d.lastT {
		d.lastT = string(b)
		d.lastTm, _ = time.Parse(time.RFC3339Nano, d.lastT)
	}
	return d.lastTm
}

// decode appends the answers packed in b (inflated) to out, for the item
// row itemID, seq, repeat, latency; only question's when only is set.
// raws is item_results.raws; src is nil when raw bytes are not wanted
// (they are left nil). only, when not nil, lists the questions whose
// answers are kept.
func (d *itemDecoder) decode(out []ItemAnswer, b, raws []byte, itemID string, seq, repeat int, latency float64, src rawSource, only []string) ([]ItemAnswer, error) {
	r := reader{b: b}
	if len(r.b) == 0 || r.b[0] < 1 || r.b[0] > packVersion {
		return out, fmt.Errorf("%w: unknown version", errPacked)
	}
	textDists := r.b[0] == 1
	r.b = r.b[1:]
	src0, model0, rec0, origin0 := r.bytes(), r.bytes(), r.bytes(), r.bytes()
	var item provider.Provenance
	if !d.lean {
		item = provider.Provenance{Source: provider.Source(d.in.get(src0)), Model: d.in.get(model0), RecordedAt: d.time(rec0), Origin: d.in.get(origin0)}
	}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return out, errPacked
	}
	rr := reader{b: raws}
	for i := uint64(0); i < n; i++ {
		flags := r.uvarint()
		qid := r.bytes()
		if only != nil && !kept(only, qid) {
			if err := skipAnswer(&r, &rr, flags, textDists); err != nil {
				return out, err
			}
			continue
		}
		a := ItemAnswer{ItemID: itemID, Repeat: repeat, Seq: seq, LatencyMS: latency}
		a.QuestionID = d.cached(i, 0, qid)
		if decided := r.bytes(); !d.lean {
			a.Decided = d.cached(i, 1, decided)
		}
		a.LabelText = d.cached(i, 2, r.bytes())
		a.ErrKind = d.in.get(r.bytes())
		if msg := r.bytes(); !d.lean {
			a.ErrMsg = d.in.get(msg)
		}
		if flags&ansLabel != 0 {
			a.Label = d.newLabel(int(r.varint()))
		}
		if flags&ansLatency != 0 {
			a.LatencyMS = r.float()
		}
		if flags&ansAnswer != 0 {
			an := d.newAnswer()
			an.ID, an.Provenance = a.QuestionID, item
			an.Type = provider.QuestionType(d.cached(i, 3, r.bytes()))
			switch {
			case flags&ansHasP != 0:
				an.P = r.float()
			case flags&ansHasScore != 0:
				an.Score = r.float()
			case flags&ansHasChoice != 0:
				an.Choice = d.cached(i, 4, r.bytes())
			}
			if flags&ansConfidence != 0 {
				an.Confidence, an.HasConfidence = r.float(), true
			}
			if flags&ansProbs != 0 {
				if !textDists {
					an.Probs = r.dist(d.floatBuf)
				} else if pb := r.bytes(); r.err == nil {
					var err error
					if an.Probs, err = parseFloatsInto(pb, d.floatBuf); err != nil {
						return out, fmt.Errorf("question %s: bad stored distribution: %w", a.QuestionID, err)
					}
				}
			}
			switch {
			case flags&ansRawRef != 0:
				ref := rawRef{exchange: int64(r.uvarint()), off: int(r.uvarint()), n: int(r.uvarint())}
				if src != nil && r.err == nil {
					raw, err := src.exchangeSlice(ref)
					if err != nil {
						return out, fmt.Errorf("question %s: %w", a.QuestionID, err)
					}
					an.Raw = raw
				}
			case flags&ansRawInline != 0 && src != nil:
				dict := rr.uvarint()
				pb := rr.bytes()
				if rr.err != nil {
					return out, fmt.Errorf("question %s: raw answers are damaged", a.QuestionID)
				}
				raw, err := src.inflate(pb, int64(dict))
				if err != nil {
					return out, fmt.Errorf("question %s: %w", a.QuestionID, err)
				}
				an.Raw = raw
			}
			if an.Type == provider.Box && an.Probs != nil {
				// A box's edges (see encodeItem).
				if len(an.Probs) != 4 {
					return out, fmt.Errorf("question %s: bad stored box: %d numbers, want 4 (top, bottom, left, right)", a.QuestionID, len(an.Probs))
				}
				an.Box = &provider.Edges{Top: an.Probs[0], Bottom: an.Probs[1], Left: an.Probs[2], Right: an.Probs[3]}
				an.Probs = nil
			}
			if flags&ansProv != 0 {
				ps, pm, pr, po := r.bytes(), r.bytes(), r.bytes(), r.bytes()
				if !d.lean {
					an.Provenance = provider.Provenance{Source: provider.Source(d.in.get(ps)), Model: d.in.get(pm), RecordedAt: d.time(pr), Origin: d.in.get(po)}
				}
			}
			// As when answers had a row each: an answer that carries an
			// error or no type reads as none.
			if a.ErrKind == "" && an.Type != "" {
				a.Answer = an
			}
		}
		if r.err != nil {
			return out, r.err
		}
		out = append(out, a)
	}
	if len(r.b) != 0 {
		return out, fmt.Errorf("%w: %d bytes left over", errPacked, len(r.b))
	}
	return out, nil
}

// kept reports whether qid is one of only.
func kept(only []string, qid []byte) bool {
	for _, q := range only {
		if q == string(qid) {
			return true
		}
	}
	return false
}

// skipAnswer moves r (and rr, past an inline raw) over the rest of an
// answer with flags whose question id was read; textDists says the
// distribution is version 1's text.
func skipAnswer(r, rr *reader, flags uint64, textDists bool) error {
	for range 4 { // decided, label text, error kind, error message
		r.bytes()
	}
	if flags&ansLabel != 0 {
		r.varint()
	}
	if flags&ansLatency != 0 {
		r.float()
	}
	if flags&ansAnswer != 0 {
		r.bytes() // type
		switch {
		case flags&(ansHasP|ansHasScore) != 0:
			r.float()
		case flags&ansHasChoice != 0:
			r.bytes()
		}
		if flags&ansConfidence != 0 {
			r.float()
		}
		if flags&ansProbs != 0 {
			if textDists {
				r.bytes()
			} else {
				r.skipDist()
			}
		}
		switch {
		case flags&ansRawRef != 0:
			r.uvarint()
			r.uvarint()
			r.uvarint()
		case flags&ansRawInline != 0 && rr.b != nil:
			rr.uvarint()
			rr.bytes()
		}
		if flags&ansProv != 0 {
			for range 4 {
				r.bytes()
			}
		}
	}
	if r.err != nil || rr.err != nil {
		return errPacked
	}
	return nil
}

// sortAnswers puts a group of answers (one dataset position) in the order
// they are read: question id, then repeat, then item id.
func sortAnswers(as []ItemAnswer) {
	slices.SortStableFunc(as, func(a, b ItemAnswer) int {
		if c := strings.Compare(a.QuestionID, b.QuestionID); c != 0 {
			return c
		}
		if a.Repeat != b.Repeat {
			return a.Repeat - b.Repeat
		}
		return strings.Compare(a.ItemID, b.ItemID)
	})
}
