// Command jevlab is a terminal workbench for designing and evaluating
// question sets for System One decision models (TypeSafe's Jev and every
// server that speaks POST /v1/systemone).
//
// main only parses flags and wires the packages together; every command's
// work lives in the packages under provider/, evals/, store/ and tui/.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/systemone"
)

// Exit codes: 0 ok, 1 a failed gate or regression, 2 usage or input errors.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitInternal = 3
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks err as a usage or input error (exit 2).
func usageErr(err error) error { return &exitError{code: exitUsage, err: err} }

// failErr marks err as a failed gate or regression (exit 1).
func failErr(err error) error { return &exitError{code: exitFailed, err: err} }

// gcPercent is jevlab's garbage-collection target unless $GOGC sets one.
// A large run's report and comparison hold compact records for whole
// questions; at Go's default of 100 the heap grows to twice what is live
// before a collection. At 25 peak RSS fell by a third (eval of 100k items
// 123 → 93 MB, compare 371 → 207 MB, a report computed afresh 91 → 66 MB)
// with no measurable change in wall time (make bench-scale).
const gcPercent = 25

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes jevlab with args and returns the exit code.
func run(args []string, stdin *os.File, stdout, stderr *os.File) int {
	a := newApp(stdin, stdout, stderr)
	root := newRootCmd(a)
	// The standard logger (net/http writes to it, quoting bytes a server
	// sent unasked) goes through the same redaction as every error.
	log.SetOutput(provider.LogWriter(a.stderr, func() []string {
		return []string{a.apiKey(), os.Getenv(systemone.EnvAPIKey)}
	}))
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.Execute()
	a.close()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			// Messages quote names, ids and servers' words: escaped.
			fmt.Fprintln(stderr, "jevlab:", termsafe.Text(ee.err.Error()))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "jevlab:", termsafe.Text(err.Error()))
	return exitUsage
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "jevlab [FILE]",
		Short:         "Design and evaluate question sets for System One decision models",
		Long:          "jevlab is a terminal workbench for question sets asked of System One decision models\n(TypeSafe's Jev and every server that speaks POST /v1/systemone).\n\nWith no FILE it opens the shipped Banking77 example offline, from recorded Jev answers.",
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	a.bindGlobalFlags(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
	})
	for _, c := range commands(a) {
		root.AddCommand(c)
	}
	root.AddCommand(newVersionCmd(a), newManCmd(a))
	root.Version = versionString()
	root.SetVersionTemplate("jevlab {{.Version}}\n")
	a.wireCompletion(root)
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && isMissingFile(args[0]) {
			return notACommand(root, args[0])
		}
		return a.runWorkbench(cmd, args)
	}
	return root
}
