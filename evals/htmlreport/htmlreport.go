// Package htmlreport renders already-computed run reports and paired
// comparisons (evals/report, evals/compare) as one self-contained HTML
// file: inline CSS and SVG only, no script, nothing fetched (a strict
// Content-Security-Policy says so to the browser), light and dark colour
// schemes and a print style. It never computes a metric: every number it
// shows is a field of the structures it is given, and every headline
// number is also written at full precision in data-* attributes
// (data-run, data-q, data-m, data-v, data-lo, data-hi; data-cmp for
// comparisons) so a program can read the document back.
package htmlreport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/provider"
)

// CSP is the Content-Security-Policy every report carries: nothing may be
// loaded, no script may run; only the inline style sheet and data: images.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// DefaultFlipCharts is how many flipped items per question get their two
// distributions drawn; every other flip is listed as a table row.
const DefaultFlipCharts = 12

// Input is what a report shows. Runs are drawn over each other in every
// chart; Comparison, when set, is the paired comparison of Runs[1] (B)
// against Runs[0] (A).
type Input struct {
	// Title heads the page; "" gives one made from the runs.
	Title string
	Runs  []*report.RunReport
	// Comparison is compare.Compare of Runs[0] (A) and Runs[1] (B), or nil.
	Comparison *compare.Comparison
	// Answer returns run r's (index into Runs) first answer to question q
	// for item, or nil; it is used only to draw flipped items'
	// distributions. nil draws none (the flips are still listed).
	Answer func(r int, q, item string) *provider.Answer
	// History holds reports of the stored runs of the same question set,
	// the runs above included, for the accuracy and ECE over time. Fewer
	// than two leaves the section out.
	History []*report.RunReport
	// FlipCharts bounds the flipped items drawn per question (0 means
	// DefaultFlipCharts); the rest are table rows.
	FlipCharts int
	// Generated is printed in the footer (zero: left out, which keeps
	// the output reproducible).
	Generated time.Time
}

// Write renders in as one HTML document.
func Write(w io.Writer, in *Input) error {
	if len(in.Runs) == 0 {
		return fmt.Errorf("html report: no runs")
	}
	if in.Comparison != nil && len(in.Runs) != 2 {
		return fmt.Errorf("html report: a comparison needs exactly two runs, got %d", len(in.Runs))
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	d := &doc{w: bw, in: in}
	d.write()
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

type doc struct {
	w     *bufio.Writer
	in    *Input
	names []string // legend name of each run
	nid   int
}

func (d *doc) p(format string, a ...any) { fmt.Fprintf(d.w, format, a...) }
func (d *doc) s(s string)                { d.w.WriteString(s) }

// id returns a fresh element id for a chart.
func (d *doc) id() string {
	d.nid++
	return "c" + strconv.Itoa(d.nid)
}

func runName(i int, r *report.RunReport) string {
	side := sideLabel(i) + " "
	if r.Run == nil {
		return side + fmt.Sprintf("run %d", i+1)
	}
	s := side + r.Run.ID
	if r.Run.Name != "" {
		s += " (" + r.Run.Name + ")"
	}
	return s
}

func (d *doc) title() string {
	if d.in.Title != "" {
		return d.in.Title
	}
	set := ""
	if r := d.in.Runs[0].Run; r != nil {
		set = r.SetName
	}
	if d.in.Comparison != nil {
		return "jevlab compare · " + set
	}
	return "jevlab report · " + set
}

func (d *doc) write() {
	for i, r := range d.in.Runs {
		d.names = append(d.names, runName(i, r))
	}
	d.p(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="jevlab">
<title>%s</title>
<style>%s</style></head><body>
`, CSP, esc(d.title()), css)
	d.p("<header><h1>%s</h1>\n", esc(d.title()))
	d.runsTable()
	if c := d.in.Comparison; c != nil {
		d.p(`<p class="verdict v-%s" data-cmp="*" data-m="verdict" data-v="%s">Verdict: <strong>%s</strong>`, cls(c.Verdict), esc(c.Verdict), esc(strings.ToUpper(c.Verdict)))
		if len(c.Regressions) > 0 {
			d.p(" (%s)", esc(strings.Join(c.Regressions, ", ")))
		}
		d.p(" · B against baseline A · seed %d · %d paired resamples · alpha %s, Holm across questions</p>\n", c.Seed, c.Bootstrap, tick(c.Alpha))
		if len(c.NotComparable) > 0 {
			d.s(`<ul class="notcmp">`)
			for _, n := range c.NotComparable {
				state := `<span class="worse">blocks the verdict</span>`
				if n.Allowed {
					state = "accepted as changed (--allow-changed)"
				}
				d.p(`<li>not comparable: <strong>%s</strong> — %s · %s</li>`, esc(n.Question), esc(n.Reason), state)
			}
			d.s("</ul>\n")
		}
	}
	d.toc()
	d.s("</header>\n<main>\n")
	for qi, qid := range d.questionIDs() {
		d.question(qi, qid)
	}
	d.s("</main>\n<footer>\n")
	d.conventions()
	if !d.in.Generated.IsZero() {
		d.p("<p>Written by jevlab at %s.</p>\n", esc(d.in.Generated.UTC().Format(time.RFC3339)))
	}
	d.s("</footer>\n</body></html>\n")
}

func cls(s string) string { return strings.ReplaceAll(s, " ", "-") }

// questionIDs lists every question of every run, in the first run's
// order, then any the others add.
func (d *doc) questionIDs() []string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range d.in.Runs {
		for _, q := range r.Questions {
			if !seen[q.ID] {
				seen[q.ID] = true
				ids = append(ids, q.ID)
			}
		}
	}
	return ids
}

// qr returns each run's report of question id (nil where a run lacks it).
func (d *doc) qr(id string) []*metrics.QuestionReport {
	out := make([]*metrics.QuestionReport, len(d.in.Runs))
	for i, r := range d.in.Runs {
		for _, q := range r.Questions {
			if q.ID == id {
				out[i] = q
				break
			}
		}
	}
	return out
}

func (d *doc) runsTable() {
	d.s(`<div class="scroll"><table class="runs"><thead><tr><th></th><th>run</th><th>question set</th><th>model requested → resolved</th><th>provider</th><th>status</th><th>items</th><th>errors</th><th>started</th></tr></thead><tbody>` + "\n")
	for i, rr := range d.in.Runs {
		r := rr.Run
		if r == nil {
			continue
		}
		resolved := strings.Join(r.Models, ", ")
		if resolved == "" {
			resolved = "—"
		}
		d.p(`<tr data-run="%s"><td><span class="key s%d"></span> <strong>%s</strong></td><td><code>%s</code>%s</td><td>%s</td><td>%s → %s</td><td>%s</td><td>%s</td><td>%d/%d</td><td>%d</td><td>%s</td></tr>`+"\n",
			esc(r.ID), i%nSeries, sideLabel(i), esc(r.ID), nameSuffix(r.Name), esc(r.SetName), esc(r.Model), esc(resolved), esc(dash(r.ProviderKind)), esc(string(r.Status)),
			r.Done, r.Total, r.Errors, esc(r.StartedAt.UTC().Format("2006-01-02 15:04 UTC")))
	}
	d.s("</tbody></table></div>\n")
	if len(d.in.Runs) > 2 {
		d.s(`<p class="note">More than two runs: they are drawn over each other; paired tests compare two runs (jevlab compare A B).</p>` + "\n")
	}
}

func nameSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + esc(n) + ")"
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func (d *doc) toc() {
	d.s(`<nav><ul>`)
	for qi, id := range d.questionIDs() {
		t := ""
		for _, q := range d.qr(id) {
			if q != nil {
				t = string(q.Type)
				break
			}
		}
		d.p(`<li><a href="#q%d">%s</a> <span class="muted">%s</span></li>`, qi, esc(id), esc(t))
	}
	d.s("</ul></nav>\n")
}

// question writes one question's section.
func (d *doc) question(qi int, id string) {
	qs := d.qr(id)
	var first *metrics.QuestionReport
	for _, q := range qs {
		if q != nil {
			first = q
			break
		}
	}
	if first.Box != nil {
		d.boxQuestion(qi, id, qs, d.comparisonOf(id)) // box.go
		return
	}
	d.p(`<section class="question" id="q%d"><h2>%s <span class="muted">%s · %d outcomes</span></h2>`+"\n", qi, esc(id), esc(string(first.Type)), len(first.Classes))
	d.metricsTable(id, qs)
	var qc *compare.QuestionComparison
	if c := d.in.Comparison; c != nil {
		for i := range c.Questions {
			if c.Questions[i].ID == id {
				qc = &c.Questions[i]
			}
		}
	}
	if qc != nil {
		d.comparison(qc, qs)
	}
	d.reliability(id, qs, qc)
	d.coverage(qs)
	d.confusion(qs)
	d.absError(qs)
	d.history(id)
	if qc != nil {
		d.flips(qc, qs)
	}
	d.s("</section>\n")
}

// cell writes a <td> holding an estimate, its interval, and data-*
// attributes with the exact values.
func (d *doc) cell(run, q, m string, e metrics.Estimate) { d.cellWith(run, q, m, e, "") }

// estAttrs writes an estimate's data-v, data-lo, data-hi and data-int
// (its interval method) attributes.
func (d *doc) estAttrs(e metrics.Estimate) {
	d.p(` data-v="%s"`, full(e.Value))
	if e.HasInterval() {
		d.p(` data-lo="%s" data-hi="%s"`, full(e.Lo), full(e.Hi))
	}
	if e.Method != "" {
		d.p(` data-int="%s"`, esc(e.Method))
	}
}

// cellWith is cell with more markup after the estimate.
func (d *doc) cellWith(run, q, m string, e metrics.Estimate, extra string) {
	d.p(`<td class="num" data-run="%s" data-q="%s" data-m="%s"`, esc(run), esc(q), m)
	d.estAttrs(e)
	d.s(">")
	d.s(estText(e))
	d.s(extra)
	d.s("</td>")
}

// floor is the ECE noise floor under an ECE: the ECE a perfectly
// calibrated model gets at this n and these confidences.
func (d *doc) floor(run, id string, q *metrics.QuestionReport) string {
	if q.Noise.FloorDraws <= 0 {
		return `<br><span class="ci">no noise floor</span>`
	}
	within := ""
	if q.Noise.ECEWithinFloor {
		within = ` <span class="note">within noise</span>`
	}
	return fmt.Sprintf(`<br><span class="ci" data-run="%s" data-q="%s" data-m="noise.ece_floor_mean" data-v="%s">floor %s, p95 %s (%d draws)</span>%s`,
		esc(run), esc(id), full(q.Noise.ECEFloorMean), f3(q.Noise.ECEFloorMean), f3(q.Noise.ECEFloorP95), q.Noise.FloorDraws, within)
}

func estText(e metrics.Estimate) string {
	if !e.Defined() {
		return `<span class="muted">—</span>`
	}
	s := f3(e.Value)
	if e.HasInterval() {
		s += ` <span class="ci">[` + f3(e.Lo) + ", " + f3(e.Hi) + "]</span>"
	}
	return s + method(e)
}

func runID(r *report.RunReport) string {
	if r.Run == nil {
		return ""
	}
	return r.Run.ID
}

func (d *doc) metricsTable(id string, qs []*metrics.QuestionReport) {
	var first *metrics.QuestionReport
	for _, q := range qs {
		if q != nil {
			first = q
			break
		}
	}
	head := ""
	switch first.Type {
	case provider.Choice:
		head = "macro-F1"
	case provider.Noul:
		head = "AUROC"
	case provider.Score:
		head = "QWK"
	}
	d.p(`<div class="scroll"><table class="metrics"><thead><tr><th>run</th><th>n</th><th>labelled</th><th>accuracy</th><th>top prob <span class="muted">(mean p of the decision)</span></th><th>overconfidence gap <span class="muted">(top prob − acc.)</span></th><th>ECE equal-width <span class="muted">(noise floor)</span></th><th>ECE equal-mass</th><th>Brier</th><th>log loss</th><th>%s</th><th>AURC</th><th>errors</th></tr></thead><tbody>`+"\n", head)
	for i, q := range qs {
		if q == nil {
			d.p(`<tr><td>%s</td><td colspan="12" class="muted">question not in this run</td></tr>`+"\n", esc(d.names[i]))
			continue
		}
		run := runID(d.in.Runs[i])
		d.p(`<tr><td title="%s"><span class="key s%d"></span> <strong>%s</strong></td><td class="num">%d</td><td class="num">%d</td>`, esc(d.names[i]), i%nSeries, sideLabel(i), q.N, q.Labelled)
		d.cellWith(run, id, "accuracy", q.Accuracy, fmt.Sprintf(` <span class="ci">(%d/%d)</span>`, q.Correct, q.Labelled))
		d.cell(run, id, "mean_confidence", q.MeanConfidence)
		d.p(`<td class="num gap" data-run="%s" data-q="%s" data-m="overconfidence"`, esc(run), esc(id))
		d.estAttrs(q.Overconfidence)
		d.p(`>%s%s</td>`, signedEst(q.Overconfidence), gapWord(q.Overconfidence))
		d.cellWith(run, id, "ece", q.ECE, d.floor(run, id, q))
		d.cell(run, id, "ece_mass", q.ECEMass)
		d.cell(run, id, "brier", q.Brier)
		d.cell(run, id, "log_loss", q.LogLoss)
		switch {
		case q.Choice != nil:
			d.cell(run, id, "choice.macro_f1", q.Choice.MacroF1)
		case q.Noul != nil:
			d.cell(run, id, "noul.auroc", q.Noul.AUROC)
		case q.Score != nil:
			d.cell(run, id, "score.qwk", q.Score.QWK)
		default:
			d.s(`<td class="muted">—</td>`)
		}
		d.cell(run, id, "selective.aurc", q.Selective.AURC)
		errs := 0
		for _, n := range q.Errors {
			errs += n
		}
		d.p(`<td class="num">%d</td></tr>`+"\n", errs)
	}
	d.s("</tbody></table></div>\n")
	if q := first; q.Score != nil {
		d.s(`<div class="scroll"><table class="metrics"><thead><tr><th>run</th><th>exact (argmax)</th><th>within one (argmax)</th><th>MAE</th><th>RMSE</th><th>Spearman</th><th>RPS</th></tr></thead><tbody>`)
		for i, q := range qs {
			if q == nil || q.Score == nil {
				continue
			}
			run := runID(d.in.Runs[i])
			d.p(`<tr><td title="%s"><span class="key s%d"></span> <strong>%s</strong></td>`, esc(d.names[i]), i%nSeries, sideLabel(i))
			d.cell(run, id, "score.exact_argmax", q.Score.ExactArgmax)
			d.cell(run, id, "score.within_one_argmax", q.Score.WithinOneArgmax)
			d.cell(run, id, "score.mae", q.Score.MAE)
			d.cell(run, id, "score.rmse", q.Score.RMSE)
			d.cell(run, id, "score.spearman", q.Score.Spearman)
			d.cell(run, id, "score.rps", q.Score.RPS)
			d.s("</tr>\n")
		}
		d.s("</tbody></table></div>\n")
	}
	for i, q := range qs {
		if q != nil && q.Selective.Routing != nil {
			d.p(`<p class="note">%s: %s</p>`+"\n", esc(d.names[i]), esc(q.Selective.Routing.String()))
		}
	}
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// comparison writes the paired deltas, tests and verdict of a question.
func (d *doc) comparison(qc *compare.QuestionComparison, qs []*metrics.QuestionReport) {
	d.p(`<h3>B against A</h3><p class="verdict v-%s" data-cmp="%s" data-m="verdict" data-v="%s"><strong>%s</strong>`, cls(qc.Verdict), esc(qc.ID), esc(qc.Verdict), esc(strings.ToUpper(qc.Verdict)))
	if qc.Reason != "" {
		d.p(" — %s</p>\n", esc(qc.Reason))
		return
	}
	d.p(" — %s</p>\n", esc(qc.Why))
	d.p(`<p>%d items paired (%d labelled) · only in A %d · only in B %d`, qc.Paired, qc.PairedLabelled, qc.OnlyA, qc.OnlyB)
	if qc.LabelMismatch > 0 {
		d.p(" · %d items labelled differently (A's labels used)", qc.LabelMismatch)
	}
	d.s("</p>\n")
	d.s(`<div class="scroll"><table class="deltas"><thead><tr><th>metric</th><th>A</th><th>B</th><th>Δ = B − A [95% paired CI]</th><th>bootstrap p</th><th></th></tr></thead><tbody>` + "\n")
	for _, dl := range qc.Deltas {
		mark := ""
		if dl.Significant {
			if dl.Better {
				mark = `<span class="better">better</span>`
			} else {
				mark = `<span class="worse">worse</span>`
			}
		}
		d.p(`<tr><td>%s%s</td><td class="num">%s</td><td class="num">%s</td><td class="num" data-cmp="%s" data-m="delta.%s" data-a="%s" data-b="%s" data-v="%s" data-lo="%s" data-hi="%s" data-p="%s">%s</td><td class="num">%s</td><td>%s</td></tr>`+"\n",
			esc(dl.Metric), lowerNote(dl.LowerIsBetter), f3(dl.A.Value), f3(dl.B.Value), esc(qc.ID), esc(dl.Metric),
			full(dl.A.Value), full(dl.B.Value), full(dl.Delta.Value), full(dl.Delta.Lo), full(dl.Delta.Hi), full(dl.P),
			deltaText(dl.Delta), bootP(dl.P, dl.PBelow), mark)
	}
	d.s("</tbody></table></div>\n")
	m := qc.McNemar
	if qc.PairedLabelled > 0 {
		d.p(`<p data-cmp="%s" data-m="mcnemar" data-v="%s" data-holm="%s">Exact McNemar: %d right→wrong, %d wrong→right (both right %d, both wrong %d), p = %s (Holm %s). Brier: paired bootstrap p %s (Holm %s).</p>`+"\n",
			esc(qc.ID), full(m.P), full(m.PHolm), m.ARightBWrong, m.AWrongBRight, m.BothRight, m.BothWrong, pText(m.P), pText(m.PHolm), eqP(bootP(qc.BrierP, qc.BrierPBelow)), compare.FormatPHolm(qc.BrierPHolm, qc.BrierPBelow))
	}
	dr := qc.Drift
	d.p(`<p>Drift (no labels needed): %d of %d decisions changed (%s) · mean total variation %s · mean |Δp| %s · %d answers changed at all.`,
		dr.ChangedDecisions, dr.N, pct(dr.ChangedShare), f3(dr.MeanTV), f3(dr.MeanAbsDeltaP), dr.ChangedValues)
	if qc.Noise.Known {
		d.p(" Own noise (repeats): flip rate %s · mean TV %s.", pct(qc.Noise.FlipRate), f3(qc.Noise.MeanTV))
	}
	d.s("</p>\n")
}

func lowerNote(lower bool) string {
	if lower {
		return ` <span class="muted">↓</span>`
	}
	return ` <span class="muted">↑</span>`
}

func deltaText(e metrics.Estimate) string {
	if !e.Defined() {
		return `<span class="muted">—</span>`
	}
	s := strconv.FormatFloat(e.Value, 'f', 4, 64)
	if e.Value >= 0 {
		s = "+" + s
	}
	if e.HasInterval() {
		s += fmt.Sprintf(` <span class="ci">[%+.4f, %+.4f]</span>`, e.Lo, e.Hi)
	}
	return s
}

// pText formats a p-value.
func pText(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

// bootP formats a bootstrap p-value as compare does: "<0.001" when no
// resample fell on one side of 0 (p is only known to be under 1/B).
func bootP(p float64, below bool) string { return compare.FormatP(p, below) }

// eqP puts "= " before a p-value written without a relation.
func eqP(s string) string {
	if strings.HasPrefix(s, "<") || strings.HasPrefix(s, "≤") {
		return s
	}
	return "= " + s
}

func (d *doc) seriesOf(qs []*metrics.QuestionReport) []series {
	var out []series
	for i, q := range qs {
		if q != nil {
			out = append(out, series{i, d.names[i]})
		}
	}
	return out
}

func (d *doc) legend(ss []series) {
	d.s(`<p class="legend">`)
	for _, s := range ss {
		d.p(`<span class="key s%d"></span> %s &nbsp; `, s.idx%nSeries, esc(s.name))
	}
	d.s("</p>\n")
}

func (d *doc) reliability(id string, qs []*metrics.QuestionReport, qc *compare.QuestionComparison) {
	ss := d.seriesOf(qs)
	var wBins, mBins [][]metrics.Bin
	conf := ""
	for _, s := range ss {
		q := qs[s.idx]
		wBins = append(wBins, q.Reliability)
		mBins = append(mBins, q.ReliabilityMass)
		conf = q.Selective.ConfidenceName
	}
	if qs[ss[0].idx].Type == provider.Noul {
		conf = "p(true)"
	}
	d.s("<h3>Reliability</h3>\n")
	d.legend(ss)
	d.s(`<div class="charts">`)
	obs := "observed accuracy"
	if qs[ss[0].idx].Type == provider.Noul {
		obs = "observed rate of true"
	}
	d.p(`<figure>%s<figcaption>equal-width bins</figcaption></figure>`, reliabilityChart(d.id(), "equal-width", conf, obs, ss, wBins))
	d.p(`<figure>%s<figcaption>equal-mass bins</figcaption></figure>`, reliabilityChart(d.id(), "equal-mass", conf, obs, ss, mBins))
	d.s("</div>\n")
	if qc != nil && qc.Reason == "" {
		d.s(`<p class="tests">Tests on the differences (paired bootstrap, B − A): `)
		var parts []string
		for _, dl := range qc.Deltas {
			switch dl.Metric {
			case "ece", "ece_mass", "brier":
				parts = append(parts, fmt.Sprintf("%s Δ %s, p %s", esc(dl.Metric), deltaText(dl.Delta), eqP(bootP(dl.P, dl.PBelow))))
			}
		}
		parts = append(parts, fmt.Sprintf("Brier p (Holm) %s", eqP(compare.FormatPHolm(qc.BrierPHolm, qc.BrierPBelow))))
		d.s(strings.Join(parts, " · ") + ".</p>\n")
	}
	// the numbers the charts show: one small table per run and binning
	d.s(`<div class="bintabs">`)
	for k, s := range ss {
		for _, pair := range []struct {
			name string
			bins []metrics.Bin
		}{{"equal-width", wBins[k]}, {"equal-mass", mBins[k]}} {
			d.p(`<table class="bins"><caption><span class="key s%d"></span> %s, %s</caption><thead><tr><th>bin</th><th>n</th><th>conf.</th><th>obs.</th></tr></thead><tbody>`, s.idx%nSeries, esc(shortName(s.name)), pair.name)
			for _, b := range pair.bins {
				d.p(`<tr><td>(%s, %s]</td><td class="num">%d</td><td class="num">%s</td><td class="num">%s</td></tr>`, f2(b.Lo), f2(b.Hi), b.N, f3(b.Confidence), f3(b.Observed))
			}
			d.s("</tbody></table>")
		}
	}
	d.s("</div>\n")
}

// shortName is a legend name cut to its side letter and run id.
func shortName(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		return s[:i]
	}
	return s
}

func (d *doc) coverage(qs []*metrics.QuestionReport) {
	ss := d.seriesOf(qs)
	var curves [][]metrics.CurvePoint
	var cuts []*metrics.Cutpoint
	conf := ""
	has := false
	for _, s := range ss {
		q := qs[s.idx]
		curves = append(curves, q.Selective.Curve)
		cuts = append(cuts, q.Selective.Cutpoint)
		conf = q.Selective.ConfidenceName
		has = has || len(q.Selective.Curve) > 0
	}
	if !has {
		return
	}
	d.s("<h3>Accuracy–coverage</h3>\n")
	d.s(`<div class="charts"><figure>` + coverageChart(d.id(), conf, ss, curves, cuts) + `<figcaption>answering only above a confidence cut-point: ○ fitted on half the labels, ◆ checked on the other half (line down to its 95% lower bound)</figcaption></figure><div class="side">`)
	for k, s := range ss {
		q := qs[s.idx]
		if cp := cuts[k]; cp != nil {
			d.p(`<p><span class="key s%d"></span> <strong>%s</strong>: cut-point <strong>%s</strong> on %s, fitted on %d items (coverage %s, accuracy %s), checked on %d others: coverage %s, accuracy %s, one-sided %s lower bound %s — target %s <strong class="%s">%s</strong>. AURC %s, E-AURC %s.</p>`,
				s.idx%nSeries, esc(s.name), f3(cp.Cutpoint), esc(cp.Confidence), cp.FitN, f3(cp.FitCoverage), f3(cp.FitAccuracy), cp.HoldoutN,
				f3(cp.HoldoutCoverage), f3(cp.HoldoutAccuracy), pct(cp.HoldoutAccuracyLoConfidence), f3(cp.HoldoutAccuracyLo), f3(cp.Target), reachedClass(cp), reachedText(cp), estText(q.Selective.AURC), f3(q.Selective.EAURC))
		} else {
			d.p(`<p><span class="key s%d"></span> <strong>%s</strong>: no cut-point: %s. AURC %s.</p>`, s.idx%nSeries, esc(s.name), esc(dash(q.Selective.Refused)), estText(q.Selective.AURC))
		}
	}
	d.s("</div></div>\n")
}

func reachedClass(cp *metrics.Cutpoint) string {
	if cp.Reached {
		return "better"
	}
	return "worse"
}

func (d *doc) confusion(qs []*metrics.QuestionReport) {
	shown := false
	for i, q := range qs {
		if q == nil {
			continue
		}
		var conf [][]int
		switch {
		case q.Choice != nil:
			conf = q.Choice.Confusion
		case q.Score != nil:
			conf = q.Score.Confusion
		}
		if len(conf) == 0 {
			continue
		}
		if !shown {
			d.s("<h3>Confusion</h3>\n")
			shown = true
		}
		d.p(`<figure class="wide">%s<figcaption><span class="key s%d"></span> %s — rows: label, columns: decision (numbered as the rows); shade: share of the row (recall view), blue diagonal = right, orange = confused; hover a cell for its count</figcaption></figure>`+"\n",
			heatmap(d.id(), d.names[i], q.Classes, conf), i%nSeries, esc(d.names[i]))
		d.topConfusions(d.names[i], q.Classes, conf)
	}
}

// topConfusions lists the largest off-diagonal cells: the numbers of the
// heat map worth reading.
func (d *doc) topConfusions(who string, classes []string, conf [][]int) {
	type cellN struct{ i, j, n int }
	var cs []cellN
	rows := make([]int, len(conf))
	for i := range conf {
		for j, n := range conf[i] {
			rows[i] += n
			if i != j && n > 0 {
				cs = append(cs, cellN{i, j, n})
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b cellN) int { return b.n - a.n })
	if len(cs) > 15 {
		cs = cs[:15]
	}
	if len(cs) == 0 {
		return
	}
	d.p(`<details class="nums" open><summary>largest confusions, %s</summary><div class="scroll"><table><thead><tr><th>label</th><th>decided as</th><th>n</th><th>share of label</th></tr></thead><tbody>`, esc(who))
	for _, c := range cs {
		d.p(`<tr><td>%d %s</td><td>%d %s</td><td class="num">%d</td><td class="num">%s</td></tr>`, c.i+1, esc(nameOf(classes, c.i)), c.j+1, esc(nameOf(classes, c.j)), c.n, pct(float64(c.n)/float64(max(rows[c.i], 1))))
	}
	d.s("</tbody></table></div></details>\n")
}

// absError draws, for a score question, how many labelled answers were
// off by 0, 1, 2, … levels: the confusion matrix's diagonals, read off.
func (d *doc) absError(qs []*metrics.QuestionReport) {
	ss := d.seriesOf(qs)
	var counts [][]int
	levels := 0
	for _, s := range ss {
		q := qs[s.idx]
		if q.Score == nil {
			return
		}
		levels = max(levels, len(q.Score.Confusion))
	}
	if levels == 0 {
		return
	}
	for _, s := range ss {
		c := make([]int, levels)
		for i, row := range qs[s.idx].Score.Confusion {
			for j, n := range row {
				e := i - j
				if e < 0 {
					e = -e
				}
				c[e] += n
			}
		}
		counts = append(counts, c)
	}
	cats := make([]string, levels)
	for i := range cats {
		cats[i] = strconv.Itoa(i)
	}
	var desc strings.Builder
	desc.WriteString("Labelled answers by |argmax level − label level|:")
	for k, s := range ss {
		fmt.Fprintf(&desc, " %s:", s.name)
		for e, n := range counts[k] {
			fmt.Fprintf(&desc, " %d off %d;", e, n)
		}
	}
	d.s("<h3>|error| in levels</h3>\n")
	d.p(`<div class="charts"><figure>%s<figcaption>|argmax level − label| (0 = exact)</figcaption></figure></div>`+"\n",
		barsChart(d.id(), "|error| in levels", desc.String(), "levels off", cats, ss, counts))
}

func (d *doc) history(id string) {
	h := d.in.History
	if len(h) < 2 {
		return
	}
	runs := slices.Clone(h)
	slices.SortStableFunc(runs, func(a, b *report.RunReport) int {
		if a.Run == nil || b.Run == nil {
			return 0
		}
		return a.Run.StartedAt.Compare(b.Run.StartedAt)
	})
	var labels []string
	var acc, ece []metrics.Estimate
	var mark []bool
	var rows []string
	here := map[string]bool{}
	for _, r := range d.in.Runs {
		here[runID(r)] = true
	}
	for _, r := range runs {
		var q *metrics.QuestionReport
		for _, x := range r.Questions {
			if x.ID == id {
				q = x
			}
		}
		if q == nil || r.Run == nil {
			continue
		}
		lab := r.Run.StartedAt.UTC().Format("01-02 15:04") + " " + r.Run.ID
		labels = append(labels, lab)
		acc = append(acc, q.Accuracy)
		ece = append(ece, q.ECE)
		mark = append(mark, here[r.Run.ID])
		model := strings.Join(r.Run.Models, ", ")
		if model == "" {
			model = r.Run.Model
		}
		rows = append(rows, fmt.Sprintf(`<tr><td><code>%s</code>%s</td><td>%s</td><td>%s</td><td class="num" data-hist="%s" data-q="%s" data-m="accuracy" data-v="%s">%s</td><td class="num" data-hist="%s" data-q="%s" data-m="ece" data-v="%s">%s</td></tr>`,
			esc(r.Run.ID), map[bool]string{true: " ●", false: ""}[here[r.Run.ID]], esc(r.Run.StartedAt.UTC().Format("2006-01-02 15:04")), esc(model),
			esc(r.Run.ID), esc(id), full(q.Accuracy.Value), f3(q.Accuracy.Value), esc(r.Run.ID), esc(id), full(q.ECE.Value), f3(q.ECE.Value)))
	}
	if len(labels) < 2 {
		return
	}
	d.p("<h3>Over time <span class=\"muted\">(%d runs of this question set; ● = in this report)</span></h3>\n", len(labels))
	d.p(`<div class="charts"><figure>%s<figcaption>accuracy</figcaption></figure><figure>%s<figcaption>ECE (equal-width)</figcaption></figure></div>`+"\n",
		historyChart(d.id(), "accuracy", labels, acc, mark), historyChart(d.id(), "ECE", labels, ece, mark))
	d.s(`<details class="nums" open><summary>runs</summary><div class="scroll"><table><thead><tr><th>run</th><th>started (UTC)</th><th>model</th><th>accuracy</th><th>ECE</th></tr></thead><tbody>`)
	d.s(strings.Join(rows, ""))
	d.s("</tbody></table></div></details>\n")
}

// flips lists every flipped item the comparison holds (compactly) and
// draws both distributions of the first FlipCharts of them.
func (d *doc) flips(qc *compare.QuestionComparison, qs []*metrics.QuestionReport) {
	f := qc.Flips
	if len(f.Items) == 0 && f.Fixed+f.Broken+f.Changed == 0 {
		return
	}
	total := f.Fixed + f.Broken + f.Changed
	d.p(`<h3>Flipped items <span class="muted">(%d: %d fixed, %d broken, %d changed but still wrong)</span></h3>`+"\n", total, f.Fixed, f.Broken, f.Changed)
	if len(f.Items) < total {
		d.p(`<p class="note">The comparison lists %d of the %d flips (largest shift in the label's probability first).</p>`+"\n", len(f.Items), total)
	}
	limit := d.in.FlipCharts
	if limit <= 0 {
		limit = DefaultFlipCharts
	}
	qa, qb := qs[0], qs[1]
	if d.in.Answer != nil && qa != nil && qb != nil {
		n := min(limit, len(f.Items))
		if n > 0 {
			d.p(`<p>Both distributions of the %d largest shifts:</p><div class="flips">`, n)
			for _, it := range f.Items[:n] {
				d.flipChart(qc.ID, qa, qb, it)
			}
			d.s("</div>\n")
		}
	}
	if len(f.Items) <= maxFlipRows {
		d.s(`<div class="scroll"><table class="fliptab"><thead><tr><th>item</th><th>kind</th><th>label</th><th>A → B</th><th>p(label) A → B</th></tr></thead><tbody>`)
		for _, it := range f.Items {
			d.p(`<tr class="k-%s"><td>%s</td><td>%s</td><td>%s</td><td>%s → %s</td><td class="num">%.2f → %.2f</td></tr>`,
				esc(it.Kind), esc(it.ItemID), esc(it.Kind), esc(it.Label), esc(it.A), esc(it.B), it.PLabelA, it.PLabelB)
		}
		d.s("</tbody></table></div>\n")
		return
	}
	d.flipGroups(f.Items)
}

// maxFlipRows is the most flips listed one per row; more are grouped by
// kind and change (label, A's decision, B's), every item still listed.
const maxFlipRows = 1000

// flipGroups lists many flips compactly: one row per kind and change,
// largest group first, with each item's id and p(label) A→B.
func (d *doc) flipGroups(items []compare.FlipItem) {
	type key struct{ kind, label, a, b string }
	groups := map[key][]int{}
	var order []key
	for i, it := range items {
		k := key{it.Kind, it.Label, it.A, it.B}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	slices.SortStableFunc(order, func(x, y key) int { return len(groups[y]) - len(groups[x]) })
	d.p(`<p class="note">%d flips, grouped by change (%d groups); within a group, largest shift first: item p(label) A→B.</p>`+"\n", len(items), len(order))
	d.s(`<div class="scroll"><table class="fliptab"><thead><tr><th>kind</th><th>label</th><th>A → B</th><th>n</th><th>items</th></tr></thead><tbody>`)
	for _, k := range order {
		d.p(`<tr class="k-%s"><td>%s</td><td>%s</td><td>%s → %s</td><td class="num">%d</td><td class="ids">`, esc(k.kind), esc(k.kind), esc(k.label), esc(k.a), esc(k.b), len(groups[k]))
		for j, i := range groups[k] {
			if j > 0 {
				d.s(", ")
			}
			it := &items[i]
			d.p("%s %s→%s", esc(it.ItemID), p2(it.PLabelA), p2(it.PLabelB))
		}
		d.s("</td></tr>\n")
	}
	d.s("</tbody></table></div>\n")
}

// p2 writes a probability in two decimals without the leading zero.
func p2(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	return strings.TrimPrefix(s, "0")
}

func (d *doc) flipChart(qid string, qa, qb *metrics.QuestionReport, it compare.FlipItem) {
	aa, ab := d.in.Answer(0, qid, it.ItemID), d.in.Answer(1, qid, it.ItemID)
	if aa == nil || ab == nil {
		return
	}
	var outcomes []string
	var pa, pb []float64
	label := -1
	switch qa.Type {
	case provider.Noul:
		outcomes = []string{"false", "true"}
		pa = []float64{1 - aa.P, aa.P}
		pb = []float64{1 - ab.P, ab.P}
		label = slices.Index(outcomes, it.Label)
	default:
		k := len(qa.Classes)
		// B's probabilities in A's class order, matched by label
		pbA := make([]float64, k)
		for i := range pbA {
			pbA[i] = math.NaN()
		}
		for j, p := range ab.Probs {
			if j < len(qb.Classes) {
				if i := slices.Index(qa.Classes, qb.Classes[j]); i >= 0 {
					pbA[i] = p
				}
			}
		}
		paA := make([]float64, k)
		for i := range paA {
			paA[i] = math.NaN()
			if i < len(aa.Probs) {
				paA[i] = aa.Probs[i]
			}
		}
		lab, da, db := slices.Index(qa.Classes, it.Label), slices.Index(qa.Classes, it.A), slices.Index(qa.Classes, it.B)
		if qa.Type == provider.Score {
			// labels of a score are level numbers in flips
			lab, da, db = atoi(it.Label), atoi(it.A), atoi(it.B)
		}
		pick := []int{lab, da, db}
		lim := 6
		if qa.Type == provider.Score {
			lim = k
		}
		for _, i := range topOutcomes(k, paA, pbA, pick, lim) {
			name := qa.Classes[i]
			if qa.Type == provider.Score {
				name = strconv.Itoa(i) + " " + name
			}
			if i == lab {
				label = len(outcomes)
			}
			outcomes = append(outcomes, name)
			pa = append(pa, paA[i])
			pb = append(pb, pbA[i])
		}
	}
	title := fmt.Sprintf("%s: %s, label %s, A %s → B %s", it.ItemID, it.Kind, it.Label, it.A, it.B)
	d.p(`<figure class="flip k-%s">%s<figcaption><code>%s</code> %s · label %s · %s → %s</figcaption></figure>`,
		esc(it.Kind), distChart(d.id(), title, outcomes, pa, pb, label, d.names[0], d.names[1]), esc(it.ItemID), esc(it.Kind), esc(it.Label), esc(it.A), esc(it.B))
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func (d *doc) conventions() {
	seen := map[string]bool{}
	for _, r := range d.in.Runs {
		for _, q := range r.Questions {
			line := string(q.Type) + ": " + report.Conventions(q.Conventions)
			if !seen[line] {
				seen[line] = true
				d.p("<p>%s</p>\n", esc(line))
			}
		}
	}
	if c := d.in.Comparison; c != nil {
		d.p("<p>Comparison: %s</p>\n", esc(c.Conventions))
	}
	d.s(`<p>Intervals: 95% bootstrap percentile unless marked <sup class="m">W</sup> (Wilson score, for a proportion with under 5 successes or failures), <sup class="m">N</sup> (Newcombe score, for an AUROC with a small class or at 0 or 1), or "no CI" (every resample agreed). The overconfidence gap is mean decision confidence − accuracy (positive: more confident than right).</p>` + "\n")
}

// signedEst is an estimate with its sign always written (a gap).
func signedEst(e metrics.Estimate) string {
	if !e.Defined() {
		return `<span class="muted">—</span>`
	}
	s := fmt.Sprintf("%+.3f", e.Value)
	if e.HasInterval() {
		s += fmt.Sprintf(` <span class="ci">[%+.3f, %+.3f]</span>`, e.Lo, e.Hi)
	}
	return s + method(e)
}

// gapWord reads the overconfidence gap when its interval excludes 0.
func gapWord(e metrics.Estimate) string {
	switch {
	case !e.HasInterval():
		return ""
	case e.Lo > 0:
		return `<br><span class="worse">overconfident</span>`
	case e.Hi < 0:
		return `<br><span class="note">underconfident</span>`
	}
	return ""
}

// method marks an interval that is not the bootstrap's: W for Wilson, N
// for Newcombe, and "no CI" where the resamples all agreed.
func method(e metrics.Estimate) string {
	switch e.Method {
	case metrics.IntervalWilson:
		return `<sup class="m" title="Wilson score 95% interval">W</sup>`
	case metrics.IntervalNewcombe:
		return `<sup class="m" title="Newcombe score 95% interval">N</sup>`
	case metrics.IntervalCollapsed:
		return ` <span class="ci" title="every resample gave the same value: no interval">(no CI)</span>`
	}
	return ""
}
