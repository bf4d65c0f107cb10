package main

import (
	"fmt"
	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/report"
	"io"
	"text/tabwriter"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// renderBox draws a box answer (Jev 1.14): its headline (edges as
// fractions, confidence, provenance), then workbench.BoxGrid's grid
// scaled to the image with the edges in pixels when the image is known —
// the same lines the workbench's answer view draws.
func renderBox(w io.Writer, an *provider.Answer, img *provider.ImageInfo) {
	v := workbench.BoxViewOf(an, img)
	fmt.Fprintf(w, "%s (box)  %s  [%s %s]\n", termsafe.String(an.ID), v.Headline(), an.Provenance.Source, termsafe.String(an.Provenance.Model))
	for _, l := range workbench.BoxGrid(v, workbench.BoxGridWidth) {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// boxImage is the image a box question is about (workbench.BoxImage).
func boxImage(req *provider.Request, q *provider.Question) *provider.ImageInfo {
	return workbench.BoxImage(req, q)
}

// requestOptions are the set's images (read now, within the set's folder
// or --allow-path) and the command line's Danger-Zone opt-ins.
func (a *app) requestOptions(set *questionset.Set) (workbench.RequestOptions, error) {
	o := workbench.RequestOptions{DangerZone: a.dangerZone}
	if len(set.Assets) > 0 {
		as, err := workbench.LoadAssets(set, a.allowPaths)
		if err != nil {
			return o, err
		}
		o.Assets = as
	}
	return o, nil
}

// evalJev114 prepares a set eval runs for Jev 1.14: it applies --images
// and --long-context to the set (the runner builds each request from it,
// so the opt-ins travel with every request), refuses a set with image
// assets or box questions that is not opted in to images (before anything
// is sent, the message ask gives), and reads the set's images now (within
// its folder or --allow-path). It returns a request transform that gives
// each item's request the images it references (its state, or a
// question's instructions), encoded at send time and checked against the
// API's limits; nil when the set has no images. An item whose request
// breaks a limit is stored as that item's failure, with the reason.
func (a *app) evalJev114(set *questionset.Set, path string) (func(dataset.Item, int, *provider.Request) (*provider.Request, func(*provider.Result), error), error) {
	set.DangerZone.Images = set.DangerZone.Images || a.dangerZone.Images
	set.DangerZone.LongContext = set.DangerZone.LongContext || a.dangerZone.LongContext
	needs := len(set.Assets) > 0
	for _, e := range set.Questions {
		needs = needs || e.Question.Type == provider.Box
	}
	if needs && !set.DangerZone.Images {
		return nil, fmt.Errorf("%s: image assets and box questions are experimental (Jev 1.14) and need the Images Danger-Zone opt-in: --images, or danger_zone: {images: true} in the set", path)
	}
	if len(set.Assets) == 0 {
		return nil, nil
	}
	ropt, err := a.requestOptions(set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	assets := ropt.Assets
	return func(it dataset.Item, _ int, req *provider.Request) (*provider.Request, func(*provider.Result), error) {
		for _, as := range assets {
			if req.References(as.Name) {
				req.Assets = append(req.Assets, as)
			}
		}
		if err := req.Validate(); err != nil {
			return nil, nil, err
		}
		return req, nil, nil
	}, nil
}

// renderBoxReports prints the box questions of a run's summary (Jev 1.14)
// in their own table: n, mean IoU and IoU≥0.5 accuracy with their 95%
// intervals, marked as every other figure is; no accuracy or Brier, which
// do not apply to a box.
func renderBoxReports(w io.Writer, qs []*metrics.QuestionReport) {
	if !report.HasBox(qs) {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "box question\tn\tanswered\tmean IoU\tIoU≥0.5 accuracy\terrors")
	for _, q := range qs {
		if q.Box == nil {
			continue
		}
		errs := 0
		for _, n := range q.Errors {
			errs += n
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\n", esc(q.ID), q.Box.N, q.Answered, fmtEstimate(q.Box.MeanIoU), report.BoxHitsText(q.Box, fmtEstimate), errs)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s\n", report.BoxConventions)
}

// classTable is where the summary's class-metric table goes: w, or
// nowhere when every question is a box (they have their own table).
func classTable(w io.Writer, qs []*metrics.QuestionReport) io.Writer {
	for _, q := range qs {
		if q.Box == nil {
			return w
		}
	}
	return io.Discard
}
