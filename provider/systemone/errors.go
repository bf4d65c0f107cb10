package systemone

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jevlab/jevlab/provider"
)

// maxMessage caps the provider text copied into an error.
const maxMessage = 400

// kindForStatus maps an HTTP status to the error kind callers act on.
func kindForStatus(status int) provider.ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return provider.KindAuth
	case status == http.StatusRequestTimeout:
		return provider.KindTimeout
	case status == http.StatusTooManyRequests:
		return provider.KindRateLimited
	case status >= 500:
		return provider.KindUnavailable
	default: // 400, 404, 422 and every other status we do not retry
		return provider.KindRejected
	}
}

// retryableStatus reports whether a later attempt may get a different answer:
// 408, 429 and every 5xx (529 "overloaded" included), like the official SDKs.
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// extractMessage pulls the provider's own text out of an error body the way
// the official JS SDK does: `error` (a string or {message}), then `message`,
// then Cloudflare's `errors` list ([{code, message}]), then `detail` (a
// string, {message}, or a FastAPI validation list, which becomes Details). A body that is not JSON gives its first line.
func extractMessage(body []byte) (string, []provider.Detail) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return "", nil
	}
	var top map[string]json.RawMessage
	if body[0] != '{' || json.Unmarshal(body, &top) != nil {
		line, _, _ := strings.Cut(string(body), "\n")
		if looksLikeHTML(line) {
			return "", nil
		}
		return line, nil
	}
	if v, ok := top["error"]; ok {
		if s, ok := textOrMessage(v); ok {
			return s, nil
		}
	}
	if v, ok := top["message"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil && s != "" {
			return s, nil
		}
	}
	if v, ok := top["errors"]; ok { // Cloudflare's envelope
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil && len(list) > 0 {
			if s, ok := textOrMessage(list[0]); ok {
				return s, nil
			}
		}
	}
	if v, ok := top["detail"]; ok {
		if s, ok := textOrMessage(v); ok {
			return s, nil
		}
		if ds := validationList(v); len(ds) > 0 {
			return "the server rejected the request", ds
		}
	}
	return "", nil
}

func looksLikeHTML(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.HasPrefix(s, "<!doctype") || strings.HasPrefix(s, "<html")
}

// textOrMessage reads a JSON string or an object's "message" string.
func textOrMessage(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil && s != "" {
		return s, true
	}
	var o struct {
		Message   string `json:"message"`
		ErrorType string `json:"error_type"`
	}
	if json.Unmarshal(v, &o) == nil && o.Message != "" {
		if o.ErrorType != "" {
			return o.Message + " (" + o.ErrorType + ")", true
		}
		return o.Message, true
	}
	return "", false
}

// validationList reads a FastAPI `detail` list; `input` and `ctx` are
// dropped (they may repeat the state).
func validationList(v json.RawMessage) []provider.Detail {
	var list []struct {
		Loc  []json.RawMessage `json:"loc"`
		Msg  string            `json:"msg"`
		Type string            `json:"type"`
	}
	if json.Unmarshal(v, &list) != nil {
		return nil
	}
	out := make([]provider.Detail, 0, len(list))
	for _, d := range list {
		loc := make([]string, 0, len(d.Loc))
		for _, l := range d.Loc {
			var s string
			if json.Unmarshal(l, &s) == nil {
				loc = append(loc, s)
			} else {
				loc = append(loc, string(l))
			}
		}
		out = append(out, provider.Detail{Loc: loc, Msg: d.Msg, Type: d.Type})
	}
	return out
}

// redactor removes secrets from text that came back from the server: the
// API key and the request's state (a server may echo either). It does its
// work only when there is text to clean, so the success path pays nothing.
type redactor struct {
	key   string
	state json.RawMessage
}

func newRedactor(key string, state json.RawMessage) redactor {
	return redactor{key: key, state: state}
}

// secrets lists what must never appear: the key, the state as sent, and a
// string state's text. Secrets shorter than 8 bytes are not searched for
// (they would match ordinary words).
func (r redactor) secrets(longest int) []string {
	var out []string
	if len(r.key) >= 8 && len(r.key) <= longest {
		out = append(out, r.key)
	}
	if len(r.state) >= 8 {
		if len(r.state) <= longest {
			out = append(out, string(r.state))
		}
		if r.state[0] == '"' {
			var s string
			if json.Unmarshal(r.state, &s) == nil && len(s) >= 8 && len(s) <= longest {
				out = append(out, s)
			}
		}
	}
	return out
}

// clean redacts secrets and caps the length of s. The key is redacted
// however it is spelled (provider.RedactSecrets), the state as sent.
func (r redactor) clean(s string) string {
	if len(s) < 8 {
		return s
	}
	if r.key != "" {
		s = provider.RedactSecrets(s, []string{r.key})
	}
	for _, sec := range r.secrets(len(s)) {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, provider.Redacted)
		}
	}
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// statusError builds the classified error for a non-2xx response.
func statusError(resp *http.Response, body []byte, now time.Time, red redactor) *provider.Error {
	msg, details := extractMessage(body)
	e := &provider.Error{
		Kind:      kindForStatus(resp.StatusCode),
		Status:    resp.StatusCode,
		Message:   red.clean(msg),
		RequestID: red.clean(resp.Header.Get(headerRequestID)),
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	for _, d := range details {
		for i := range d.Loc {
			d.Loc[i] = red.clean(d.Loc[i])
		}
		d.Msg = red.clean(d.Msg)
		e.Details = append(e.Details, d)
	}
	if d, ok := retryAfter(resp.Header, now); ok {
		e.RetryAfter = d
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		e.Message = fmt.Sprintf("redirect refused (%s): the key is only ever sent to the configured base URL; set --base-url to the final address", http.StatusText(resp.StatusCode))
	}
	return e
}

// retryAfter reads retry-after-ms (preferred, milliseconds) or Retry-After
// (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || math.IsInf(s, 0) || math.IsNaN(s) || s > 1e9 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
