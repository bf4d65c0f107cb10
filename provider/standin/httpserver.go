package standin

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// ServerLimits bound what one client can hold of an http.Server running
// the stand-in. Zero fields take the defaults below.
type ServerLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers (default 10s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (default
	// 60s): a client sending its body a byte at a time cannot hold a
	// connection open forever.
	ReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request (default
	// 120s).
	IdleTimeout time.Duration
	// MaxHeaderBytes caps request headers (default 64 KiB); more gets 431.
	MaxHeaderBytes int
}

// Default server limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// NewHTTPServer returns an http.Server for h with lim's bounds on slow and
// oversized requests. It sets no WriteTimeout: injected latency and
// timeouts must be able to hold a response as long as they were told to.
func NewHTTPServer(h http.Handler, lim ServerLimits) *http.Server {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	mh := lim.MaxHeaderBytes
	if mh <= 0 {
		mh = DefaultMaxHeaderBytes
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: or(lim.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       or(lim.ReadTimeout, DefaultReadTimeout),
		IdleTimeout:       or(lim.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    mh,
	}
}

// CheckLoopbackAddr refuses an --addr that does not name a loopback host:
// 127.0.0.0/8, ::1 or localhost (which Listen then checks by its real
// address). The stand-in is a test server and must not be reachable from
// the network.
func CheckLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v; give host:port such as 127.0.0.1:8089", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		what := host
		if host == "" {
			what = "every interface"
		}
		return fmt.Errorf("--addr %q listens on %s; the stand-in only serves loopback (127.0.0.1, ::1 or localhost)", addr, what)
	}
	return nil
}

// Listen listens on addr, which must name a loopback host, and then checks
// the address actually bound: a "localhost" that resolves to another
// interface is refused (and the listener closed), not trusted by name.
func Listen(addr string) (net.Listener, error) {
	if err := CheckLoopbackAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if err := CheckListener(ln); err != nil {
		ln.Close()
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	return ln, nil
}

// CheckListener reports an error unless ln is bound to a loopback IP.
func CheckListener(ln net.Listener) error {
	ta, ok := ln.Addr().(*net.TCPAddr)
	if !ok || ta.IP == nil || !ta.IP.IsLoopback() {
		return fmt.Errorf("the listener is bound to %s, which is not a loopback address; the stand-in only serves loopback (use 127.0.0.1 or ::1)", ln.Addr())
	}
	return nil
}
