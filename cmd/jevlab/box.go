package main

import (
	"fmt"
	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/report"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
)

// boxGridWidth is the width of ask's box grid in cells.
const boxGridWidth = 40

// renderBox draws a box answer (Jev 1.14) on a grid scaled to the image
// (terminal cells are about twice as tall as wide), with its edges as
// fractions and, when the image is known, in pixels, and its confidence.
// Edges are drawn as returned; reversed ones are said to be.
func renderBox(w io.Writer, an *provider.Answer, img *provider.ImageInfo) {
	e, ok := an.BoxOf()
	conf := "no confidence"
	if an.HasConfidence {
		conf = "confidence " + prob(an.Confidence)
	}
	fmt.Fprintf(w, "%s (box)  top %.2f  bottom %.2f  left %.2f  right %.2f  %s  [%s %s]\n", termsafe.String(an.ID),
		e.Top, e.Bottom, e.Left, e.Right, conf, an.Provenance.Source, termsafe.String(an.Provenance.Model))
	if !ok {
		fmt.Fprintln(w, "    (no box in the answer)")
		return
	}
	W := boxGridWidth
	H := W / 2
	if img != nil && img.Width > 0 {
		H = int(math.Round(float64(W) * float64(img.Height) / float64(img.Width) / 2))
	}
	H = min(max(H, 6), 30)
	cell := func(f float64, n int) int { return min(max(int(math.Round(f*float64(n-1))), 0), n-1) }
	t, b := cell(math.Min(e.Top, e.Bottom), H), cell(math.Max(e.Top, e.Bottom), H)
	l, r := cell(math.Min(e.Left, e.Right), W), cell(math.Max(e.Left, e.Right), W)
	grid := make([][]rune, H)
	for y := range grid {
		grid[y] = []rune(strings.Repeat("·", W))
	}
	for x := l; x <= r; x++ {
		grid[t][x], grid[b][x] = '─', '─'
	}
	for y := t; y <= b; y++ {
		grid[y][l], grid[y][r] = '│', '│'
	}
	grid[t][l], grid[t][r], grid[b][l], grid[b][r] = '┌', '┐', '└', '┘'
	fmt.Fprintf(w, "    ┌%s┐\n", strings.Repeat("─", W))
	for y, row := range grid {
		label := ""
		switch y {
		case t:
			label = fmt.Sprintf("  top %.2f", e.Top)
		case b:
			label = fmt.Sprintf("  bottom %.2f", e.Bottom)
		}
		fmt.Fprintf(w, "    │%s│%s\n", string(row), label)
	}
	fmt.Fprintf(w, "    └%s┘\n", strings.Repeat("─", W))
	axis := []rune(strings.Repeat(" ", W+12))
	put := func(at int, s string) {
		for i, c := range s {
			if at+i >= 0 && at+i < len(axis) {
				axis[at+i] = c
			}
		}
	}
	put(1+l, fmt.Sprintf("%.2f", e.Left))
	put(max(1+r-3, 1+l+5), fmt.Sprintf("%.2f", e.Right))
	fmt.Fprintf(w, "    %s  (left, right)\n", strings.TrimRight(string(axis), " "))
	if e.Top > e.Bottom || e.Left > e.Right {
		fmt.Fprintln(w, "    edges reversed as returned (drawn between them)")
	}
	if img != nil && img.Width > 0 {
		px := func(f float64, n int) int { return int(math.Round(f * float64(n))) }
		fmt.Fprintf(w, "    in pixels: x %d–%d, y %d–%d of %d×%d\n", px(e.Left, img.Width), px(e.Right, img.Width),
			px(e.Top, img.Height), px(e.Bottom, img.Height), img.Width, img.Height)
	}
}

// boxImage is the image a box question is about: the first asset its
// instructions name, else the request's only asset.
func boxImage(req *provider.Request, q *provider.Question) *provider.ImageInfo {
	var pick *provider.Asset
	for i := range req.Assets {
		if strings.Contains(string(q.Instructions), req.Assets[i].Name) {
			pick = &req.Assets[i]
			break
		}
	}
	if pick == nil && len(req.Assets) == 1 {
		pick = &req.Assets[0]
	}
	if pick == nil || pick.Data == nil {
		return nil
	}
	info, err := provider.InspectImage(pick.Data)
	if err != nil {
		return nil
	}
	return &info
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
