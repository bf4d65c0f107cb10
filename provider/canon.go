package provider

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// CanonicalStrings returns compact JSON v with every string (object keys
// included) spelled one way: decoded and written again as encoding/json
// writes it without HTML escaping (UTF-8 as is; `"`, `\`, control
// characters, U+2028 and U+2029 escaped). So "caf\u00e9" and "café" come
// out the same, while key order, number spelling and everything outside
// strings stay exactly as given: two spellings of the same string are the
// same value, two spellings of a number or two key orders may not be to
// every reader. v must be compact; invalid JSON is returned unchanged. When
// nothing needs rewriting (the common case) v itself is returned.
func CanonicalStrings(v []byte) []byte {
	if canonicalAlready(v) {
		return v
	}
	var b bytes.Buffer
	b.Grow(len(v))
	for i := 0; i < len(v); {
		c := v[i]
		if c != '"' {
			b.WriteByte(c)
			i++
			continue
		}
		end, plain := stringEnd(v, i)
		if end < 0 {
			return v
		}
		seg := v[i:end]
		if plain && canonicalAlready(seg) {
			b.Write(seg)
		} else {
			var s string
			if json.Unmarshal(seg, &s) != nil {
				return v
			}
			writeJSONString(&b, s)
		}
		i = end
	}
	return b.Bytes()
}

// canonicalAlready reports whether v certainly needs no rewriting: no
// escapes, and either pure ASCII or valid UTF-8 without U+2028/U+2029
// (which encoding/json escapes).
func canonicalAlready(v []byte) bool {
	if bytes.IndexByte(v, '\\') >= 0 {
		return false
	}
	for _, c := range v {
		if c >= 0x80 {
			return utf8.Valid(v) && !bytes.Contains(v, []byte("\u2028")) && !bytes.Contains(v, []byte("\u2029"))
		}
	}
	return true
}

// stringEnd returns the index past the JSON string starting at v[i], and
// whether it has no escapes; end is -1 for an unterminated string.
func stringEnd(v []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '"':
			return j + 1, plain
		case '\\':
			plain = false
			j++
		}
	}
	return -1, false
}
