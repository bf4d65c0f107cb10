package systemone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
)

// benchRequest is the 8-question request of about 3.8 KB: a choice
// over 22 options, a choice over 15, two scores and four nouls.
func benchRequest(tb testing.TB) *provider.Request {
	tb.Helper()
	var b strings.Builder
	b.WriteString(`{"model":"jev-latest","state":{"channel":"email","message":"Hi, I was charged twice for order A-104 last Tuesday and the second charge still shows on my card. I need the duplicate refunded before my rent is due on Friday. This is the third time I am writing.","customer":{"plan":"pro","since":"2023-04-01"}},"questions":{`)
	choice := func(id, instr string, n int, words []string) {
		fmt.Fprintf(&b, `%q:{"type":"choice","instructions":%q,"criteria":{`, id, instr)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			w := words[i%len(words)]
			fmt.Fprintf(&b, `"%s_%d":"Messages about %s and related questions, case %d."`, w, i, w, i)
		}
		b.WriteString(`}},`)
	}
	choice("intent", "Which support intent does the message express?", 22,
		[]string{"refund", "card", "billing", "delivery", "account", "login", "fraud", "exchange_rate", "top_up", "transfer", "pin"})
	choice("team", "Which team should handle the message?", 15,
		[]string{"payments", "orders", "security", "success", "legal"})
	b.WriteString(`"urgency":{"type":"score","instructions":"How soon does this need a human response?","criteria":["Can wait indefinitely.","Within a few days.","Today.","Within the hour."]},`)
	b.WriteString(`"anger":{"type":"score","instructions":{"question":"How upset is the customer?","focus":"message"},"criteria":[{"summary":"calm"},{"summary":"annoyed"},{"summary":"angry"},{"summary":"furious"},{"summary":"threatening to leave"}]},`)
	b.WriteString(`"refund":{"type":"noul","instructions":"Does the message explicitly ask for money back?","criteria":{"true":"Asks for a refund or reversal.","false":"No refund requested."}},`)
	b.WriteString(`"repeat":{"type":"noul","instructions":"Does the customer say they wrote before?"},`)
	b.WriteString(`"deadline":{"type":"noul","instructions":"Does the message state a deadline?"},`)
	b.WriteString(`"legal":{"type":"noul","instructions":"Does the message threaten legal action?"}}}`)
	var r provider.Request
	if err := json.Unmarshal([]byte(b.String()), &r); err != nil {
		tb.Fatal(err)
	}
	return &r
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkClientOverhead measures what the client adds to a round trip:
// each iteration sends the same request through Client.Ask (validation,
// encoding, limits, answer checking, exchange recording) and as a raw
// net/http POST of the same bytes to the same in-process stand-in, in
// alternating order, and reports the ratio of the median durations.
func BenchmarkClientOverhead(b *testing.B) {
	srv, err := standin.New(standin.Config{Synthetic: true, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := New(Config{BaseURL: ts.URL, APIKey: "bench-key", Concurrency: 1, MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := benchRequest(b)
	body, _ := req.MarshalJSON()
	b.Logf("request %d bytes, %d questions", len(body), len(req.Questions))
	rawClient := &http.Client{Transport: newTransport(1)}
	defer rawClient.CloseIdleConnections()
	url := ts.URL + pathSystemOne
	ctx := context.Background()

	viaClient := func() time.Duration {
		t0 := time.Now()
		res, err := c.Ask(ctx, req)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Answers) != 8 {
			b.Fatalf("%d answers", len(res.Answers))
		}
		return d
	}
	viaRaw := func() time.Duration {
		t0 := time.Now()
		hreq, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Authorization", "Bearer bench-key")
		resp, err := rawClient.Do(hreq)
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil || resp.StatusCode != 200 || len(data) == 0 {
			b.Fatalf("raw: %v %d", err, resp.StatusCode)
		}
		return d
	}
	for i := 0; i < 50; i++ { // warm both connections and caches
		viaClient()
		viaRaw()
	}
	cd := make([]time.Duration, 0, b.N)
	rd := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			cd = append(cd, viaClient())
			rd = append(rd, viaRaw())
		} else {
			rd = append(rd, viaRaw())
			cd = append(cd, viaClient())
		}
	}
	b.StopTimer()
	pc, pr := p50(cd), p50(rd)
	b.ReportMetric(float64(pc)/float64(pr), "client/raw-p50")
	b.ReportMetric(float64(pc.Nanoseconds())/1e3, "client-p50-µs")
	b.ReportMetric(float64(pr.Nanoseconds())/1e3, "raw-p50-µs")
}

// BenchmarkClientStages times the client's own work per call, without the
// network: validation, encoding, and decoding plus checking the answers.
func BenchmarkClientStages(b *testing.B) {
	srv, err := standin.New(standin.Config{Synthetic: true, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(b)
	body, _ := req.MarshalJSON()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, pathSystemOne, bytes.NewReader(body)))
	respBody := rec.Body.Bytes()
	b.Run("validate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := req.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		var buf bytes.Buffer
		for i := 0; i < b.N; i++ {
			buf.Reset()
			req.AppendJSON(&buf)
		}
	})
	b.Run("decode+check", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := provider.CheckResponse(req, respBody); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cannedRT answers every request with the same body, without a network.
type cannedRT struct{ body []byte }

func (c cannedRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: r}, nil
}

// BenchmarkClientCPU is the client's own cost per call with the network
// replaced by a canned in-memory answer; "raw" is a bare http.Client POST
// over the same fake transport.
func BenchmarkClientCPU(b *testing.B) {
	srv, err := standin.New(standin.Config{Synthetic: true, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(b)
	body, _ := req.MarshalJSON()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, pathSystemOne, bytes.NewReader(body)))
	rt := cannedRT{body: rec.Body.Bytes()}
	b.Run("client", func(b *testing.B) {
		c, err := New(Config{BaseURL: "http://127.0.0.1:1", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := c.Ask(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		hc := &http.Client{Transport: rt}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			hreq, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/v1/systemone", bytes.NewReader(body))
			hreq.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(hreq)
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
}
