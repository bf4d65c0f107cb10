package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// est formats an estimate as "0.842 [0.806, 0.876]" ("—" when
// undefined), naming an interval that is not the bootstrap's: "1 [0.7225,
// 1] Wilson", "1 (no interval: every resample agrees)".
func est(e metrics.Estimate) string {
	if !e.Defined() {
		return "—"
	}
	if !e.HasInterval() {
		return fmt.Sprintf("%.4g", e.Value) + IntervalTag(e)
	}
	return fmt.Sprintf("%.4g [%.4g, %.4g]", e.Value, e.Lo, e.Hi) + IntervalTag(e)
}

// IntervalTag is what a figure's text carries after its interval to say
// which it is: "" for the bootstrap (the stated default), " Wilson",
// " Newcombe", or " (no interval: every resample agrees)".
func IntervalTag(e metrics.Estimate) string {
	switch e.Method {
	case metrics.IntervalWilson:
		return " Wilson"
	case metrics.IntervalNewcombe:
		return " Newcombe"
	case metrics.IntervalCollapsed:
		return " (no interval: every resample agrees)"
	case metrics.IntervalUnreliable:
		return " (no interval: too few errors or successes)"
	}
	return ""
}

// ECEFloorText is the ECE's noise floor as every output states it:
// "floor 0.0198 (p95 0.092, 1000 draws): within it" — within means the ECE
// is at most the floor's p95, indistinguishable from a perfectly
// calibrated model at this n. "floor —" when none was drawn.
func ECEFloorText(q *metrics.QuestionReport) string {
	nz := q.Noise
	if nz.FloorDraws == 0 {
		return "floor —"
	}
	s := fmt.Sprintf("floor %.3g (p95 %.3g, %d draws)", nz.ECEFloorMean, nz.ECEFloorP95, nz.FloorDraws)
	if nz.ECEWithinFloor {
		return s + ": within it, indistinguishable from perfect calibration at this n"
	}
	return s + ": above it"
}

// MeanConfidenceText is the mean top prob (the probability each answer
// gives its decision; JSON mean_confidence) beside the accuracy and their
// gap: "top prob 0.912 [0.9, 0.92] · gap +0.134
// [+0.1, +0.17] (overconfident)".
func MeanConfidenceText(q *metrics.QuestionReport) string {
	if !q.MeanConfidence.Defined() {
		return "top prob —"
	}
	s := "top prob " + est(q.MeanConfidence)
	o := q.Overconfidence
	if !o.Defined() {
		return s
	}
	g := fmt.Sprintf(" · gap %+.3g", o.Value) + IntervalTag(o)
	if o.HasInterval() {
		g += fmt.Sprintf(" [%+.3g, %+.3g]", o.Lo, o.Hi)
		switch {
		case o.Lo > 0:
			g += " (overconfident)"
		case o.Hi < 0:
			g += " (underconfident)"
		}
	}
	return s + g
}

// CutpointText is the cut-point line: whether the target was reached (on
// the held-out one-sided 97.5% lower bound) first, in plain words.
func CutpointText(c *metrics.Cutpoint) string {
	head := fmt.Sprintf("REACHED: confidence >= %.3g gives accuracy >= %.3g", c.Cutpoint, c.Target)
	if !c.Reached {
		head = fmt.Sprintf("NOT REACHED: target accuracy %.3g not shown on held-out items (do not load this cut-point); best fitted cut confidence >= %.3g", c.Target, c.Cutpoint)
	}
	return fmt.Sprintf("%s — fitted on %d (coverage %.3g), held out %d: accuracy %.3g, one-sided %.1f%% lower bound %.3g %s %.3g, coverage %.3g (seed %d)",
		head, c.FitN, c.FitCoverage, c.HoldoutN, c.HoldoutAccuracy, 100*c.HoldoutAccuracyLoConfidence, c.HoldoutAccuracyLo, map[bool]string{true: ">=", false: "<"}[c.Reached], c.Target, c.HoldoutCoverage, c.Seed)
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.4g", v)
}

// WriteJSON writes v (a *RunReport or *compare.Comparison) as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Conventions returns the one-line statement of how the numbers were made
// (for one question; ConventionsOf states a whole report's).
func Conventions(c metrics.Conventions) string {
	boot := intervalsText(c, c.Resampling)
	return fmt.Sprintf("%s; ECE over %d bins (equal-width (lo,hi] and equal-mass, ties never split), MCE over bins with n>=%d, noise floor from %d perfectly calibrated draws; log loss clipped at ε=%g; Brier %s; latency nearest-rank; metrics use each item's first repeat",
		boot, c.Bins, c.MinBinCount, c.NoiseFloorDraws, c.EpsilonLogLoss, c.Brier)
}

// BrierConventions explains Brier for every question type in qs, e.g.
// "Brier: nouls binary (p−y)², range 0–1; choice and score summed over the
// K options or levels, range 0–2".
func BrierConventions(qs []*metrics.QuestionReport) string {
	var noul, multi []string
	for _, q := range qs {
		if q.Box != nil {
			continue // no Brier (BoxConventions)
		}
		if q.Noul != nil {
			noul = append(noul, q.ID)
		} else {
			multi = append(multi, q.ID)
		}
	}
	var parts []string
	if len(noul) > 0 {
		parts = append(parts, "binary (p−y)² for nouls, range 0–1 ("+strings.Join(noul, ", ")+")")
	}
	if len(multi) > 0 {
		parts = append(parts, "Σₖ (pₖ−yₖ)² summed over the K options or levels for choice and score, range 0–2 ("+strings.Join(multi, ", ")+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Brier: " + strings.Join(parts, "; ")
}

// intervalsText states the intervals of c; little, when set, is a bag of
// little bootstraps some question used.
func intervalsText(c metrics.Conventions, little *metrics.Resampling) string {
	if c.Bootstrap == 0 {
		return fmt.Sprintf("no intervals (seed %d)", c.Seed)
	}
	boot := fmt.Sprintf("95%% intervals: bootstrap percentile (B=%d, seed %d), Wilson for a proportion with under %d successes or failures, Newcombe for an AUROC with a class under %d or at 0 or 1, none where every resample agrees", c.Bootstrap, c.Seed, metrics.MinTailCount, metrics.MinTailCount)
	if little != nil {
		boot += "; " + LittleText(little)
	}
	return boot
}

// LittleText states a bag of little bootstraps in one clause.
func LittleText(r *metrics.Resampling) string {
	return fmt.Sprintf("over %d labelled items estimated by the %s (Poisson-weighted to n, recentred; --exact-bootstrap for the ordinary one)",
		metrics.DefaultExactBootstrapMax, LittleClause(r))
}

// LittleClause names a bag of little bootstraps in a few words, as the
// text reports and the workbench's headers show it.
func LittleClause(r *metrics.Resampling) string {
	return fmt.Sprintf("bag of little bootstraps: %d subsets of %d items", r.Subsets, r.SubsetSize)
}

// ConventionsOf states a report's conventions: the first question's
// (intervals, seed, bins: the same for every question of a report) with
// Brier explained per question type, and the decision confidence.
func ConventionsOf(qs []*metrics.QuestionReport) string {
	if len(qs) == 0 {
		return ""
	}
	c := qs[0].Conventions
	var little *metrics.Resampling
	for _, q := range qs {
		if q.Conventions.Resampling != nil {
			little = q.Conventions.Resampling
		}
	}
	boot := intervalsText(c, little)
	return fmt.Sprintf("%s; ECE over %d bins (equal-width (lo,hi] and equal-mass, ties never split), MCE over bins with n>=%d, noise floor from %d perfectly calibrated draws; log loss clipped at ε=%g; %s; top prob = the probability each answer gives its decision (JSON mean_confidence; confidence is the provider's own field) (a noul's p, or 1−p when decided false at its threshold); latency nearest-rank; metrics use each item's first repeat",
		boot, c.Bins, c.MinBinCount, c.NoiseFloorDraws, c.EpsilonLogLoss, BrierConventions(qs))
}

// UsageNote says, once per report, that tokens and cost are per request
// only when the questions' usage could not be attributed ("" otherwise).
func UsageNote(rep *RunReport) string {
	for _, q := range rep.Questions {
		if q.UsagePerRequest {
			s := "tokens and cost are reported per request (every question of an item at once), so per question they are —"
			if r := rep.Run; r != nil {
				s += fmt.Sprintf("; the run's total: %d in · %d out · $%.4f", r.InputTokens, r.OutputTokens, r.CostUSD)
			}
			return s
		}
	}
	return ""
}

// WriteText writes the full human-readable report of a run.
func WriteText(w io.Writer, rep *RunReport) error {
	b := &strings.Builder{}
	if r := rep.Run; r != nil {
		name := ""
		if r.Name != "" {
			name = " (" + r.Name + ")"
		}
		fmt.Fprintf(b, "run %s%s · %s · %d/%d items · %d errors\n", r.ID, name, r.Status, r.Done, r.Total, r.Errors)
		fmt.Fprintf(b, "question set %s · dataset %s · model %s → %s\n", r.SetName, dash(r.DatasetPath), r.Model, dash(strings.Join(r.Models, ", ")))
	}
	if len(rep.Questions) > 0 {
		fmt.Fprintf(b, "conventions: %s\n", ConventionsOf(rep.Questions))
	}
	if HasBox(rep.Questions) {
		fmt.Fprintf(b, "%s\n", BoxConventions)
	}
	if u := UsageNote(rep); u != "" {
		fmt.Fprintf(b, "%s\n", u)
	}
	for _, q := range rep.Questions {
		b.WriteString("\n")
		writeQuestionText(b, q)
	}
	if lines := append(CostLines(rep.Costs), ChoiceCostLines(rep.ChoiceCosts)...); len(lines) > 0 {
		b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	}
	if lines := HoldoutLines(rep); len(lines) > 0 {
		b.WriteString("\nhold-out (split test)\n  " + strings.Join(lines, "\n  ") + "\n")
	}
	if lines := VariantLines(rep.Variants); len(lines) > 0 {
		b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	}
	if len(rep.Gates) > 0 {
		b.WriteString("\ngates\n")
		for _, g := range rep.Gates {
			mark := "PASS"
			if !g.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(b, "  %s  %-20s %-16s %s (%s)\n", mark, g.Question, g.Gate, g.Msg, g.Source)
		}
		if rep.Passed {
			b.WriteString("all gates passed\n")
		} else {
			b.WriteString("GATES FAILED\n")
		}
	}
	_, err := io.WriteString(w, termsafe.Text(b.String())) // names and messages from files and servers: escaped
	return err
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func writeQuestionText(b *strings.Builder, q *metrics.QuestionReport) {
	if q.Box != nil {
		writeBoxText(b, q) // box.go
		return
	}
	fmt.Fprintf(b, "question %s (%s) · %d items · %d answered · %d labelled", q.ID, q.Type, q.N, q.Answered, q.Labelled)
	if len(q.Errors) > 0 {
		fmt.Fprintf(b, " · errors %s", kinds(q.Errors))
	}
	b.WriteString("\n")
	row := func(name, val string) { fmt.Fprintf(b, "  %-20s %s\n", name, val) }
	acc := est(q.Accuracy)
	if q.Accuracy.Defined() {
		acc += fmt.Sprintf(" (%d/%d)", q.Correct, q.Labelled)
	}
	if q.Noul != nil {
		acc += fmt.Sprintf("  (p >= %.3g)", q.Conventions.Threshold)
	}
	row("accuracy", acc)
	row("", MeanConfidenceText(q))
	switch {
	case q.Choice != nil:
		row("macro-F1", est(q.Choice.MacroF1))
		if q.Choice.ArgmaxDisagree > 0 {
			row("", fmt.Sprintf("%d answers chose an option that is not the first highest probability", q.Choice.ArgmaxDisagree))
		}
	case q.Score != nil:
		s := q.Score
		row("exact (argmax)", est(s.ExactArgmax))
		row("within one (argmax)", est(s.WithinOneArgmax))
		row("exact (nearest)", est(s.ExactNearest))
		row("within one (nearest)", est(s.WithinOneNearest))
		row("rules disagree", fmt.Sprintf("%.3g of answers", s.Disagreement))
		row("MAE / RMSE of score", est(s.MAE)+" / "+est(s.RMSE))
		row("QWK", est(s.QWK))
		row("Spearman", est(s.Spearman))
		row("RPS", est(s.RPS))
	}
	row("Brier", est(q.Brier))
	if n := q.Noul; n != nil {
		row("", fmt.Sprintf("reliability %.4g · resolution %.4g · uncertainty %.4g · skill %s", n.Reliability, n.Resolution, n.Uncertainty, num(n.Skill.Value)))
	}
	ll := est(q.LogLoss)
	if q.NClipped > 0 {
		ll += fmt.Sprintf("  (%d answers gave the true outcome probability 0, clipped at ε)", q.NClipped)
	}
	row("log loss", ll)
	row("ECE equal-width", fmt.Sprintf("%s  (%d of %d bins used; MCE %s)", est(q.ECE), q.EffectiveBins, q.Conventions.Bins, num(q.MCE.Value)))
	row("", "noise "+ECEFloorText(q))
	row("ECE equal-mass", fmt.Sprintf("%s  (%d bins; MCE %s)", est(q.ECEMass), q.EffectiveBinsMass, num(q.MCEMass.Value)))
	if n := q.Noul; n != nil {
		row("AUROC", est(n.AUROC))
		row("AUPRC", est(n.AUPRC))
		if ap := n.AtPrecision; ap.Found {
			row(fmt.Sprintf("precision >= %.3g", ap.Target), fmt.Sprintf("at p >= %.3g (precision %.3g, recall %.3g, in sample)", ap.Threshold, ap.Precision, ap.Recall))
		} else if n.Positives > 0 {
			row(fmt.Sprintf("precision >= %.3g", ap.Target), "not reached at any threshold")
		}
	}
	if len(q.Reliability) > 0 {
		b.WriteString("  reliability (equal-width)   bin          n   confidence  observed\n")
		for _, bin := range q.Reliability {
			fmt.Fprintf(b, "                              (%.2f,%.2f] %5d   %.3f       %.3f\n", bin.Lo, bin.Hi, bin.N, bin.Confidence, bin.Observed)
		}
	}
	if len(q.ReliabilityMass) > 0 {
		ns := make([]string, len(q.ReliabilityMass))
		for i, bin := range q.ReliabilityMass {
			ns[i] = fmt.Sprint(bin.N)
		}
		row("equal-mass bin n", strings.Join(ns, " "))
	}
	if c := confusion(q); c != nil {
		writeConfusion(b, q.Classes, c)
	}
	sel := q.Selective
	row("selective", fmt.Sprintf("confidence = %s · AURC %s · E-AURC %s", sel.ConfidenceName, est(sel.AURC), num(sel.EAURC)))
	if c := sel.Cutpoint; c != nil {
		row("cut-point", CutpointText(c))
	} else if sel.Refused != "" {
		row("cut-point", "NOT REACHED: none fitted: "+sel.Refused)
	}
	if rt := sel.Routing; rt != nil {
		row("routing", rt.String())
	}
	if l := q.Latency; l.N > 0 {
		row("latency", fmt.Sprintf("p50 %.0f ms · p95 %.0f ms · p99 %.0f ms (n %d, nearest-rank)", l.P50, l.P95, l.P99, l.N))
	} else {
		row("latency", "— (n 0: no provider round trip; every answer came from a recording or the store)")
	}
	if q.UsagePerRequest {
		row("tokens / cost", "— (per request only)")
	} else {
		row("tokens / cost", fmt.Sprintf("%d in · %d out · $%.4f", q.Tokens.Input, q.Tokens.Output, q.CostUSD))
	}
	if nz := q.Noise; nz.Items > 0 {
		row("repeat noise", fmt.Sprintf("%d items with repeats: %d flipped (%.3g) · mean TV %.4g", nz.Items, nz.Flipped, nz.FlipRate, nz.MeanDelta))
	}
}

func confusion(q *metrics.QuestionReport) [][]int {
	switch {
	case q.Choice != nil:
		return q.Choice.Confusion
	case q.Score != nil:
		return q.Score.Confusion
	}
	return nil
}

func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func writeConfusion(b *strings.Builder, classes []string, c [][]int) {
	b.WriteString("  confusion (rows: label, columns: decision)\n")
	fmt.Fprintf(b, "    %-14s", "")
	for j := range c {
		fmt.Fprintf(b, " %6s", short(fmt.Sprint(j), 6))
	}
	b.WriteString("\n")
	for i, row := range c {
		fmt.Fprintf(b, "    %-14s", short(fmt.Sprintf("%d %s", i, classes[i]), 14))
		for _, v := range row {
			fmt.Fprintf(b, " %6d", v)
		}
		b.WriteString("\n")
	}
}

func kinds(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
