package systemone

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// farConn is a connection whose peer claims to be 203.0.113.7 (as when
// "localhost" resolves to another machine); it counts the bytes written
// to it.
type farConn struct {
	net.Conn
	wrote *atomic.Int64
}

func (c farConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 8089}
}

func (c farConn) Write(p []byte) (int, error) {
	c.wrote.Add(int64(len(p)))
	return len(p), nil
}

// TestPlainHTTPKeyOnlyToLoopbackPeer: a base URL that passed the loopback
// check by name ("localhost") but whose connection leads to another
// address gets neither the request nor the key: the client refuses it
// when dialling, before writing a byte, and does not retry. Before, the
// name alone was trusted.
func TestPlainHTTPKeyOnlyToLoopbackPeer(t *testing.T) {
	var wrote atomic.Int64
	var dials atomic.Int32
	far := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		a, b := net.Pipe()
		go func() { <-ctx.Done(); b.Close() }()
		return farConn{Conn: a, wrote: &wrote}, nil
	}
	tr := &http.Transport{DialContext: far}
	c, err := New(Config{BaseURL: "http://localhost:8089", APIKey: fakeKey, HTTPClient: &http.Client{Transport: tr}, MaxRetries: 3, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.sleep = func(ctx context.Context, d time.Duration) error { return nil }
	_, err = c.Ask(context.Background(), testRequest(t))
	if provider.KindOf(err) != provider.KindInvalid || !strings.Contains(err.Error(), "not a loopback address") || !strings.Contains(err.Error(), "203.0.113.7") {
		t.Fatalf("err %v (kind %q), want a refusal naming the peer", err, provider.KindOf(err))
	}
	if n := wrote.Load(); n != 0 {
		t.Fatalf("%d bytes were written to the far peer", n)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("dialled %d times; a refusal is not retried", n)
	}
	if strings.Contains(err.Error(), fakeKey) {
		t.Error("the error carries the key")
	}

	// The client's own transport guards the same way; over https, or
	// without a key, nothing is checked.
	if own, err := New(Config{BaseURL: "http://localhost:8089", APIKey: fakeKey}); err != nil {
		t.Fatal(err)
	} else if own.hc.Transport.(*http.Transport).DialContext == nil {
		t.Fatal("no dialer")
	}
	if !peerIsLoopback(&net.TCPAddr{IP: net.ParseIP("::1")}) || !peerIsLoopback(&net.TCPAddr{IP: net.ParseIP("127.0.0.2")}) || peerIsLoopback(&net.TCPAddr{IP: net.ParseIP("10.0.0.1")}) {
		t.Error("peerIsLoopback misjudges")
	}
	nokey, err := New(Config{BaseURL: "http://localhost:8089", HTTPClient: &http.Client{Transport: &http.Transport{DialContext: far}}, MaxRetries: -1, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nokey.Ask(context.Background(), testRequest(t)); err != nil && strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("without a key nothing secret is sent, so nothing is refused: %v", err)
	}
}
