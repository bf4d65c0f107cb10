//go:build !unix

package formats

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }
