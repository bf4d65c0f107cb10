package standin

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveLimited runs the stand-in behind NewHTTPServer with lim on a
// loopback listener and returns its address.
func serveLimited(t *testing.T, lim ServerLimits) string {
	t.Helper()
	s := mustNew(t, Config{Synthetic: true})
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(s, lim)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server ends conn within d (reading
// until EOF or a reset).
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestSlowClientsAreCutOff: a client that sends its headers or its body a
// byte at a time, or sits idle on a kept-alive connection, is
// disconnected by the server's timeouts instead of holding a connection
// (and a goroutine) forever. Before, only the headers had a timeout, so a
// slow body was held open forever.
func TestSlowClientsAreCutOff(t *testing.T) {
	addr := serveLimited(t, ServerLimits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, IdleTimeout: 500 * time.Millisecond})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// Headers never finished.
	c := dial()
	fmt.Fprintf(c, "POST /v1/systemone HTTP/1.1\r\nHost: x\r\n")
	if !closedWithin(c, 10*time.Second) {
		t.Error("a request whose headers never end held its connection")
	}
	// Headers done, body promised and never sent.
	c = dial()
	fmt.Fprintf(c, "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":")
	if !closedWithin(c, 10*time.Second) {
		t.Error("a request whose body never ends held its connection")
	}
	// Idle after a complete request.
	c = dial()
	fmt.Fprintf(c, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("models: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if !closedWithin(c, 10*time.Second) {
		t.Error("an idle kept-alive connection was never closed")
	}
}

// TestHugeHeadersRefused: headers beyond MaxHeaderBytes get 431.
func TestHugeHeadersRefused(t *testing.T) {
	addr := serveLimited(t, ServerLimits{})
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/models", nil)
	req.Header.Set("X-Pad", strings.Repeat("x", 2*DefaultMaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d for %d KB of headers, want 431", resp.StatusCode, 2*DefaultMaxHeaderBytes>>10)
	}
}

// TestListenChecksTheRealAddress: Listen refuses names and addresses off
// loopback, and CheckListener refuses a listener actually bound elsewhere
// (what a "localhost" resolving to another interface would give).
func TestListenChecksTheRealAddress(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "example.com:80", "10.1.2.3:0"} {
		if ln, err := Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted", addr)
		} else if !strings.Contains(err.Error(), "only serves loopback") {
			t.Errorf("Listen(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := Listen(addr)
		if err != nil {
			t.Fatalf("Listen(%q): %v", addr, err)
		}
		ln.Close()
	}
	all, err := net.Listen("tcp", ":0") // every interface: not loopback
	if err != nil {
		t.Skip(err)
	}
	defer all.Close()
	if err := CheckListener(all); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("CheckListener(%s) = %v", all.Addr(), err)
	}
}
