// Package headless renders an HTML file in a real headless Chromium, for
// tests that look at a page as a person would: a screenshot at a given
// window size, the console messages the page produced, and every network
// request the browser tried while it was open (through a loopback proxy
// the browser is pointed at).
package headless

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ErrNoBrowser is returned (wrapped) by Find when no Chromium is installed.
var ErrNoBrowser = errors.New("no headless Chromium found")

// candidates are the executables Find looks for, in order.
var candidates = []string{"chromium", "chromium-headless-shell", "chromium-browser", "chrome-headless-shell", "google-chrome", "google-chrome-stable"}

// Find returns the Chromium to use: $JEVLAB_CHROMIUM when set, else the
// first of the usual names on $PATH.
func Find() (string, error) {
	if p := os.Getenv("JEVLAB_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("JEVLAB_CHROMIUM=%s: %w", p, err)
		}
		return p, nil
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (looked for %s on $PATH; install Debian's chromium: apt-get install chromium)", ErrNoBrowser, strings.Join(candidates, ", "))
}

// Result is what one render produced.
type Result struct {
	// Image is the screenshot, exactly Width × Height.
	Image image.Image
	// Console holds the page's console messages (errors, CSP violations,
	// warnings), one per line as Chromium logged them.
	Console []string
	// Requests holds the request lines ("GET http://…", "CONNECT host:443")
	// the browser sent to the loopback proxy while the page was open.
	Requests []string
}

// Render opens the HTML file at path in a fresh headless Chromium profile
// with a window of width × height CSS pixels and returns the screenshot,
// console messages and attempted network requests. The browser runs with
// the sandbox, GPU, QUIC, first-run, background networking, component
// updates and sync switched off, and every request (loopback included) is
// routed to a proxy that refuses it.
//
// extra are more Chromium switches, e.g. --force-dark-mode to render the
// page's prefers-color-scheme: dark style.
func Render(ctx context.Context, browser, path string, width, height int, extra ...string) (*Result, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "jevlab-chromium-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	px, err := startProxy()
	if err != nil {
		return nil, err
	}
	defer px.close()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	args := append(baseArgs(dir, px.addr()),
		fmt.Sprintf("--window-size=%d,%d", width, height),
		"--screenshot="+shot)
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, browser, append(args, "file://"+abs)...)
	stderr, err := run(cmd, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", browser, err, tail(stderr, 2000))
	}
	f, err := os.Open(shot)
	if err != nil {
		return nil, fmt.Errorf("%s wrote no screenshot: %w\n%s", browser, err, tail(stderr, 2000))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return &Result{Image: img, Console: consoleLines(stderr), Requests: px.requests()}, nil
}

// baseArgs are the switches of every run: headless, a fresh profile in
// dir, nothing the browser does on its own, every request through the
// proxy at proxyAddr, console messages logged to stderr.
func baseArgs(dir, proxyAddr string) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--no-default-browser-check", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--force-color-profile=srgb", "--font-render-hinting=none",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		"--proxy-server=http://" + proxyAddr, "--proxy-bypass-list=<-loopback>",
		"--enable-logging=stderr", "--v=0",
	}
}

// run runs cmd with its home and caches in dir and returns its output.
func run(cmd *exec.Cmd, dir string) (string, error) {
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	var out bytes.Buffer
	cmd.Stderr = &out
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}

// PrintPDF prints the HTML file at path to a PDF (the page's print
// style, no header or footer) and returns the PDF and the console
// messages printing produced.
func PrintPDF(ctx context.Context, browser, path string) ([]byte, []string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "jevlab-chromium-*")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	px, err := startProxy()
	if err != nil {
		return nil, nil, err
	}
	defer px.close()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	out := filepath.Join(dir, "page.pdf")
	args := append(baseArgs(dir, px.addr()), "--no-pdf-header-footer", "--print-to-pdf="+out, "file://"+abs)
	stderr, err := run(exec.CommandContext(ctx, browser, args...), dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w\n%s", browser, err, tail(stderr, 2000))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%s printed no PDF: %w\n%s", browser, err, tail(stderr, 2000))
	}
	return b, consoleLines(stderr), nil
}

var consoleRE = regexp.MustCompile(`:CONSOLE(?:\(\d+\))?:?\d*\]`)

// consoleLines picks Chromium's logged console messages out of stderr.
func consoleLines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if consoleRE.MatchString(sc.Text()) {
			out = append(out, sc.Text())
		}
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// proxy is a loopback listener that records the first line of every
// request the browser sends it, answers 403 and closes the connection.
// Connections the browser opens ahead of need and closes unused are not
// requests and are not recorded.
type proxy struct {
	ln   net.Listener
	mu   sync.Mutex
	reqs []string
	wg   sync.WaitGroup
}

func startProxy() (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &proxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				line = strings.TrimSpace(line)
				if line == "" {
					return // a speculative connection that carried no request
				}
				p.mu.Lock()
				p.reqs = append(p.reqs, line)
				p.mu.Unlock()
				_, _ = c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) close() {
	p.ln.Close()
	p.wg.Wait()
}

func (p *proxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// browserHosts are the services Chromium itself calls (time, component
// and account updates) despite the switches; a request to one of them is
// the browser's, not the page's.
var browserHosts = []string{"google.com", "googleapis.com", "gstatic.com", "gvt1.com", "gvt2.com", "googleusercontent.com", "chromium.org", "doubleclick.net"}

// PageRequests returns the requests that are not Chromium's own calls to
// its vendor's services: what the page tried to fetch.
func PageRequests(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if !isBrowserOwn(r) {
			out = append(out, r)
		}
	}
	return out
}

func isBrowserOwn(line string) bool {
	f := strings.Fields(line)
	if len(f) < 2 {
		return false
	}
	target := f[1]
	if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
	}
	if i := strings.IndexAny(target, "/?"); i >= 0 {
		target = target[:i]
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	for _, h := range browserHosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return true
		}
	}
	return false
}
