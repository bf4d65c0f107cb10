//go:build !unix

package inputfile

import (
	"fmt"
	"os"
)

// openNonBlocking checks that path is a regular file before opening it
// (without O_NONBLOCK, opening a pipe could block).
func openNonBlocking(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, kind(st.Mode()))
	}
	return os.Open(path)
}
