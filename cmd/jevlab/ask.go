package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/dialects"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/bars"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// barWidth is the width of every answer bar in cells.
const barWidth = 40

func newAskCmd(a *app) *cobra.Command {
	var stateArg string
	var asJSON bool
	var as string
	var variants []string
	cmd := &cobra.Command{
		Use:   "ask FILE",
		Short: "Send one request and draw each answer as bars",
		Long: `ask sends the question set's working state (or --state) to System One once and
draws each answer: a choice as its options sorted by probability with the chosen
one marked, a score as its levels in order with the expected score marked, a
noul as one bar with the set's threshold marked. It prints the requested and
resolved model, latency, tokens, cost and where the answers came from.

Answers come from recorded fixtures and the database when they match, so
--offline --fixtures FILE replays without a key.

--json prints the checked result; with --as standard-agents it is a
Standard Agents DecisionResult instead: {"model", "answers", "usage"}, a
noul as {"type": "boolean", "probability": p}, a score with its legend, a
confidence only where the provider sent one.

A question's variants (variants: {v2: {instructions: …}}) are asked in the
same request as their question, each under its derived id (queue~v2), and
drawn after the questions: every variant by default, --variants queue:v2 to
name some, --variants none for none.`,
		Example: `  jevlab ask --offline --fixtures recorded.jsonl triage.yaml
  jevlab ask triage.yaml --state '{"message":"Charged twice"}' --json
  jevlab ask triage.yaml --state @ticket.json
  jevlab ask triage.yaml --json --as standard-agents`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := variantsArgs(cmd, args, &variants)
			if err != nil {
				return usageErr(err)
			}
			if !cmd.Flags().Changed("variants") {
				variants = []string{"default"}
			}
			switch as {
			case "system-one":
			case "standard-agents":
				if !asJSON {
					return usageErr(errors.New("--as standard-agents shapes the JSON output: add --json"))
				}
			default:
				return usageErr(fmt.Errorf("--as %q: want system-one or standard-agents", as))
			}
			return a.ask(cmd.Context(), file, stateArg, asJSON, as, variants)
		},
	}
	cmd.Flags().StringVar(&as, "as", "system-one", "shape of --json: system-one (jevlab's checked result) or standard-agents (a Standard Agents DecisionResult)")
	bindVariantsFlag(cmd.Flags(), &variants)
	cmd.Flags().StringVar(&stateArg, "state", "", "state to send instead of the set's working state: JSON, or @PATH of a JSON file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checked result as JSON")
	return cmd
}

// askOutput is what ask --json prints: the checked result with the
// requested model and the provider mode.
type askOutput struct {
	RequestedModel string `json:"requested_model"`
	Mode           Mode   `json:"mode"`
	*provider.Result
	// Failed lists the questions that could not be answered while others
	// were (e.g. an edited question with no recorded answer, offline).
	Failed []askFailure `json:"failed,omitempty"`
}

// askFailure is one unanswered question of ask --json.
type askFailure struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Error string `json:"error"`
}

func (a *app) ask(ctx context.Context, path, stateArg string, asJSON bool, as string, variantSpecs []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := a.loadSet(path)
	if err != nil {
		return usageErr(err)
	}
	var state json.RawMessage
	if stateArg != "" {
		state, err = parseState(stateArg, int64(a.maxLineSize))
		if err != nil {
			return usageErr(err)
		}
	} else if len(set.State) == 0 {
		return usageErr(fmt.Errorf("%s has no working state (state:); pass one with --state JSON or --state @PATH", path))
	}
	var variants []questionset.VariantRef
	switch {
	case len(variantSpecs) == 1 && variantSpecs[0] == "default":
		variants = set.AllVariants()
	case len(variantSpecs) == 1 && variantSpecs[0] == "none":
	default:
		if variants, err = set.SelectVariants(variantSpecs); err != nil {
			return usageErr(fmt.Errorf("%s: %w", path, err))
		}
	}
	// Jev 1.14: the set's images, read and encoded now, checked before
	// anything is sent, with the Danger-Zone opt-ins (box.go).
	ropt, err := a.requestOptions(set)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", path, err))
	}
	ropt.Variants = variants
	req, err := workbench.RequestFor(set, state, a.model, ropt)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", path, err))
	}
	p, mode, err := a.provider(ctx, set)
	if err != nil {
		return err
	}
	// The workbench's ask: when some questions miss (an edited question
	// offline) the others still answer, and each miss is named.
	asked, err := workbench.Ask(ctx, p, req)
	if err != nil {
		return askError(err)
	}
	res := asked.Result
	if asJSON && as == "standard-agents" {
		out, err := dialects.StandardAgentsResult(req, res)
		if err != nil {
			return err
		}
		if _, err := a.stdout.Write(out); err != nil {
			return err
		}
	} else if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		out := askOutput{RequestedModel: req.Model, Mode: mode, Result: res}
		for _, id := range req.Questions.IDs() {
			if e, ok := asked.Failed[id]; ok {
				out.Failed = append(out.Failed, askFailure{ID: id, Kind: string(provider.KindOf(e)), Error: e.Error()})
			}
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		renderResult(a.stdout, set, req, res, mode)
		for _, id := range req.Questions.IDs() {
			if e, ok := asked.Failed[id]; ok {
				fmt.Fprintf(a.stdout, "\n%s: not answered: %s\n", termsafe.String(id), termsafe.String(workbench.DescribeError(e)))
			}
		}
	}
	if len(asked.Failed) > 0 {
		ids := make([]string, 0, len(asked.Failed))
		var first error
		for _, id := range req.Questions.IDs() {
			if e, ok := asked.Failed[id]; ok {
				ids = append(ids, id)
				if first == nil {
					first = e
				}
			}
		}
		return askError(fmt.Errorf("%d of %d questions not answered (%s): %w", len(ids), len(req.Questions), strings.Join(ids, ", "), first))
	}
	return nil
}

// askError maps a provider failure to an exit code: what the user must fix
// (a miss offline, a rejected or invalid request, a bad key) is 2; the
// server failing is 1.
func askError(err error) error {
	switch provider.KindOf(err) {
	case provider.KindMiss, provider.KindInvalid, provider.KindRejected, provider.KindAuth:
		return usageErr(err)
	}
	return failErr(err)
}

// parseState reads --state: inline JSON or @PATH of a JSON file. The state
// must be a JSON string, object or array. A state file is read as a
// regular file of at most maxBytes (--max-line-size).
func parseState(arg string, maxBytes int64) (json.RawMessage, error) {
	data := []byte(arg)
	src := "--state"
	if strings.HasPrefix(arg, "@") {
		p := arg[1:]
		b, err := inputfile.ReadFile(p, "state file", maxBytes, "--max-line-size")
		if err != nil {
			return nil, fmt.Errorf("--state: %w", err)
		}
		data, src = b, p
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s: not valid JSON; a text state must be quoted as a JSON string, e.g. --state '\"My card was declined\"'", src)
	}
	st := provider.Compact(data)
	switch st[0] {
	case '"', '{', '[':
		return st, nil
	}
	return nil, fmt.Errorf("%s: the state must be a JSON string, object or array", src)
}

// renderResult prints the answers as bars with the call's accounting.
func renderResult(w io.Writer, set *questionset.Set, req *provider.Request, res *provider.Result, mode Mode) {
	resolved := res.Model
	if resolved == "" {
		resolved = "?"
	}
	if strings.Contains(resolved, "+") {
		resolved += "  (mixed: answers came from different model versions)"
	}
	title := set.Name
	if title == "" {
		title = set.Path
	}
	// Names, ids, labels and models come from the file and the server:
	// each is escaped on its own line (termsafe.String), so a newline in a
	// name cannot forge a line of output either.
	fmt.Fprintf(w, "%s\n", termsafe.String(title))
	fmt.Fprintf(w, "model     %s → %s\n", termsafe.String(req.Model), termsafe.String(resolved))
	fmt.Fprintf(w, "source    %s   (mode %s)\n", sourceSummary(res), mode)
	lat := "— (all from cache)"
	if res.Latency > 0 {
		lat = res.Latency.Round(100 * time.Microsecond).String()
	}
	fmt.Fprintf(w, "latency   %s   tokens %d in / %d out   cost $%.6f\n",
		lat, res.Usage.InputTokens, res.Usage.OutputTokens, res.CostUSD)
	if res.RequestID != "" {
		fmt.Fprintf(w, "request   %s\n", termsafe.String(res.RequestID))
	}
	for i := range res.Answers {
		an := &res.Answers[i]
		q, ok := req.Questions.Get(an.ID)
		if !ok {
			continue
		}
		fmt.Fprintln(w)
		if q.Type == provider.Box {
			renderBox(w, an, boxImage(req, q)) // box.go
			continue
		}
		renderAnswer(w, an, q, set.Threshold(an.ID))
	}
}

// sourceSummary says where the answers came from: "cache (file:line,
// recorded …)" for a single cached answer, else counts per source.
func sourceSummary(res *provider.Result) string {
	counts := map[provider.Source]int{}
	var order []provider.Source
	for _, an := range res.Answers {
		if counts[an.Provenance.Source] == 0 {
			order = append(order, an.Provenance.Source)
		}
		counts[an.Provenance.Source]++
	}
	if len(order) == 1 {
		s := string(order[0])
		pv := res.Answers[0].Provenance
		var details []string
		if order[0] == provider.SourceCache && pv.Origin != "" {
			same := true
			for _, an := range res.Answers {
				if an.Provenance.Origin != pv.Origin {
					same = false
				}
			}
			if same {
				details = append(details, pv.Origin)
			}
		}
		if !pv.RecordedAt.IsZero() {
			details = append(details, "recorded "+pv.RecordedAt.UTC().Format(time.RFC3339))
		}
		if len(details) > 0 {
			s += " (" + strings.Join(details, ", ") + ")"
		}
		return s
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%s %d", s, counts[s])
	}
	return strings.Join(parts, ", ")
}

// renderAnswer draws one answer from the workbench's answer view, so ask
// and the workbench's charts decide and mark the same outcomes: a header
// line with the decision, the provider's confidence and the top
// probability, then one bar per outcome.
func renderAnswer(w io.Writer, an *provider.Answer, q *provider.Question, threshold float64) {
	v := workbench.View(q, an, workbench.ViewOptions{Threshold: threshold, True: -1})
	fmt.Fprintf(w, "%s (%s)  %s  [%s %s]\n", termsafe.String(an.ID), termsafe.String(string(an.Type)),
		termsafe.String(v.Headline()), an.Provenance.Source, termsafe.String(an.Provenance.Model))
	switch v.Type {
	case provider.Noul:
		fmt.Fprintf(w, "    P(true) %s %s\n", bars.Bar(v.P, barWidth), prob(v.P))
		fmt.Fprintf(w, "            %s threshold %s\n", bars.Marker(v.Threshold, barWidth, '^'), prob(v.Threshold))
		return
	case provider.Score:
		width := labelWidth(len(v.Rows), func(i int) string { return v.Rows[i].Label })
		for _, r := range v.Rows {
			mark := "  "
			if r.Chosen {
				mark = workbench.MarkChosen + " "
			}
			fmt.Fprintf(w, "  %s%s %s %s\n", mark, pad(termsafe.String(r.Label), width), bars.Bar(r.P, barWidth), prob(r.P))
		}
		frac := 0.0
		if v.Levels > 1 {
			frac = v.Expected / float64(v.Levels-1)
		}
		fmt.Fprintf(w, "    %s %s  expected %s on 0..%d\n", pad("", width), bars.Marker(frac, barWidth, '●'),
			strconv.FormatFloat(v.Expected, 'f', -1, 64), v.Levels-1)
		return
	}
	width := labelWidth(len(v.Rows), func(i int) string { return v.Rows[i].Label })
	for _, r := range v.Rows {
		mark := " "
		if r.Chosen {
			mark = workbench.MarkChosen
		}
		fmt.Fprintf(w, "  %s %s %s %s\n", mark, pad(termsafe.String(r.Label), width), bars.Bar(r.P, barWidth), prob(r.P))
	}
	if f := v.Folded; f != nil {
		fmt.Fprintf(w, "    … %d more options under %s each (largest %s)\n", len(f.Rows), prob(workbench.FoldBelow), prob(f.Max))
	}
}

// prob formats a probability as every screen and report does.
func prob(p float64) string { return workbench.Prob(p) }

// labelWidth is the widest of n labels in runes, capped at 40.
func labelWidth(n int, label func(int) string) int {
	w := 0
	for i := 0; i < n; i++ {
		if l := utf8.RuneCountInString(label(i)); l > w {
			w = l
		}
	}
	if w > 40 {
		w = 40
	}
	return w
}

// pad left-aligns s in width runes, cutting it with … when longer.
func pad(s string, width int) string {
	s = termsafe.String(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r == '\r' {
			return ' '
		}
		return r
	}, s))
	n := utf8.RuneCountInString(s)
	if n > width {
		r := []rune(s)
		return string(r[:width-1]) + "…"
	}
	return s + strings.Repeat(" ", width-n)
}
