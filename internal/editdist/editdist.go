// Package editdist measures how far apart two short strings are, for
// "did you mean" suggestions (a mistyped field name, a misspelt state
// path). It is pure and has no dependencies, so any package may use it.
package editdist

// Levenshtein returns the Levenshtein distance between a and b: the fewest
// single-rune insertions, deletions and substitutions that turn a into b.
// It compares runes, not bytes, so "é" and "e" are one substitution apart.
// Time is O(len(a)·len(b)); callers comparing untrusted long strings should
// cap the lengths first.
func Levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
