package formats

import (
	"bytes"
	"testing"
)

// FuzzParseJEVL: any bytes parse or fail with an error, never a panic,
// and what parses writes back as records that parse again to the same.
func FuzzParseJEVL(f *testing.F) {
	f.Add([]byte(jevlExample + "\n"))
	f.Add([]byte(`{"v": 1, "id": "x", "ts": "t", "model": "m", "request": {"questions": {}}, "answers": {}, "zz": [1]}` + "\n\n"))
	f.Add([]byte("{\"v\": 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseJEVL("f.jevl", data)
		if err != nil {
			return
		}
		var b bytes.Buffer
		for i := range recs {
			WriteJEVL(&b, &recs[i])
		}
		again, err := ParseJEVL("f.jevl", b.Bytes())
		if err != nil || len(again) != len(recs) {
			t.Fatalf("rewrite does not parse back: %v\n%s", err, b.Bytes())
		}
	})
}

// FuzzParsePack: pack.yaml from a stranger never panics the reader.
func FuzzParsePack(f *testing.F) {
	f.Add([]byte(tinyPack))
	f.Add([]byte("spec: 0\nquestions: {a: {type: score, levels: [x, unknown], level_descriptions: {x: y}}}\n"))
	f.Add([]byte("thresholds: {q: {yes: 1}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pk, err := ParsePack("pack.yaml", data, "")
		if err != nil {
			return
		}
		_, _ = pk.LoadCases("cases.jsonl", data)
		_ = pk.Set()
	})
}
