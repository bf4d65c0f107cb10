package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// Paths of the other hosts' shapes the stand-in serves beside TypeSafe's
// POST /v1/systemone, so a client can be tested against each:
// OpenRouter's native Decisions endpoint, and Cloudflare Workers AI's REST
// run endpoint (/client/v4/accounts/{account}/ai/run).
const (
	PathOpenRouter       = "/api/alpha/decisions"
	cloudflarePrefix     = "/client/v4/accounts/"
	cloudflareRunSuffix  = "/ai/run"
	openRouterProvider   = "TypeSafe"
	openRouterIDPrefix   = "gen-standin-"
	cloudflareErrorShape = `{"result":null,"success":false,"errors":[{"code":%d,"message":%s}],"messages":[]}`
)

// isCloudflareRun reports whether path is /client/v4/accounts/ID/ai/run.
func isCloudflareRun(path string) bool {
	rest, ok := strings.CutPrefix(path, cloudflarePrefix)
	if !ok {
		return false
	}
	acct, ok := strings.CutSuffix(rest, cloudflareRunSuffix)
	return ok && acct != "" && !strings.Contains(acct, "/")
}

// captured is an http.ResponseWriter that keeps what the System One
// handler wrote, for a host's envelope to rewrap.
type captured struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func newCaptured() *captured               { return &captured{h: http.Header{}} }
func (c *captured) Header() http.Header    { return c.h }
func (c *captured) WriteHeader(status int) { c.status = status }
func (c *captured) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(b)
}

// relay writes c's headers (but the length) and status, with body.
func (s *Server) relay(w http.ResponseWriter, c *captured, body []byte) {
	for k, v := range c.h {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(body))}
	status := c.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// openRouter serves OpenRouter's native POST /api/alpha/decisions: the
// System One body in, the System One answers out with OpenRouter's
// additions — an "id", the "provider" that answered and "usage.cost", its
// charge in USD (here input tokens at TypeSafe's list price).
func (s *Server) openRouter(w http.ResponseWriter, r *http.Request) {
	c := newCaptured()
	s.systemOne(c, r)
	if c.status != http.StatusOK {
		// OpenRouter's error shape: {"error": {"message", "code"}}.
		msg := "request failed"
		var e struct {
			Detail struct {
				Message string `json:"message"`
			} `json:"detail"`
		}
		if json.Unmarshal(c.body.Bytes(), &e) == nil && e.Detail.Message != "" {
			msg = e.Detail.Message
		} else if c.body.Len() > 0 {
			msg = strings.TrimSpace(c.body.String())
		}
		s.relay(w, c, fmt.Appendf(nil, `{"error":{"message":%s,"code":%d}}`, appendString(nil, msg), c.status))
		return
	}
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(c.body.Bytes(), &resp); err != nil {
		s.relay(w, c, c.body.Bytes()) // a malformed fault: pass it on
		return
	}
	var u struct {
		In  int64 `json:"input_tokens"`
		Out int64 `json:"output_tokens"`
	}
	_ = json.Unmarshal(resp["usage"], &u)
	cost := provider.Cost(provider.Usage{InputTokens: u.In, OutputTokens: u.Out}, provider.CostPerMillionInputTokens)
	id := openRouterIDPrefix + strconv.FormatUint(s.reqID.Load(), 10)
	body := fmt.Appendf(nil, `{"id":%q,"model":%s,"provider":%q,"answers":%s,"usage":{"input_tokens":%d,"output_tokens":%d,"cost":%s}}`,
		id, resp["model"], openRouterProvider, resp["answers"], u.In, u.Out, strconv.FormatFloat(cost, 'g', -1, 64))
	s.relay(w, c, body)
}

// cloudflare serves Cloudflare Workers AI's REST run endpoint: the body
// {"model": M, "input": {state, questions, assets?}} is the System One
// request with M as its model; the reply is Cloudflare's envelope
// {"result": <System One response>, "success": true, "errors": [],
// "messages": []}, or on failure "result": null, "success": false and the
// error in "errors".
func (s *Server) cloudflare(w http.ResponseWriter, r *http.Request) {
	var env struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, int64(provider.DefaultMaxRequestBytes)+4096))
	if err := dec.Decode(&env); err != nil || len(env.Input) < 2 || env.Input[0] != '{' || env.Model == "" {
		s.stats.invalid.Add(1)
		s.writeBody(w, http.StatusBadRequest, fmt.Appendf(nil, cloudflareErrorShape, 5006,
			appendString(nil, `the body must be {"model": "<model>", "input": {…}}`)))
		return
	}
	in := bytes.TrimSpace(env.Input)
	body := append([]byte(`{"model":`), appendString(nil, env.Model)...)
	if inner := bytes.TrimSpace(in[1:]); len(inner) > 0 && inner[0] != '}' {
		body = append(body, ',')
	}
	body = append(body, in[1:]...)
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	c := newCaptured()
	s.systemOne(c, r2)
	if c.status != http.StatusOK {
		msg := strings.TrimSpace(c.body.String())
		var e struct {
			Detail json.RawMessage `json:"detail"`
		}
		if json.Unmarshal(c.body.Bytes(), &e) == nil && len(e.Detail) > 0 {
			var m struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(e.Detail, &m) == nil && m.Message != "" {
				msg = m.Message
			} else {
				msg = string(e.Detail)
			}
		}
		s.relay(w, c, fmt.Appendf(nil, cloudflareErrorShape, c.status, appendString(nil, msg)))
		return
	}
	if !json.Valid(c.body.Bytes()) {
		s.relay(w, c, c.body.Bytes()) // a malformed fault: pass it on
		return
	}
	s.relay(w, c, fmt.Appendf(nil, `{"result":%s,"success":true,"errors":[],"messages":[]}`, c.body.Bytes()))
}

// dangerZoneOf reads the Danger-Zone opt-ins a request was sent with.
func dangerZoneOf(r *http.Request) provider.DangerZone {
	on := func(h string) bool { return strings.EqualFold(strings.TrimSpace(r.Header.Get(h)), "true") }
	return provider.DangerZone{Images: on(provider.HeaderDangerImages), LongContext: on(provider.HeaderDangerLongContext)}
}

// jev114 applies Jev 1.14's rules the validation does not: a box question
// is answered only by a 1.14 model (jev-1.14.0, jev-preview, or a host's
// name ending in one); jev-latest still answers with 1.13, which refuses
// box with 400 "Invalid request." (api_usage_error). With TokenLimits set,
// a request over 64k tokens (or a state plus its longest question over
// 32k) is refused as tokens_exceeded unless the Long-Context header lifts
// the limit to 262k.
func (s *Server) jev114(req *provider.Request, body []byte) (*response, int, bool) {
	for i := range req.Questions {
		if req.Questions[i].Question.Type != provider.Box {
			continue
		}
		ok := false
		for _, m := range provider.BoxModels {
			if req.Model == m || strings.HasSuffix(req.Model, "/"+m) {
				ok = true
			}
		}
		if !ok {
			return &response{body: []byte(`{"detail":{"error_type":"api_usage_error","message":"Invalid request."}}`)}, http.StatusBadRequest, true
		}
		break
	}
	if !s.cfg.TokenLimits {
		return nil, 0, false
	}
	tokens := len(body)/4 + 1
	longest := 0
	for i := range req.Questions {
		js, _ := req.Questions[i].Question.MarshalJSON()
		longest = max(longest, len(js)/4+1)
	}
	stateQ := len(req.State)/4 + 1 + longest
	limit, per := provider.DefaultMaxRequestTokens, provider.DefaultMaxStateQuestionTok
	if req.DangerZone.LongContext {
		limit, per = provider.LongContextMaxRequestTokens, provider.LongContextMaxRequestTokens
	}
	msg := ""
	switch {
	case tokens > limit:
		msg = fmt.Sprintf("The request has about %d tokens; the limit is %d.", tokens, limit)
	case stateQ > per:
		msg = fmt.Sprintf("The state and the longest question have about %d tokens; the limit is %d.", stateQ, per)
	}
	if msg == "" {
		return nil, 0, false
	}
	if !req.DangerZone.LongContext {
		msg += " Send " + provider.HeaderDangerLongContext + ": true to lift it to 262,144."
	}
	b := append([]byte(`{"detail":{"message":`), appendString(nil, msg)...)
	b = append(b, `,"error_type":"tokens_exceeded"}}`...)
	return &response{body: b}, http.StatusRequestEntityTooLarge, true
}

// synthBox is a synthetic box answer drawn from h: a box inside the image
// with a confidence, edges and confidence to two decimals like Jev's.
func synthBox(h uint64) json.RawMessage {
	next := func() float64 {
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		return float64(h%10000) / 10000
	}
	r := func(v float64) float64 { return float64(int(v*100+0.5)) / 100 }
	top := r(0.05 + 0.45*next())
	left := r(0.05 + 0.45*next())
	bottom := r(top + 0.2 + 0.25*next())
	right := r(left + 0.2 + 0.25*next())
	conf := r(0.6 + 0.38*next())
	return fmt.Appendf(nil, `{"type":"box","box":{"top":%g,"bottom":%g,"left":%g,"right":%g},"confidence":%g}`, top, bottom, left, right, conf)
}
