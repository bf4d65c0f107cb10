package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// withBoxLabel sets o's labelled box from a stored box answer's label
// text (dataset.BoxLabelText); other answers are left as they are.
func withBoxLabel(o *metrics.Obs, a *store.ItemAnswer) {
	if a.Label != nil && a.Answer != nil && a.Answer.Type == provider.Box {
		o.LabelBox = dataset.StoredBoxLabel(a.LabelText)
	}
}

// boxQuestion fills a box question's report: its BoxReport (mean IoU and
// IoU≥0.5 accuracy over the first repeat per item, answered and labelled),
// with Labelled the number of pairs and Correct the hits. The class
// metrics (accuracy, Brier, calibration) stay undefined: a box has none.
func boxQuestion(r *metrics.QuestionReport, q *provider.Question, obs []metrics.Obs, opt metrics.Options) {
	if q.Type != provider.Box {
		return
	}
	b := metrics.BoxesOf(obs, opt)
	r.Box = &b
	r.Labelled, r.Correct = b.N, b.Hits
}

// boxGateValue is what gate sp reads of a box question: min_accuracy reads
// IoU≥0.5 accuracy (metric "iou50_accuracy"), max_error_rate the error
// rate as for any question; every other gate does not apply to a box.
// own says the gate names this question (not "*" or a flag): a gate that
// does not apply then fails with a message saying so, instead of being
// skipped unseen.
func boxGateValue(sp gateSpec, r *metrics.QuestionReport, own bool) (metric string, v metrics.Estimate, apply bool, msg string) {
	switch sp.name {
	case "min_accuracy":
		return "iou50_accuracy", r.Box.Hit50, true, ""
	case "max_error_rate":
		v, ok := sp.value(r)
		return sp.metric, v, ok, ""
	}
	if !own {
		return sp.metric, metrics.Estimate{}, false, ""
	}
	return sp.metric, metrics.Point(math.NaN()), true, fmt.Sprintf("%s does not apply to the box question %s: gate a box on min_accuracy (IoU≥0.5 accuracy) or max_error_rate", sp.name, r.ID)
}

// BoxLine is a box question's figures on one line, with the interval
// marks of every other figure: "n 12 · mean IoU 0.6123 [0.52, 0.70] ·
// IoU≥0.5 accuracy 0.75 [0.47, 0.92] Wilson (9/12)".
func BoxLine(b *metrics.BoxReport) string {
	return fmt.Sprintf("n %d · mean IoU %s · IoU≥0.5 accuracy %s", b.N, est(b.MeanIoU), BoxHitsText(b, est))
}

// BoxHitsText is the IoU≥0.5 accuracy formatted by f with its count,
// "0.75 [0.47, 0.92] Wilson (9/12)" ("—" with no pairs).
func BoxHitsText(b *metrics.BoxReport, f func(metrics.Estimate) string) string {
	s := f(b.Hit50)
	if b.Hit50.Defined() {
		s += fmt.Sprintf(" (%d/%d)", b.Hits, b.N)
	}
	return s
}

// BoxConventions says what a box question's figures are.
const BoxConventions = "box questions: mean IoU (intersection over union of the answered and the labelled box) and IoU≥0.5 accuracy (the share with IoU at least 0.5), over each item's first repeat answered with a box and labelled with one; accuracy, Brier and calibration do not apply to a box"

// writeBoxText writes a box question's section of the full text report.
func writeBoxText(b *strings.Builder, q *metrics.QuestionReport) {
	fmt.Fprintf(b, "question %s (%s) · %d items · %d answered · %d labelled", q.ID, q.Type, q.N, q.Answered, q.Labelled)
	if len(q.Errors) > 0 {
		fmt.Fprintf(b, " · errors %s", kinds(q.Errors))
	}
	b.WriteString("\n")
	row := func(name, val string) { fmt.Fprintf(b, "  %-20s %s\n", name, val) }
	row("mean IoU", est(q.Box.MeanIoU))
	row("IoU≥0.5 accuracy", BoxHitsText(q.Box, est))
	if l := q.Latency; l.N > 0 {
		row("latency", fmt.Sprintf("p50 %.0f ms · p95 %.0f ms · p99 %.0f ms (n %d, nearest-rank)", l.P50, l.P95, l.P99, l.N))
	}
}

// HasBox reports whether any question of qs is a box question.
func HasBox(qs []*metrics.QuestionReport) bool {
	for _, q := range qs {
		if q.Box != nil {
			return true
		}
	}
	return false
}

// boxMarkdown writes the box questions' table of a Markdown report.
func boxMarkdown(b *strings.Builder, qs []*metrics.QuestionReport) {
	if !HasBox(qs) {
		return
	}
	b.WriteString("\n| box question | n | mean IoU | IoU≥0.5 accuracy |\n|---|---:|---|---|\n")
	for _, q := range qs {
		if q.Box != nil {
			fmt.Fprintf(b, "| `%s` | %d | %s | %s |\n", mdEsc(q.ID), q.Box.N, mdEsc(est(q.Box.MeanIoU)), mdEsc(BoxHitsText(q.Box, est)))
		}
	}
	fmt.Fprintf(b, "\n<sub>%s</sub>\n", mdEsc(BoxConventions))
}

// onlyBox reports whether qs has questions and every one is a box.
func onlyBox(qs []*metrics.QuestionReport) bool {
	for _, q := range qs {
		if q.Box == nil {
			return false
		}
	}
	return len(qs) > 0
}
