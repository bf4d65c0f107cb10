package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/evals/metrics"
)

// series is one run's data in a chart, with its legend name.
type series struct {
	idx  int // run index: colour and class
	name string
}

// reliabilityChart draws one binning's reliability diagram for several
// runs over each other: mean confidence against observed accuracy per bin
// (a marker whose area grows with the bin's count), the diagonal, and
// below it the bin counts as bars with their numbers.
func reliabilityChart(id, binning, confName, obsName string, runs []series, bins [][]metrics.Bin) string {
	const W, H = 380, 380
	p := plot{x0: 46, y0: 14, w: 310, h: 240, xmin: 0, xmax: 1, ymin: 0, ymax: 1}
	hist := plot{x0: 46, y0: 300, w: 310, h: 50, xmin: 0, xmax: 1, ymin: 0, ymax: 1}
	var desc strings.Builder
	fmt.Fprintf(&desc, "Reliability diagram, %s bins, %s on the x axis, %s on the y axis.", binning, confName, obsName)
	for k, r := range runs {
		fmt.Fprintf(&desc, " %s: ", r.name)
		for j, b := range bins[k] {
			if j > 0 {
				desc.WriteString("; ")
			}
			fmt.Fprintf(&desc, "(%s, %s] n=%d conf %s obs %s", f3(b.Lo), f3(b.Hi), b.N, f3(b.Confidence), f3(b.Observed))
		}
		desc.WriteString(".")
	}
	s := newSVG(id, W, H, "Reliability, "+binning+" bins", desc.String())
	s.axes(p, ticks(0, 1, 0.2), ticks(0, 1, 0.2), "", obsName)
	s.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" class="diag" stroke="#999" stroke-dasharray="3 3"/>`, f2(p.X(0)), f2(p.Y(0)), f2(p.X(1)), f2(p.Y(1)))
	maxN := 1
	for _, bs := range bins {
		for _, b := range bs {
			maxN = max(maxN, b.N)
		}
	}
	for k, r := range runs {
		xs, ys := make([]float64, len(bins[k])), make([]float64, len(bins[k]))
		for j, b := range bins[k] {
			xs[j], ys[j] = b.Confidence, b.Observed
		}
		s.polyline(p, xs, ys, r.idx, false)
		for _, b := range bins[k] {
			rad := 2 + 5*math.Sqrt(float64(b.N)/float64(maxN))
			s.raw(`<circle cx="%s" cy="%s" r="%s" class="dot s%d" fill="%s"><title>%s (%s, %s]: n=%d, confidence %s, observed %s</title></circle>`,
				f2(p.X(b.Confidence)), f2(p.Y(b.Observed)), f2(rad), r.idx%nSeries, seriesColor(r.idx), esc(r.name), f3(b.Lo), f3(b.Hi), b.N, f3(b.Confidence), f3(b.Observed))
		}
	}
	// count histogram: each run's bars side by side within its bin
	s.raw(`<rect x="%s" y="%s" width="%s" height="%s" class="frame" fill="none" stroke="#888"/>`, f2(hist.x0), f2(hist.y0), f2(hist.w), f2(hist.h))
	s.text(hist.x0+hist.w/2, p.y0+p.h+28, "middle", "axis", confName+" (bins; counts below)")
	s.text(hist.x0-4, hist.y0+10, "end", "tick", strconv.Itoa(maxN))
	s.text(hist.x0-4, hist.y0+hist.h, "end", "tick", "0")
	s.text(hist.x0-30, hist.y0+hist.h/2+3, "middle", "tick", "n")
	nr := float64(len(runs))
	for k, r := range runs {
		for _, b := range bins[k] {
			x0, x1 := hist.X(b.Lo), hist.X(b.Hi)
			bw := (x1 - x0) / nr
			x := x0 + bw*float64(k)
			h := hist.h * float64(b.N) / float64(maxN)
			s.raw(`<rect x="%s" y="%s" width="%s" height="%s" class="bar s%d" fill="%s"><title>%s (%s, %s]: n=%d</title></rect>`,
				f2(x+0.5), f2(hist.y0+hist.h-h), f2(math.Max(bw-1, 0.5)), f2(h), r.idx%nSeries, seriesColor(r.idx), esc(r.name), f3(b.Lo), f3(b.Hi), b.N)
			if len(runs) == 1 && bw >= 12 {
				s.raw(`<text x="%s" y="%s" text-anchor="middle" class="count">%d</text>`, f2(x+bw/2), f2(hist.y0+hist.h+10+float64(k)*9), b.N)
			}
		}
	}
	return s.close()
}

// coverageChart draws accuracy against coverage for several runs, with
// each run's fitted cut-point (on the fit half) and its held-out check,
// and the target accuracy as a dashed line.
func coverageChart(id, confName string, runs []series, curves [][]metrics.CurvePoint, cuts []*metrics.Cutpoint) string {
	const W, H = 380, 300
	ymin := 1.0
	for _, c := range curves {
		for _, pt := range c {
			ymin = math.Min(ymin, pt.Accuracy)
		}
	}
	for _, c := range cuts {
		if c != nil {
			ymin = math.Min(ymin, math.Min(c.Target, c.HoldoutAccuracyLo))
		}
	}
	ymin = math.Max(0, math.Floor(ymin*10)/10)
	if ymin > 0.9 {
		ymin = 0.9
	}
	p := plot{x0: 46, y0: 14, w: 310, h: 240, xmin: 0, xmax: 1, ymin: ymin, ymax: 1}
	var desc strings.Builder
	fmt.Fprintf(&desc, "Accuracy against coverage as the %s cut-point moves.", confName)
	for k, r := range runs {
		c := curves[k]
		if len(c) > 0 {
			fmt.Fprintf(&desc, " %s: accuracy %s at full coverage, %s at coverage %s.", r.name, f3(c[len(c)-1].Accuracy), f3(c[0].Accuracy), f3(c[0].Coverage))
		}
		if cp := cuts[k]; cp != nil {
			fmt.Fprintf(&desc, " Cut-point %s: fit coverage %s accuracy %s; held-out coverage %s accuracy %s (lower bound %s), target %s %s.",
				f3(cp.Cutpoint), f3(cp.FitCoverage), f3(cp.FitAccuracy), f3(cp.HoldoutCoverage), f3(cp.HoldoutAccuracy), f3(cp.HoldoutAccuracyLo), f3(cp.Target), reachedText(cp))
		}
	}
	s := newSVG(id, W, H, "Accuracy–coverage", desc.String())
	step := 0.1
	if 1-ymin > 0.5 {
		step = 0.2
	}
	s.axes(p, ticks(0, 1, 0.2), ticks(ymin, 1, step), "coverage", "selective accuracy")
	for k, r := range runs {
		c := curves[k]
		xs, ys := make([]float64, len(c)), make([]float64, len(c))
		for j, pt := range c {
			xs[j], ys[j] = pt.Coverage, pt.Accuracy
		}
		s.polyline(p, xs, ys, r.idx, false)
	}
	for k, r := range runs {
		cp := cuts[k]
		if cp == nil {
			continue
		}
		ty := p.Y(cp.Target)
		s.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" class="target" stroke="#999" stroke-dasharray="5 3"/>`, f2(p.x0), f2(ty), f2(p.x0+p.w), f2(ty))
		s.text(p.x0+4, ty-3, "start", "tick", "target "+tick(cp.Target))
		c := seriesColor(r.idx)
		s.raw(`<circle cx="%s" cy="%s" r="5" class="cut s%d" fill="none" stroke="%s" stroke-width="2"><title>%s cut-point %s (fit): coverage %s, accuracy %s</title></circle>`,
			f2(p.X(cp.FitCoverage)), f2(p.Y(cp.FitAccuracy)), r.idx%nSeries, c, esc(r.name), f3(cp.Cutpoint), f3(cp.FitCoverage), f3(cp.FitAccuracy))
		hx, hy := p.X(cp.HoldoutCoverage), p.Y(math.Max(cp.HoldoutAccuracy, ymin))
		s.raw(`<path d="M%s %s l5 5 l-5 5 l-5 -5 z" class="dot s%d" fill="%s"><title>%s held-out: coverage %s, accuracy %s, 95%% lower bound %s, %s</title></path>`,
			f2(hx), f2(hy-5), r.idx%nSeries, c, esc(r.name), f3(cp.HoldoutCoverage), f3(cp.HoldoutAccuracy), f3(cp.HoldoutAccuracyLo), reachedText(cp))
		s.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" class="line s%d" stroke="%s" stroke-width="1"/>`,
			f2(hx), f2(p.Y(math.Max(cp.HoldoutAccuracyLo, ymin))), f2(hx), f2(hy), r.idx%nSeries, c)
		s.raw(`<circle cx="%s" cy="%s" r="4" class="cut s%d" fill="none" stroke="%s" stroke-width="2"/>`, f2(p.x0+p.w*0.3), f2(p.y0+p.h-14-float64(k)*13), r.idx%nSeries, c)
		s.text(p.x0+p.w*0.3+8, p.y0+p.h-10-float64(k)*13, "start", "count", fmt.Sprintf("%s: cut-point %s, %s", sideLabel(r.idx), f3(cp.Cutpoint), map[bool]string{true: "reached", false: "NOT reached"}[cp.Reached]))
	}
	return s.close()
}

func reachedText(cp *metrics.Cutpoint) string {
	if cp.Reached {
		return "reached"
	}
	return "NOT reached"
}

// heatmap draws a confusion matrix (rows: label, columns: decision) as a
// heat map shaded by the row share (the recall view), with every row
// labelled in full and columns by number, and the count in each non-empty
// cell's title (and printed in the cell when the matrix is small).
func heatmap(id, who string, classes []string, conf [][]int) string {
	k := len(conf)
	cell := 22.0
	switch {
	case k > 40:
		cell = 10
	case k > 20:
		cell = 14
	case k <= 6:
		cell = 34
	case k <= 12:
		cell = 28
	}
	font := math.Max(math.Min(cell*0.8, 11), 7.5)
	labelW := 0
	for _, c := range classes {
		labelW = max(labelW, min(len([]rune(c)), 48))
	}
	lw := math.Min(float64(labelW)*font*0.62+font*2.4+8, 380)
	top := 34.0
	W := int(lw + cell*float64(k) + 10)
	H := int(top + cell*float64(k) + 8)
	total, diag := 0, 0
	rowSum := make([]int, k)
	for i := range conf {
		for j, n := range conf[i] {
			rowSum[i] += n
			total += n
			if i == j {
				diag += n
			}
		}
	}
	desc := fmt.Sprintf("Confusion matrix of %s over %d classes: rows are labels, columns are decisions (numbered as the rows), shaded by the share of the row. %d of %d on the diagonal.", who, k, diag, total)
	s := newSVG(id, W, H, "Confusion matrix, "+who, desc)
	for i := 0; i < k; i++ {
		y := top + cell*float64(i)
		name := ""
		if i < len(classes) {
			name = classes[i]
		}
		if r := []rune(name); len(r) > 48 {
			name = string(r[:47]) + "…"
		}
		s.raw(`<text x="%s" y="%s" text-anchor="end" class="hl" font-size="%s">%s %d</text>`, f2(lw-3), f2(y+cell*0.78), f2(font), esc(name), i+1)
		x := lw + cell*float64(i)
		if k > 20 {
			s.raw(`<text x="%s" y="%s" text-anchor="start" class="hl" font-size="%s" transform="rotate(-90 %s %s)">%d</text>`,
				f2(x+cell*0.75), f2(top-3), f2(font), f2(x+cell*0.75), f2(top-3), i+1)
		} else {
			s.raw(`<text x="%s" y="%s" text-anchor="middle" class="hl" font-size="%s">%d</text>`, f2(x+cell/2), f2(top-4), f2(font), i+1)
		}
	}
	s.text(lw+cell*float64(k)/2, 10, "middle", "axis", "decision →")
	s.raw(`<rect x="%s" y="%s" width="%s" height="%s" class="frame" fill="none" stroke="#888"/>`, f2(lw), f2(top), f2(cell*float64(k)), f2(cell*float64(k)))
	for i := range conf {
		for j, n := range conf[i] {
			if n == 0 {
				continue
			}
			share := float64(n) / float64(max(rowSum[i], 1))
			x, y := lw+cell*float64(j), top+cell*float64(i)
			cls := "cell"
			if i == j {
				cls = "cell diagc"
			}
			lab, dec := nameOf(classes, i), nameOf(classes, j)
			s.raw(`<rect x="%s" y="%s" width="%s" height="%s" class="%s" fill="%s" fill-opacity="%s"><title>label %s → decision %s: %d (%s of the row)</title></rect>`,
				f2(x), f2(y), f2(cell), f2(cell), cls, cellColor(i == j), f2(0.12+0.88*share), esc(lab), esc(dec), n, pct(share))
			if k <= 12 {
				cls := "cnum"
				if share >= 0.5 {
					cls = "cnum on"
				}
				s.raw(`<text x="%s" y="%s" text-anchor="middle" class="%s" font-size="11">%d</text>`, f2(x+cell/2), f2(y+cell*0.62), cls, n)
			}
		}
	}
	return s.close()
}

func cellColor(diag bool) string {
	if diag {
		return "#0072b2"
	}
	return "#d55e00"
}

func nameOf(classes []string, i int) string {
	if i >= 0 && i < len(classes) {
		return classes[i]
	}
	return strconv.Itoa(i)
}

func pct(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }

// barsChart draws grouped vertical bars: one group per category, one bar
// per run, each bar's count written above it.
func barsChart(id, title, desc, xlabel string, cats []string, runs []series, counts [][]int) string {
	const H = 220
	gw := math.Max(40, float64(14*len(runs)+16))
	W := int(56 + gw*float64(len(cats)) + 10)
	W = max(W, 240)
	maxC := 1
	for _, cs := range counts {
		for _, c := range cs {
			maxC = max(maxC, c)
		}
	}
	p := plot{x0: 46, y0: 20, w: gw * float64(len(cats)), h: 150, xmin: 0, xmax: float64(len(cats)), ymin: 0, ymax: float64(maxC)}
	s := newSVG(id, W, H, title, desc)
	s.raw(`<rect x="%s" y="%s" width="%s" height="%s" class="frame" fill="none" stroke="#888"/>`, f2(p.x0), f2(p.y0), f2(p.w), f2(p.h))
	s.text(p.x0-4, p.y0+4, "end", "tick", strconv.Itoa(maxC))
	s.text(p.x0-4, p.y0+p.h, "end", "tick", "0")
	bw := (gw - 12) / float64(len(runs))
	for ci, c := range cats {
		gx := p.X(float64(ci)) + 6
		for k, r := range runs {
			n := 0
			if ci < len(counts[k]) {
				n = counts[k][ci]
			}
			h := p.h * float64(n) / float64(maxC)
			x := gx + bw*float64(k)
			s.raw(`<rect x="%s" y="%s" width="%s" height="%s" class="bar s%d" fill="%s"><title>%s, %s: %d</title></rect>`,
				f2(x), f2(p.y0+p.h-h), f2(math.Max(bw-2, 1)), f2(h), r.idx%nSeries, seriesColor(r.idx), esc(r.name), esc(c), n)
			s.raw(`<text x="%s" y="%s" text-anchor="middle" class="count">%d</text>`, f2(x+bw/2-1), f2(p.y0+p.h-h-3), n)
		}
		s.text(p.X(float64(ci)+0.5), p.y0+p.h+13, "middle", "tick", c)
	}
	s.text(p.x0+p.w/2, p.y0+p.h+30, "middle", "axis", xlabel)
	return s.close()
}

// historyChart draws one metric of each run of a set in start order.
func historyChart(id, metric string, labels []string, vals []metrics.Estimate, mark []bool) string {
	const H = 220
	n := len(vals)
	W := max(300, 60+40*n)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		for _, x := range []float64{v.Value, v.Lo, v.Hi} {
			if !math.IsNaN(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	lo = math.Max(0, math.Floor(lo*20)/20)
	hi = math.Min(1, math.Ceil(hi*20)/20)
	if hi <= lo {
		hi = lo + 0.05
	}
	p := plot{x0: 46, y0: 12, w: float64(W - 60), h: 150, xmin: -0.5, xmax: float64(n) - 0.5, ymin: lo, ymax: hi}
	var desc strings.Builder
	fmt.Fprintf(&desc, "%s of each run of the question set, oldest first:", metric)
	for i, v := range vals {
		fmt.Fprintf(&desc, " %s %s;", labels[i], f3(v.Value))
	}
	s := newSVG(id, W, H, metric+" over time", desc.String())
	step := (hi - lo) / 4
	s.axes(p, nil, ticks(lo, hi, step), "run (oldest → newest)", metric)
	xs, ys := make([]float64, n), make([]float64, n)
	for i, v := range vals {
		xs[i], ys[i] = float64(i), v.Value
		if v.HasInterval() {
			s.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" class="line s0" stroke="#0072b2" stroke-width="1"/>`, f2(p.X(float64(i))), f2(p.Y(v.Lo)), f2(p.X(float64(i))), f2(p.Y(v.Hi)))
		}
	}
	s.polyline(p, xs, ys, 0, false)
	for i, v := range vals {
		if !v.Defined() {
			continue
		}
		r := 3.0
		if mark[i] {
			r = 5
		}
		s.raw(`<circle cx="%s" cy="%s" r="%s" class="dot s0" fill="#0072b2"><title>%s: %s %s</title></circle>`, f2(p.X(float64(i))), f2(p.Y(v.Value)), f2(r), esc(labels[i]), esc(metric), f3(v.Value))
		if n <= 12 {
			s.raw(`<text x="%s" y="%s" text-anchor="middle" class="tick">%s</text>`, f2(p.X(float64(i))), f2(p.y0+p.h+13), esc(shortLabel(labels[i])))
		}
	}
	return s.close()
}

// shortLabel is the date part of a history label ("12-02 10:15").
func shortLabel(s string) string {
	if r := []rune(s); len(r) > 11 {
		return string(r[:11])
	}
	return s
}

// distChart draws a flipped item's two distributions side by side: for
// each outcome shown, A's and B's probability as two horizontal bars.
func distChart(id, title string, outcomes []string, pa, pb []float64, label int, nameA, nameB string) string {
	const W = 330
	rowH := 24.0
	H := int(18 + rowH*float64(len(outcomes)) + 6)
	var desc strings.Builder
	fmt.Fprintf(&desc, "Probabilities of %s (A) and %s (B):", nameA, nameB)
	for i, o := range outcomes {
		fmt.Fprintf(&desc, " %s A %s B %s;", o, f3(pa[i]), f3(pb[i]))
	}
	s := newSVG(id, W, H, title, desc.String())
	lx, bx, bwid := 146.0, 150.0, 148.0
	s.raw(`<rect x="%s" y="2" width="9" height="9" class="bar s0" fill="%s"/>`, f2(bx), seriesColor(0))
	s.text(bx+12, 10, "start", "tick", "A")
	s.raw(`<rect x="%s" y="2" width="9" height="9" class="bar s1" fill="%s"/>`, f2(bx+40), seriesColor(1))
	s.text(bx+52, 10, "start", "tick", "B")
	for i, o := range outcomes {
		y := 16 + rowH*float64(i)
		name := o
		if r := []rune(name); len(r) > 24 {
			name = string(r[:23]) + "…"
		}
		cls := "hl"
		if i == label {
			cls = "hl lab"
			name = "✓ " + name
		}
		s.raw(`<text x="%s" y="%s" text-anchor="end" class="%s" font-size="10">%s<title>%s</title></text>`, f2(lx), f2(y+14), cls, esc(name), esc(o))
		for k, v := range []float64{pa[i], pb[i]} {
			if math.IsNaN(v) {
				continue
			}
			by := y + 2 + float64(k)*10
			s.raw(`<rect x="%s" y="%s" width="%s" height="9" class="bar s%d" fill="%s"/>`, f2(bx), f2(by), f2(math.Max(bwid*v, 0.5)), k, seriesColor(k))
			s.raw(`<text x="%s" y="%s" class="count">%s</text>`, f2(bx+bwid*v+3), f2(by+8), strconv.FormatFloat(v, 'f', 2, 64))
		}
	}
	return s.close()
}

// topOutcomes picks which outcomes of a flipped choice item to draw: the
// label, both decisions, and the next most probable of either side, at
// most limit, in the question's order.
func topOutcomes(k int, pa, pb []float64, must []int, limit int) []int {
	keep := map[int]bool{}
	for _, m := range must {
		if m >= 0 && m < k {
			keep[m] = true
		}
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	mx := func(i int) float64 {
		v := 0.0
		if i < len(pa) && !math.IsNaN(pa[i]) {
			v = pa[i]
		}
		if i < len(pb) && !math.IsNaN(pb[i]) {
			v = math.Max(v, pb[i])
		}
		return v
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case mx(a) > mx(b):
			return -1
		case mx(a) < mx(b):
			return 1
		}
		return 0
	})
	for _, i := range idx {
		if len(keep) >= limit {
			break
		}
		if mx(i) > 0 {
			keep[i] = true
		}
	}
	out := make([]int, 0, len(keep))
	for i := range keep {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// sideLabel is a run's short name in a chart: A and B for the first two,
// #3, #4, … after.
func sideLabel(i int) string {
	if i < 2 {
		return string(rune('A' + i))
	}
	return "#" + strconv.Itoa(i+1)
}
