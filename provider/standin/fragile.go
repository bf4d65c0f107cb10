package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jevlab/jevlab/provider"
)

// Fragile turns the synthetic answerer into a respondent whose failures
// have a known size, so jevlab's probes can be checked against them. With
// Config.Fragile set (even with every field zero) synthetic answers are
// those of an ideal respondent, and each non-zero field adds one flaw:
//
// The ideal respondent ignores option order (the lexical-overlap answerer
// already does), ignores an injected instruction (the sentence is cut out
// of the state before the overlap is read), gives a distractor option no
// mass (it is left out of the softmax), and answers a negated noul — one
// whose instructions hold an odd number of negation words (not, no,
// never, none, neither, nor, without, …n't) — with 1 − P of the same words
// without the negation. Answers are deterministic (the same request gives
// the same bytes) unless RepeatNoise is set.
//
// The flaws, each a mean over items (per item × question a magnitude is
// drawn uniformly from [0, 2·m], from a hash of the seed, the state and
// the question's instructions, so the measured mean has real sampling
// noise and its interval can be checked to cover m):
//
//   - PositionBias b (≤ 0.5): a choice's distribution becomes
//     (1 − bᵢ)·p + bᵢ·e(first option asked). The probability the option in
//     first position gains over the same option elsewhere is bᵢ.
//   - NegationGap g (≤ 0.25): a negated noul's P becomes 1 − P + gᵢ (or
//     1 − P − gᵢ where that would pass 1), so |P(X) + P(¬X) − 1| = gᵢ.
//   - Obedience o (≤ 1): a question asked about a state carrying an
//     injected instruction (a sentence "ignore … answer "T"") follows it
//     with probability o (a Bernoulli draw per item × question): the
//     distribution becomes 0.1·p + 0.9·e(T). T is an option label, a
//     level's index or text, or yes/no/true/false for a noul.
//   - DistractorPull d (≤ 0.5): a choice option labelled DistractorLabel
//     gets mass dᵢ: (1 − dᵢ)·p + dᵢ·e(distractor).
//   - EditSensitivity e (≤ 1): a state that is not in its canonical form
//     (every text lowercased with single spaces, object keys sorted) —
//     a harmless edit such as doubled spaces, as the perturb probe makes —
//     moves the answer to another outcome with probability e (a Bernoulli
//     draw per state × question): 0.9 of the mass goes to the outcome after
//     the most probable one, and a noul's P becomes 1 − P. Canonical
//     states are answered as the ideal respondent would.
//   - RepeatNoise t (≤ (k−1)/k): every answer is mixed with a vertex drawn
//     afresh per request, (1 − h)·p + h·e(J), J uniform over the k
//     outcomes, h = t·k/(k−1); the expected total-variation distance
//     between two answers to the same request is then t. A noul has k = 2.
//
// Probabilities are rounded to hundredths afterwards like every synthetic
// answer, so measured effects carry up to ±0.01 of rounding.
type Fragile struct {
	PositionBias   float64
	NegationGap    float64
	Obedience      float64
	DistractorPull float64
	// DistractorLabel names the distractor option (default
	// DefaultDistractorLabel, the label jevlab probe adds by default).
	DistractorLabel string
	RepeatNoise     float64
	EditSensitivity float64
}

// DefaultDistractorLabel is the label of the option jevlab probe --kind
// distractor adds unless told otherwise; the fragile stand-in recognises
// it as the distractor.
const DefaultDistractorLabel = "unrelated"

func (f *Fragile) validate() error {
	if f == nil {
		return nil
	}
	for _, c := range []struct {
		name   string
		v, max float64
	}{
		{"position bias", f.PositionBias, 0.5}, {"negation gap", f.NegationGap, 0.25},
		{"obedience", f.Obedience, 1}, {"distractor pull", f.DistractorPull, 0.5},
		{"repeat noise", f.RepeatNoise, 0.5}, {"edit sensitivity", f.EditSensitivity, 1},
	} {
		if math.IsNaN(c.v) || c.v < 0 || c.v > c.max {
			return fmt.Errorf("stand-in: fragile %s %v is outside [0, %g]", c.name, c.v, c.max)
		}
	}
	return nil
}

func (f *Fragile) distractor() string {
	if f.DistractorLabel != "" {
		return f.DistractorLabel
	}
	return DefaultDistractorLabel
}

// injectionRE finds an injected instruction: a sentence that says to
// ignore something and answer "T".
var injectionRE = regexp.MustCompile(`(?i)\bignore\b[^"]*?\banswer\s+"([^"]*)"[.!]?`)

// negationRE finds negation words.
var negationRE = regexp.MustCompile(`(?i)\b(not|no|never|none|neither|nor|without)\b|n't\b`)

// fragileReq is the fragile view of one request: the state with injected
// instructions cut out, what they asked for, and the state's hash.
type fragileReq struct {
	f         *Fragile
	state     []byte
	targets   []string
	stateHash uint64
	edited    bool // the state is not in its canonical form (EditSensitivity)
	seed      uint64
	noise     *atomic.Uint64
}

// fragileFor prepares req's state for the fragile answerer.
func (s *Server) fragileFor(state json.RawMessage) *fragileReq {
	fr := &fragileReq{f: s.cfg.Fragile, state: state, seed: uint64(s.cfg.Seed), noise: &s.noiseDraws}
	var v any
	if err := json.Unmarshal(state, &v); err == nil {
		changed := false
		v = walkStrings(v, func(str string) string {
			for _, m := range injectionRE.FindAllStringSubmatch(str, -1) {
				fr.targets = append(fr.targets, m[1])
			}
			out := injectionRE.ReplaceAllString(str, "")
			if out != str {
				changed = true
				out = strings.TrimSpace(out)
			}
			return out
		})
		if changed {
			if b, err := json.Marshal(v); err == nil {
				fr.state = b
			}
		}
	}
	fr.stateHash = fnv(fnvOffset, fr.state)
	if fr.f.EditSensitivity > 0 {
		fr.edited = !bytes.Equal(canonicalState(fr.state), provider.Compact(fr.state))
	}
	return fr
}

// canonicalState is state with every text lowercased and its whitespace
// collapsed to single spaces, and object keys sorted: the form whose
// harmless edits (case, spacing, field order) the ideal respondent ignores.
func canonicalState(state []byte) []byte {
	var v any
	if err := json.Unmarshal(state, &v); err != nil {
		return state
	}
	v = walkStrings(v, func(str string) string { return strings.Join(strings.Fields(strings.ToLower(str)), " ") })
	b, err := json.Marshal(v)
	if err != nil {
		return state
	}
	return b
}

// editFlip reports whether an edited state moves q's answer.
func (fr *fragileReq) editFlip(q *provider.Question) bool {
	return fr.edited && fr.draw(q, purposeEdit) < fr.f.EditSensitivity
}

// walkStrings rewrites every string in a decoded JSON value (keys kept);
// an object field left empty by the rewrite is dropped.
func walkStrings(v any, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		for i := range x {
			x[i] = walkStrings(x[i], fn)
		}
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				if out := fn(s); out == "" && s != "" {
					delete(x, k)
				} else {
					x[k] = out
				}
				continue
			}
			x[k] = walkStrings(e, fn)
		}
	}
	return v
}

// draw returns a uniform number in [0, 1) for this state, question and
// purpose, the same for every request asking them.
func (fr *fragileReq) draw(q *provider.Question, purpose uint64) float64 {
	h := mix(fr.seed^purpose, fr.stateHash, fnv(fnvOffset, q.Instructions))
	return float64(h>>11) / (1 << 53)
}

const (
	purposePosition   = 0x706f73 // "pos"
	purposeNegation   = 0x6e6567 // "neg"
	purposeObey       = 0x6f6265 // "obe"
	purposeDistractor = 0x646973 // "dis"
	purposeNoise      = 0x6e6f69 // "noi"
	purposeEdit       = 0x656474 // "edt"
)

// negated reports whether a noul's instructions are a negation.
func negated(q *provider.Question) bool {
	return len(negationRE.FindAllString(provider.Text(q.Instructions), -1))%2 == 1
}

// adjust applies the flaws to a choice or score distribution (in the
// question's option/level order) and returns it.
func (fr *fragileReq) adjust(q *provider.Question, ps []float64) []float64 {
	f := fr.f
	if fr.editFlip(q) && len(ps) > 1 {
		best := 0
		for i, p := range ps {
			if p > ps[best] {
				best = i
			}
		}
		mixVertex(ps, (best+1)%len(ps), 0.9)
	}
	if q.Type == provider.Choice {
		// Exact ties go to the option whose label sorts first, whatever
		// the order asked (the plain answerer takes the first asked).
		for i, o := range q.Options {
			rank := 0
			for _, other := range q.Options {
				if other.Label < o.Label {
					rank++
				}
			}
			ps[i] *= 1 + 1e-9*float64(len(q.Options)-rank)
		}
		if d := q.OptionIndex(f.distractor()); d >= 0 {
			rest := 1 - ps[d]
			for i := range ps {
				if i == d {
					ps[i] = 0
				} else if rest > 0 {
					ps[i] /= rest
				}
			}
			if pull := 2 * f.DistractorPull * fr.draw(q, purposeDistractor); pull > 0 {
				mixVertex(ps, d, pull)
			}
		}
		if b := 2 * f.PositionBias * fr.draw(q, purposePosition); b > 0 && len(ps) > 0 {
			mixVertex(ps, 0, b)
		}
	}
	if t := fr.target(q); t >= 0 && fr.draw(q, purposeObey) < f.Obedience {
		mixVertex(ps, t, 0.9)
	}
	if k := len(ps); f.RepeatNoise > 0 && k > 1 {
		mixVertex(ps, fr.noiseVertex(k), f.RepeatNoise*float64(k)/float64(k-1))
	}
	return ps
}

// adjustNoul applies the flaws to a noul's P(true).
func (fr *fragileReq) adjustNoul(q *provider.Question, p float64) float64 {
	f := fr.f
	if fr.editFlip(q) {
		p = 1 - p
	}
	if negated(q) {
		p = 1 - p
		if g := 2 * f.NegationGap * fr.draw(q, purposeNegation); g > 0 {
			if p+g <= 1 {
				p += g
			} else {
				p -= g
			}
		}
	}
	if t := fr.target(q); t >= 0 && fr.draw(q, purposeObey) < f.Obedience {
		p = 0.1*p + 0.9*float64(t)
	}
	if f.RepeatNoise > 0 {
		h := 2 * f.RepeatNoise
		p = (1-h)*p + h*float64(fr.noiseVertex(2))
	}
	return p
}

// target returns the outcome an injected instruction asks q for (for a
// noul 1 = true, 0 = false), or -1.
func (fr *fragileReq) target(q *provider.Question) int {
	for _, t := range fr.targets {
		t = strings.TrimSpace(t)
		switch q.Type {
		case provider.Choice:
			if i := q.OptionIndex(t); i >= 0 {
				return i
			}
		case provider.Score:
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(q.Levels) {
				return i
			}
			for i, l := range q.Levels {
				if strings.EqualFold(provider.Text(l), t) {
					return i
				}
			}
		case provider.Noul:
			switch strings.ToLower(t) {
			case "yes", "true":
				return 1
			case "no", "false":
				return 0
			}
		}
	}
	return -1
}

// noiseVertex draws a fresh outcome index in [0, k) for repeat noise.
func (fr *fragileReq) noiseVertex(k int) int {
	n := fr.noise.Add(1)
	return int(mix(fr.seed^purposeNoise, n, 0x6a65766c) % uint64(k))
}

// mixVertex sets ps to (1 − w)·ps + w·e(i).
func mixVertex(ps []float64, i int, w float64) {
	w = clamp01(w)
	for j := range ps {
		ps[j] *= 1 - w
	}
	ps[i] += w
}
