package main

import (
	"errors"
	"os"
	"strings"

	"github.com/jevlab/jevlab/provider/systemone"
)

// defaultKeyEnv is --key-env's default. With --api openrouter or
// cloudflare and no --key-env, the host's own variable is read instead, so
// a TypeSafe key is never sent to another host unless the user names it.
const defaultKeyEnv = "TYPESAFE_API_KEY"

// hostKeyEnv is the key variable of each non-TypeSafe host.
var hostKeyEnv = map[systemone.API]string{
	systemone.APIOpenRouter: "OPENROUTER_API_KEY",
	systemone.APICloudflare: "CLOUDFLARE_API_TOKEN",
}

// resolveHost picks the server, and the shape of the call, the key will be
// sent with: --base-url, else $TYPESAFE_BASE_URL, else the shape's default
// (TypeSafe's API; https://openrouter.ai for --api openrouter; Cloudflare
// has none, its URL holds the account); the shape from --api, else
// detected from the base URL. Only the user's flags and environment
// decide; nothing read from a file does.
func (a *app) resolveHost() (string, systemone.API, error) {
	var api systemone.API
	if strings.TrimSpace(a.api) != "" {
		var err error
		if api, err = systemone.ParseAPI(a.api); err != nil {
			return "", "", usageErr(err)
		}
	}
	explicit := strings.TrimSpace(a.baseURL) != "" || strings.TrimSpace(os.Getenv(systemone.EnvBaseURL)) != ""
	var base string
	switch {
	case explicit:
		b, err := systemone.ResolveBaseURL(a.baseURL)
		if err != nil {
			return "", "", usageErr(err)
		}
		base = b
	case api == systemone.APICloudflare:
		return "", "", usageErr(errors.New("--api cloudflare needs --base-url https://api.cloudflare.com/client/v4/accounts/ACCOUNT_ID/ai (the account is part of the URL)"))
	case api != "":
		b, err := systemone.ResolveBaseURL(systemone.DefaultBaseURLFor(api))
		if err != nil {
			return "", "", usageErr(err)
		}
		base = b
	default:
		base = systemone.DefaultBaseURL
	}
	if api == "" {
		api = systemone.DetectAPI(base)
	}
	if env, ok := hostKeyEnv[api]; ok && a.keyEnv == defaultKeyEnv {
		a.keyEnv = env
	}
	return base, api, nil
}
