package standin

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// TestLongContextLiftsTokenLimits: with TokenLimits, a request over 64k
// tokens is refused as tokens_exceeded unless it carries the Long-Context
// header; a box is answered only for a 1.14 model and only with the Images
// header.
func TestLongContextLiftsTokenLimits(t *testing.T) {
	s, err := New(Config{Synthetic: true, TokenLimits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	post := func(body string, headers ...string) (int, string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/systemone", strings.NewReader(body))
		for _, h := range headers {
			r.Header.Set(h, "true")
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	big := `{"model":"jev-latest","state":"` + strings.Repeat("word ", 60_000) + `","questions":{"q":{"type":"noul","instructions":"Is it?"}}}`
	if code, body := post(big); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "tokens_exceeded") || !strings.Contains(body, provider.HeaderDangerLongContext) {
		t.Errorf("without the header: %d %.200s", code, body)
	}
	if code, body := post(big, provider.HeaderDangerLongContext); code != http.StatusOK {
		t.Errorf("with the header: %d %.200s", code, body)
	}
	huge := `{"model":"jev-latest","state":"` + strings.Repeat("word ", 220_000) + `","questions":{"q":{"type":"noul","instructions":"Is it?"}}}`
	if code, _ := post(huge, provider.HeaderDangerLongContext); code != http.StatusRequestEntityTooLarge {
		t.Errorf("over 262k with the header: %d", code)
	}
	box := func(model string) string {
		return `{"model":"` + model + `","state":{"photo":"p"},"questions":{"b":{"type":"box","instructions":"the mug in photo"}}}`
	}
	if code, body := post(box("jev-1.14.0")); code != http.StatusUnprocessableEntity || !strings.Contains(body, "Images Danger-Zone") {
		t.Errorf("box without the Images header: %d %s", code, body)
	}
	if code, body := post(box("jev-latest"), provider.HeaderDangerImages); code != http.StatusBadRequest || !strings.Contains(body, "Invalid request.") {
		t.Errorf("box on jev-latest: %d %s", code, body)
	}
	code, body := post(box("jev-preview"), provider.HeaderDangerImages)
	if code != http.StatusOK {
		t.Fatalf("box on jev-preview: %d %s", code, body)
	}
	var req provider.Request
	_ = req.UnmarshalJSON([]byte(box("jev-preview")))
	req.DangerZone.Images = true
	res, err := provider.CheckResponse(&req, bytes.TrimSpace([]byte(body)))
	if err != nil {
		t.Fatalf("the stand-in's box answer does not check: %v\n%s", err, body)
	}
	e, ok := res.Answers[0].BoxOf()
	if !ok || e.Top >= e.Bottom || e.Left >= e.Right || !res.Answers[0].HasConfidence {
		t.Errorf("box answer %+v", res.Answers[0])
	}
}
