package provider

import (
	"encoding/json"
	"time"
)

// Usage is the token count the provider reports for one call.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Response is a decoded /v1/systemone body before checking. Answers stay raw
// until Check reads them against the questions asked.
type Response struct {
	Model   string                     `json:"model"`
	Answers map[string]json.RawMessage `json:"answers"`
	Usage   Usage                      `json:"usage"`
}

// Source says where an answer came from.
type Source string

// Answer sources.
const (
	SourceLive    Source = "live"    // answered by the provider during this call
	SourceCache   Source = "cache"   // replayed from a fixture file or the database
	SourceStandIn Source = "standin" // synthesised by the stand-in (never Jev's)
)

// Provenance records where and when an answer was produced.
type Provenance struct {
	Source     Source    `json:"source"`
	Model      string    `json:"model"`                // resolved model that answered
	RecordedAt time.Time `json:"recorded_at,omitzero"` // when it was produced, if known
	Origin     string    `json:"origin,omitempty"`     // fixture file or run id, for cached answers
}

// Answer is one checked answer. Probabilities are aligned to the question:
// option order for a choice, level order for a score, and absent for a noul
// (whose only value is P). Nothing is renormalised, rounded or thresholded.
type Answer struct {
	ID   string       `json:"id"`
	Type QuestionType `json:"type"`
	// P is a noul's P(true).
	P float64 `json:"p,omitempty"`
	// Choice is the label the provider chose (choice only).
	Choice string `json:"choice,omitempty"`
	// Score is the provider's expected level in [0, levels-1] (score only).
	Score float64 `json:"score,omitempty"`
	// Confidence is the provider's confidence; HasConfidence is false for a
	// noul, which has none.
	Confidence    float64 `json:"confidence,omitempty"`
	HasConfidence bool    `json:"-"`
	// Probs are the probabilities in question order (choice, score).
	Probs []float64 `json:"probabilities,omitempty"`
	// Box is a box answer's edges (box only; see BoxOf for stored ones).
	Box *Edges `json:"box,omitempty"`
	// Raw is the answer object exactly as received, unknown fields included.
	Raw json.RawMessage `json:"raw,omitempty"`
	// Provenance says where the answer came from.
	Provenance Provenance `json:"provenance"`
}

// answerJSON is Answer's JSON shape. Pointers keep zero values: a noul
// with P = 0, a score of 0 or a confidence of 0 are answers, not absences,
// so each field is written exactly when the answer's type has it.
type answerJSON struct {
	ID         string          `json:"id"`
	Type       QuestionType    `json:"type"`
	P          *float64        `json:"p,omitempty"`
	Choice     *string         `json:"choice,omitempty"`
	Score      *float64        `json:"score,omitempty"`
	Confidence *float64        `json:"confidence,omitempty"`
	Probs      []float64       `json:"probabilities,omitempty"`
	Box        *Edges          `json:"box,omitempty"`
	Raw        json.RawMessage `json:"raw,omitempty"`
	Provenance Provenance      `json:"provenance"`
}

// MarshalJSON writes the fields of the answer's type, zero values
// included: "p" for a noul; "choice", "confidence" (when the provider sent
// one) and "probabilities" for a choice; "score", "confidence" and
// "probabilities" for a score.
func (a Answer) MarshalJSON() ([]byte, error) {
	w := answerJSON{ID: a.ID, Type: a.Type, Raw: a.Raw, Provenance: a.Provenance, Box: a.Box}
	switch a.Type {
	case Noul:
		w.P = &a.P
	case Choice:
		w.Choice = &a.Choice
		w.Probs = a.Probs
	case Score:
		w.Score = &a.Score
		w.Probs = a.Probs
	default:
		if a.P != 0 {
			w.P = &a.P
		}
		if a.Choice != "" {
			w.Choice = &a.Choice
		}
		if a.Score != 0 {
			w.Score = &a.Score
		}
		w.Probs = a.Probs
	}
	if a.HasConfidence || (a.Type != Noul && a.Confidence != 0) {
		w.Confidence = &a.Confidence
	}
	if len(w.Raw) > 0 && !json.Valid(w.Raw) {
		w.Raw = nil // never let a broken raw body make the whole output fail
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes; HasConfidence is set when
// "confidence" is present.
func (a *Answer) UnmarshalJSON(data []byte) error {
	var w answerJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*a = Answer{ID: w.ID, Type: w.Type, Probs: w.Probs, Raw: w.Raw, Provenance: w.Provenance, Box: w.Box}
	if w.P != nil {
		a.P = *w.P
	}
	if w.Choice != nil {
		a.Choice = *w.Choice
	}
	if w.Score != nil {
		a.Score = *w.Score
	}
	if w.Confidence != nil {
		a.Confidence, a.HasConfidence = *w.Confidence, true
	}
	return nil
}

// Decision returns the index of the most probable outcome: the option or
// level with the highest probability (first on ties), and for a noul 1 when
// P >= threshold else 0. It needs no question, so for a choice it cannot
// honour the provider's own choice field on near-ties; use DecisionFor
// where the question is at hand.
func (a *Answer) Decision(threshold float64) int {
	switch a.Type {
	case Noul:
		if a.P >= threshold {
			return 1
		}
		return 0
	default:
		best, bi := -1.0, -1
		for i, p := range a.Probs {
			if p > best {
				best, bi = p, i
			}
		}
		return bi
	}
}

// DecisionFor returns the decided outcome of an answer to q: for a choice
// the option the provider chose (its choice field, which on rounded ties can
// differ from the argmax), falling back to the most probable option; for a
// score the most probable level; for a noul 1 when P >= threshold else 0.
func (a *Answer) DecisionFor(q *Question, threshold float64) int {
	if q != nil && a.Type == Choice && a.Choice != "" {
		if i := q.OptionIndex(a.Choice); i >= 0 {
			return i
		}
	}
	return a.Decision(threshold)
}

// Result is the outcome of one call: the checked answers in request order
// and the call's accounting.
type Result struct {
	Model     string        `json:"model"` // resolved model reported by the provider
	Answers   []Answer      `json:"answers"`
	Usage     Usage         `json:"usage"`
	CostUSD   float64       `json:"cost_usd"`
	Latency   time.Duration `json:"latency_ns"` // provider round trip (0 for a full cache hit)
	RequestID string        `json:"request_id,omitempty"`
	Attempts  int           `json:"attempts,omitempty"`
	// Exchanges are the wire exchanges made or replayed for this result.
	Exchanges []Exchange `json:"-"`
}

// Answer returns the answer for question id.
func (r *Result) Answer(id string) (*Answer, bool) {
	for i := range r.Answers {
		if r.Answers[i].ID == id {
			return &r.Answers[i], true
		}
	}
	return nil, false
}

// Exchange is one recorded call in the fixture exchange format: the wire
// bodies and nothing else (never headers, never the key).
type Exchange struct {
	ID         string          `json:"id,omitempty"`
	Request    json.RawMessage `json:"request"`
	Response   json.RawMessage `json:"response"`
	LatencyMS  float64         `json:"latency_ms,omitempty"`
	RecordedAt string          `json:"recorded_at,omitempty"`
	Uncertain  []string        `json:"uncertain,omitempty"`
}

// MaxClockSkew is how far in the future a recorded_at may lie and still be
// believed: a recording from a machine whose clock runs a little ahead.
const MaxClockSkew = time.Hour

// ParseRecordedAt reads an exchange's recorded_at: RFC 3339 (fractional
// seconds allowed); "" or anything else is unknown, the zero time. A time
// more than MaxClockSkew in the future is also unknown: nothing can have
// been recorded then, and believing it would let that answer outrank every
// real recording forever (the newest answer wins). Every reader that ranks
// recorded answers by age (the answer cache over fixture files, the
// database's answer index) reads it this way, so they agree on which answer
// is newest.
func ParseRecordedAt(s string) time.Time { return parseRecordedAt(s, time.Now()) }

func parseRecordedAt(s string, now time.Time) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	if t.After(now.Add(MaxClockSkew)) {
		return time.Time{}
	}
	return t
}
