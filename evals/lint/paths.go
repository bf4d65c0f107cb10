package lint

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/internal/editdist"
)

// A state path as the docs write them: `ticket.messages[0].text`.
var (
	backticked = regexp.MustCompile("`([^`\n]+)`")
	// pathLike is a dotted and/or indexed path: at least one . or [n].
	pathLike = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*(?:\.[A-Za-z_$][A-Za-z0-9_$-]*|\[\d+\])+$`)
	// identLike is one identifier (no hyphen: `A-104` is a value, not a key).
	identLike = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	segment   = regexp.MustCompile(`[^.\[\]]+|\[\d+\]`)
)

// literalWords are backticked words that are values, not keys.
var literalWords = map[string]bool{"true": true, "false": true, "null": true, "yes": true, "no": true, "none": true}

// pathRef is one backticked path found in a question's text slots.
type pathRef struct {
	question string
	where    []string // field path inside the question, for the location
	text     string   // the path as written
	segs     []string // keys, and "[n]" for indices
	dotted   bool     // dotted/indexed, not a single identifier
	resolved bool
}

// parsePath splits a path into segments.
func parsePath(p string) []string { return segment.FindAllString(p, -1) }

// resolvesIn reports whether segs resolve from v or from any object or
// array nested in v (a path may be written relative to a part of the
// state).
func resolvesIn(v any, segs []string) bool {
	if resolveFrom(v, segs) {
		return true
	}
	switch t := v.(type) {
	case map[string]any:
		for _, c := range t {
			if resolvesIn(c, segs) {
				return true
			}
		}
	case []any:
		for _, c := range t {
			if resolvesIn(c, segs) {
				return true
			}
		}
	}
	return false
}

func resolveFrom(v any, segs []string) bool {
	for _, s := range segs {
		if strings.HasPrefix(s, "[") {
			arr, ok := v.([]any)
			if !ok {
				return false
			}
			i, err := strconv.Atoi(s[1 : len(s)-1])
			if err != nil || i >= len(arr) {
				return false
			}
			v = arr[i]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		c, ok := m[s]
		if !ok {
			return false
		}
		v = c
	}
	return true
}

// decode parses raw JSON for path resolution (nil when invalid).
func decode(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// strings walks every string value in raw JSON (not keys), with the field
// path of each inside raw.
func walkStrings(raw json.RawMessage, fn func(path []string, s string)) {
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		switch t := v.(type) {
		case string:
			fn(path, t)
		case map[string]any:
			for k, c := range t {
				walk(c, append(append([]string(nil), path...), k))
			}
		case []any:
			for i, c := range t {
				walk(c, append(append([]string(nil), path...), strconv.Itoa(i)))
			}
		}
	}
	walk(decode(raw), nil)
}

// suggest returns a path close to segs (one key corrected by a small edit
// distance) that resolves in v, or "".
func suggest(v any, segs []string) string {
	var best string
	var visit func(n any, depth int)
	visit = func(n any, depth int) {
		if best != "" || depth > 20 {
			return
		}
		if s := fixFrom(n, segs); s != "" {
			best = s
			return
		}
		switch t := n.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				visit(t[k], depth+1)
			}
		case []any:
			for _, c := range t {
				visit(c, depth+1)
			}
		}
	}
	visit(v, 0)
	return best
}

// fixFrom follows segs from v; at the first key that is missing it tries
// the closest existing key and returns the corrected path if the rest
// then resolves.
func fixFrom(v any, segs []string) string {
	cur := v
	for i, s := range segs {
		if strings.HasPrefix(s, "[") {
			arr, ok := cur.([]any)
			if !ok {
				return ""
			}
			j, _ := strconv.Atoi(s[1 : len(s)-1])
			if j >= len(arr) {
				return ""
			}
			cur = arr[j]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		if c, ok := m[s]; ok {
			cur = c
			continue
		}
		if i == 0 {
			// The first key must exist: a suggestion anchored on a
			// corrected first key anywhere in the state is a guess.
			if len(segs) == 1 {
				break
			}
			return ""
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if editdist.Levenshtein(k, s) <= 1+len(s)/6 {
				fixed := append(append(append([]string(nil), segs[:i]...), k), segs[i+1:]...)
				if resolveFrom(m[k], segs[i+1:]) {
					return joinPath(fixed)
				}
			}
		}
		return ""
	}
	if len(segs) == 1 {
		if m, ok := v.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if editdist.Levenshtein(k, segs[0]) <= 1+len(segs[0])/6 {
					return k
				}
			}
		}
	}
	return ""
}

func joinPath(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}
