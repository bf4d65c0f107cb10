// Package standin is an in-process System One server: an http.Handler for
// POST /v1/systemone and GET /v1/models that validates requests the way
// TypeSafe does, answers from recorded exchanges (replay) and/or
// synthetically, and injects faults on request (latency, 429, 5xx/529,
// timeouts, malformed bodies, missing answers). Tests, benchmarks and
// `jevlab serve` use it; nothing in it talks to the network by itself.
//
// Behaviour worth knowing:
//
//   - Replay indexes every recorded answer by provider.KeyFor(requested
//     model, state, question), so a request that asks a subset of a recorded
//     exchange's questions, renames them or reorders them still replays. The
//     recorded answer bytes are returned unchanged and the response model is
//     the recorded one. When several exchanges record the same question, the
//     first one given wins.
//   - A question that is not recorded is answered synthetically when
//     Config.Synthetic is set; otherwise the whole request is refused with 422
//     and one detail entry per unrecorded question id (type "not_recorded").
//     A response holding any synthetic answer is reported under the model
//     SyntheticModel, so synthetic answers never pass for Jev's.
//   - Synthetic answers are deterministic: the same request yields the same
//     bytes. Probabilities are rounded to two decimals like Jev's (sums
//     0.99–1.00) and their keys are written in a deterministic shuffled order,
//     because Jev's key order is arbitrary and clients must match by key.
package standin

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// SyntheticModel is the model name reported for synthetic answers. It
// starts with "standin-" so it can never be mistaken for a Jev version.
const SyntheticModel = "standin-synthetic-1"

// releaseDate is the release date listed for SyntheticModel and for
// recorded models whose exchanges carry no recorded_at.
const releaseDate = "2026-12-01"

// Config configures a Server.
type Config struct {
	// Exchanges are recorded calls to replay, in priority order.
	Exchanges []provider.Exchange
	// Synthetic answers questions that are not recorded synthetically.
	Synthetic bool
	// APIKey, when not empty, is required as "Authorization: Bearer KEY".
	// It is compared in constant time and never logged or echoed.
	APIKey string
	// Faults are injected into POST /v1/systemone.
	Faults Faults
	// Seed seeds the fault RNG and the synthetic key shuffle.
	Seed int64
	// TokenLimits applies the API's token limits (64k per request, 32k for
	// the state and the longest question, counted as the stand-in counts
	// usage: body bytes / 4), lifted to 262k by the Long-Context header.
	TokenLimits bool
	// Limits are the validation limits (zero: the API's defaults).
	Limits provider.Limits
	// Fragile, when set, makes synthetic answers those of an ideal
	// respondent with flaws of known size (see Fragile); nil keeps the
	// plain lexical-overlap answerer.
	Fragile *Fragile
}

// Faults describe the failures the server injects. Rates are probabilities
// per request in [0, 1]; FailRate, TimeoutRate, MalformedRate and
// MissingRate are mutually exclusive outcomes of one draw, so their sum must
// not exceed 1.
type Faults struct {
	// Latency is added to every answered request.
	Latency time.Duration
	// LatencyJitter is the mean of an exponentially distributed extra delay
	// (capped at 10× the mean), giving the long right tail real latency has.
	LatencyJitter time.Duration
	// RateLimitRPS, when > 0, admits requests through a token bucket of this
	// rate; requests beyond it get 429 with Retry-After.
	RateLimitRPS float64
	// RateLimitBurst is the bucket size (0: max(1, ceil(RateLimitRPS))).
	RateLimitBurst int
	// FailRate is the share of requests answered 500, 502, 503 or 529.
	FailRate float64
	// TimeoutRate is the share of requests that hang until the client gives
	// up, or until TimeoutAfter (then 408).
	TimeoutRate float64
	// MalformedRate is the share of 200 responses whose JSON body is cut off.
	MalformedRate float64
	// MissingRate is the share of 200 responses with one answer left out.
	MissingRate float64
	// TimeoutAfter bounds a hanging request (0: hang until the client gives
	// up or the server is closed).
	TimeoutAfter time.Duration
}

// Stats counts requests by outcome. Every request is counted once under
// Requests and once under exactly one outcome, so a soak test can reconcile
// its own counts against them.
type Stats struct {
	Requests    int64 `json:"requests"`
	OK          int64 `json:"ok"`           // 200 with a complete, well-formed body
	Invalid     int64 `json:"invalid"`      // 422 (validation, bad JSON, not recorded) and 413
	Unrecorded  int64 `json:"unrecorded"`   // the part of Invalid refused as not recorded
	Auth        int64 `json:"auth"`         // 401 and 403
	RateLimited int64 `json:"rate_limited"` // 429
	Unavailable int64 `json:"unavailable"`  // injected 5xx and 529
	Timeout     int64 `json:"timeout"`      // hung until the client gave up or TimeoutAfter
	Malformed   int64 `json:"malformed"`    // 200 with a cut-off body
	Missing     int64 `json:"missing"`      // 200 with an answer left out
	Canceled    int64 `json:"canceled"`     // the client gave up during injected latency
	NotFound    int64 `json:"not_found"`    // 404 and 405
}

// Outcomes returns the sum of every outcome counter; it equals Requests once
// no request is in flight.
func (s Stats) Outcomes() int64 {
	return s.OK + s.Invalid + s.Auth + s.RateLimited + s.Unavailable + s.Timeout +
		s.Malformed + s.Missing + s.Canceled + s.NotFound
}

type counters struct {
	requests, ok, invalid, unrecorded, auth, rateLimited, unavailable,
	timeout, malformed, missing, canceled, notFound atomic.Int64
}

// recorded is one replayable answer.
type recorded struct {
	answer   json.RawMessage // compact answer object as recorded
	model    string          // response model that gave it
	exchange int             // index in Config.Exchanges
}

// exchangeInfo is what a full replay of one exchange reports.
type exchangeInfo struct {
	questions int
	usage     provider.Usage
}

// Server is the stand-in. It is safe for concurrent use.
type Server struct {
	cfg       Config
	keyHash   [32]byte
	index     map[provider.AnswerKey]recorded
	exchanges []exchangeInfo
	warnings  []error
	models    []byte // GET /v1/models body
	modelList []provider.Model
	faults    *faultState
	quit      chan struct{}
	closeOnce sync.Once
	reqID     atomic.Uint64
	stats     counters

	bufs   sync.Pool  // *bytes.Buffer
	synths *sync.Pool // *synthesizer

	prepMu sync.RWMutex
	prep   map[string]*prepQ // question body → tokenised question

	noiseDraws atomic.Uint64 // Fragile.RepeatNoise draws so far

	cacheMu sync.RWMutex
	cache   map[string]*response // request body → 200 response (deterministic answers only)
}

// Cache bounds: bodies larger than maxCachedBody are not cached, and the
// cache is emptied when it reaches maxCacheEntries.
const (
	maxCachedBody   = 64 << 10
	maxCacheEntries = 4096
)

// New builds a Server from cfg. Recorded exchanges are decoded and indexed
// up front; an exchange that cannot be decoded is skipped and reported by
// Warnings. Only an invalid fault configuration is an error.
func New(cfg Config) (*Server, error) {
	if err := cfg.Faults.validate(); err != nil {
		return nil, err
	}
	if err := cfg.Fragile.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:    cfg,
		index:  make(map[provider.AnswerKey]recorded),
		quit:   make(chan struct{}),
		cache:  make(map[string]*response),
		prep:   make(map[string]*prepQ),
		synths: newSynthPool(),
	}
	s.bufs.New = func() any { return new(bytes.Buffer) }
	if cfg.APIKey != "" {
		s.keyHash = sha256.Sum256([]byte(cfg.APIKey))
	}
	s.faults = newFaultState(cfg.Faults, cfg.Seed)
	s.exchanges = make([]exchangeInfo, len(cfg.Exchanges))
	type modelInfo struct{ answeredBy, date string }
	seenModels := map[string]*modelInfo{}
	var modelOrder []string
	for i, ex := range cfg.Exchanges {
		name := fmt.Sprintf("exchange %d", i+1)
		if ex.ID != "" {
			name += fmt.Sprintf(" (id %q)", ex.ID)
		}
		var req provider.Request
		if err := json.Unmarshal(ex.Request, &req); err != nil {
			s.warnings = append(s.warnings, fmt.Errorf("%s: request: %w (skipped)", name, err))
			continue
		}
		var resp provider.Response
		if err := json.Unmarshal(ex.Response, &resp); err != nil {
			s.warnings = append(s.warnings, fmt.Errorf("%s: response: %w (skipped)", name, err))
			continue
		}
		s.exchanges[i] = exchangeInfo{questions: len(req.Questions), usage: resp.Usage}
		for qi := range req.Questions {
			e := &req.Questions[qi]
			raw, ok := resp.Answers[e.ID]
			if !ok {
				continue
			}
			k := provider.KeyForRequest(&req, &e.Question)
			if _, dup := s.index[k]; dup {
				continue
			}
			s.index[k] = recorded{answer: provider.Compact(raw), model: resp.Model, exchange: i}
		}
		mi, ok := seenModels[req.Model]
		if !ok {
			mi = &modelInfo{answeredBy: resp.Model}
			seenModels[req.Model] = mi
			modelOrder = append(modelOrder, req.Model)
		}
		if d := dateOf(ex.RecordedAt); d != "" && (mi.date == "" || d < mi.date) {
			mi.date = d
		}
	}
	for _, m := range modelOrder {
		mi := seenModels[m]
		date := mi.date
		if date == "" {
			date = releaseDate
		}
		s.modelList = append(s.modelList, provider.Model{
			Name:        m,
			Description: fmt.Sprintf("Recorded answers (answered by %s) replayed by the jevlab stand-in.", mi.answeredBy),
			ReleaseDate: date,
		})
	}
	if cfg.Synthetic {
		s.modelList = append(s.modelList, provider.Model{
			Name:        SyntheticModel,
			Description: "Synthetic answers from lexical overlap (jevlab stand-in); not Jev. Any model name is answered synthetically when not recorded.",
			ReleaseDate: releaseDate,
		})
	}
	body, err := json.Marshal(struct {
		Models []provider.Model `json:"models"`
	}{Models: append([]provider.Model{}, s.modelList...)})
	if err != nil {
		return nil, fmt.Errorf("stand-in: models: %w", err)
	}
	s.models = body
	return s, nil
}

func dateOf(ts string) string {
	if len(ts) < 10 {
		return ""
	}
	if _, err := time.Parse("2006-01-02", ts[:10]); err != nil {
		return ""
	}
	return ts[:10]
}

// Models returns the models GET /v1/models lists: each requested model that
// has recordings, then SyntheticModel when synthetic answers are on.
func (s *Server) Models() []provider.Model { return append([]provider.Model(nil), s.modelList...) }

// Warnings returns the problems with Config.Exchanges found by New, one
// per skipped exchange, each naming it by position (1-based) and id.
func (s *Server) Warnings() []error { return append([]error(nil), s.warnings...) }

// Recorded returns how many distinct question answers can be replayed.
func (s *Server) Recorded() int { return len(s.index) }

// Stats returns the counts so far.
func (s *Server) Stats() Stats {
	c := &s.stats
	return Stats{
		Requests: c.requests.Load(), OK: c.ok.Load(), Invalid: c.invalid.Load(),
		Unrecorded: c.unrecorded.Load(), Auth: c.auth.Load(), RateLimited: c.rateLimited.Load(),
		Unavailable: c.unavailable.Load(), Timeout: c.timeout.Load(), Malformed: c.malformed.Load(),
		Missing: c.missing.Load(), Canceled: c.canceled.Load(), NotFound: c.notFound.Load(),
	}
}

// Close releases requests hanging in an injected timeout. The handler keeps
// working afterwards, but injected timeouts end at once.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.quit) })
}

// ServeHTTP routes POST /v1/systemone and GET /v1/models, and the other
// hosts' shapes of the same call (hosts.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.stats.requests.Add(1)
	switch r.URL.Path {
	case "/v1/systemone":
		if r.Method != http.MethodPost {
			s.methodNotAllowed(w, "POST")
			return
		}
		if !s.authorized(w, r) {
			return
		}
		s.systemOne(w, r)
	case PathOpenRouter: // hosts.go
		if r.Method != http.MethodPost {
			s.methodNotAllowed(w, "POST")
			return
		}
		if !s.authorized(w, r) {
			return
		}
		s.openRouter(w, r)
	case "/v1/models":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.methodNotAllowed(w, "GET")
			return
		}
		if !s.authorized(w, r) {
			return
		}
		s.stats.ok.Add(1)
		s.writeBody(w, http.StatusOK, s.models)
	default:
		if isCloudflareRun(r.URL.Path) { // hosts.go
			if r.Method != http.MethodPost {
				s.methodNotAllowed(w, "POST")
				return
			}
			if !s.authorized(w, r) {
				return
			}
			s.cloudflare(w, r)
			return
		}
		s.stats.notFound.Add(1)
		s.writeBody(w, http.StatusNotFound, []byte(`{"detail":"Not Found"}`))
	}
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, allow string) {
	s.stats.notFound.Add(1)
	w.Header().Set("Allow", allow)
	s.writeBody(w, http.StatusMethodNotAllowed, []byte(`{"detail":"Method Not Allowed"}`))
}

// Messages of TypeSafe's authentication errors.
const (
	msgNoKey    = `Must supply an API key! Send it as "Authorization: Bearer <key>".`
	msgWrongKey = "Cannot authenticate with the server. Check that the API key is correct and active."
)

// authorized checks the bearer key: missing → 403, wrong → 401, as TypeSafe
// answers. The key is compared by hash in constant time.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !equalFoldASCII(h[:len(prefix)], prefix) {
		s.stats.auth.Add(1)
		s.writeError(w, http.StatusForbidden, msgNoKey, "authentication_error")
		return false
	}
	got := sha256.Sum256([]byte(h[len(prefix):]))
	if subtle.ConstantTimeCompare(got[:], s.keyHash[:]) != 1 {
		s.stats.auth.Add(1)
		s.writeError(w, http.StatusUnauthorized, msgWrongKey, "authentication_error")
		return false
	}
	return true
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// systemOne handles one POST /v1/systemone after authentication.
func (s *Server) systemOne(w http.ResponseWriter, r *http.Request) {
	if s.faults.enabled {
		if wait, ok := s.faults.admit(); !ok {
			s.stats.rateLimited.Add(1)
			secs := int(math.Ceil(wait.Seconds()))
			if secs < 1 {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			w.Header().Set("retry-after-ms", strconv.FormatInt(wait.Milliseconds()+1, 10))
			s.writeError(w, http.StatusTooManyRequests, "Rate limit exceeded; retry after the time in the Retry-After header.", "rate_limit_error")
			return
		}
	}
	var f fault
	if s.faults.enabled {
		f = s.faults.draw()
	}
	switch f.kind {
	case faultFail:
		s.stats.unavailable.Add(1)
		s.drain(r)
		if f.status == 529 {
			s.writeError(w, f.status, "The server is overloaded; retry with backoff.", "overloaded_error")
		} else {
			s.writeError(w, f.status, "Internal server error (injected by the jevlab stand-in).", "unknown")
		}
		return
	case faultTimeout:
		s.hang(w, r)
		return
	}

	buf := s.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer s.bufs.Put(buf)
	max := s.cfg.Limits.MaxRequestBytes
	if max <= 0 {
		max = provider.DefaultMaxRequestBytes
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, int64(max)+1)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.stats.invalid.Add(1)
			s.writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body exceeds %d bytes.", max), "tokens_exceeded")
			return
		}
		// The client went away while sending.
		s.stats.canceled.Add(1)
		return
	}
	body := buf.Bytes()

	resp, status := s.answer(body, dangerZoneOf(r)) // hosts.go
	if status != http.StatusOK {
		s.stats.invalid.Add(1)
		if status == statusUnrecorded {
			s.stats.unrecorded.Add(1)
			status = http.StatusUnprocessableEntity
		}
		s.writeBody(w, status, resp.body)
		return
	}
	if d := s.faults.delay(); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			s.stats.canceled.Add(1)
			return
		}
	}
	switch f.kind {
	case faultMalformed:
		s.stats.malformed.Add(1)
		b := resp.body
		s.writeBody(w, http.StatusOK, b[:len(b)/2])
		return
	case faultMissing:
		s.stats.missing.Add(1)
		s.writeBody(w, http.StatusOK, resp.withoutAnswer(f.pick))
		return
	}
	s.stats.ok.Add(1)
	s.writeBody(w, http.StatusOK, resp.body)
}

// statusUnrecorded marks a 422 for questions that are not recorded.
const statusUnrecorded = -422

// drain reads and discards a request body so the connection can be reused.
func (s *Server) drain(r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
}

// hang waits until the client gives up, TimeoutAfter passes or the server is
// closed; only the last two get a response (408).
func (s *Server) hang(w http.ResponseWriter, r *http.Request) {
	s.stats.timeout.Add(1)
	s.drain(r)
	var after <-chan time.Time
	if d := s.cfg.Faults.TimeoutAfter; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-r.Context().Done():
		return
	case <-after:
	case <-s.quit:
	}
	s.writeError(w, http.StatusRequestTimeout, "The request timed out (injected by the jevlab stand-in).", "timeout")
}

// writeError writes TypeSafe's non-validation error shape.
func (s *Server) writeError(w http.ResponseWriter, status int, msg, errType string) {
	b := make([]byte, 0, 64+len(msg))
	b = append(b, `{"detail":{"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"error_type":`...)
	b = appendString(b, errType)
	b = append(b, `}}`...)
	s.writeBody(w, status, b)
}

func (s *Server) writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	h["X-Typesafe-Request-Id"] = []string{"standin-" + strconv.FormatUint(s.reqID.Add(1), 10)}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// appendString appends s as a JSON string without HTML escaping.
func appendString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}
