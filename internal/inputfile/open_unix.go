//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path read-only without blocking: opening a FIFO
// for reading otherwise waits for a writer. The caller checks the opened
// file is regular, so the flag never affects a read.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
