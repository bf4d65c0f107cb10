package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/store"
)

// commit is the source commit, set at build time with
// -ldflags "-X main.commit=…" (make build does); otherwise read from the
// Go toolchain's VCS stamp when the build has one.
var commit = ""

// buildInfo is what the binary knows about its own build.
type buildInfo struct {
	Version   string // -ldflags version, else the module version, else "dev"
	Module    string // module path and version as the toolchain recorded them
	Commit    string // "" when unknown; "+dirty" when built from a modified tree
	GoVersion string
	Platform  string
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Commit: commit}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.Module = bi.Main.Path
		if v := bi.Main.Version; v != "" {
			b.Module += " " + v
			if b.Version == "dev" && v != "(devel)" {
				b.Version = v
			}
		}
		if b.GoVersion == "" {
			b.GoVersion = bi.GoVersion
		}
		if b.Commit == "" {
			var rev string
			dirty := false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" && dirty {
				rev += "+dirty"
			}
			b.Commit = rev
		}
	}
	return b
}

// versionString is the one-line version a run records and --version
// prints after "jevlab ": version, commit and Go version.
func versionString() string {
	b := readBuildInfo()
	c := b.Commit
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("%s (commit %s, %s)", b.Version, c, b.GoVersion)
}

func newVersionCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print jevlab's version, commit and Go version",
		Long: `version prints the version jevlab was built as (make build stamps it from
git describe), the source commit, the module as the Go toolchain recorded it,
and the Go version and platform. Every stored run records the same version
line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo()
			out := cmd.OutOrStdout()
			if asJSON {
				j, err := json.MarshalIndent(map[string]string{"version": b.Version, "commit": b.Commit, "module": b.Module, "go": b.GoVersion, "platform": b.Platform, "line": versionString()}, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", j)
				return nil
			}
			fmt.Fprintln(out, "jevlab", versionString())
			if b.Module != "" {
				fmt.Fprintln(out, "module  ", b.Module)
			}
			fmt.Fprintln(out, "platform", b.Platform)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}

func newManCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write man pages for jevlab and every command into DIR",
		Long: `man writes one roff man page per command (jevlab.1, jevlab-eval.1, …) into
DIR, generated from the commands' own help, so the pages always match the
binary. make man writes them into man/.`,
		Example: `  jevlab man /usr/local/share/man/man1
  man -l man/jevlab-eval.1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return usageErr(err)
			}
			root := cmd.Root()
			hdr := &doc.GenManHeader{Title: "JEVLAB", Section: "1", Source: "jevlab " + readBuildInfo().Version, Manual: "jevlab manual"}
			root.DisableAutoGenTag = true
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			n := 0
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".1") {
					n++
				}
				return nil
			})
			fmt.Fprintf(cmd.ErrOrStderr(), "jevlab: wrote %d man pages into %s\n", n, dir)
			return nil
		},
	}
}

// completeRuns completes stored run ids (with their name, set and status
// as descriptions), then latest and latest~1, from the database named by
// --db / $JEVLAB_DB. It never creates a database.
func (a *app) completeRuns(max int) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= max {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return a.runIDs(cmd.Context(), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func (a *app) runIDs(ctx context.Context, prefix string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	path := a.dbPath
	if path == "" {
		path = store.DefaultPath()
	}
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	db, err := a.db()
	if err != nil {
		return nil
	}
	runs, err := db.Runs(ctx, store.RunFilter{Limit: 500})
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range runs {
		if !strings.HasPrefix(r.ID, prefix) {
			continue
		}
		desc := r.SetName
		if r.Name != "" {
			desc = r.Name + " · " + desc
		}
		out = append(out, r.ID+"\t"+desc+" · "+string(r.Status))
	}
	for _, w := range []string{"latest", "latest~1"} {
		if len(runs) > 0 && strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}

// completeSetFiles completes question-set files (YAML or JSON).
func completeSetFiles(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeQuestionLabels completes --label QUESTION= from the question
// ids of the set named by the first argument.
func completeQuestionLabels(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	ids := questionIDs(args)
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id+"=", toComplete) || strings.HasPrefix(toComplete, id+"=") {
			out = append(out, id+"=")
		}
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

func questionIDs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	set, err := questionset.Load(args[0])
	if err != nil {
		return nil
	}
	return set.Questions.IDs()
}

// wireCompletion attaches completion functions to the commands under root.
func (a *app) wireCompletion(root *cobra.Command) {
	root.ValidArgsFunction = completeSetFiles
	for _, c := range root.Commands() {
		switch c.Name() {
		case "show":
			c.ValidArgsFunction = a.completeRuns(1)
		case "compare":
			c.ValidArgsFunction = a.completeRuns(2)
		case "ask", "eval", "lint":
			c.ValidArgsFunction = completeSetFiles
		}
		if c.Flags().Lookup("label") != nil {
			_ = c.RegisterFlagCompletionFunc("label", completeQuestionLabels)
		}
		if c.Flags().Lookup("resume") != nil {
			_ = c.RegisterFlagCompletionFunc("resume", a.completeRuns(1<<30))
		}
	}
}

// notACommand is the error for `jevlab WORD` where WORD is neither a
// subcommand nor an existing file.
func notACommand(root *cobra.Command, word string) error {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	msg := fmt.Sprintf("%q is neither a command nor a file", word)
	if root.SuggestionsMinimumDistance <= 0 {
		root.SuggestionsMinimumDistance = 2
	}
	if s := root.SuggestionsFor(word); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
	}
	msg += fmt.Sprintf("\ncommands: %s\nopen a question set with 'jevlab FILE', or see 'jevlab --help'", strings.Join(names, ", "))
	return usageErr(errors.New(msg))
}

// isMissingFile reports whether path names no file.
func isMissingFile(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}
