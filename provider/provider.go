package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
type ExchangeStore interface {
	// ForEachExchange calls fn for every stored exchange.
	ForEachExchange(ctx context.Context, fn func(Exchange) error) error
	// SaveExchange keeps a new exchange.
	SaveExchange(ctx context.Context, ex Exchange) error
}

// AnswerKey identifies one question's answer independently of its id and of
// the other questions asked with it: the requested model, the compact state
// and the compact question body.
type AnswerKey [32]byte

// String returns the key in hex.
func (k AnswerKey) String() string { return hex.EncodeToString(k[:]) }

// KeyFor computes the AnswerKey for question q asked of model about state.
// State must be compact (as Request keeps it).
func KeyFor(model string, state []byte, q *Question) AnswerKey {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write(state)
	h.Write([]byte{0})
	body, _ := q.MarshalJSON()
	h.Write(body)
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
