package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dialects"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/inputfile"
)

func newImportCmd(a *app) *cobra.Command {
	var from, out string
	var force bool
	var fo folderImport
	cmd := &cobra.Command{
		Use:   "import --from DIALECT|FORMAT SOURCE... [-o OUT]",
		Short: "Turn questions written in another decision dialect into a question set",
		Long: `import reads questions written for another framework and writes a jevlab
question set (YAML) to OUT or stdout. DIALECT is one of:

  standard-agents    a DecisionQuestions request {model, context, questions}
  assistant-runtime  a POST /api/decisions body {state, profile, questions}
  noetic             a routeSwitch or decide node, or a DecideQuestions map
  playground         a TypeSafe Playground share link (or its bare payload)

Files other Jev tools keep on disk are imported into a folder, -o DIR
(DIR/questions.yaml with its dataset and recordings beside it; runs the
source recorded are stored in the database). FORMAT is one of:

  jev-packs   a pack folder: pack.yaml, cases.jsonl (kept as it is, read
              through a dataset: mapping), predictions.jsonl → fixtures
  jevassert   prediction files (F.jsonl with its F-rN.jsonl repeats,
              shuffled recordings) with their pack (--pack DIR, default
              the files' folder) → fixtures and one stored run per file,
              rounds as repeats
  jevl        jevkit JEVL v1 records (.jevl) → fixtures, labels as a
              dataset, a stored run
  jev-eval    a jev-eval cache (run --cache FILE) with --config and --data
              → set, dataset, fixtures and a stored run

What a format carries that jevlab cannot represent is printed as a note and
kept in the set's header; a file that breaks its own format's rules fails
with file:line.

SOURCE is a file (JSON, or the same document in YAML), - for stdin, or
(playground) the link itself. Import is
faithful or it fails naming what cannot be represented; whatever has no slot
of its own (a decide node's instructions, a runtime profile, routing) is
carried as the file's header notes, also printed to stderr. Noetic threshold
and minConfidence become the questions' threshold and min_confidence.`,
		Example: `  jevlab import --from jev-packs packs/citation-support -o citation
  jevlab import --from jevassert predictions.jsonl predictions-r2.jsonl --pack packs/demo-triage -o demo
  jevlab import --from noetic triage-node.json -o triage.yaml
  jevlab import --from playground 'https://console.typesafe.ai/playground#share/N4Ig…'
  cat body.json | jevlab import --from assistant-runtime - -o robot.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range folderFormats {
				if from == f {
					fo.from, fo.out, fo.force = from, out, force
					return a.importFolder(cmd, fo, args)
				}
			}
			if len(args) != 1 {
				return usageErr(fmt.Errorf("--from %s takes one SOURCE, not %d", from, len(args)))
			}
			d, err := dialects.ParseDialect(from)
			if err != nil {
				return usageErr(fmt.Errorf("--from: %w, or a format: %s", err, strings.Join(folderFormats, ", ")))
			}
			return a.importSet(cmd, d, args[0], out, force)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "source dialect (standard-agents, assistant-runtime, noetic, playground) or format (jev-packs, jevassert, jevl, jev-eval)")
	f.StringVarP(&out, "output", "o", "", "write the question set here (default stdout); a folder for a format")
	f.StringVar(&fo.pack, "pack", "", "jevassert: the recordings' pack folder (default: the first file's folder)")
	f.StringVar(&fo.config, "config", "", "jev-eval: the question config (JSON)")
	f.StringVar(&fo.data, "data", "", "jev-eval: the labelled rows (JSON Lines) the cache was made from")
	f.BoolVar(&fo.noRuns, "no-runs", false, "write the folder only; store no runs")
	f.BoolVar(&force, "force", false, "overwrite OUT if it exists")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

func (a *app) importSet(cmd *cobra.Command, d dialects.Dialect, source, out string, force bool) error {
	if out != "" && strings.EqualFold(filepath.Ext(out), ".json") {
		return usageErr(fmt.Errorf("-o %s: import writes YAML (with its notes as comments); name the file .yaml", out))
	}
	data, name, err := readSource(cmd.InOrStdin(), d, source, int64(a.maxSetSize))
	if err != nil {
		return usageErr(err)
	}
	im, err := dialects.Import(d, name, data)
	if err != nil {
		return usageErr(err)
	}
	if im.Set.Name == "" && name != "stdin" && name != "link" {
		base := filepath.Base(name)
		im.Set.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	body, err := im.Marshal(d, name)
	if err != nil {
		return err
	}
	for _, n := range im.Notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "jevlab: note:", n)
	}
	if out == "" {
		_, err := cmd.OutOrStdout().Write(body)
		return err
	}
	if !force {
		if _, err := os.Stat(out); err == nil {
			return usageErr(fmt.Errorf("%s already exists; use --force to overwrite it", out))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return usageErr(err)
		}
	}
	if err := questionset.WriteFileAtomic(out, body, 0o644); err != nil {
		return failErr(fmt.Errorf("write %s: %w", out, err))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "jevlab: wrote %s (%d questions from %s)\n", out, len(im.Set.Questions), d)
	return nil
}

// readSource reads SOURCE: "-" is stdin; for the playground dialect a link
// or a bare payload is the source itself; otherwise a file.
func readSource(stdin io.Reader, d dialects.Dialect, source string, maxBytes int64) ([]byte, string, error) {
	if source == "-" {
		data, err := io.ReadAll(io.LimitReader(stdin, maxBytes+1))
		if err != nil {
			return nil, "", fmt.Errorf("read stdin: %w", err)
		}
		if int64(len(data)) > maxBytes {
			return nil, "", &inputfile.TooLargeError{What: "stdin", Limit: maxBytes, Setting: "--max-set-size"}
		}
		return data, "stdin", nil
	}
	if d == dialects.Playground {
		if strings.Contains(source, "#share/") || strings.Contains(source, "://") {
			return []byte(source), "link", nil
		}
		// A bare payload is often longer than a file name may be.
		if _, err := os.Stat(source); err != nil && looksLikePayload(source) {
			return []byte(source), "link", nil
		}
	}
	// A file to import is someone else's: regular files only, size-capped
	// like a question set.
	data, err := inputfile.ReadFile(source, "file to import", maxBytes, "--max-set-size")
	if err != nil {
		return nil, "", fmt.Errorf("import: %w", err)
	}
	return data, source, nil
}

// looksLikePayload reports whether s is plausibly a bare lz-string payload.
func looksLikePayload(s string) bool {
	if len(s) < 8 {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}
