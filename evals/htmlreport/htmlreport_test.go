package htmlreport

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/internal/htmlcheck"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

func inputs(t *testing.T) map[string]*Input {
	return map[string]*Input{"banking77": b77Input(t), "entity-merge": entityInput(t), "demo-triage": demoInput(t)}
}

var (
	refAttrRE = regexp.MustCompile(`(?i)\s(src|href|srcset|action|formaction|poster|background|xlink:href|ping|cite|longdesc|manifest|data)\s*=\s*"([^"]*)"`)
	svgRE     = regexp.MustCompile(`<svg\b[^>]*>`)
	attrRE    = regexp.MustCompile(`\s([a-zA-Z-]+)="([^"]*)"`)
)

// TestSelfContained: every report carries the strict CSP, no script, and
// no reference to anything outside the file (no URL, no src, no href but
// in-page anchors, no CSS url() or @import).
func TestSelfContained(t *testing.T) {
	for name, in := range inputs(t) {
		t.Run(name, func(t *testing.T) {
			h := render(t, in)
			if !strings.Contains(h, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`) {
				t.Error("no strict Content-Security-Policy meta tag")
			}
			if i := strings.Index(h, "<meta http-equiv"); i < 0 || i > strings.Index(h, "<style") {
				t.Error("the CSP must come before the style sheet")
			}
			low := strings.ToLower(h)
			for _, bad := range []string{"<script", "http:", "https:", "url(", "@import", "<link", "<iframe", "<object", "<embed", "<img", "javascript:"} {
				if strings.Contains(low, bad) {
					i := strings.Index(low, bad)
					t.Errorf("report contains %q: …%s…", bad, h[max(0, i-60):min(len(h), i+60)])
				}
			}
			for _, m := range refAttrRE.FindAllStringSubmatch(h, -1) {
				if strings.EqualFold(m[1], "href") && strings.HasPrefix(m[2], "#") {
					continue
				}
				t.Errorf("reference attribute %s=%q", m[1], m[2])
			}
		})
	}
}

// TestEverySVGHasSizeAndText: every chart has explicit nonzero width and
// height, a viewBox of the same size, role img, and a title and
// description it is labelled by.
func TestEverySVGHasSizeAndText(t *testing.T) {
	for name, in := range inputs(t) {
		h := render(t, in)
		tags := svgRE.FindAllString(h, -1)
		if len(tags) < 3 {
			t.Fatalf("%s: only %d charts", name, len(tags))
		}
		if strings.Count(h, "</svg>") != len(tags) {
			t.Errorf("%s: %d <svg> but %d </svg>", name, len(tags), strings.Count(h, "</svg>"))
		}
		for _, tag := range tags {
			a := map[string]string{}
			for _, m := range attrRE.FindAllStringSubmatch(tag, -1) {
				a[m[1]] = m[2]
			}
			w, errW := strconv.Atoi(a["width"])
			hh, errH := strconv.Atoi(a["height"])
			if errW != nil || errH != nil || w <= 0 || hh <= 0 {
				t.Errorf("%s: chart without a positive size: %s", name, tag)
				continue
			}
			if a["viewBox"] != fmt.Sprintf("0 0 %d %d", w, hh) {
				t.Errorf("%s: viewBox %q for %dx%d", name, a["viewBox"], w, hh)
			}
			if a["role"] != "img" || a["aria-labelledby"] == "" {
				t.Errorf("%s: chart without role/aria: %s", name, tag)
			}
			for _, id := range strings.Fields(a["aria-labelledby"]) {
				if !strings.Contains(h, `id="`+id+`">`) {
					t.Errorf("%s: aria-labelledby %s points nowhere", name, id)
				}
			}
		}
		if n := strings.Count(h, "<desc id="); n != len(tags) {
			t.Errorf("%s: %d charts, %d descriptions", name, len(tags), n)
		}
	}
}

// TestNumbersReadBack parses the numbers out of the document and finds
// each equal, to the last bit, to the JSON of the structures it was given.
func TestNumbersReadBack(t *testing.T) {
	for name, in := range inputs(t) {
		t.Run(name, func(t *testing.T) {
			var runs []any
			for _, r := range in.Runs {
				runs = append(runs, decoded(t, r))
			}
			var cmp any
			if in.Comparison != nil {
				cmp = decoded(t, in.Comparison)
			}
			for _, e := range htmlcheck.Check(render(t, in), runs, cmp) {
				t.Error(e)
			}
		})
	}
}

// TestNumbersReadBackCatchesAChange proves the read-back check can fail:
// a report whose accuracy was altered after rendering is caught.
func TestNumbersReadBackCatchesAChange(t *testing.T) {
	in := entityInput(t)
	h := render(t, in)
	run := decoded(t, in.Runs[0])
	acc := in.Runs[0].Questions[0].Accuracy.Value
	bad := strings.Replace(h, `data-m="accuracy" data-v="`+full(acc)+`"`, `data-m="accuracy" data-v="`+full(acc+1e-12)+`"`, 1)
	if bad == h {
		t.Fatal("accuracy cell not found")
	}
	if len(htmlcheck.Check(bad, []any{run}, nil)) == 0 {
		t.Error("an altered accuracy passed the read-back check")
	}
}

// TestBanking77Content: the 77-class heat map labels every class, the
// comparison shows the verdict, the paired tests on ECE and Brier, the
// flips (all listed, the largest drawn side by side), and the history.
func TestBanking77Content(t *testing.T) {
	in := b77Input(t)
	h := render(t, in)
	q := in.Runs[0].Questions[0]
	if len(q.Classes) != 77 {
		t.Fatalf("%d classes", len(q.Classes))
	}
	for i, c := range q.Classes {
		if !strings.Contains(h, ">"+esc(c)+" "+strconv.Itoa(i+1)+"</text>") {
			t.Errorf("heat map lacks row label %q", c)
		}
	}
	if got := strings.Count(h, "Confusion matrix, "); got < 2 {
		t.Errorf("%d heat maps, want one per run", got)
	}
	qc := in.Comparison.Questions[0]
	for _, want := range []string{
		"Verdict: <strong>" + strings.ToUpper(in.Comparison.Verdict),
		"Tests on the differences", "ece Δ", "ece_mass Δ", "brier Δ",
		"equal-width bins", "equal-mass bins", "Accuracy–coverage", "Over time",
		fmt.Sprintf("(%d: %d fixed, %d broken, %d changed but still wrong)", qc.Flips.Fixed+qc.Flips.Broken+qc.Flips.Changed, qc.Flips.Fixed, qc.Flips.Broken, qc.Flips.Changed),
	} {
		if !strings.Contains(h, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(h, `<figure class="flip`); n != min(DefaultFlipCharts, len(qc.Flips.Items)) {
		t.Errorf("%d flip charts, want %d", n, min(DefaultFlipCharts, len(qc.Flips.Items)))
	}
	if n := strings.Count(h, `<tr class="k-`); n != len(qc.Flips.Items) {
		t.Errorf("%d flip rows, want every listed flip (%d)", n, len(qc.Flips.Items))
	}
	// a bootstrap p-value of 0 never reads 0
	if strings.Contains(h, "bootstrap p = 0 ") || strings.Contains(h, `<td class="num">0</td><td><span class="worse">`) {
		t.Error("a bootstrap p-value reads 0")
	}
}

// TestScoreCharts: demo-triage's score question gets the |error|
// distribution, its counts summing to the labelled answers.
func TestScoreCharts(t *testing.T) {
	in := demoInput(t)
	h := render(t, in)
	if !strings.Contains(h, "|error| in levels") {
		t.Fatal("no |error| chart for the score question")
	}
	var q *metrics.QuestionReport
	for _, x := range in.Runs[0].Questions {
		if x.Type == provider.Score {
			q = x
		}
	}
	re := regexp.MustCompile(regexp.QuoteMeta(in.Runs[0].Run.ID) + `[^:]*:((?: \d+ off \d+;)+)`)
	m := re.FindStringSubmatch(h)
	if m == nil {
		t.Fatal("no |error| description")
	}
	sum := 0
	for _, part := range regexp.MustCompile(`off (\d+)`).FindAllStringSubmatch(m[1], -1) {
		n, _ := strconv.Atoi(part[1])
		sum += n
	}
	if sum != q.Labelled {
		t.Errorf("|error| counts sum to %d, %d labelled", sum, q.Labelled)
	}
}

// TestEscapesStrangers: ids, names and labels from a run are text, never
// markup.
func TestEscapesStrangers(t *testing.T) {
	in := demoInput(t)
	in.Runs[0].Run.Name = `<script>alert(1)</script>`
	in.Runs[0].Run.Model = `"><img src=x onerror=alert(1)>`
	for i := range in.Comparison.Questions {
		for j := range in.Comparison.Questions[i].Flips.Items {
			in.Comparison.Questions[i].Flips.Items[j].Label = `</td><iframe src="http://evil">`
		}
	}
	in.Runs[1].Questions[0].Classes = []string{`<b onmouseover="x">`, "y"}
	h := render(t, in)
	low := strings.ToLower(h)
	for _, bad := range []string{"<script", "<img", "<iframe", "<b onmouseover", "http:"} {
		if strings.Contains(low, bad) {
			t.Errorf("unescaped %q in the report", bad)
		}
	}
	if !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the run name is not shown escaped")
	}
}

func TestWriteRefusesBadInput(t *testing.T) {
	if err := Write(&strings.Builder{}, &Input{}); err == nil || !strings.Contains(err.Error(), "no runs") {
		t.Errorf("no runs: %v", err)
	}
	in := demoInput(t)
	in.Runs = in.Runs[:1]
	if err := Write(&strings.Builder{}, in); err == nil || !strings.Contains(err.Error(), "exactly two runs") {
		t.Errorf("comparison of one run: %v", err)
	}
}

// largeInput is a synthetic 100,000-item run of a 10-option choice and a
// noul against a second run that flips ~12% of the decisions, with every
// flip listed (MaxFlips unbounded), computed without bootstrap (the HTML
// writer's cost does not depend on B).
func largeInput(t testing.TB, n int) *Input {
	t.Helper()
	const k = 10
	opts := make([]provider.Option, k)
	for i := range opts {
		opts[i] = provider.Option{Label: fmt.Sprintf("class_%02d_with_a_longer_label", i)}
	}
	qs := provider.Questions{
		{ID: "intent", Question: provider.Question{Type: provider.Choice, Instructions: provider.String("Which?"), Options: opts}},
		{ID: "flag", Question: provider.Question{Type: provider.Noul, Instructions: provider.String("Is it?")}},
	}
	mk := func(shift uint64) map[string][]metrics.Obs {
		obs := map[string][]metrics.Obs{}
		rng := metrics.NewRand(shift, 0)
		for i := 0; i < n; i++ {
			id := "item-" + strconv.Itoa(i)
			label := i % k
			pick := label
			if rng.Float64() < 0.25 {
				pick = rng.IntN(k)
			}
			probs := make([]float64, k)
			top := 0.5 + 0.5*rng.Float64()
			for j := range probs {
				probs[j] = (1 - top) / (k - 1)
			}
			probs[pick] = top
			obs["intent"] = append(obs["intent"], metrics.Obs{ItemID: id, Label: label, HasLabel: true,
				Answer: &provider.Answer{ID: "intent", Type: provider.Choice, Choice: opts[pick].Label, Probs: probs, Confidence: top, HasConfidence: true}})
			y := i % 2
			p := math.Round((0.3+0.4*float64(y)+0.7*(rng.Float64()-0.5))*100) / 100
			obs["flag"] = append(obs["flag"], metrics.Obs{ItemID: id, Label: y, HasLabel: true, Answer: &provider.Answer{ID: "flag", Type: provider.Noul, P: p}})
		}
		return obs
	}
	oa, ob := mk(1), mk(2)
	set := &questionset.Set{Name: "large", Questions: qs}
	opt := metrics.Options{Seed: 1, Bootstrap: -1}
	ra := report.Build(&store.Run{ID: "r-large-a", SetName: "large", Status: store.StatusDone, Done: n, Total: n, StartedAt: fixedStart}, set, oa, opt, questionset.Gate{})
	rb := report.Build(&store.Run{ID: "r-large-b", SetName: "large", Status: store.StatusDone, Done: n, Total: n, StartedAt: fixedStart.Add(time.Hour)}, set, ob, opt, questionset.Gate{})
	da := compare.RunData{ID: "r-large-a", Questions: qs, Obs: oa}
	db := compare.RunData{ID: "r-large-b", Questions: qs, Obs: ob}
	c := compare.Compare(da, db, compare.Options{Seed: 1, Bootstrap: -1, MaxFlips: math.MaxInt32})
	return &Input{Runs: []*report.RunReport{ra, rb}, Comparison: c, Answer: AnswerLookup(da, db), History: []*report.RunReport{ra, rb}}
}

// TestLargeRunBounded: the report of a 100,000-item comparison, every
// flip listed, is written in under 2 s and is under 5 MB.
func TestLargeRunBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-item run")
	}
	in := largeInput(t, 100_000)
	flips := 0
	for _, q := range in.Comparison.Questions {
		flips += len(q.Flips.Items)
	}
	if flips < 10_000 {
		t.Fatalf("only %d flips: the test must list many", flips)
	}
	start := time.Now()
	var b strings.Builder
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	t.Logf("100,000 items, %d flips listed: %.2f MB in %v", flips, float64(b.Len())/1e6, el)
	if el > raceSlowdown*2*time.Second {
		t.Errorf("written in %v, want under 2 s (×%d under the race detector)", el, raceSlowdown)
	}
	if b.Len() > 5_000_000 {
		t.Errorf("%d bytes, want under 5 MB", b.Len())
	}
	if n := strings.Count(b.String(), `<figure class="flip`); n != 2*DefaultFlipCharts {
		t.Errorf("%d flip charts, want %d per question", n, DefaultFlipCharts)
	}
	for _, q := range in.Comparison.Questions {
		for _, it := range q.Flips.Items[:100] {
			if !strings.Contains(b.String(), it.ItemID+" "+p2(it.PTrueA)+"→"+p2(it.PTrueB)) {
				t.Fatalf("flip %s of %s not listed", it.ItemID, q.ID)
			}
		}
	}
}

func BenchmarkWriteLarge(b *testing.B) {
	in := largeInput(b, 100_000)
	b.ResetTimer()
	for b.Loop() {
		var sb strings.Builder
		if err := Write(&sb, in); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(sb.Len()))
	}
}

func decoded(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
