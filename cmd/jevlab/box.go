package main

import (
	"fmt"
	"io"
	"math"
	"strings"

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

// evalJev114 applies --images and --long-context to a set eval runs (the
// runner builds each request from the set, so the opt-ins travel with it)
// and refuses what eval cannot yet do faithfully: a set with image assets
// (the runner would send the references without the images) or box
// questions (no box labels or box metrics in eval's reports yet).
func (a *app) evalJev114(set *questionset.Set, path string) error {
	set.DangerZone.Images = set.DangerZone.Images || a.dangerZone.Images
	set.DangerZone.LongContext = set.DangerZone.LongContext || a.dangerZone.LongContext
	if len(set.Assets) > 0 {
		return fmt.Errorf("%s: eval does not send image assets yet (the items would be asked without their images); ask them one at a time with 'jevlab ask %s --images'", path, path)
	}
	for _, e := range set.Questions {
		if e.Question.Type == provider.Box {
			return fmt.Errorf("%s: question %q is a box question, which eval does not evaluate yet (no box labels in datasets or box metrics in its reports); 'jevlab ask' answers it", path, e.ID)
		}
	}
	return nil
}
