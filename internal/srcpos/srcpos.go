// Package srcpos spells where in a file a problem is ("file:line:col") and
// joins lists of such problems, the way every jevlab file reader (question
// sets, datasets, lint) reports them. It is pure and has no dependencies.
package srcpos

import (
	"strconv"
	"strings"
)

// Format returns file:line:col, leaving out the column when col is 0 and
// both numbers when line is 0 (a problem with the whole file). An empty
// file with a line gives ":line:col".
func Format(file string, line, col int) string {
	if line <= 0 {
		return file
	}
	s := file + ":" + strconv.Itoa(line)
	if col > 0 {
		s += ":" + strconv.Itoa(col)
	}
	return s
}

// Join returns the messages of errs one per line, for an error list's
// Error method.
func Join[E error](errs []E) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns errs as []error, for an error list's Unwrap method, so
// errors.As finds each problem.
func Unwrap[E error](errs []E) []error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return out
}
