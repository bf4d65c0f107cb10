package systemone

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// API names the shape a host gives the System One call.
type API string

// The hosts' shapes.
const (
	// APITypeSafe is TypeSafe's POST {base}/v1/systemone, and every host
	// that copies it under a base URL of its own (a gateway's path prefix,
	// OpenRouter's TypeSafe-compatible https://openrouter.ai/api, Vercel's
	// https://ai-gateway.vercel.sh/typesafe).
	APITypeSafe API = "typesafe"
	// APIOpenRouter is OpenRouter's native POST {base}/api/alpha/decisions
	// (base https://openrouter.ai): the System One body, models named
	// typesafe/jev-1.13 or ~typesafe/jev-latest, and a response whose
	// usage.cost is OpenRouter's charge in USD.
	APIOpenRouter API = "openrouter"
	// APICloudflare is Cloudflare Workers AI's REST run endpoint,
	// POST {base}/run with base
	// https://api.cloudflare.com/client/v4/accounts/ACCOUNT/ai: the body
	// {"model": M, "input": {state, questions, assets?}}, the reply in
	// Cloudflare's envelope {"result": …, "success": …, "errors": […]}.
	APICloudflare API = "cloudflare"
)

// APIs lists the shapes --api accepts.
var APIs = []API{APITypeSafe, APIOpenRouter, APICloudflare}

// ParseAPI reads an --api value; "" means detect it from the base URL.
func ParseAPI(s string) (API, error) {
	for _, a := range APIs {
		if strings.EqualFold(strings.TrimSpace(s), string(a)) {
			return a, nil
		}
	}
	return "", fmt.Errorf("--api %q: want typesafe, openrouter or cloudflare", s)
}

// DetectAPI picks the shape from a base URL: https://openrouter.ai speaks
// OpenRouter's native Decisions API (https://openrouter.ai/api, with a
// path, is its TypeSafe-compatible route), api.cloudflare.com Cloudflare's,
// and anything else TypeSafe's under the URL's path prefix.
func DetectAPI(base string) API {
	u, err := url.Parse(base)
	if err != nil {
		return APITypeSafe
	}
	switch h := strings.ToLower(u.Hostname()); {
	case h == "openrouter.ai" || strings.HasSuffix(h, ".openrouter.ai"):
		// https://openrouter.ai/api is its TypeSafe-compatible route
		// (/api/v1/systemone, bare model ids mapped by OpenRouter).
		if p := strings.TrimRight(u.Path, "/"); p == "" || p == "/api/alpha/decisions" {
			return APIOpenRouter
		}
		return APITypeSafe
	case h == "api.cloudflare.com":
		return APICloudflare
	}
	return APITypeSafe
}

// DefaultBaseURLFor is the base URL a shape uses when none is given:
// TypeSafe's API, OpenRouter's; Cloudflare needs the account in it, so it
// has none.
func DefaultBaseURLFor(api API) string {
	switch api {
	case APIOpenRouter:
		return "https://openrouter.ai"
	case APICloudflare:
		return ""
	}
	return DefaultBaseURL
}

// askURL is the URL the shape's call takes under base (no trailing
// slash): {base}/v1/systemone, {base}/api/alpha/decisions or {base}/run.
// A base that already ends in the endpoint (…/api/alpha/decisions,
// …/ai/run) is taken as written.
func askURL(base string, api API) string {
	switch api {
	case APIOpenRouter:
		if strings.HasSuffix(base, "/api/alpha/decisions") {
			return base
		}
		return base + "/api/alpha/decisions"
	case APICloudflare:
		if strings.HasSuffix(base, "/run") {
			return base
		}
		return base + "/run"
	}
	return base + pathSystemOne
}

// checkModelFor refuses a model name the shape's host cannot know: the
// hosts other than TypeSafe name Jev with their own prefixes.
func checkModelFor(api API, model string) error {
	switch api {
	case APIOpenRouter:
		if !strings.Contains(model, "/") {
			return &provider.Error{Kind: provider.KindInvalid, Message: fmt.Sprintf(
				"model %q is TypeSafe's name; OpenRouter names Jev typesafe/jev-1.13 (pinned) or ~typesafe/jev-latest (the alias): pass --model", model)}
		}
	case APICloudflare:
		if !strings.Contains(model, "/") {
			return &provider.Error{Kind: provider.KindInvalid, Message: fmt.Sprintf(
				"model %q is TypeSafe's name; Cloudflare names Jev typesafe/jev-1.14.0: pass --model", model)}
		}
	}
	return nil
}

// wrapCloudflare turns a System One body into Cloudflare's
// {"model": M, "input": {…the body without its model…}}.
func wrapCloudflare(body []byte, model string) ([]byte, error) {
	input, err := withoutModel(body)
	if err != nil {
		return nil, err
	}
	m, _ := json.Marshal(model)
	out := make([]byte, 0, len(input)+len(m)+24)
	out = append(out, `{"model":`...)
	out = append(out, m...)
	out = append(out, `,"input":`...)
	out = append(out, input...)
	return append(out, '}'), nil
}

// withoutModel returns the object body with its top-level "model" member
// removed (the encoder writes it first).
func withoutModel(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("request body is not an object")
	}
	start := dec.InputOffset()
	k, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if k != "model" {
		return body, nil
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	rest := bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")
	rest = bytes.TrimPrefix(rest, []byte(","))
	out := make([]byte, 0, len(body))
	out = append(out, body[:start]...)
	return append(out, rest...), nil
}

// unwrapCloudflare reads Cloudflare's envelope: the System One response
// under "result" when "success" is true, else the first error's message.
func unwrapCloudflare(body []byte) ([]byte, string, error) {
	var env struct {
		Result  json.RawMessage `json:"result"`
		Success *bool           `json:"success"`
		Errors  []struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, "", fmt.Errorf("the response is not Cloudflare's {result, success} envelope: %w", err)
	}
	if env.Success == nil {
		return nil, "", fmt.Errorf(`the response is not Cloudflare's {result, success} envelope: no "success"`)
	}
	if !*env.Success {
		msg := "Cloudflare reports success: false"
		if len(env.Errors) > 0 && env.Errors[0].Message != "" {
			msg = env.Errors[0].Message
		}
		return nil, msg, nil
	}
	if len(env.Result) == 0 || env.Result[0] != '{' {
		return nil, "", fmt.Errorf(`Cloudflare's envelope has no "result" object`)
	}
	return env.Result, "", nil
}

// openRouterCost reads usage.cost of an OpenRouter response: its charge
// in USD, which replaces tokens × price when present.
func openRouterCost(body []byte) (float64, bool) {
	var r struct {
		Usage struct {
			Cost *float64 `json:"cost"`
		} `json:"usage"`
	}
	if json.Unmarshal(body, &r) != nil || r.Usage.Cost == nil || *r.Usage.Cost < 0 {
		return 0, false
	}
	return *r.Usage.Cost, true
}
