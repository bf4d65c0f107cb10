// Package inputfile opens the files jevlab reads from other people —
// question sets, datasets, fixture files — so that no such file can hang
// a command or exhaust its memory.
//
// Only regular files are read: a FIFO would block forever (opening it
// waits for a writer), a device such as /dev/zero never ends, and a
// directory is not data. Opening never blocks (a FIFO is opened
// non-blocking and refused), and the check is made on the opened file, so
// the path cannot be swapped between the check and the read. Reads are
// capped: TooLargeError names the limit and the setting that raises it.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// NotRegularError is a path that is not a regular file.
type NotRegularError struct {
	What string // "question set", "dataset", …
	Path string
	Kind string // "a FIFO (named pipe)", "a directory", "a character device", …
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s %s is %s, not a regular file; jevlab reads a %s only from a regular file (a pipe or device could block or never end)",
		e.What, e.Path, e.Kind, e.What)
}

// TooLargeError is input over a size limit.
type TooLargeError struct {
	What    string // "question set", "line 3 of dataset d.jsonl", "decompressed dataset"
	Path    string // may be empty when What says it all
	Limit   int64
	Setting string // the flag that raises the limit, e.g. "--max-set-size"
}

func (e *TooLargeError) Error() string {
	var b strings.Builder
	b.WriteString(e.What)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	fmt.Fprintf(&b, " is larger than %s, the limit", FormatSize(e.Limit))
	if e.Setting != "" {
		fmt.Fprintf(&b, " (raise it with %s)", e.Setting)
	}
	return b.String()
}

// kind names a file mode for messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// Stat checks, without opening it, that path is a regular file (following
// symlinks): for a caller that opens it later through Open.
func Stat(path, what string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &NotRegularError{What: what, Path: path, Kind: kind(st.Mode())}
	}
	return nil
}

// Open opens path for reading when it is a regular file (following
// symlinks) and returns it with its size. what names the file's role in
// messages ("question set", "dataset").
func Open(path, what string) (*os.File, int64, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", what, err)
	}
	size, err := Regular(f, path, what)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// Regular checks that an opened file is a regular file and returns its
// size: the check made on the file itself, so the path cannot be swapped
// after it (for callers that open for writing, e.g. a fixture appender).
func Regular(f *os.File, path, what string) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return 0, &NotRegularError{What: what, Path: path, Kind: kind(st.Mode())}
	}
	return st.Size(), nil
}

// ReadFile reads the regular file at path, refusing one larger than max
// bytes (setting names the flag that raises it).
func ReadFile(path, what string, max int64, setting string) ([]byte, error) {
	f, size, err := Open(path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := &TooLargeError{What: what, Path: path, Limit: max, Setting: setting}
	if size > max {
		return nil, tooLarge
	}
	// The size may grow while reading: read at most max+1 bytes.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge
	}
	return data, nil
}

// CapReader returns a reader that reads r and fails with err (once, and
// on every later read) after max bytes: for decompressed streams, whose
// size the file does not tell.
func CapReader(r io.Reader, max int64, err error) io.Reader {
	return &capReader{r: r, left: max, err: err}
}

type capReader struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a stream of exactly max bytes from a longer
		// one.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, c.err
		}
		if err == nil {
			return 0, nil
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// FormatSize spells n bytes the way the size flags accept them: "16MB",
// "1.5GB", "512KB" or "100B" (binary multiples, 1 KB = 1024 bytes).
func FormatSize(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + units[i]
}

// ParseSize reads a size such as "16MB", "1.5GB", "64KiB", "100" (bytes).
// Multiples are binary (1 KB = 1024 bytes).
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 || f*float64(mult) >= 1<<62 {
		return 0, fmt.Errorf("size %q: want a positive size such as 16MB, 512KB or 2GB", s)
	}
	return int64(f * float64(mult)), nil
}

// Size is a byte count usable as a command-line flag value (pflag.Value):
// it parses and prints with ParseSize and FormatSize.
type Size int64

// String formats the size.
func (s *Size) String() string { return FormatSize(int64(*s)) }

// Set parses v.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// Type names the flag's value in help text.
func (s *Size) Type() string { return "size" }

// IsNotRegular reports whether err is (or wraps) a NotRegularError.
func IsNotRegular(err error) bool {
	var e *NotRegularError
	return errors.As(err, &e)
}
