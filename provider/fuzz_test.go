package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// recordedSeeds returns up to perFile exchanges from each recorded*.jsonl
// under ../shared/testdata, or nothing when the shared data is absent (the
// hand-written seeds still run). Files of big exchanges (banking77's
// 77-option choices, ~9 KB) give only two, so that the fuzzer's
// minimisation of new inputs stays quick.
func recordedSeeds(tb testing.TB, perFile int) []Exchange {
	tb.Helper()
	dir := os.Getenv("JEVLAB_SHARED")
	if dir == "" {
		dir = filepath.Join(testutil.RepoRoot(tb), "..", "shared")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "testdata", "*", "recorded*.jsonl"))
	var out []Exchange
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		limit := perFile
		for n := 0; n < limit && sc.Scan(); n++ {
			if len(sc.Bytes()) > 4096 && perFile < 1000 {
				limit = min(limit, 2)
			}
			var ex Exchange
			if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			out = append(out, ex)
		}
		fh.Close()
	}
	return out
}

var handRequests = []string{
	`{"model":"m","state":"s","questions":{"q":{"type":"noul"}}}`,
	`{"model":"m","state":{"a":[1,{"b":null}]},"questions":{"c":{"type":"choice","instructions":{"q":"x"},"criteria":{"a":null,"b":{"what":"y"}}},"s":{"type":"score","criteria":["l","h"]},"n":{"type":"noul","criteria":{"true":"y","false":"n"}}}}`,
	`{"model":"m","state":null,"questions":{"q":{"type":"choice","criteria":{"":1," b":2,"b":[],"b":{}}}}}`,
	`{"model":"m","state":"s","questions":{"q":{"type":"score","criteria":{"0":"a"}},"q":{"type":"noul","x":1}}}`,
	`{"questions":{"q":{"type":"box"}},"document":"legacy"}`,
	`{"model":"\u00e9\"","state":"\ud83d\ude00","questions":{"\u0000":{"type":"noul","instructions":"\u2028"}}}`,
	`[1,2]`, `{`, `{"questions":{"q":{"type":"choice","criteria":{"a":nul}}}}`,
}

// FuzzRequestDecodeValidate: decoding and validating never panic; a valid
// request re-encodes to bytes that decode to the same request, and Size is
// the encoded length.
func FuzzRequestDecodeValidate(f *testing.F) {
	for _, s := range handRequests {
		f.Add([]byte(s))
	}
	for _, ex := range recordedSeeds(f, 8) {
		f.Add([]byte(ex.Request))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Request
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		verr := r.ValidateWith(Limits{MaxRequestBytes: 1 << 20})
		out, _ := r.MarshalJSON()
		if r.Size() != len(out) {
			t.Fatalf("Size %d, encoded %d: %s", r.Size(), len(out), out)
		}
		if verr != nil {
			if KindOf(verr) != KindInvalid {
				t.Fatalf("validation error of kind %q", KindOf(verr))
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("valid request encodes to invalid JSON: %s", out)
		}
		var again Request
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		out2, _ := again.MarshalJSON()
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
		if err := again.Validate(); err != nil {
			t.Fatalf("re-decoded request invalid: %v", err)
		}
	})
}

var handAnswers = []string{
	`{"model":"m","answers":{"q":{"type":"noul","noul":0.5}}}`,
	`{"model":"m","answers":{"q":{"type":"choice","choice":"a","confidence":0.5,"probabilities":{"a":0.5,"b":0.5}}}}`,
	`{"model":"m","answers":{"q":{"type":"score","score":1,"confidence":0.5,"probabilities":{"0":0,"1":1}}}}`,
	`{"answers":{"q":{"type":"choice","probabilities":{"a":null,"a":1e999}}}}`,
	`{"answers":{"q":null,"r":[],"s":"x"}}`,
	`{"Model":"x","answers":{"q":{"Type":"choice","choice":"a","probabilities":{"a":0.5,"b":0.5,"a":0.1}}},"usage":{"input_tokens":1.5}}`,
	`{"model":"caf\u00e9","answers":{"q":{"type":"choice","choice":"\u0061","confidence":1e-1,"probabilities":{"\u0061":1,"b":0}}},"usage":{"input_tokens":3,"output_tokens":null}}`,
}

// FuzzCheck: checking never panics, and an accepted answer set satisfies
// the contract (one answer per question, values finite and in range).
func FuzzCheck(f *testing.F) {
	base := `{"model":"m","state":"s","questions":{"q":{"type":"choice","criteria":{"a":null,"b":null}}}}`
	for i, a := range handAnswers {
		req := base
		switch i {
		case 0:
			req = `{"model":"m","state":"s","questions":{"q":{"type":"noul"}}}`
		case 2:
			req = `{"model":"m","state":"s","questions":{"q":{"type":"score","criteria":["l","h"]}}}`
		}
		f.Add([]byte(req), []byte(a))
	}
	for _, ex := range recordedSeeds(f, 8) {
		f.Add([]byte(ex.Request), []byte(ex.Response))
	}
	f.Fuzz(func(t *testing.T, reqData, respData []byte) {
		var req Request
		if json.Unmarshal(reqData, &req) != nil || req.Validate() != nil {
			return
		}
		var resp Response
		slowErr := json.Unmarshal(respData, &resp)
		fast, fastErr := DecodeResponse(respData)
		if (slowErr == nil) != (fastErr == nil) {
			t.Fatalf("DecodeResponse error %v, json.Unmarshal error %v", fastErr, slowErr)
		}
		if slowErr != nil {
			return
		}
		if fast.Model != resp.Model || fast.Usage != resp.Usage || len(fast.Answers) != len(resp.Answers) {
			t.Fatalf("DecodeResponse %+v, json.Unmarshal %+v", fast, resp)
		}
		for id, raw := range resp.Answers {
			if !bytes.Equal(fast.Answers[id], raw) {
				t.Fatalf("answer %q: fast %s, slow %s", id, fast.Answers[id], raw)
			}
		}
		// The fast answer reading must agree with encoding/json.
		for i := range req.Questions {
			e := &req.Questions[i]
			raw, ok := resp.Answers[e.ID]
			if !ok {
				continue
			}
			fa, ferrs := checkOne(e.ID, &e.Question, raw)
			sw, serr := slowAnswer(raw)
			var sa Answer
			var serrs []error
			if serr != nil {
				serrs = []error{serr}
			} else {
				serrs, _ = checkWire(e.ID, &e.Question, raw, &sw, &sa)
			}
			if (len(ferrs) == 0) != (len(serrs) == 0) {
				t.Fatalf("question %q: fast errors %v, slow errors %v\n%s", e.ID, ferrs, serrs, raw)
			}
			if len(ferrs) == 0 {
				fb, _ := json.Marshal(fa)
				sb, _ := json.Marshal(sa)
				if !bytes.Equal(fb, sb) || fa.HasConfidence != sa.HasConfidence {
					t.Fatalf("question %q: fast %s, slow %s", e.ID, fb, sb)
				}
			}
		}
		ans, err := Check(&req, &resp)
		// The one-pass path agrees with the two steps.
		if res, err1 := CheckResponse(&req, respData); (err1 == nil) != (err == nil) {
			t.Fatalf("CheckResponse error %v, Check error %v", err1, err)
		} else if err1 == nil {
			a, _ := json.Marshal(ans)
			b, _ := json.Marshal(res.Answers)
			if !bytes.Equal(a, b) || res.Model != resp.Model || res.Usage != resp.Usage {
				t.Fatalf("CheckResponse %s\nCheck %s", b, a)
			}
		} else if err1.Error() != err.Error() && !strings.Contains(err.Error(), "has \"") {
			// Same problems in the same order (extra-key messages aside,
			// whose order follows a map in the slow path).
			t.Fatalf("CheckResponse error %v\nCheck error %v", err1, err)
		}
		if err != nil {
			if ans != nil || KindOf(err) != KindMalformed {
				t.Fatalf("error %v with answers %v (kind %q)", err, ans, KindOf(err))
			}
			return
		}
		if len(ans) != len(req.Questions) {
			t.Fatalf("%d answers for %d questions", len(ans), len(req.Questions))
		}
		for i, a := range ans {
			q := &req.Questions[i]
			if a.ID != q.ID || a.Type != q.Question.Type {
				t.Fatalf("answer %d is %s/%s for %s/%s", i, a.ID, a.Type, q.ID, q.Question.Type)
			}
			in01 := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
			switch a.Type {
			case Noul:
				if !in01(a.P) || a.HasConfidence {
					t.Fatalf("noul %+v", a)
				}
			case Choice, Score:
				if len(a.Probs) != q.Question.Size() || (a.HasConfidence && !in01(a.Confidence)) {
					t.Fatalf("%s %+v", a.Type, a)
				}
				sum := 0.0
				for _, p := range a.Probs {
					if !in01(p) {
						t.Fatalf("probability %v", p)
					}
					sum += p
				}
				if math.Abs(sum-1) > SumTolerance+1e-9 {
					t.Fatalf("sum %v accepted", sum)
				}
				if a.Type == Choice && q.Question.OptionIndex(a.Choice) < 0 {
					t.Fatalf("choice %q not an option", a.Choice)
				}
				if a.Type == Score && (a.Score < 0 || a.Score > float64(len(q.Question.Levels)-1)) {
					t.Fatalf("score %v", a.Score)
				}
			}
		}
	})
}

// FuzzShortDecimal: the fast number path agrees bit for bit with
// strconv.ParseFloat on every JSON number it accepts.
func FuzzShortDecimal(f *testing.F) {
	for _, s := range []string{"0.07", "1.0", "-0", "0.99", "123.456", "1e5", "0.30000000000000004"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if scanNumber(append(b, 'x'), 0) != len(b) || len(b) == 0 {
			return // not exactly one JSON number
		}
		want, err := strconv.ParseFloat(s, 64)
		if v, end, ok := numAt(append(b[:len(b):len(b)], ','), 0); ok && (end != len(b) || err != nil || math.Float64bits(v) != math.Float64bits(want)) {
			t.Fatalf("numAt %q: %v end %d, want %v (%v)", s, v, end, want, err)
		}
		got, ok := shortDecimal(b)
		if !ok {
			return
		}
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: got %v, want %v (%v)", s, got, want, err)
		}
	})
}

// FuzzCanonicalStrings: for any valid JSON, CanonicalStrings gives valid
// JSON of the same value, is idempotent, and keeps every byte outside
// strings (so key order and number spelling survive).
func FuzzCanonicalStrings(f *testing.F) {
	for _, s := range []string{`{"a":"caf\u00e9","b":[1.0,"\ud83d\ude00"]}`, `"\u2028\/x"`, `[1e5,-0,"é"]`, `{"\u0061":null}`, `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v := Compact(json.RawMessage(in))
		if !json.Valid(v) {
			return
		}
		c := CanonicalStrings(v)
		if !json.Valid(c) {
			t.Fatalf("CanonicalStrings(%s) = %s is not JSON", v, c)
		}
		dec := func(d []byte) (any, error) {
			var x any
			jd := json.NewDecoder(bytes.NewReader(d))
			jd.UseNumber()
			err := jd.Decode(&x)
			return x, err
		}
		a, errA := dec(v)
		b, errB := dec(c)
		if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("CanonicalStrings(%s) = %s changed the value", v, c)
		}
		if again := CanonicalStrings(c); !bytes.Equal(again, c) {
			t.Fatalf("not idempotent: %s then %s", c, again)
		}
	})
}
