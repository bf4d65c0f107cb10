//go:build unix

package store

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processGone reports whether no process pid runs on this host (a zombie,
// killed but not yet reaped, counts as gone).
func processGone(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // no /proc: trust kill
	}
	// "pid (comm) S ...": the state follows the last ')'.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z' || b[i+2] == 'X'
	}
	return false
}
