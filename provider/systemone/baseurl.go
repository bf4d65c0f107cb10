package systemone

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
)

// DefaultBaseURL is TypeSafe's API.
const DefaultBaseURL = "https://api.typesafe.ai"

// Environment variables the client reads (through ResolveBaseURL and the
// command layer; New itself reads no environment).
const (
	EnvBaseURL = "TYPESAFE_BASE_URL"
	EnvAPIKey  = "TYPESAFE_API_KEY"
)

// ResolveBaseURL picks the server the API key will be sent to: the flag if
// set, else $TYPESAFE_BASE_URL, else DefaultBaseURL. Only the user's own
// flag or environment can choose it; nothing read from a question set or a
// fixture file is ever consulted. The URL must be https, or plain http on a
// loopback host (127.0.0.0/8, ::1, localhost). The result has no trailing
// slash.
func ResolveBaseURL(flag string) (string, error) {
	src := "--base-url"
	raw := strings.TrimSpace(flag)
	if raw == "" {
		raw = strings.TrimSpace(os.Getenv(EnvBaseURL))
		src = "$" + EnvBaseURL
	}
	if raw == "" {
		return DefaultBaseURL, nil
	}
	u, err := checkBaseURL(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	return u, nil
}

// checkBaseURL validates and normalises a base URL.
func checkBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("base URL %q does not parse: %v", raw, err)
	}
	if u.Host == "" {
		return "", fmt.Errorf("base URL %q has no host; use e.g. https://api.typesafe.ai or http://127.0.0.1:8089", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("base URL must not carry credentials; the key is read from the environment")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("base URL %q must not have a query or fragment", u.Redacted())
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !IsLoopback(u.Hostname()) {
			return "", fmt.Errorf("base URL %q uses plain http to a non-loopback host; use https (plain http is allowed only for 127.0.0.0/8, ::1 and localhost)", u.String())
		}
	default:
		return "", fmt.Errorf("base URL %q: scheme must be https (or http on loopback)", u.String())
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return strings.TrimRight(u.String(), "/"), nil
}

// IsLoopback reports whether host (without port) is localhost or a loopback
// IP address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
