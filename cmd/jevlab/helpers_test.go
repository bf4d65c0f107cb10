package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/provider/standin"
)

// runJevlab runs jevlab in-process with args and no stdin and returns the
// exit code, stdout and stderr.
func runJevlab(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return captureRun(t, nil, args)
}

// runWithStdin runs jevlab in-process with stdin content (a file holding
// it, so "" is an empty stdin, not none) and returns the exit code, stdout
// and stderr.
func runWithStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return captureRun(t, &stdin, args)
}

// askRun and evalRun are runJevlab under the names other command tests
// (serve, canary, compare) still call.
func askRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return captureRun(t, nil, args)
}

// evalRun: see askRun.
func evalRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return captureRun(t, nil, args)
}

// captureRun runs jevlab with its output in temporary files, the way a
// terminal would see it, and stdin from a file holding *stdin (none when
// stdin is nil).
func captureRun(t *testing.T, stdin *string, args []string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	create := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	var in *os.File
	if stdin != nil {
		in = create("stdin")
		if _, err := in.WriteString(*stdin); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		defer in.Close()
	}
	out, errf := create("stdout"), create("stderr")
	code := run(args, in, out, errf)
	out.Close()
	errf.Close()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	return code, string(o), string(e)
}

// isolate keeps a test away from the caller's key, server and database.
func isolate(t *testing.T) {
	t.Setenv("TYPESAFE_API_KEY", "")
	t.Setenv("TYPESAFE_BASE_URL", "")
	t.Setenv("JEVLAB_DB", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
}

// clearEnv is isolate under the name the serve and canary tests call.
func clearEnv(t *testing.T) { isolate(t) }

// startStandin serves a stand-in System One built from cfg on loopback
// for the rest of the test and returns it (for its stats) and its URL.
func startStandin(t *testing.T, cfg standin.Config) (*standin.Server, string) {
	t.Helper()
	srv, err := standin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	return srv, hs.URL
}
