package provider

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// FieldError is a problem with one field of a request or answer. Field is a
// dotted path relative to its container (e.g. "criteria.billing").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// QuestionError wraps a problem with one question, naming its id.
type QuestionError struct {
	ID  string
	Err error
}

func (e *QuestionError) Error() string { return fmt.Sprintf("question %q: %v", e.ID, e.Err) }
func (e *QuestionError) Unwrap() error { return e.Err }

// ValidationError lists every problem Validate found in a request.
type ValidationError struct {
	Problems []error
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	if len(msgs) == 1 {
		return "invalid request: " + msgs[0]
	}
	return fmt.Sprintf("invalid request (%d problems):\n  %s", len(msgs), strings.Join(msgs, "\n  "))
}

// Unwrap returns the individual problems.
func (e *ValidationError) Unwrap() []error { return e.Problems }

// ErrorKind classifies a failed call so callers can act on it.
type ErrorKind string

// The kinds of failure a provider reports.
const (
	KindRejected    ErrorKind = "rejected"     // 400/404/422: the request is wrong; do not retry
	KindAuth        ErrorKind = "auth"         // 401/403: key missing, wrong or not allowed
	KindRateLimited ErrorKind = "rate_limited" // 429
	KindUnavailable ErrorKind = "unavailable"  // 5xx, 529, transport failures
	KindTimeout     ErrorKind = "timeout"      // 408 or no answer in time
	KindMalformed   ErrorKind = "malformed"    // a 200 whose body breaks the contract
	KindMiss        ErrorKind = "cache_miss"   // offline and not recorded
	KindCanceled    ErrorKind = "canceled"     // the caller gave up
	KindInvalid     ErrorKind = "invalid"      // rejected locally before sending
	KindLocal       ErrorKind = "local_write"  // a local write (fixture file, database) failed; the run must stop
)

// Detail is one entry of a FastAPI-style validation error list.
type Detail struct {
	Loc  []string `json:"loc"`
	Msg  string   `json:"msg"`
	Type string   `json:"type,omitempty"`
}

// Error is a classified provider failure. It never carries the state or the
// API key.
type Error struct {
	Kind       ErrorKind
	Status     int           // HTTP status, 0 when none
	Message    string        // the provider's own message, extracted like the official SDKs do
	Details    []Detail      // FastAPI validation entries, when given
	RetryAfter time.Duration // from Retry-After / retry-after-ms, when given
	RequestID  string        // x-typesafe-request-id, when given
	Attempts   int           // how many attempts were made
	Err        error         // underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	for _, d := range e.Details {
		fmt.Fprintf(&b, "; %s: %s", strings.Join(d.Loc, "."), d.Msg)
	}
	if e.Err != nil && e.Message == "" {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether a later attempt may succeed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindRateLimited, KindUnavailable, KindTimeout:
		return true
	}
	return false
}

// KindOf returns the kind of err: the Kind of a wrapped *Error, KindInvalid
// for a validation error, KindMalformed for a *CheckError, or "" otherwise.
func KindOf(err error) ErrorKind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return KindInvalid
	}
	var ce *CheckError
	if errors.As(err, &ce) {
		return KindMalformed
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return KindMalformed
	}
	if errors.Is(err, errCanceled) {
		return KindCanceled
	}
	return ""
}

var errCanceled = errors.New("canceled")

// CheckError lists every way a response broke the contract. A response with
// a CheckError yields no answers.
type CheckError struct {
	Problems []error
}

func (e *CheckError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	if len(msgs) == 1 {
		return "malformed answer: " + msgs[0]
	}
	return fmt.Sprintf("malformed answer (%d problems): %s", len(msgs), strings.Join(msgs, "; "))
}

// Unwrap returns the individual problems.
func (e *CheckError) Unwrap() []error { return e.Problems }
