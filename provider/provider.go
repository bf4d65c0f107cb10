package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Provider answers System One requests: the live client, the answer cache,
// fixture replay and the stand-in all implement it.
type Provider interface {
	// Ask validates req, obtains answers for every question and checks them.
	// On failure the error is classified (see KindOf).
	Ask(ctx context.Context, req *Request) (*Result, error)
}

// Model is one entry of GET /v1/models.
type Model struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ReleaseDate string `json:"release_date"`
}

// ModelLister lists the models a server offers.
type ModelLister interface {
	Models(ctx context.Context) ([]Model, error)
}

// ExchangeStore is where the answer cache finds past exchanges beyond the
// fixture files, and where new exchanges are kept. The store package
// implements it; cmd wires it in.
//
// The cache asks it for the keys of each request rather than reading every
// exchange, so opening a cache costs the same whatever the store holds.
type ExchangeStore interface {
	// LookupAnswers returns the stored answer for each of keys that has
	// one; keys without one are absent from the map. A key is the KeyFor of
	// the question in the exchange's request (requested model, DefaultModel
	// when empty). When several stored answers share a key, the one
	// recorded latest wins; among equal (or unknown) recorded_at the first
	// saved wins. Answers whose resolved model accept rejects are skipped
	// before choosing (so an older accepted answer can still win); a nil
	// accept takes every answer.
	LookupAnswers(ctx context.Context, keys []AnswerKey, accept func(resolvedModel string) bool) (map[AnswerKey]StoredAnswer, error)
	// SaveExchange keeps a new exchange and makes its answers findable by
	// LookupAnswers.
	SaveExchange(ctx context.Context, ex Exchange) error
}

// StoredAnswer is one answer an ExchangeStore found for a key.
type StoredAnswer struct {
	// Raw is the answer object exactly as the response held it.
	Raw json.RawMessage
	// Model is the resolved model of the response (e.g. "jev-1.13.0").
	Model string
	// RecordedAt is when the exchange was recorded; zero when unknown.
	RecordedAt time.Time
	// Origin says where it is kept, for provenance and messages, e.g.
	// "database exchange 17 (run r-20261202-101500-ab12)".
	Origin string
}

// AnswerKey identifies one question's answer independently of its id and of
// the other questions asked with it: the requested model, the compact state
// and the compact question body, each compared by JSON value as far as
// strings go (see CanonicalStrings): a fixture written with Python's
// default \u00e9 escapes keys like one written in UTF-8, while key order
// and number spelling stay significant.
type AnswerKey [32]byte

// String returns the key in hex.
func (k AnswerKey) String() string { return hex.EncodeToString(k[:]) }

// KeyFor computes the AnswerKey for question q asked of model about state.
// State must be compact (as Request keeps it).
func KeyFor(model string, state []byte, q *Question) AnswerKey {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write(CanonicalStrings(state))
	h.Write([]byte{0})
	body, _ := q.MarshalJSON()
	h.Write(CanonicalStrings(body))
	var k AnswerKey
	h.Sum(k[:0])
	return k
}

// CostPerMillionInputTokens is TypeSafe's published price in USD; output
// tokens are free.
const CostPerMillionInputTokens = 0.042

// Cost returns the USD cost of usage at perMillion USD per million input
// tokens.
func Cost(u Usage, perMillion float64) float64 {
	return float64(u.InputTokens) * perMillion / 1e6
}
