package headless

import (
	"context"
	"errors"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConsoleLines(t *testing.T) {
	log := `[1:1:1203/053626.654001:ERROR:dbus/object_proxy.cc:572] Failed to call method
[18042:18042:1203/053631.589321:INFO:CONSOLE:0] "Loading the image 'http://example.com/x.png' violates the following Content Security Policy directive", source: file:///tmp/t2.html (0)
[18042:18042:1203/053631.589321:INFO:CONSOLE(12)] "Uncaught ReferenceError: x is not defined", source: file:///tmp/t.html (12)
4920 bytes written to file /tmp/t2.png`
	got := consoleLines(log)
	if len(got) != 2 || !strings.Contains(got[0], "violates") || !strings.Contains(got[1], "ReferenceError") {
		t.Errorf("console lines %q", got)
	}
}

func TestPageRequests(t *testing.T) {
	reqs := []string{
		"GET http://clients2.google.com/time/1/current?cup2key=x HTTP/1.1",
		"CONNECT update.googleapis.com:443 HTTP/1.1",
		"CONNECT accounts.google.com:443 HTTP/1.1",
		"GET http://example.com/x.png HTTP/1.1",
		"CONNECT fonts.example.org:443 HTTP/1.1",
		"CONNECT evilgoogle.com:443 HTTP/1.1",
	}
	got := PageRequests(reqs)
	want := []string{reqs[3], reqs[4], reqs[5]}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("page requests %q, want %q", got, want)
	}
}

func TestDownscaleAndDiff(t *testing.T) {
	a := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			a.SetRGBA(x, y, color.RGBA{uint8(60 * x), 0, 0, 255})
		}
	}
	s := Downscale(a, 2)
	if s.Bounds().Dx() != 2 || s.RGBAAt(0, 0).R != 30 || s.RGBAAt(1, 1).R != 150 {
		t.Errorf("downscaled %v %v", s.RGBAAt(0, 0), s.RGBAAt(1, 1))
	}
	b := image.NewRGBA(a.Bounds())
	copy(b.Pix, a.Pix)
	b.SetRGBA(0, 0, color.RGBA{255, 255, 255, 255})
	b.SetRGBA(1, 0, color.RGBA{60 + 10, 0, 0, 255})
	if d, err := Diff(a, b, 20); err != nil || d != 1.0/16 {
		t.Errorf("diff %v %v, want 1/16 (one pixel beyond the tolerance)", d, err)
	}
	if _, err := Diff(a, s, 20); err == nil {
		t.Error("images of different sizes compared equal")
	}
}

func TestFindHonoursEnv(t *testing.T) {
	t.Setenv("JEVLAB_CHROMIUM", filepath.Join(t.TempDir(), "no-such-browser"))
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "JEVLAB_CHROMIUM") {
		t.Errorf("missing JEVLAB_CHROMIUM: %v", err)
	}
	t.Setenv("JEVLAB_CHROMIUM", "")
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(); !errors.Is(err, ErrNoBrowser) {
		t.Errorf("empty PATH: %v", err)
	}
}

// TestRenderSeesWhatAPageDoes proves the browser checks can fail: a page
// without a CSP that loads an image from the network is seen by the
// proxy; with a CSP the blocked load is a console message; a script error
// is a console message; and the screenshot shows the page's red box.
func TestRenderSeesWhatAPageDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin, err := Find()
	if err != nil {
		t.Skipf("SKIPPED: no headless browser to test with: %v", err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	box := `<div style="position:absolute;left:0;top:0;width:100px;height:100px;background:#ff0000"></div>`
	open := write("open.html", `<!DOCTYPE html><html><body style="margin:0;background:#fff">`+box+`<img src="http://example.invalid/pixel.png"></body></html>`)
	res, err := Render(context.Background(), bin, open, 400, 300)
	if err != nil {
		t.Fatal(err)
	}
	if got := PageRequests(res.Requests); len(got) != 1 || !strings.Contains(got[0], "example.invalid") {
		t.Errorf("page requests %q, want the image", got)
	}
	if r, g, b, _ := res.Image.At(50, 50).RGBA(); r>>8 != 255 || g>>8 != 0 || b>>8 != 0 {
		t.Errorf("pixel (50,50) = %d,%d,%d, want the red box", r>>8, g>>8, b>>8)
	}
	if r, _, _, _ := res.Image.At(300, 200).RGBA(); r>>8 != 255 {
		t.Errorf("pixel (300,200) not white")
	}
	csp := write("csp.html", `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head><body><img src="http://example.invalid/pixel.png"></body></html>`)
	if res, err = Render(context.Background(), bin, csp, 400, 300); err != nil {
		t.Fatal(err)
	}
	if len(res.Console) == 0 || len(PageRequests(res.Requests)) != 0 {
		t.Errorf("CSP-blocked load: console %q, requests %q", res.Console, PageRequests(res.Requests))
	}
	js := write("js.html", `<!DOCTYPE html><html><body><script>undefinedFunction()</script></body></html>`)
	if res, err = Render(context.Background(), bin, js, 400, 300); err != nil {
		t.Fatal(err)
	}
	if len(res.Console) == 0 {
		t.Error("a script error left no console message")
	}
}
