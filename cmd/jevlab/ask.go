package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/bars"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// barWidth is the width of every answer bar in cells.
const barWidth = 40

// maxChoiceLines caps how many options a choice answer lists; the rest
// (all at or below the last shown probability) are summarised.
const maxChoiceLines = 12

func newAskCmd(a *app) *cobra.Command {
	var stateArg string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ask FILE",
		Short: "Send one request and draw each answer as bars",
		Long: `ask sends the question set's working state (or --state) to System One once and
draws each answer: a choice as its options sorted by probability with the chosen
one marked, a score as its levels in order with the expected score marked, a
noul as one bar with the set's threshold marked. It prints the requested and
resolved model, latency, tokens, cost and where the answers came from.

Answers come from recorded fixtures and the database when they match, so
--offline --fixtures FILE replays without a key.`,
		Example: `  jevlab ask --offline --fixtures recorded.jsonl triage.yaml
  jevlab ask triage.yaml --state '{"message":"Charged twice"}' --json
  jevlab ask triage.yaml --state @ticket.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.ask(cmd.Context(), args[0], stateArg, asJSON)
		},
	}
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
}

func (a *app) ask(ctx context.Context, path, stateArg string, asJSON bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := questionset.Load(path)
	if err != nil {
		return usageErr(err)
	}
	var state json.RawMessage
	if stateArg != "" {
		state, err = parseState(stateArg)
		if err != nil {
			return usageErr(err)
		}
	} else if len(set.State) == 0 {
		return usageErr(fmt.Errorf("%s has no working state (state:); pass one with --state JSON or --state @PATH", path))
	}
	req := set.Request(state)
	if a.model != "" {
		req.Model = a.model
	}
	if req.Model == "" {
		req.Model = provider.DefaultModel
	}
	if err := req.Validate(); err != nil {
		return usageErr(fmt.Errorf("%s: %w", path, err))
	}
	p, mode, err := a.provider(ctx, set)
	if err != nil {
		return err
	}
	res, err := p.Ask(ctx, req)
	if err != nil {
		return askError(err)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(askOutput{RequestedModel: req.Model, Mode: mode, Result: res})
	}
	renderResult(a.stdout, set, req, res, mode)
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
// must be a JSON string, object or array.
func parseState(arg string) (json.RawMessage, error) {
	data := []byte(arg)
	src := "--state"
	if strings.HasPrefix(arg, "@") {
		p := arg[1:]
		b, err := os.ReadFile(p)
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
		switch an.Type {
		case provider.Choice:
			renderChoice(w, an, q)
		case provider.Score:
			renderScore(w, an, q)
		case provider.Noul:
			renderNoul(w, an, set.Threshold(an.ID))
		}
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

// answerHeader prints "id (type)" with confidence and, when the answers
// of one result came from different places, the answer's own source.
func answerHeader(w io.Writer, an *provider.Answer, extra string) {
	fmt.Fprintf(w, "%s (%s)", termsafe.String(an.ID), termsafe.String(string(an.Type)))
	if extra != "" {
		fmt.Fprintf(w, "  %s", extra)
	}
	if an.HasConfidence {
		fmt.Fprintf(w, "  confidence %s", prob(an.Confidence))
	}
	fmt.Fprintf(w, "  [%s %s]\n", an.Provenance.Source, termsafe.String(an.Provenance.Model))
}

func renderChoice(w io.Writer, an *provider.Answer, q *provider.Question) {
	answerHeader(w, an, "chose "+termsafe.String(an.Choice))
	idx := make([]int, len(q.Options))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return an.Probs[idx[x]] > an.Probs[idx[y]] })
	// Long lists show the options with any probability (up to
	// maxChoiceLines, the chosen one always) and summarise the rest.
	shown := idx
	if len(idx) > maxChoiceLines {
		shown = nil
		for _, i := range idx {
			if len(shown) < maxChoiceLines && an.Probs[i] > 0 {
				shown = append(shown, i)
			}
		}
		if chosen := q.OptionIndex(an.Choice); chosen >= 0 && !contains(shown, chosen) {
			if len(shown) == maxChoiceLines {
				shown = shown[:maxChoiceLines-1]
			}
			shown = append(shown, chosen)
		}
	}
	width := labelWidth(len(shown), func(k int) string { return q.Options[shown[k]].Label })
	for _, i := range shown {
		mark := " "
		if q.Options[i].Label == an.Choice {
			mark = "▶"
		}
		fmt.Fprintf(w, "  %s %s %s %s\n", mark, pad(q.Options[i].Label, width), bars.Bar(an.Probs[i], barWidth), prob(an.Probs[i]))
	}
	rest, max := 0, 0.0
	for _, i := range idx {
		if !contains(shown, i) {
			rest++
			if an.Probs[i] > max {
				max = an.Probs[i]
			}
		}
	}
	if rest > 0 {
		fmt.Fprintf(w, "    … %d more options, each %s or less\n", rest, prob(max))
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func renderScore(w io.Writer, an *provider.Answer, q *provider.Question) {
	n := len(q.Levels)
	answerHeader(w, an, fmt.Sprintf("expected %s of 0..%d", strconv.FormatFloat(an.Score, 'f', -1, 64), n-1))
	near := int(an.Score + 0.5)
	names := make([]string, n)
	for i, l := range q.Levels {
		names[i] = fmt.Sprintf("%d %s", i, provider.Text(l))
	}
	width := labelWidth(n, func(i int) string { return names[i] })
	for i := range q.Levels {
		mark := ""
		if i == near {
			mark = "  ← expected " + strconv.FormatFloat(an.Score, 'f', -1, 64)
		}
		fmt.Fprintf(w, "    %s %s %s%s\n", pad(names[i], width), bars.Bar(an.Probs[i], barWidth), prob(an.Probs[i]), mark)
	}
	frac := 0.0
	if n > 1 {
		frac = an.Score / float64(n-1)
	}
	fmt.Fprintf(w, "    %s %s  scale 0..%d\n", pad("", width), bars.Marker(frac, barWidth, '●'), n-1)
}

func renderNoul(w io.Writer, an *provider.Answer, threshold float64) {
	verdict := "false"
	if an.P >= threshold {
		verdict = "true"
	}
	answerHeader(w, an, fmt.Sprintf("P(true) %s → %s at threshold %s", prob(an.P), verdict, prob(threshold)))
	fmt.Fprintf(w, "    P(true) %s %s\n", bars.Bar(an.P, barWidth), prob(an.P))
	fmt.Fprintf(w, "            %s threshold %s\n", bars.Marker(threshold, barWidth, '^'), prob(threshold))
}

// prob formats a probability with at least two decimals (Jev's precision)
// and at most four (float noise such as 0.29000000000000004 shows as 0.29).
func prob(p float64) string {
	s := strconv.FormatFloat(p, 'f', -1, 64)
	if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 > 4 {
		s = strings.TrimRight(strconv.FormatFloat(p, 'f', 4, 64), "0")
	}
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		s += "."
		dot = len(s) - 1
	}
	for len(s)-dot-1 < 2 {
		s += "0"
	}
	return s
}

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
