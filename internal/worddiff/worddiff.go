// Package worddiff computes a word-level diff of two texts (longest common
// subsequence over whitespace-separated words, line breaks kept as words)
// and writes it in git's --word-diff=plain style: [-removed-] {+added+}.
package worddiff

import "strings"

// Op is one run of words: kept (' '), removed ('-') or added ('+').
type Op struct {
	Kind  byte     `json:"kind"`
	Words []string `json:"words"`
}

// maxCells bounds the LCS table; larger inputs fall back to "all removed,
// all added", which is still a correct (if coarse) diff.
const maxCells = 4 << 20

// Words splits s into words, each line break a word of its own.
func Words(s string) []string {
	var out []string
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			out = append(out, "\n")
		}
		out = append(out, strings.Fields(line)...)
	}
	return out
}

// Diff returns the word diff from a to b.
func Diff(a, b string) []Op {
	wa, wb := Words(a), Words(b)
	n, m := len(wa), len(wb)
	var ops []Op
	add := func(kind byte, w string) {
		if k := len(ops); k > 0 && ops[k-1].Kind == kind {
			ops[k-1].Words = append(ops[k-1].Words, w)
			return
		}
		ops = append(ops, Op{Kind: kind, Words: []string{w}})
	}
	if (n+1)*(m+1) > maxCells {
		for _, w := range wa {
			add('-', w)
		}
		for _, w := range wb {
			add('+', w)
		}
		return ops
	}
	// lcs[i][j] = LCS length of wa[i:], wb[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if wa[i] == wb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case wa[i] == wb[j]:
			add(' ', wa[i])
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			add('-', wa[i])
			i++
		default:
			add('+', wb[j])
			j++
		}
	}
	for ; i < n; i++ {
		add('-', wa[i])
	}
	for ; j < m; j++ {
		add('+', wb[j])
	}
	return ops
}

// Changed reports whether ops hold any removal or addition.
func Changed(ops []Op) bool {
	for _, o := range ops {
		if o.Kind != ' ' {
			return true
		}
	}
	return false
}

// Plain writes ops as text: kept words as they are, [-removed-] and
// {+added+}; line breaks are kept.
func Plain(ops []Op) string {
	var b strings.Builder
	sep := func() {
		if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteByte(' ')
		}
	}
	for _, o := range ops {
		var words []string
		flush := func() {
			if len(words) == 0 {
				return
			}
			sep()
			text := strings.Join(words, " ")
			switch o.Kind {
			case '-':
				b.WriteString("[-" + text + "-]")
			case '+':
				b.WriteString("{+" + text + "+}")
			default:
				b.WriteString(text)
			}
			words = nil
		}
		for _, w := range o.Words {
			if w == "\n" {
				flush()
				if o.Kind == ' ' {
					b.WriteByte('\n')
				} else {
					sep()
					b.WriteString(map[byte]string{'-': "[-⏎-]", '+': "{+⏎+}"}[o.Kind])
				}
				continue
			}
			words = append(words, w)
		}
		flush()
	}
	return b.String()
}
