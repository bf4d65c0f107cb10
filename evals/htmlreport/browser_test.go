package htmlreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/headless"
)

// Golden screenshots: testdata/<report>-<width>.png hold the browser's
// screenshot downscaled by goldenScale. JEVLAB_UPDATE_GOLDEN=1 rewrites
// them; JEVLAB_SCREENSHOT_DIR=DIR also saves the full-size screenshots
// there (how /work/notes got its pictures).
const (
	goldenScale = 2
	// goldenTol is the largest per-channel difference a pixel may have
	// (after downscaling) and still count as equal; goldenShare the share
	// of pixels that may differ by more.
	goldenTol   = 40
	goldenShare = 0.01
	shotHeight  = 2400
)

// browser returns the headless Chromium, skipping loudly when there is
// none.
func browser(t *testing.T) string {
	t.Helper()
	b, err := headless.Find()
	if err != nil {
		t.Skipf("SKIPPED: the HTML report is not checked in a real browser: %v. .ci/run installs Debian's chromium; install it locally with apt-get install chromium, or set JEVLAB_CHROMIUM", err)
	}
	return b
}

// TestReportInBrowser renders the Banking77 comparison (jev-1.13.0
// against a stand-in's second run) and the entity-merge report in a real
// headless Chromium at two widths: the page logs no console message (no
// error, no blocked load), requests nothing over the network — also with
// its CSP taken out, so the policy is not what hides a request — looks
// like its golden screenshot within a tolerance, turns dark in the dark
// colour scheme, and prints to PDF.
func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("renders in a browser")
	}
	bin := browser(t)
	dir := t.TempDir()
	for name, in := range map[string]*Input{"banking77": b77Input(t), "entity-merge": entityInput(t)} {
		h := render(t, in)
		page := filepath.Join(dir, name+".html")
		open := filepath.Join(dir, name+"-nocsp.html")
		if err := os.WriteFile(page, []byte(h), 0o600); err != nil {
			t.Fatal(err)
		}
		if d := os.Getenv("JEVLAB_SCREENSHOT_DIR"); d != "" {
			if err := os.WriteFile(filepath.Join(d, name+".html"), []byte(h), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		noCSP := strings.Replace(h, `<meta http-equiv="Content-Security-Policy" content="`+CSP+`">`, "", 1)
		if noCSP == h {
			t.Fatal("CSP tag not found")
		}
		if err := os.WriteFile(open, []byte(noCSP), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{1280, 480} {
			res, err := headless.Render(context.Background(), bin, page, width, shotHeight)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Console {
				t.Errorf("%s at %d px: console: %s", name, width, c)
			}
			for _, r := range headless.PageRequests(res.Requests) {
				t.Errorf("%s at %d px: network request %s", name, width, r)
			}
			checkGolden(t, name, width, res)
		}
		// dark scheme: the page follows prefers-color-scheme
		dark, err := headless.Render(context.Background(), bin, page, 1280, 800, "--force-dark-mode")
		if err != nil {
			t.Fatal(err)
		}
		if r, g, b, _ := dark.Image.At(4, 4).RGBA(); r>>8 > 60 || g>>8 > 60 || b>>8 > 60 {
			t.Errorf("%s in the dark scheme: background %d,%d,%d is not dark", name, r>>8, g>>8, b>>8)
		}
		if d := os.Getenv("JEVLAB_SCREENSHOT_DIR"); d != "" {
			_ = headless.WritePNG(filepath.Join(d, name+"-dark.png"), dark.Image)
		}
		// print: the page prints (its print style) without a console message
		pdf, console, err := headless.PrintPDF(context.Background(), bin, page)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(pdf, []byte("%PDF")) || bytes.Count(pdf, []byte("/Type /Page")) < 1 {
			t.Errorf("%s: printing gave no PDF pages (%d bytes)", name, len(pdf))
		}
		for _, c := range console {
			t.Errorf("%s printed: console: %s", name, c)
		}
		res, err := headless.Render(context.Background(), bin, open, 1280, 800)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range headless.PageRequests(res.Requests) {
			t.Errorf("%s without its CSP: network request %s", name, r)
		}
		for _, c := range res.Console {
			t.Errorf("%s without its CSP: console: %s", name, c)
		}
	}
}

func checkGolden(t *testing.T, name string, width int, res *headless.Result) {
	t.Helper()
	b := res.Image.Bounds()
	if b.Dx() != width || b.Dy() != shotHeight {
		t.Fatalf("%s: screenshot %dx%d, want %dx%d", name, b.Dx(), b.Dy(), width, shotHeight)
	}
	if d := os.Getenv("JEVLAB_SCREENSHOT_DIR"); d != "" {
		if err := headless.WritePNG(filepath.Join(d, name+"-"+strconv.Itoa(width)+".png"), res.Image); err != nil {
			t.Fatal(err)
		}
	}
	small := headless.Downscale(res.Image, goldenScale)
	path := filepath.Join("testdata", name+"-"+strconv.Itoa(width)+".png")
	if os.Getenv("JEVLAB_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := headless.WritePNG(path, small); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := headless.ReadPNG(path)
	if err != nil {
		t.Fatalf("%v (JEVLAB_UPDATE_GOLDEN=1 go test ./evals/htmlreport -run Browser writes the goldens)", err)
	}
	share, err := headless.Diff(small, want, goldenTol)
	if err != nil {
		t.Fatalf("%s at %d px: %v", name, width, err)
	}
	if share > goldenShare {
		got := filepath.Join(os.TempDir(), "jevlab-"+name+"-"+strconv.Itoa(width)+".png")
		_ = headless.WritePNG(got, small) // kept for a person to look at
		t.Errorf("%s at %d px: %.2f%% of the pixels differ from %s (allowed %.2f%%); the new rendering is %s",
			name, width, 100*share, path, 100*goldenShare, got)
	}
}
