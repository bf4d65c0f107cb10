package provider

import (
	"encoding/binary"
	"encoding/json"
)

// A small validating scanner for the hot decoding paths (the stand-in and
// the answer cache decode thousands of requests). It only ever accepts: any
// input it does not fully understand — invalid JSON, duplicate keys, a value
// that is not an object — is handed to the encoding/json-based slow path,
// which produces the same results and error messages as before. So a bug
// here can cost speed, never change what is accepted: the fast path accepts
// only inputs that are valid JSON by RFC 8259 (which json.Valid accepts
// too), and returns the same fields the decoder would.

// fastObjectFields splits a valid JSON object without duplicate keys into
// its fields in document order. ok is false when the slow path must decide.
func fastObjectFields(data []byte) (out []rawField, ok bool) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		if skipWS(data, i+1) != len(data) {
			return nil, false
		}
		return []rawField{}, true
	}
	var seen map[string]struct{}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		kend, plain := scanString(data, i)
		if kend < 0 {
			return nil, false
		}
		var key string
		if plain {
			key = string(data[i+1 : kend-1])
		} else if err := json.Unmarshal(data[i:kend], &key); err != nil {
			return nil, false
		}
		i = skipWS(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipWS(data, i+1)
		vend := scanValue(data, i, 0)
		if vend < 0 {
			return nil, false
		}
		// Duplicate keys: a linear look for small objects, a set beyond.
		if len(out) < 16 {
			for j := range out {
				if out[j].Key == key {
					return nil, false
				}
			}
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*len(out))
				for j := range out {
					seen[out[j].Key] = struct{}{}
				}
			}
			if _, dup := seen[key]; dup {
				return nil, false
			}
			seen[key] = struct{}{}
		}
		if out == nil {
			out = make([]rawField, 0, 8)
		}
		out = append(out, rawField{Key: key, Value: json.RawMessage(data[i:vend])})
		i = skipWS(data, vend)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			if skipWS(data, i+1) != len(data) {
				return nil, false
			}
			return out, true
		default:
			return nil, false
		}
	}
}

// fastValid reports whether v is one valid JSON value (surrounding
// whitespace allowed). It may say false for valid input it does not handle;
// callers then ask json.Valid.
func fastValid(v []byte) bool {
	i := skipWS(v, 0)
	end := scanValue(v, i, 0)
	return end >= 0 && skipWS(v, end) == len(v)
}

// isCompact reports whether v holds no whitespace outside strings, so
// compacting it would return it unchanged.
func isCompact(v []byte) bool {
	in := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if in {
			switch c {
			case '\\':
				i++
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// maxDepth bounds nesting so the recursive scanner cannot exhaust the stack;
// deeper input goes to the slow path.
const maxDepth = 1000

// scanValue returns the index just past the JSON value starting at data[i],
// or -1 when it is not a valid value.
func scanValue(data []byte, i, depth int) int {
	if i >= len(data) || depth > maxDepth {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		end, _ := scanString(data, i)
		return end
	case c == '{':
		i = skipWS(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return -1
			}
			if i, _ = scanString(data, i); i < 0 {
				return -1
			}
			i = skipWS(data, i)
			if i >= len(data) || data[i] != ':' {
				return -1
			}
			if i = scanValue(data, skipWS(data, i+1), depth+1); i < 0 {
				return -1
			}
			i = skipWS(data, i)
			if i >= len(data) {
				return -1
			}
			if data[i] == '}' {
				return i + 1
			}
			if data[i] != ',' {
				return -1
			}
			i = skipWS(data, i+1)
		}
	case c == '[':
		i = skipWS(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1
		}
		for {
			if i = scanValue(data, i, depth+1); i < 0 {
				return -1
			}
			i = skipWS(data, i)
			if i >= len(data) {
				return -1
			}
			if data[i] == ']' {
				return i + 1
			}
			if data[i] != ',' {
				return -1
			}
			i = skipWS(data, i+1)
		}
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	case c == '-' || ('0' <= c && c <= '9'):
		return scanNumber(data, i)
	}
	return -1
}

func literal(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// specialWord reports whether any of the eight bytes in w is '"', '\\', a
// control byte (< 0x20) or not ASCII (>= 0x80): the bytes plainStringByte
// does not pass. (x-0x01..)&^x has a byte's high bit set where x has a zero
// byte; (w-0x20..)|w where w has a byte below 0x20 or at or above 0x80.
func specialWord(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := w ^ (lo * '"')
	b := w ^ (lo * '\\')
	return ((q-lo)&^q|(b-lo)&^b|(w-lo*0x20)|w)&hi != 0
}

// scanString returns the index just past the string starting at data[i]
// (a '"'), or -1 when it is invalid; plain is true when it holds no escape
// and only ASCII, so its bytes are its value.
func scanString(data []byte, i int) (end int, plain bool) {
	plain = true
	for i++; i < len(data); i++ {
		// Eight plain bytes at a time, then byte by byte.
		for i+8 <= len(data) && !specialWord(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) && plainStringByte[data[i]] {
			i++
		}
		if i >= len(data) {
			break
		}
		c := data[i]
		switch {
		case c == '"':
			return i + 1, plain
		case c == '\\':
			plain = false
			i++
			if i >= len(data) {
				return -1, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-i < 5 {
					return -1, false
				}
				for _, h := range data[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1, false
					}
				}
				i += 4
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			plain = false
		}
	}
	return -1, false
}

// plainStringByte marks the bytes that stand for themselves inside a JSON
// string: printable ASCII other than '"' and '\\'. Read-only.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanNumber returns the index just past the number at data[i], or -1.
func scanNumber(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if !digits() {
		return -1
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}
