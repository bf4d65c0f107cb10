package htmlreport

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// esc escapes text for HTML and SVG content and attribute values. Every
// string that comes from a run (ids, labels, model names) goes through it.
func esc(s string) string { return html.EscapeString(s) }

// full writes a float at full precision (strconv 'g', -1) for data-*
// attributes, so a reader gets back the exact float64 the JSON carries;
// "" for NaN and ±Inf (JSON's null).
func full(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// f3 formats a value for reading: three decimals, "—" when undefined.
func f3(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// f2 formats a coordinate for SVG (two decimals are sub-pixel).
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// svg is one chart being drawn: a fixed coordinate system (width × height
// user units, also its intrinsic size in CSS pixels) with a title and
// description for assistive technology.
type svg struct {
	b    strings.Builder
	w, h int
}

// newSVG opens an <svg> with explicit width, height and viewBox, role
// "img", and <title>/<desc> (aria-labelledby points at both).
func newSVG(id string, w, h int, title, desc string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-t %s-d">`, w, h, w, h, id, id)
	fmt.Fprintf(&s.b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, esc(title), id, esc(desc))
	return s
}

func (s *svg) raw(format string, a ...any) { fmt.Fprintf(&s.b, format, a...) }

// text draws a label; anchor is start, middle or end.
func (s *svg) text(x, y float64, anchor, class, t string) {
	fmt.Fprintf(&s.b, `<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`, f2(x), f2(y), anchor, class, esc(t))
}

func (s *svg) close() string {
	s.b.WriteString("</svg>")
	return s.b.String()
}

// plot maps data coordinates into a rectangle of an svg.
type plot struct {
	x0, y0, w, h           float64 // the plotting area in user units (y0 is the top)
	xmin, xmax, ymin, ymax float64
}

func (p plot) X(v float64) float64 { return p.x0 + (v-p.xmin)/(p.xmax-p.xmin)*p.w }
func (p plot) Y(v float64) float64 { return p.y0 + p.h - (v-p.ymin)/(p.ymax-p.ymin)*p.h }

// axes draws the frame, grid lines and tick labels at the given ticks,
// and the axis titles.
func (s *svg) axes(p plot, xt, yt []float64, xlabel, ylabel string) {
	for _, t := range xt {
		x := p.X(t)
		s.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid" stroke="#ddd"/>`, f2(x), f2(p.y0), f2(x), f2(p.y0+p.h))
		s.text(x, p.y0+p.h+13, "middle", "tick", tick(t))
	}
	for _, t := range yt {
		y := p.Y(t)
		s.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid" stroke="#ddd"/>`, f2(p.x0), f2(y), f2(p.x0+p.w), f2(y))
		s.text(p.x0-4, y+3, "end", "tick", tick(t))
	}
	s.raw(`<rect x="%s" y="%s" width="%s" height="%s" class="frame" fill="none" stroke="#888"/>`, f2(p.x0), f2(p.y0), f2(p.w), f2(p.h))
	s.text(p.x0+p.w/2, p.y0+p.h+28, "middle", "axis", xlabel)
	s.raw(`<text x="%s" y="%s" text-anchor="middle" class="axis" transform="rotate(-90 %s %s)">%s</text>`,
		f2(p.x0-30), f2(p.y0+p.h/2), f2(p.x0-30), f2(p.y0+p.h/2), esc(ylabel))
}

func tick(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// ticks returns evenly spaced ticks from lo to hi with step.
func ticks(lo, hi, step float64) []float64 {
	var out []float64
	for v := lo; v <= hi+1e-9; v += step {
		out = append(out, math.Round(v*1e6)/1e6)
	}
	return out
}

// polyline draws a series; points with a NaN coordinate are skipped.
func (s *svg) polyline(p plot, xs, ys []float64, series int, dashed bool) {
	var pts []string
	for i := range xs {
		if math.IsNaN(xs[i]) || math.IsNaN(ys[i]) {
			continue
		}
		pts = append(pts, f2(p.X(xs[i]))+","+f2(p.Y(ys[i])))
	}
	if len(pts) == 0 {
		return
	}
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="4 3"`
	}
	s.raw(`<polyline points="%s" class="line s%d" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(pts, " "), series%nSeries, seriesColor(series), dash)
}

// nSeries is how many distinct run colours the palette has.
const nSeries = 6

// seriesColor is a run's colour as a presentation attribute (light
// scheme; the style sheet overrides it for dark mode). The palette is
// Okabe–Ito, distinguishable with the common colour-vision deficiencies.
func seriesColor(i int) string {
	return [nSeries]string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"}[i%nSeries]
}
