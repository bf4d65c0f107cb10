package provider

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestCheckResponseMatchesCheckOnRecordings: on every real recorded
// exchange, the one-pass CheckResponse returns exactly what DecodeResponse
// followed by Check returns, and reads the body on its fast path.
func TestCheckResponseMatchesCheckOnRecordings(t *testing.T) {
	exs := recordedSeeds(t, 1<<30)
	if len(exs) == 0 {
		t.Skip("no recordings")
	}
	for i, ex := range exs {
		var req Request
		if err := json.Unmarshal(ex.Request, &req); err != nil {
			t.Fatal(err)
		}
		resp, err := DecodeResponse(ex.Response)
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		want, err := Check(&req, resp)
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		got, err := CheckResponse(&req, ex.Response)
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got.Answers)
		if !bytes.Equal(a, b) || got.Model != resp.Model || got.Usage != resp.Usage {
			t.Fatalf("exchange %d:\n got %s\nwant %s", i, b, a)
		}
		if _, _, ok := fastCheckResponse(&req, ex.Response); !ok {
			t.Errorf("exchange %d (%s) left the fast path", i, ex.ID)
		}
	}
	t.Logf("%d exchanges", len(exs))
}
