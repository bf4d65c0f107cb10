// Package systemone is the live HTTP client for System One servers:
// POST /v1/systemone and GET /v1/models on TypeSafe's API or any server that
// speaks it.
//
// The API key is only ever sent to the base URL given in Config (chosen by
// the user's flag or environment through ResolveBaseURL); the client never
// takes a URL from a request, a question set or a fixture, and it refuses
// redirects. Calls are limited in concurrency and rate, retried with jittered
// exponential backoff on 408/429/5xx and transport errors (honouring
// Retry-After and retry-after-ms) within a total budget, and every answer is
// checked against the contract before it is returned. A 429 is retried for
// as long as the budget allows (MaxRetries counts only real failures), and
// 429/529 lower the client's own request rate, which recovers as requests
// succeed (AIMD), so a saturated server slows a run down instead of failing
// its items.
package systemone

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultConcurrency   = 8
	DefaultTimeout       = 30 * time.Second
	DefaultRetryBudget   = 30 * time.Second
	DefaultMaxRetries    = 4
	DefaultBackoffBase   = 500 * time.Millisecond
	DefaultBackoffMax    = 5 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
	// MaxResponseBytes caps a response body; a bigger one is malformed.
	MaxResponseBytes = 64 << 20
)

const (
	headerRequestID  = "X-Typesafe-Request-Id"
	headerRetryCount = "X-Typesafe-Retry-Count"
	pathSystemOne    = "/v1/systemone"
	pathModels       = "/v1/models"
)

// Config configures a Client. Zero fields take the defaults above.
type Config struct {
	// BaseURL is the server the key is sent to (see ResolveBaseURL); ""
	// means DefaultBaseURL. Plain http is accepted only on loopback.
	BaseURL string
	// APIKey is sent as a bearer token; "" sends no Authorization header.
	APIKey string
	// Concurrency caps requests in flight (default 8).
	Concurrency int
	// RPS caps requests started per second; 0 means no limit. The client
	// lowers its own rate below this when the server answers 429 or 529
	// and raises it again as requests succeed (see adaptive).
	RPS float64
	// Timeout bounds each attempt (default 30s).
	Timeout time.Duration
	// RetryBudget bounds the total time spent on one call including retries
	// and their waits (default 30s).
	RetryBudget time.Duration
	// MaxRetries caps retries after failures that are not rate limits
	// (5xx, timeouts, transport errors; default 4; negative means never
	// retry). A 429 is retried for as long as RetryBudget allows, however
	// short the server's Retry-After: being told to slow down is not a
	// failure of the request.
	MaxRetries int
	// PricePerMillion is the USD price per million input tokens (default
	// provider.CostPerMillionInputTokens).
	PricePerMillion float64
	// HTTPClient replaces the client's own keep-alive client. Its redirect
	// policy is overridden: redirects are never followed.
	HTTPClient *http.Client

	// BackoffBase and BackoffMax shape the exponential backoff (defaults
	// 0.5s doubling up to 5s); each wait is jittered down by up to 25%.
	BackoffBase, BackoffMax time.Duration
	// MaxRetryAfter caps a server's Retry-After (default 60s).
	MaxRetryAfter time.Duration
	// Limits are passed to Request.ValidateWith.
	Limits provider.Limits
	// Version goes into the User-Agent "jevlab/<version>" (default "dev").
	Version string
	// API is the host's shape of the call (hosts.go); "" detects it from
	// BaseURL (DetectAPI).
	API API
}

// Client talks to one System One server. It is safe for concurrent use;
// share one per process so connections are kept alive.
type Client struct {
	base      string
	api       API
	askURL    string
	modelsURL string
	hc        *http.Client
	sem       chan struct{}
	ad        *adaptive

	concurrency             int
	timeout, budget         time.Duration
	maxRetries              int
	backoffBase, backoffMax time.Duration
	maxRetryAfter           time.Duration
	retryJitter             float64
	price                   float64

	key                     string
	hasKey                  bool
	hdrAuth, hdrUA, hdrJSON []string

	enc *encoder

	// sleep and now are replaceable in tests.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	base, err := checkBaseURL(base)
	if err != nil {
		return nil, fmt.Errorf("systemone: %w", err)
	}
	api := cfg.API
	if api == "" {
		api = DetectAPI(base)
	}
	c := &Client{
		base:          base,
		api:           api,
		askURL:        askURL(base, api),
		modelsURL:     base + pathModels,
		concurrency:   orInt(cfg.Concurrency, DefaultConcurrency),
		timeout:       orDur(cfg.Timeout, DefaultTimeout),
		budget:        orDur(cfg.RetryBudget, DefaultRetryBudget),
		maxRetries:    cfg.MaxRetries,
		backoffBase:   orDur(cfg.BackoffBase, DefaultBackoffBase),
		backoffMax:    orDur(cfg.BackoffMax, DefaultBackoffMax),
		maxRetryAfter: orDur(cfg.MaxRetryAfter, DefaultMaxRetryAfter),
		price:         cfg.PricePerMillion,
		key:           cfg.APIKey,
		hasKey:        cfg.APIKey != "",
		retryJitter:   0.25,
		sleep:         sleepCtx,
		now:           time.Now,
	}
	if cfg.MaxRetries == 0 {
		c.maxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		c.maxRetries = 0
	}
	if c.price == 0 {
		c.price = provider.CostPerMillionInputTokens
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	c.hdrUA = []string{"jevlab/" + version}
	c.hdrJSON = []string{"application/json"}
	if c.hasKey {
		c.hdrAuth = []string{"Bearer " + cfg.APIKey}
	}
	c.sem = make(chan struct{}, c.concurrency)
	c.ad = newAdaptive(cfg.RPS)
	plainKey := c.hasKey && strings.HasPrefix(base, "http://")
	if cfg.HTTPClient != nil {
		hc := *cfg.HTTPClient
		hc.CheckRedirect = noRedirects
		if t, ok := hc.Transport.(*http.Transport); ok && plainKey {
			t = t.Clone()
			dial := t.DialContext
			if dial == nil {
				dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
			}
			t.DialContext = loopbackOnly(dial)
			hc.Transport = t
		}
		c.hc = &hc
	} else {
		t := newTransport(c.concurrency)
		if plainKey {
			t.DialContext = loopbackOnly(t.DialContext)
		}
		c.hc = &http.Client{Transport: t, CheckRedirect: noRedirects}
	}
	c.enc = newEncoder(cfg.Limits)
	return c, nil
}

// BaseURL returns the server this client sends the key to.
func (c *Client) BaseURL() string { return c.base }

// API returns the host shape the client speaks.
func (c *Client) API() API { return c.api }

// AskURL returns the URL each call is posted to.
func (c *Client) AskURL() string { return c.askURL }

// Close releases idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// newTransport is a keep-alive transport sized for the concurrency limit.
func newTransport(concurrency int) *http.Transport {
	idle := max(concurrency, 2)
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(100, idle),
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// dialFunc is http.Transport.DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// loopbackOnly wraps dial for a client that sends its key over plain http
// (allowed only to loopback): the peer actually connected to must be a
// loopback address, or the connection is closed before a byte is written.
// The base URL's host was checked by name; this checks where the name led
// (a "localhost" that resolves elsewhere is refused).
func loopbackOnly(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if !peerIsLoopback(conn.RemoteAddr()) {
			peer := conn.RemoteAddr().String()
			conn.Close()
			return nil, &notLoopbackError{addr: addr, peer: peer}
		}
		return conn, nil
	}
}

// notLoopbackError refuses a plain-http peer that is not on this machine.
type notLoopbackError struct{ addr, peer string }

func (e *notLoopbackError) Error() string {
	return fmt.Sprintf("refusing to send the API key over plain http: %s connected to %s, which is not a loopback address (use https, or a loopback address such as 127.0.0.1)", e.addr, e.peer)
}

func peerIsLoopback(a net.Addr) bool {
	switch v := a.(type) {
	case *net.TCPAddr:
		return v.IP.IsLoopback()
	case *net.UnixAddr:
		return true // a local socket
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		host = a.String()
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func orInt(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

func orDur(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// Ask validates req, sends it, checks the answers and returns them with the
// call's accounting and the wire exchange. A request without a model asks
// for provider.DefaultModel.
func (c *Client) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	if req.Model == "" {
		r := *req
		r.Model = provider.DefaultModel
		req = &r
	}
	if err := checkModelFor(c.api, req.Model); err != nil {
		return nil, err
	}
	body, err := c.enc.encode(req)
	if err != nil {
		return nil, err
	}
	// The wire body in the host's shape; the exchange records the System
	// One body, so a recording replays whichever host made it.
	wireBody := body
	if c.api == APICloudflare {
		if wireBody, err = wrapCloudflare(body, req.Model); err != nil {
			return nil, &provider.Error{Kind: provider.KindInvalid, Message: "cannot wrap the request for Cloudflare", Err: err}
		}
	}

	red := newRedactor(c.key, req.State)
	at, perr := c.doWith(ctx, http.MethodPost, c.askURL, wireBody, red, req.DangerHeaders())
	if perr != nil {
		return nil, perr
	}
	malformed := func(msg string, cause error) error {
		return &provider.Error{Kind: provider.KindMalformed, Status: at.status, Message: red.clean(msg),
			RequestID: at.requestID, Attempts: at.attempts, Err: cause}
	}
	respBody := at.body
	if c.api == APICloudflare {
		result, failed, err := unwrapCloudflare(at.body)
		if err != nil {
			return nil, malformed(err.Error(), err)
		}
		if failed != "" {
			return nil, &provider.Error{Kind: provider.KindRejected, Status: at.status, Message: red.clean(failed),
				RequestID: at.requestID, Attempts: at.attempts}
		}
		respBody = result
	}
	res, err := provider.CheckResponse(req, respBody)
	if err != nil {
		var ce *provider.CheckError
		if errors.As(err, &ce) {
			return nil, malformed(err.Error(), err)
		}
		return nil, malformed(err.Error(), nil)
	}
	recorded := c.now().UTC()
	for i := range res.Answers {
		res.Answers[i].Provenance = provider.Provenance{Source: provider.SourceLive, Model: res.Model, RecordedAt: recorded}
	}
	latencyMS := float64(at.latency.Microseconds()) / 1000
	res.CostUSD = provider.Cost(res.Usage, c.price)
	if c.api == APIOpenRouter {
		if cost, ok := openRouterCost(respBody); ok {
			res.CostUSD = cost // OpenRouter's own charge wins over tokens × price
		}
	}
	res.Latency = at.latency
	res.RequestID = at.requestID
	res.Attempts = at.attempts
	record := json.RawMessage(body)
	if len(req.Assets) > 0 {
		// A recording keeps each image by its hash, not its bytes.
		var b bytes.Buffer
		req.AppendRecordJSON(&b)
		record = b.Bytes()
	}
	res.Exchanges = []provider.Exchange{{
		Request:    record,
		Response:   oneLine(respBody),
		LatencyMS:  latencyMS,
		RecordedAt: recorded.Format(time.RFC3339Nano),
	}}
	return res, nil
}

// oneLine returns body compacted when it spans lines, so an exchange can be
// written as one JSON Lines record.
func oneLine(body []byte) json.RawMessage {
	if bytes.IndexByte(body, '\n') < 0 && bytes.IndexByte(body, '\r') < 0 {
		return body
	}
	var b bytes.Buffer
	if json.Compact(&b, body) != nil {
		return body
	}
	return b.Bytes()
}

// Models lists the models the server offers (GET /v1/models). A listing
// that carries the API key anywhere (literally or JSON-escaped: a hostile
// server echoing it) is refused, and no part of it is shown.
func (c *Client) Models(ctx context.Context) ([]provider.Model, error) {
	if c.api != APITypeSafe {
		return nil, &provider.Error{Kind: provider.KindInvalid, Message: fmt.Sprintf(
			"listing models is TypeSafe's GET /v1/models; the %s API has no such call (see the host's own model list)", c.api)}
	}
	red := newRedactor(c.key, nil)
	at, err := c.do(ctx, http.MethodGet, c.modelsURL, nil, red)
	if err != nil {
		return nil, err
	}
	if c.hasKey && provider.ContainsSecret(at.body, c.key) {
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: at.status,
			Message:   "the /v1/models response contains the API key; it is not shown (check --base-url: is this server trustworthy?)",
			RequestID: at.requestID, Attempts: at.attempts}
	}
	var body struct {
		Models *[]provider.Model `json:"models"`
	}
	if err := json.Unmarshal(at.body, &body); err != nil || body.Models == nil {
		msg := `the /v1/models response has no "models" array`
		if err != nil {
			msg = "the /v1/models response is not JSON: " + red.clean(err.Error())
		}
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: at.status, Message: msg,
			RequestID: at.requestID, Attempts: at.attempts}
	}
	return *body.Models, nil
}

// attempt is the successful outcome of do.
type attempt struct {
	status    int
	body      []byte
	latency   time.Duration
	requestID string
	attempts  int
}

// do runs one call with the concurrency and rate limits and the retry
// policy. The returned error is always a *provider.Error.
func (c *Client) do(ctx context.Context, method, url string, body []byte, red redactor) (*attempt, error) {
	return c.doWith(ctx, method, url, body, red, nil)
}

// doWith is do sending extra headers (the Danger-Zone opt-ins) on every
// attempt.
func (c *Client) doWith(ctx context.Context, method, url string, body []byte, red redactor, extra map[string]string) (*attempt, error) {
	start := c.now()
	// queued is the time spent waiting for this client's own concurrency
	// slot and rate limiter: not time spent retrying, so it does not use
	// up the retry budget (a run slowed by its own limits must not fail
	// items that the server would have answered).
	var queued time.Duration
	failures := 0 // retryable failures other than rate limits
	for n := 1; ; n++ {
		at, perr := c.attemptOnce(ctx, method, url, body, n-1, red, extra, &queued)
		if perr == nil {
			at.attempts = n
			return at, nil
		}
		perr.Attempts = n
		if !perr.Retryable() || ctx.Err() != nil || errors.Is(perr.Err, errNoTimeLeft) {
			return nil, perr
		}
		limited := perr.Kind == provider.KindRateLimited
		if !limited {
			failures++
		}
		if c.maxRetries == 0 || failures > c.maxRetries {
			if c.maxRetries > 0 {
				perr.Message = appendNote(perr.Message, fmt.Sprintf("gave up after %d retries", c.maxRetries))
			}
			return nil, perr
		}
		wait := c.backoff(max(failures, 1))
		if perr.RetryAfter > 0 {
			wait = min(perr.RetryAfter, c.maxRetryAfter)
		}
		if elapsed := c.now().Sub(start) - queued; elapsed+wait > c.budget {
			perr.Message = appendNote(perr.Message, fmt.Sprintf("retry budget of %s exhausted", c.budget))
			return nil, perr
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, ctxError(ctx, n)
		}
	}
}

func appendNote(msg, note string) string {
	if msg == "" {
		return note
	}
	return msg + "; " + note
}

// backoff is the jittered exponential wait before retry n (1-based).
func (c *Client) backoff(n int) time.Duration {
	d := c.backoffBase
	for i := 1; i < n && d < c.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.backoffMax)
	return time.Duration(float64(d) * (1 - c.retryJitter*rand.Float64()))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ctxError classifies the caller's context ending: canceled, or a timeout
// when its deadline passed.
func ctxError(ctx context.Context, attempts int) *provider.Error {
	err := ctx.Err()
	if err == nil {
		err = context.Canceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &provider.Error{Kind: provider.KindTimeout, Message: "the caller's deadline passed", Attempts: attempts, Err: err}
	}
	return &provider.Error{Kind: provider.KindCanceled, Message: "canceled", Attempts: attempts, Err: err}
}

// attemptOnce makes one HTTP request within the limits. A non-2xx status is
// returned as a classified error.
func (c *Client) attemptOnce(ctx context.Context, method, url string, body []byte, retry int, red redactor, extra map[string]string, queued *time.Duration) (*attempt, *provider.Error) {
	q0 := c.now()
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxError(ctx, 0)
	}
	defer func() { <-c.sem }()
	{
		err := c.ad.lim.Wait(ctx)
		*queued += c.now().Sub(q0)
		if err != nil {
			if ctx.Err() == nil {
				// The limiter refuses a wait that would outlast the deadline.
				return nil, &provider.Error{Kind: provider.KindTimeout, Message: "the caller's deadline is too close for the request rate limit", Err: fmt.Errorf("%w: %v", errNoTimeLeft, err)}
			}
			return nil, ctxError(ctx, 0)
		}
	}
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, method, url, nil)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindInvalid, Message: "cannot build request", Err: err}
	}
	if body != nil {
		hreq.Body = io.NopCloser(bytes.NewReader(body))
		hreq.ContentLength = int64(len(body))
		hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		hreq.Header["Content-Type"] = c.hdrJSON
	}
	hreq.Header["Accept"] = c.hdrJSON
	hreq.Header["User-Agent"] = c.hdrUA
	if c.hasKey {
		hreq.Header["Authorization"] = c.hdrAuth
	}
	if retry > 0 {
		hreq.Header[headerRetryCount] = []string{strconv.Itoa(retry)}
	}
	for k, v := range extra {
		hreq.Header.Set(k, v)
	}
	t0 := time.Now()
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, actx, err)
	}
	data, rerr := readBody(resp)
	latency := time.Since(t0)
	resp.Body.Close()
	if rerr != nil {
		if errors.Is(rerr, errTooLarge) {
			return nil, &provider.Error{Kind: provider.KindMalformed, Status: resp.StatusCode, Message: rerr.Error(), RequestID: red.clean(resp.Header.Get(headerRequestID))}
		}
		return nil, c.transportError(ctx, actx, rerr)
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == 529 {
		c.ad.slowDown(time.Now())
	} else if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		c.ad.success(time.Now())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusError(resp, data, c.now(), red)
	}
	return &attempt{status: resp.StatusCode, body: data, latency: latency, requestID: red.clean(resp.Header.Get(headerRequestID))}, nil
}

// transportError classifies a failure with no HTTP status.
func (c *Client) transportError(ctx, actx context.Context, err error) *provider.Error {
	if ctx.Err() != nil {
		return ctxError(ctx, 0)
	}
	var nl *notLoopbackError
	if errors.As(err, &nl) {
		return &provider.Error{Kind: provider.KindInvalid, Message: nl.Error(), Err: err}
	}
	if actx.Err() != nil || isTimeout(err) {
		return &provider.Error{Kind: provider.KindTimeout, Message: fmt.Sprintf("no response within %s", c.timeout), Err: err}
	}
	return &provider.Error{Kind: provider.KindUnavailable, Message: "cannot reach " + c.base, Err: err}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// errNoTimeLeft marks a wait the caller's deadline cannot cover; retrying
// cannot help.
var errNoTimeLeft = errors.New("no time left before the caller's deadline")

var errTooLarge = fmt.Errorf("response body exceeds %d bytes", MaxResponseBytes)

// readBody reads the whole body into a buffer of exactly the right size
// when the length is known.
func readBody(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 {
		if n > MaxResponseBytes {
			return nil, errTooLarge
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxResponseBytes {
		return nil, errTooLarge
	}
	return data, nil
}
