package provider

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// fastJSONCases are inputs the fast scanner must either decide exactly like
// the decoder or leave to it.
var fastJSONCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"b":[1,2,{"c":null}],"d":"x"}`, "{\n \"a\" : \"b\" ,\t\"c\":true }",
	`{"a":1,"a":2}`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `{"a":1}x`, `{"a":1}}`, `[1]`, `"s"`, `1`, `null`, ``,
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":-0.5e+10}`, `{"a":tru}`, `{"a":nul}`, `{"a":falsey}`,
	`{"a":"\u00e9\n\"\\\/"}`, `{"\u0061":1,"a":2}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}",
	`{"é":"ü"}`, "{\"\xff\":1}", `{"a":[}`, `{"a":[1 2]}`, `{"a":{"b":1 "c":2}}`, `{"a":"unterminated}`,
	`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":0}`,
}

func checkFastAgainstSlow(t *testing.T, in []byte) {
	t.Helper()
	fast, ok := fastObjectFields(in)
	slow, err := slowObjectFields(in)
	if ok {
		if err != nil {
			t.Fatalf("%q: fast path accepted what the decoder rejects: %v", in, err)
		}
		if !json.Valid(in) {
			t.Fatalf("%q: fast path accepted invalid JSON", in)
		}
		if len(fast) != len(slow) || (len(fast) > 0 && !reflect.DeepEqual(fast, slow)) {
			t.Fatalf("%q: fast %q, slow %q", in, fast, slow)
		}
	}
	if fastValid(in) && !json.Valid(in) {
		t.Fatalf("%q: fastValid accepted invalid JSON", in)
	}
	if json.Valid(in) && isCompact(in) {
		if c := compact(in); string(c) != string(in) {
			t.Fatalf("%q: compact changed a compact value to %q", in, c)
		}
	}
}

func TestFastJSONMatchesDecoder(t *testing.T) {
	for _, c := range fastJSONCases {
		checkFastAgainstSlow(t, []byte(c))
	}
	// Accepting is required for the common shapes, or the fast path is dead.
	for _, c := range []string{`{}`, `{"a":1,"b":[1,2,{"c":null}],"d":"x"}`, `{"é":"ü"}`, `{"a":"\u00e9\n\"\\\/"}`} {
		if _, ok := fastObjectFields([]byte(c)); !ok {
			t.Errorf("%s: fast path declined a valid object", c)
		}
	}
	// Every recorded request and response.
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t), "testdata", "*", "recorded*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ex Exchange
			if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
				t.Fatal(err)
			}
			checkFastAgainstSlow(t, sc.Bytes())
			checkFastAgainstSlow(t, ex.Request)
			if _, ok := fastObjectFields(ex.Request); !ok {
				t.Fatalf("%s: fast path declined a recorded request", f)
			}
		}
		fh.Close()
	}
}

// FuzzFastJSON: whatever the fast scanner accepts, the decoder accepts with
// the same fields.
func FuzzFastJSON(f *testing.F) {
	for _, c := range fastJSONCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkFastAgainstSlow(t, in) })
}
