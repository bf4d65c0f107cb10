package standin

import (
	"encoding/json"
	"math"
	"strconv"
	"sync"

	"github.com/jevlab/jevlab/provider"
)

// Synthetic answers.
//
// Every outcome (choice option, score level, noul side) gets a lexical
// overlap score with the state:
//
//	s = Σ w(t) over the outcome's distinct tokens t that occur in the state
//	    / sqrt(Σ w(t) over all its distinct tokens)
//
// where tokens are lowercase letter/digit runs of two or more bytes that are
// not stop words, read from the raw JSON (strings, keys and all), and w is 2
// for tokens of a choice label and 1 otherwise. Choice and score
// distributions are softmax(beta·s); a noul is sigmoid(beta·(s_true −
// s_false)), where s_true reads the instructions and the "true" criterion
// and s_false the "false" criterion (a fixed 0.25 when absent).
// Probabilities are then rounded to hundredths like Jev's, with the sum
// brought into [0.99, 1.00] by moving the fewest hundredths (largest
// rounding error first); nothing else is renormalised. The choice is the
// argmax of the unrounded distribution (first on ties), confidence follows
// the formulas reverse-engineered by kime (see the API reference §3) and a
// score is Σ level·p, both from the unrounded distribution and rounded to
// two decimals.

// beta is the softmax sharpness.
const beta = 4.0

// maxPrepared bounds the cache of tokenised questions.
const maxPrepared = 1024

// wtok is one distinct token of an outcome with its weight.
type wtok struct {
	h uint64
	w float64
}

// outcome is the tokenised text of one option, level or noul side.
type outcome struct {
	toks  []wtok
	total float64
}

// prepQ is a question tokenised once and reused across requests.
type prepQ struct {
	outcomes []outcome // choice options / score levels; noul: [true side, false side]
	hasFalse bool      // noul with a "false" criterion
	hash     uint64    // FNV-1a of the question body, seeds the key shuffle
}

// prepared returns the tokenised form of q, cached by its wire body.
func (s *Server) prepared(q *provider.Question) *prepQ {
	body, _ := q.MarshalJSON()
	s.prepMu.RLock()
	p, ok := s.prep[string(body)]
	s.prepMu.RUnlock()
	if ok {
		return p
	}
	p = prepare(q, body)
	s.prepMu.Lock()
	if len(s.prep) >= maxPrepared {
		clear(s.prep)
	}
	s.prep[string(body)] = p
	s.prepMu.Unlock()
	return p
}

func prepare(q *provider.Question, body []byte) *prepQ {
	p := &prepQ{hash: fnv(fnvOffset, body)}
	switch q.Type {
	case provider.Choice:
		p.outcomes = make([]outcome, len(q.Options))
		for i, o := range q.Options {
			var acc tokAcc
			tokenize([]byte(o.Label), func(h uint64) { acc.add(h, 2) })
			tokenize(o.Description, func(h uint64) { acc.add(h, 1) })
			p.outcomes[i] = acc.outcome()
		}
	case provider.Score:
		p.outcomes = make([]outcome, len(q.Levels))
		for i, l := range q.Levels {
			var acc tokAcc
			tokenize(l, func(h uint64) { acc.add(h, 1) })
			p.outcomes[i] = acc.outcome()
		}
	case provider.Noul:
		var t, f tokAcc
		tokenize(q.Instructions, func(h uint64) { t.add(h, 1) })
		for _, o := range q.Options {
			switch o.Label {
			case "true":
				tokenize(o.Description, func(h uint64) { t.add(h, 1) })
			case "false":
				p.hasFalse = true
				tokenize(o.Description, func(h uint64) { f.add(h, 1) })
			}
		}
		p.outcomes = []outcome{t.outcome(), f.outcome()}
	}
	return p
}

// tokAcc collects distinct tokens keeping the highest weight.
type tokAcc struct {
	idx  map[uint64]int
	toks []wtok
}

func (a *tokAcc) add(h uint64, w float64) {
	if a.idx == nil {
		a.idx = make(map[uint64]int)
	}
	if i, ok := a.idx[h]; ok {
		a.toks[i].w = math.Max(a.toks[i].w, w)
		return
	}
	a.idx[h] = len(a.toks)
	a.toks = append(a.toks, wtok{h, w})
}

func (a *tokAcc) outcome() outcome {
	o := outcome{toks: a.toks}
	for _, t := range a.toks {
		o.total += t.w
	}
	return o
}

// synthesizer answers the questions of one request about one state.
type synthesizer struct {
	s         *Server
	state     map[uint64]struct{}
	stateHash uint64
	fr        *fragileReq // Config.Fragile's view of the request, nil without it
}

func (s *Server) synthesizer(state []byte) *synthesizer {
	sy := s.synths.Get().(*synthesizer)
	sy.s = s
	clear(sy.state)
	tokenize(state, func(h uint64) { sy.state[h] = struct{}{} })
	sy.stateHash = fnv(fnvOffset, state)
	sy.fr = nil
	return sy
}

func (sy *synthesizer) release() { sy.s.synths.Put(sy) }

func (sy *synthesizer) overlap(o *outcome) float64 {
	if o.total == 0 {
		return 0
	}
	hit := 0.0
	for _, t := range o.toks {
		if _, ok := sy.state[t.h]; ok {
			hit += t.w
		}
	}
	return hit / math.Sqrt(o.total)
}

// answer returns the synthetic answer object for q.
func (sy *synthesizer) answer(q *provider.Question, seed int64) json.RawMessage {
	p := sy.s.prepared(q)
	shuffleSeed := mix(uint64(seed), sy.stateHash, p.hash)
	switch q.Type {
	case provider.Box:
		return synthBox(shuffleSeed)
	case provider.Noul:
		st := sy.overlap(&p.outcomes[0])
		sf := 0.25
		if p.hasFalse {
			sf = sy.overlap(&p.outcomes[1])
		}
		pt := 1 / (1 + math.Exp(-beta*(st-sf)))
		if sy.fr != nil {
			pt = sy.fr.adjustNoul(q, pt)
		}
		b := make([]byte, 0, 32)
		b = append(b, `{"type":"noul","noul":`...)
		b = appendHundredths(b, int(math.Round(pt*100)))
		return append(b, '}')
	case provider.Choice:
		probs := sy.softmax(p.outcomes)
		if sy.fr != nil {
			probs = sy.fr.adjust(q, probs)
		}
		best := argmax(probs)
		k := float64(len(probs))
		conf := clamp01((probs[best] - 1/k) / (1 - 1/k))
		hs := roundHundredths(probs)
		n := 64 + len(q.Options[best].Label)
		for _, o := range q.Options {
			n += len(o.Label) + 8
		}
		b := make([]byte, 0, n)
		b = append(b, `{"type":"choice","choice":`...)
		b = appendString(b, q.Options[best].Label)
		b = append(b, `,"confidence":`...)
		b = appendHundredths(b, int(math.Round(conf*100)))
		b = append(b, `,"probabilities":{`...)
		for j, i := range shuffled(len(hs), shuffleSeed) {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, q.Options[i].Label)
			b = append(b, ':')
			b = appendHundredths(b, hs[i])
		}
		return append(b, "}}"...)
	case provider.Score:
		probs := sy.softmax(p.outcomes)
		if sy.fr != nil {
			probs = sy.fr.adjust(q, probs)
		}
		m := argmax(probs)
		k := len(probs)
		mid := float64(k-1) / 2
		madU, spread, score := 0.0, 0.0, 0.0
		for i, pi := range probs {
			madU += math.Abs(float64(i) - mid)
			spread += pi * math.Abs(float64(i-m))
			score += float64(i) * pi
		}
		madU /= float64(k)
		conf := clamp01(1 - spread/madU)
		score = math.Min(math.Max(score, 0), float64(k-1))
		hs := roundHundredths(probs)
		n := 96
		for _, l := range q.Levels {
			n += len(l) + 16
		}
		b := make([]byte, 0, n)
		b = append(b, `{"type":"score","score":`...)
		b = appendHundredths(b, int(math.Round(score*100)))
		b = append(b, `,"confidence":`...)
		b = appendHundredths(b, int(math.Round(conf*100)))
		b = append(b, `,"legend":{`...)
		for i, l := range q.Levels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `":`...)
			if l == nil {
				l = json.RawMessage("null")
			}
			b = append(b, l...)
		}
		b = append(b, `},"probabilities":{`...)
		for j, i := range shuffled(len(hs), shuffleSeed) {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `":`...)
			b = appendHundredths(b, hs[i])
		}
		return append(b, "}}"...)
	}
	return json.RawMessage(`{}`)
}

// softmax returns softmax(beta·overlap) over the outcomes.
func (sy *synthesizer) softmax(os []outcome) []float64 {
	ps := make([]float64, len(os))
	max := math.Inf(-1)
	for i := range os {
		ps[i] = beta * sy.overlap(&os[i])
		max = math.Max(max, ps[i])
	}
	sum := 0.0
	for i := range ps {
		ps[i] = math.Exp(ps[i] - max)
		sum += ps[i]
	}
	for i := range ps {
		ps[i] /= sum
	}
	return ps
}

func argmax(ps []float64) int {
	best := 0
	for i, p := range ps {
		if p > ps[best] {
			best = i
		}
	}
	return best
}

func clamp01(x float64) float64 { return math.Min(1, math.Max(0, x)) }

// roundHundredths rounds a distribution to whole hundredths whose sum lies
// in [99, 100], moving the fewest hundredths, largest rounding error first
// (ties to the lower index).
func roundHundredths(ps []float64) []int {
	hs := make([]int, len(ps))
	sum := 0
	for i, p := range ps {
		hs[i] = int(math.Round(p * 100))
		sum += hs[i]
	}
	for sum > 100 {
		bi, be := -1, math.Inf(-1)
		for i, p := range ps {
			if e := float64(hs[i]) - p*100; hs[i] > 0 && e > be {
				bi, be = i, e
			}
		}
		hs[bi]--
		sum--
	}
	for sum < 99 {
		bi, be := -1, math.Inf(1)
		for i, p := range ps {
			if e := float64(hs[i]) - p*100; hs[i] < 100 && e < be {
				bi, be = i, e
			}
		}
		hs[bi]++
		sum++
	}
	return hs
}

// appendHundredths writes h/100 the way Jev (Python) prints it: 0.0, 0.5,
// 0.05, 1.0, 2.35.
func appendHundredths(b []byte, h int) []byte {
	if h < 0 {
		b = append(b, '-')
		h = -h
	}
	b = strconv.AppendInt(b, int64(h/100), 10)
	b = append(b, '.')
	f := h % 100
	switch {
	case f == 0:
		return append(b, '0')
	case f%10 == 0:
		return append(b, byte('0'+f/10))
	default:
		return append(b, byte('0'+f/10), byte('0'+f%10))
	}
}

// shuffled returns a permutation of 0..n-1 determined by seed.
func shuffled(n int, seed uint64) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	x := seed
	for i := n - 1; i > 0; i-- {
		x = splitmix(x)
		j := int(x % uint64(i+1))
		idx[i], idx[j] = idx[j], idx[i]
	}
	return idx
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func mix(a, b, c uint64) uint64 { return splitmix(splitmix(splitmix(a)^b) ^ c) }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// tokenize calls fn with the hash of every token in raw JSON text: runs of
// ASCII letters and digits (lowercased) and non-ASCII bytes, at least two
// bytes long, that are not stop words. JSON escapes (\n, \u00e9) are
// skipped rather than decoded.
func tokenize(raw []byte, fn func(uint64)) {
	h, n := uint64(fnvOffset), 0
	flush := func() {
		if n >= 2 && !isStop(h) {
			fn(h)
		}
		h, n = fnvOffset, 0
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\':
			flush()
			if i+1 < len(raw) && raw[i+1] == 'u' {
				i += 5
			} else {
				i++
			}
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c >= 0x80:
		default:
			flush()
			continue
		}
		h ^= uint64(c)
		h *= fnvPrime
		n++
	}
	flush()
}

// stopHashes holds the hashes of common English words that carry no
// meaning for overlap. It is computed once and never modified.
var stopHashes = func() map[uint64]struct{} {
	words := []string{
		"a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "do", "does", "for",
		"from", "has", "have", "how", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
		"of", "on", "or", "our", "so", "than", "that", "the", "their", "them", "then", "there", "these",
		"this", "to", "was", "we", "were", "what", "when", "which", "who", "why", "will", "with",
		"you", "your", "null", "true", "false", "about", "any", "all", "some", "would", "should", "could",
	}
	m := make(map[uint64]struct{}, len(words))
	for _, w := range words {
		m[fnv(fnvOffset, []byte(w))] = struct{}{}
	}
	return m
}()

func isStop(h uint64) bool { _, ok := stopHashes[h]; return ok }

// synthPool makes the pool of synthesizers for a server.
func newSynthPool() *sync.Pool {
	return &sync.Pool{New: func() any { return &synthesizer{state: make(map[uint64]struct{}, 128)} }}
}
