package workbench

import (
	"fmt"
	"math"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// BoxGridWidth is the width, in cells, of the grid `jevlab ask` draws a
// box answer on (screens draw the same grid when they have the room).
const BoxGridWidth = 40

// BoxView is a box answer (Jev 1.14) as every screen shows it: its edges
// as returned (HasBox false when the answer carries none), its confidence
// and where it came from, and the image it is about when known (for the
// grid's proportions and the edges in pixels).
type BoxView struct {
	ID            string
	Edges         provider.Edges
	HasBox        bool
	Confidence    float64
	HasConfidence bool
	Source        provider.Source
	Model         string
	Image         *provider.ImageInfo
}

// BoxViewOf is answer a's BoxView, about image img (nil when unknown).
func BoxViewOf(a *provider.Answer, img *provider.ImageInfo) BoxView {
	v := BoxView{Image: img}
	if a == nil {
		return v
	}
	v.ID, v.Confidence, v.HasConfidence = a.ID, a.Confidence, a.HasConfidence
	v.Source, v.Model = a.Provenance.Source, a.Provenance.Model
	v.Edges, v.HasBox = a.BoxOf()
	return v
}

// Headline is the box's one-line summary: "top 0.25  bottom 0.82  left
// 0.44  right 0.84  confidence 0.92".
func (v BoxView) Headline() string {
	conf := "no confidence"
	if v.HasConfidence {
		conf = "confidence " + Prob(v.Confidence)
	}
	e := v.Edges
	return fmt.Sprintf("top %.2f  bottom %.2f  left %.2f  right %.2f  %s", e.Top, e.Bottom, e.Left, e.Right, conf)
}

// BoxImage is the image box question q of req is about: the first asset
// its instructions name, else the request's only asset; nil when neither
// (or the image cannot be read).
func BoxImage(req *provider.Request, q *provider.Question) *provider.ImageInfo {
	if req == nil || q == nil {
		return nil
	}
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

// BoxGrid draws box view v on a grid width cells wide (at least 10),
// scaled to the image (terminal cells are about twice as tall as wide;
// a 2:1 grid when the image is unknown), framed, with the top and bottom
// edges beside their rows and the left and right under their columns, a
// note when the edges are reversed (drawn between them, as returned),
// and the edges in pixels when the image is known. Every screen that shows
// a box answer draws these lines: `jevlab ask` and the workbench's answer
// view. Without a box it is one line saying so.
func BoxGrid(v BoxView, width int) []string {
	if !v.HasBox {
		return []string{"(no box in the answer)"}
	}
	e := v.Edges
	W := max(width, 10)
	H := W / 2
	if img := v.Image; img != nil && img.Width > 0 {
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
	out := make([]string, 0, H+6)
	out = append(out, "┌"+strings.Repeat("─", W)+"┐")
	for y, row := range grid {
		label := ""
		switch y {
		case t:
			label = fmt.Sprintf("  top %.2f", e.Top)
		case b:
			label = fmt.Sprintf("  bottom %.2f", e.Bottom)
		}
		out = append(out, "│"+string(row)+"│"+label)
	}
	out = append(out, "└"+strings.Repeat("─", W)+"┘")
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
	out = append(out, strings.TrimRight(string(axis), " ")+"  (left, right)")
	if e.Top > e.Bottom || e.Left > e.Right {
		out = append(out, "edges reversed as returned (drawn between them)")
	}
	if img := v.Image; img != nil && img.Width > 0 {
		px := func(f float64, n int) int { return int(math.Round(f * float64(n))) }
		out = append(out, fmt.Sprintf("in pixels: x %d–%d, y %d–%d of %d×%d", px(e.Left, img.Width), px(e.Right, img.Width),
			px(e.Top, img.Height), px(e.Bottom, img.Height), img.Width, img.Height))
	}
	return out
}
