package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
)

// pngOf encodes a w×h image with a red square.
func pngOf(t *testing.T, w, h int, shade uint8) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{shade, shade, shade, 255}
			if x > w/3 && x < 2*w/3 && y > h/3 && y < 2*h/3 {
				c = color.RGBA{255, 0, 0, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const boxSet = `name: mugs
model: jev-1.14.0
state:
  photo: img-mug
  caption: A desk
assets:
  img-mug: mug.png
%s
questions:
  mug:
    type: box
    instructions: the red square in ` + "`photo`" + `
  present:
    type: noul
    instructions: Is there a red square in ` + "`photo`" + `?
`

// sent records the requests a server got: path, Danger-Zone headers, body.
type sent struct {
	mu   sync.Mutex
	reqs []sentReq
}

type sentReq struct {
	images, long string
	body         []byte
}

func (s *sent) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		s.mu.Lock()
		s.reqs = append(s.reqs, sentReq{r.Header.Get(provider.HeaderDangerImages), r.Header.Get(provider.HeaderDangerLongContext), b})
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (s *sent) take() []sentReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.reqs
	s.reqs = nil
	return out
}

// TestBoxAndImagesEndToEnd is issue 14's must-show for Jev 1.14: a set with
// an image asset and a box question asked of the stand-in — the image read
// from the set's folder, base64-encoded into "assets" at send time, its
// limits checked before sending, the box drawn on a grid scaled to the
// image with its coordinates and confidence — and the Danger-Zone headers
// present exactly when opted in (--images, --long-context or the set's
// danger_zone:), as a server inspecting the requests sees them.
func TestBoxAndImagesEndToEnd(t *testing.T) {
	isolate(t)
	si, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	rec := &sent{}
	// The stand-in's answers pass for a real model's, so they are recorded.
	real := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rr := httptest.NewRecorder()
		si.ServeHTTP(rr, r)
		body := asRealModel(rr.Body.Bytes())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rr.Code)
		w.Write(body)
	})
	srv := httptest.NewServer(rec.wrap(real))
	defer srv.Close()
	dir := t.TempDir()
	img := pngOf(t, 300, 400, 200)
	os.WriteFile(filepath.Join(dir, "mug.png"), img, 0o600)
	write := func(name, extra string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(boxSet, "%s", extra, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	set := write("mugs.yaml", "")
	db := filepath.Join(dir, "db")
	fx := filepath.Join(dir, "rec.jsonl")
	ask := func(args ...string) (int, string, string) {
		return askRun(t, append([]string{"ask", "--db", db, "--base-url", srv.URL, "--fixtures", fx, "--fresh"}, args...)...)
	}

	// Not opted in: refused before sending.
	code, out, errOut := ask(set)
	if code != 2 || !strings.Contains(errOut, "need the Images Danger-Zone opt-in: --images") || len(rec.take()) != 0 {
		t.Fatalf("without --images: exit %d\n%s\n%s", code, out, errOut)
	}
	// --images: one request, the Images header, no Long-Context header.
	code, out, errOut = ask("--images", set)
	if code != 0 {
		t.Fatalf("--images: exit %d\n%s\n%s", code, out, errOut)
	}
	reqs := rec.take()
	if len(reqs) != 1 || reqs[0].images != "true" || reqs[0].long != "" {
		t.Fatalf("headers %+v", reqs)
	}
	var body struct {
		Assets map[string]struct {
			Type, Format string
			Data         string `json:"data_base64"`
		}
	}
	if err := json.Unmarshal(reqs[0].body, &body); err != nil {
		t.Fatal(err)
	}
	a := body.Assets["img-mug"]
	if got, _ := base64.StdEncoding.DecodeString(a.Data); a.Type != "image" || a.Format != "png" || !bytes.Equal(got, img) {
		t.Fatalf("asset sent as %s/%s, %d bytes", a.Type, a.Format, len(got))
	}
	for _, want := range []string{"mug (box)  top ", "confidence 0.", "┌", "in pixels: x ", "of 300×400", "present (noul)"} {
		if !strings.Contains(out, want) {
			t.Errorf("ask output lacks %q:\n%s", want, out)
		}
	}
	// The grid is scaled to the image: 40 cells wide, 400/300·40/2 ≈ 27 rows.
	if rows := strings.Count(out, "\n    │"); rows != 27 {
		t.Errorf("grid has %d rows, want 27:\n%s", rows, out)
	}
	// --long-context adds its header; a plain set sends Images only when
	// it carries an image or a box, Long-Context whenever opted in.
	if code, out, errOut := ask("--images", "--long-context", set); code != 0 {
		t.Fatalf("--long-context: %d\n%s\n%s", code, out, errOut)
	}
	if r := rec.take(); len(r) != 1 || r[0].images != "true" || r[0].long != "true" {
		t.Fatalf("headers %+v", r)
	}
	plain := filepath.Join(dir, "plain.yaml")
	os.WriteFile(plain, []byte("name: plain\nstate: hello\nquestions:\n  q:\n    type: noul\n    instructions: Is it urgent?\n"), 0o600)
	for _, c := range []struct {
		flags        []string
		images, long string
	}{{nil, "", ""}, {[]string{"--images"}, "", ""}, {[]string{"--long-context"}, "", "true"}} {
		if code, out, errOut := ask(append(c.flags, plain)...); code != 0 {
			t.Fatalf("plain %v: %d\n%s\n%s", c.flags, code, out, errOut)
		}
		if r := rec.take(); len(r) != 1 || r[0].images != c.images || r[0].long != c.long {
			t.Errorf("plain %v: headers %+v", c.flags, r)
		}
	}
	// The set's own opt-in.
	optIn := write("optin.yaml", "danger_zone:\n  images: true")
	if code, out, errOut := ask(optIn); code != 0 {
		t.Fatalf("danger_zone in the set: %d\n%s\n%s", code, out, errOut)
	}
	if r := rec.take(); len(r) != 1 || r[0].images != "true" {
		t.Errorf("danger_zone: headers %+v", r)
	}
	// jev-latest still answers with 1.13, which refuses box.
	if code, _, errOut := ask("--images", "--model", "jev-latest", set); code != 2 || !strings.Contains(errOut, "Invalid request.") {
		t.Errorf("jev-latest: %d %s", code, errOut)
	}
	rec.take()

	// The recording keeps the image by its hash, and replays offline;
	// another image under the same name is another question.
	exs, _, err := fixtures.ReadFile(fx)
	if err != nil || len(exs) == 0 {
		t.Fatalf("recorded %d (%v)", len(exs), err)
	}
	if bytes.Contains(exs[0].Request, []byte("data_base64")) || !bytes.Contains(exs[0].Request, []byte(`"sha256"`)) {
		t.Errorf("recorded request keeps the image bytes:\n%.300s", exs[0].Request)
	}
	code, out, errOut = askRun(t, "ask", "--offline", "--images", "--db", filepath.Join(dir, "db2"), "--fixtures", fx, set)
	if code != 0 || !strings.Contains(out, "mug (box)") || !strings.Contains(out, "[cache") {
		t.Fatalf("offline replay: %d\n%s\n%s", code, out, errOut)
	}
	os.WriteFile(filepath.Join(dir, "mug.png"), pngOf(t, 300, 400, 90), 0o600)
	if code, _, errOut := askRun(t, "ask", "--offline", "--images", "--db", filepath.Join(dir, "db2"), "--fixtures", fx, set); code != 2 || !strings.Contains(errOut, "not recorded") && !strings.Contains(errOut, "no recorded") {
		t.Errorf("another image replayed the first one's answers: %d %s", code, errOut)
	}

	// Limits are checked before anything is sent.
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"too long a side", pngOf(t, 1600, 300, 1), "the longest side may be at most 1568"},
		{"too small", pngOf(t, 279, 300, 1), "at least 280 px"},
		{"not an image", []byte("GIF89a not really"), "is not a PNG or JPEG image"},
	} {
		os.WriteFile(filepath.Join(dir, "mug.png"), c.data, 0o600)
		code, _, errOut := ask("--images", set)
		if code != 2 || !strings.Contains(errOut, c.want) || len(rec.take()) != 0 {
			t.Errorf("%s: exit %d, %s", c.name, code, errOut)
		}
	}
	os.WriteFile(filepath.Join(dir, "mug.png"), img, 0o600)
	unref := write("unref.yaml", "")
	b, _ := os.ReadFile(unref)
	os.WriteFile(unref, bytes.ReplaceAll(b, []byte("photo: img-mug"), []byte("photo: nothing")), 0o600)
	if code, _, errOut := ask("--images", unref); code != 2 || !strings.Contains(errOut, "is never referenced") {
		t.Errorf("unreferenced: %d %s", code, errOut)
	}
	outside := write("outside.yaml", "")
	b, _ = os.ReadFile(outside)
	os.WriteFile(outside, bytes.ReplaceAll(b, []byte("img-mug: mug.png"), []byte("img-mug: ../../etc/mug.png")), 0o600)
	if code, _, errOut := ask("--images", outside); code != 2 || !strings.Contains(errOut, "--allow-path") {
		t.Errorf("outside the folder: %d %s", code, errOut)
	}
}

// TestEvalJev114: eval refuses a set with image assets or box questions
// that is not opted in to images (before anything is sent), and carries
// --long-context to every request of a plain set. (Box sets evaluated:
// TestEvalBoxEndToEnd.)
func TestEvalJev114(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mug.png"), pngOf(t, 300, 400, 1), 0o600)
	set := filepath.Join(dir, "mugs.yaml")
	os.WriteFile(set, []byte(strings.Replace(boxSet, "%s", "", 1)), 0o600)
	if code, _, errOut := evalRun(t, "eval", "--offline", "--db", filepath.Join(dir, "db"), set); code != 2 || !strings.Contains(errOut, "need the Images Danger-Zone opt-in: --images") {
		t.Errorf("assets: %d %s", code, errOut)
	}
	b, _ := os.ReadFile(set)
	noAssets := bytes.Replace(b, []byte("assets:\n  img-mug: mug.png\n"), nil, 1)
	os.WriteFile(set, noAssets, 0o600)
	if code, _, errOut := evalRun(t, "eval", "--offline", "--db", filepath.Join(dir, "db"), set); code != 2 || !strings.Contains(errOut, "need the Images Danger-Zone opt-in: --images") {
		t.Errorf("box: %d %s", code, errOut)
	}

	si, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	rec := &sent{}
	srv := httptest.NewServer(rec.wrap(si))
	defer srv.Close()
	plain := filepath.Join(dir, "plain.yaml")
	os.WriteFile(plain, []byte("name: plain\nquestions:\n  q:\n    type: noul\n    instructions: Is it urgent?\ndataset: d.jsonl\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "d.jsonl"), []byte("{\"id\":\"a\",\"state\":\"x\"}\n{\"id\":\"b\",\"state\":\"y\"}\n"), 0o600)
	if code, out, errOut := evalRun(t, "eval", "--db", filepath.Join(dir, "db"), "--base-url", srv.URL, "--long-context", plain); code != 0 {
		t.Fatalf("eval --long-context: %d\n%s\n%s", code, out, errOut)
	}
	reqs := rec.take()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.long != "true" || r.images != "" {
			t.Errorf("eval request headers %+v", r)
		}
	}
}
