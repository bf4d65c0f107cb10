package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/htmlreport"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/store"
)

func newShowCmd(a *app) *cobra.Command {
	var asJSON, asMarkdown bool
	var stats statFlags
	var htmlPath string
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one stored run's report",
		Long: `show prints a stored run: what was asked of what (question set, dataset,
provider, requested and resolved models), its status and cost, and per
question n, accuracy, ECE, Brier and errors with 95% bootstrap intervals.
Beside accuracy stands the top prob (the mean probability each answer gives
its decision; overconfidence is the gap), beside ECE its noise floor. Intervals are seeded (--seed,
default 1, printed) from --bootstrap resamples; a proportion with few
successes or failures gets the Wilson interval and says so.
A question with min_confidence also shows the share of answers routed to
uncertain (confidence under it) and the accuracy of the rest.
RUN is a run id, a unique prefix of one, latest or latest~N.`,
		Example: `  jevlab show latest
  jevlab show r-20261202 --json
  jevlab show latest --seed 7 --bootstrap 5000
  jevlab show latest --html run.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			db, err := a.dbReadOnly()
			if err != nil {
				return usageErr(err)
			}
			run, err := db.ResolveRun(ctx, args[0])
			if err != nil {
				return usageErr(err)
			}
			opt := stats.options()
			if asMarkdown && htmlPath == "" {
				return a.showMarkdown(ctx, db, run, opt) // report.go
			}
			full, err := loadRunReport(ctx, db, run, opt, nil, questionset.Gate{})
			if err != nil {
				return err
			}
			if htmlPath != "" { // reportcmd.go
				if err := a.writeHTML(ctx, db, &htmlreport.Input{Runs: []*report.RunReport{full}, Generated: time.Now()}, htmlPath); err != nil {
					return err
				}
				if asMarkdown {
					return report.WriteMarkdown(a.stdout, full)
				}
			}
			rep, err := summaryOf(ctx, db, full)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(rep)
			}
			setPath := run.SetPath
			if st, err := runner.ParseSettings(run); err == nil && st.Set != "" {
				setPath = st.Set // absolute: works from any directory
			}
			rep.Resume = a.resumeCommand(setPath, run.ID, cmd.Flags().Changed)
			renderRunReport(a.stdout, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run and its per-question metrics as JSON")
	cmd.Flags().BoolVar(&asMarkdown, "markdown", false, "print the full report (every metric, reliability, confusion) as Markdown")
	cmd.Flags().StringVar(&htmlPath, "html", "", "also write the report as one self-contained HTML file to PATH (see jevlab report)")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown")
	bindStatFlags(cmd.Flags(), &stats)
	return cmd
}

// runReport is a stored run with its question set and per-question
// metrics: what eval and show print.
type runReport struct {
	Run       *store.Run                `json:"run"`
	Set       *questionset.Set          `json:"-"`
	Questions []*metrics.QuestionReport `json:"questions"`
	// Correct counts labelled first-repeat answers that were right, per
	// question id.
	Correct map[string]int `json:"-"`
	// Failed are the first few failed items, for the summary.
	Failed []store.ItemResult `json:"-"`
	// Resume is the command line that continues the run, as the caller
	// can write it (with the --db and --base-url it was given).
	Resume string `json:"-"`
	// Variants pairs each variant the run asked with its question.
	Variants []compare.VariantComparison `json:"variants,omitempty"`
	// Split and Holdout: the part of the dataset asked and, on test, the
	// ledger's count per question.
	Split   string               `json:"split,omitempty"`
	Holdout []report.HoldoutNote `json:"holdout,omitempty"`
	Costs   []report.CostFit     `json:"costs,omitempty"`
	// ChoiceCosts are the choices' cost-optimal cut-points.
	ChoiceCosts []report.ChoiceCostFit `json:"choice_costs,omitempty"`
}

// maxFailedShown is how many failed items a summary lists.
const maxFailedShown = 5

// defaultMetricOptions are the metric settings of eval's and show's
// summaries (seeded, so a report is reproducible).
func defaultMetricOptions() metrics.Options {
	return workbench.DefaultMetricOptions()
}

// summaryOf turns a computed report (report.Load: metrics computed once,
// with each question's threshold and min_confidence from the run's
// snapshot) into the summary eval and show print: per-question right
// counts and the first few failed items.
func summaryOf(ctx context.Context, db *store.DB, full *report.RunReport) (*runReport, error) {
	rep := &runReport{Run: full.Run, Set: full.Set, Questions: full.Questions, Correct: map[string]int{}, Variants: full.Variants, Split: full.Split, Holdout: full.Holdout, Costs: full.Costs, ChoiceCosts: full.ChoiceCosts}
	if full.Run.Errors > 0 {
		var err error
		if rep.Failed, err = db.FailedItems(ctx, full.Run.ID, maxFailedShown); err != nil {
			return nil, err
		}
	}
	for _, r := range full.Questions {
		if r.Accuracy.Defined() {
			rep.Correct[r.ID] = int(math.Round(r.Accuracy.Value * float64(r.Labelled)))
		}
	}
	return rep, nil
}

// esc escapes a one-line string from a file, the database or a server
// for the terminal (and keeps table columns aligned: the escaped form is
// what is measured).
func esc(s string) string { return termsafe.String(s) }

// renderRunReport prints a run's header and per-question summary table.
func renderRunReport(w io.Writer, rep *runReport) {
	r := rep.Run
	name := ""
	if n := runLabel(r); n != "" {
		name = " (" + esc(n) + ")"
	}
	fmt.Fprintf(w, "run %s%s  %s  %d/%d items  %d errors\n", r.ID, name, statusText(r), r.Done, r.Total, r.Errors)
	set := esc(r.SetName)
	if r.SetPath != "" {
		set += " (" + esc(r.SetPath) + ")"
	}
	fmt.Fprintf(w, "question set %s · dataset %s\n", set, esc(orDash(r.DatasetPath)))
	resolved := "?"
	if len(r.Models) > 0 {
		resolved = strings.Join(termsafe.Strings(r.Models), ", ")
		if len(r.Models) > 1 {
			resolved += " (mixed model versions)"
		}
	}
	dur := ""
	if !r.FinishedAt.IsZero() {
		dur = " · " + r.FinishedAt.Sub(r.StartedAt).Round(100*time.Millisecond).String()
	}
	fmt.Fprintf(w, "model %s → %s · %s · %s input tokens · $%.4f%s\n", esc(r.Model), resolved, orDash(r.ProviderKind), groupDigits(r.InputTokens), r.CostUSD, dur)
	if r.Repeat > 1 {
		fmt.Fprintf(w, "repeat %d (metrics use each item's first asking; repeats measure noise)\n", r.Repeat)
	}
	if r.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", esc(r.Reason))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(classTable(w, rep.Questions), 0, 0, 2, ' ', 0) // box.go
	fmt.Fprintln(tw, "question\ttype\tn\tanswered\taccuracy\tmean conf\tECE (noise floor)\tBrier\terrors")
	for _, q := range rep.Questions {
		if q.Box != nil {
			continue // renderBoxReports
		}
		acc := fmtEstimate(q.Accuracy)
		if q.Accuracy.Defined() {
			acc += fmt.Sprintf(" (%d/%d)", rep.Correct[q.ID], q.Labelled)
		}
		conf := "—"
		if q.MeanConfidence.Defined() {
			conf = fmt.Sprintf("%.3f", q.MeanConfidence.Value)
		}
		ece := fmtEstimate(q.ECE)
		if q.Noise.FloorDraws > 0 {
			ece += fmt.Sprintf(" (%.3f", q.Noise.ECEFloorMean)
			if q.Noise.ECEWithinFloor {
				ece += ", within"
			}
			ece += ")"
		}
		errs := 0
		var kinds []string
		for k, n := range q.Errors {
			errs += n
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		errText := fmt.Sprint(errs)
		if len(kinds) > 0 {
			errText += " (" + strings.Join(sortedStrings(kinds), ", ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", esc(q.ID), esc(string(q.Type)), q.N, q.Answered, acc, conf, ece, fmtEstimate(q.Brier), errText)
	}
	tw.Flush()
	renderBoxReports(w, rep.Questions) // box.go
	if len(rep.Questions) > 0 {
		fmt.Fprintf(w, "\n%s\n", summaryLegend(rep.Questions))
	}
	for _, q := range rep.Questions {
		if c := q.Selective.Cutpoint; c != nil {
			fmt.Fprintf(w, "%s cut-point %s\n", esc(q.ID), report.CutpointText(c))
		}
	}
	routed := false
	for _, q := range rep.Questions {
		if rt := q.Selective.Routing; rt != nil {
			if !routed {
				fmt.Fprintln(w)
				routed = true
			}
			fmt.Fprintf(w, "%s %s\n", esc(q.ID), rt)
		}
	}
	if lines := append(report.CostLines(rep.Costs), report.ChoiceCostLines(rep.ChoiceCosts)...); len(lines) > 0 {
		fmt.Fprintln(w)
		for _, l := range lines {
			fmt.Fprintln(w, esc(l))
		}
	}
	if len(rep.Holdout) > 0 {
		fmt.Fprintln(w)
		for _, h := range rep.Holdout {
			fmt.Fprintf(w, "%s\n", esc(h.Message))
		}
	}
	if len(rep.Variants) > 0 {
		fmt.Fprintln(w)
		_ = report.WriteVariantsText(w, rep.Variants)
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintf(w, "\nfailed items (%d", r.Errors)
		if r.Errors > len(rep.Failed) {
			fmt.Fprintf(w, ", first %d", len(rep.Failed))
		}
		fmt.Fprintln(w, "):")
		for _, it := range rep.Failed {
			rep := ""
			if r.Repeat > 1 {
				rep = fmt.Sprintf(" (repeat %d)", it.Repeat)
			}
			fmt.Fprintf(w, "  %s%s: %s\n", esc(it.ItemID), rep, esc(firstLine(it.ErrMsg, 160)))
		}
	}
	misses := 0
	for _, q := range rep.Questions {
		misses = max(misses, q.Errors["cache_miss"])
	}
	if misses > 0 {
		fmt.Fprintf(w, "\n%d items have no recorded answer: run again without --offline (with an API key) to record them\n", misses)
	}
	if r.Status == store.StatusInterrupted || r.Status == store.StatusRunning {
		resume := rep.Resume
		if resume == "" {
			resume = fmt.Sprintf("jevlab eval %s --resume %s", orDash(shellQuote(r.SetPath)), r.ID)
		}
		fmt.Fprintf(w, "\nnot finished: %d of %d items stored; continue with %s\n", r.Done, r.Total, esc(resume))
	}
}

// staleAfter is how long a running run may go without storing an item
// before it is shown as probably dead (killed without a chance to mark it).
const staleAfter = 10 * time.Minute

// statusText is the run's status, "running?" when it looks abandoned.
func statusText(r *store.Run) string {
	if r.Status == store.StatusRunning && time.Since(r.UpdatedAt) > staleAfter {
		return "running? (no progress since " + r.UpdatedAt.Local().Format("2006-01-02 15:04") + "; killed? resume it)"
	}
	return string(r.Status)
}

func fmtEstimate(e metrics.Estimate) string {
	if !e.Defined() {
		return "—"
	}
	s := fmt.Sprintf("%.3f", e.Value)
	if e.HasInterval() {
		s += fmt.Sprintf(" [%.3f, %.3f]", e.Lo, e.Hi)
	}
	return s + report.IntervalTag(e)
}

// summaryLegend says under the summary table what its figures are: which
// intervals (with B and the seed), what top prob and the noise
// floor are.
func summaryLegend(qs []*metrics.QuestionReport) string {
	c := qs[0].Conventions
	iv := fmt.Sprintf("95%% intervals: bootstrap percentile (B=%d, seed %d) unless marked Wilson (a proportion with under %d successes or failures)", c.Bootstrap, c.Seed, metrics.MinTailCount)
	if c.Bootstrap == 0 {
		iv = fmt.Sprintf("no intervals (--bootstrap 0; seed %d)", c.Seed)
	}
	return iv + fmt.Sprintf("\nmean conf: mean probability of the decided outcome (above accuracy: overconfident) · ECE (noise floor): the mean ECE of a perfectly calibrated model at this n (%d draws); within: ECE at most the floor's p95", c.NoiseFloorDraws)
}

func orDash(s string) string {
	if s == "" || s == "''" {
		return "—"
	}
	return s
}

func sortedStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// shortPath shows a dataset path by its last two elements.
func shortPath(p string) string {
	if p == "" {
		return "—"
	}
	dir := filepath.Base(filepath.Dir(p))
	if dir == "." || dir == "/" {
		return filepath.Base(p)
	}
	return filepath.Join(dir, filepath.Base(p))
}

// firstLine returns s's first line, cut to n runes.
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}
