// Package htmlcheck reads the numbers back out of an HTML report
// (evals/htmlreport) and checks them against the JSON of the structures
// it was made from, for the tests of the report and of the commands that
// write it.
package htmlcheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var attrRE = regexp.MustCompile(`\s([a-zA-Z-]+)="([^"]*)"`)

// cellsOf reads every data-* tagged element of a report back.
func cellsOf(h string) []map[string]string {
	tagRE := regexp.MustCompile(`<(?:td|p|tr|span)\b[^>]*\sdata-m="[^"]*"[^>]*>`)
	var out []map[string]string
	for _, tag := range tagRE.FindAllString(h, -1) {
		a := map[string]string{}
		for _, m := range attrRE.FindAllStringSubmatch(tag, -1) {
			a[m[1]] = unesc(m[2])
		}
		out = append(out, a)
	}
	return out
}

func unesc(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
}

// jsonPath follows a dotted path ("choice.macro_f1") in decoded JSON.
func jsonPath(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// sameNumber compares a data-* value with a JSON number (null = "").
func sameNumber(attr string, j any) bool {
	if j == nil {
		return attr == ""
	}
	f, ok := j.(float64)
	if !ok {
		return false
	}
	g, err := strconv.ParseFloat(attr, 64)
	return err == nil && g == f
}

// Check compares every number a report tags (data-run/data-q/data-m with
// data-v, data-lo, data-hi; data-cmp for the comparison) with the decoded
// JSON of the run reports (show --json) and of the comparison (compare
// --json, nil for none), bit for bit, and checks that every headline
// metric of every question of every run, every delta and every verdict
// was tagged. It returns one message per mismatch.
func Check(h string, runs []any, cmp any) []string {
	t := &recorder{}
	byRun := map[string]map[string]any{}
	for _, r := range runs {
		id, _ := jsonPath(r, "run.id")
		qs := map[string]any{}
		list, _ := jsonPath(r, "questions")
		for _, q := range list.([]any) {
			qs[q.(map[string]any)["question"].(string)] = q
		}
		byRun[id.(string)] = qs
	}
	seen := map[string]int{}
	for _, c := range cellsOf(h) {
		switch {
		case c["data-run"] != "":
			q, ok := byRun[c["data-run"]][c["data-q"]]
			if !ok {
				t.Errorf("cell for unknown run/question %v", c)
				continue
			}
			m := c["data-m"]
			j, ok := jsonPath(q, m)
			if !ok {
				t.Errorf("run %s question %s: %s not in the JSON", c["data-run"], c["data-q"], m)
				continue
			}
			if e, isEst := j.(map[string]any); isEst {
				if !sameNumber(c["data-v"], e["value"]) {
					t.Errorf("run %s %s %s: HTML %q, JSON %v", c["data-run"], c["data-q"], m, c["data-v"], e["value"])
				}
				if iv, _ := e["interval"].(string); iv != c["data-int"] {
					t.Errorf("run %s %s %s: HTML interval method %q, JSON %q", c["data-run"], c["data-q"], m, c["data-int"], iv)
				}
				if lo, has := e["lo"]; has && (!sameNumber(c["data-lo"], lo) || !sameNumber(c["data-hi"], e["hi"])) {
					t.Errorf("run %s %s %s: HTML interval [%q, %q], JSON [%v, %v]", c["data-run"], c["data-q"], m, c["data-lo"], c["data-hi"], lo, e["hi"])
				}
			} else if !sameNumber(c["data-v"], j) {
				t.Errorf("run %s %s %s: HTML %q, JSON %v", c["data-run"], c["data-q"], m, c["data-v"], j)
			}
			seen[c["data-run"]+"/"+c["data-q"]+"/"+m]++
		case c["data-hist"] != "":
			q, ok := byRun[c["data-hist"]][c["data-q"]]
			if !ok {
				continue // a run of the history not given here
			}
			j, _ := jsonPath(q, c["data-m"]+".value")
			if !sameNumber(c["data-v"], j) {
				t.Errorf("history run %s %s %s: HTML %q, JSON %v", c["data-hist"], c["data-q"], c["data-m"], c["data-v"], j)
			}
			seen["hist/"+c["data-hist"]+"/"+c["data-q"]+"/"+c["data-m"]]++
		case c["data-cmp"] != "" && cmp != nil:
			if c["data-cmp"] == "*" {
				if v, _ := jsonPath(cmp, "verdict"); v != c["data-v"] {
					t.Errorf("overall verdict: HTML %q, JSON %v", c["data-v"], v)
				}
				seen["cmp/*"]++
				continue
			}
			var qc map[string]any
			list, _ := jsonPath(cmp, "questions")
			for _, q := range list.([]any) {
				if q.(map[string]any)["question"] == c["data-cmp"] {
					qc = q.(map[string]any)
				}
			}
			if qc == nil {
				t.Errorf("comparison cell of unknown question %v", c)
				continue
			}
			switch m := c["data-m"]; {
			case m == "verdict":
				if qc["verdict"] != c["data-v"] {
					t.Errorf("%s verdict: HTML %q, JSON %v", c["data-cmp"], c["data-v"], qc["verdict"])
				}
			case m == "mcnemar":
				mc := qc["mcnemar"].(map[string]any)
				if !sameNumber(c["data-v"], mc["p"]) || !sameNumber(c["data-holm"], mc["p_holm"]) {
					t.Errorf("%s McNemar: HTML %q/%q, JSON %v/%v", c["data-cmp"], c["data-v"], c["data-holm"], mc["p"], mc["p_holm"])
				}
			case strings.HasPrefix(m, "delta."):
				var dl map[string]any
				for _, d := range qc["deltas"].([]any) {
					if d.(map[string]any)["metric"] == strings.TrimPrefix(m, "delta.") {
						dl = d.(map[string]any)
					}
				}
				if dl == nil {
					t.Errorf("%s %s not in the JSON", c["data-cmp"], m)
					continue
				}
				de := dl["delta"].(map[string]any)
				if !sameNumber(c["data-a"], dl["a"].(map[string]any)["value"]) || !sameNumber(c["data-b"], dl["b"].(map[string]any)["value"]) ||
					!sameNumber(c["data-v"], de["value"]) || !sameNumber(c["data-lo"], de["lo"]) || !sameNumber(c["data-hi"], de["hi"]) || !sameNumber(c["data-p"], dl["p"]) {
					t.Errorf("%s %s: HTML %v, JSON %v", c["data-cmp"], m, c, dl)
				}
			default:
				t.Errorf("unknown comparison cell %v", c)
			}
			seen["cmp/"+c["data-cmp"]+"/"+c["data-m"]]++
		}
	}
	for run, qs := range byRun {
		for q := range qs {
			for _, m := range []string{"accuracy", "mean_confidence", "overconfidence", "ece", "ece_mass", "brier", "log_loss", "selective.aurc", "noise.ece_floor_mean"} {
				if seen[run+"/"+q+"/"+m] == 0 {
					t.Errorf("run %s question %s: %s is not in the HTML", run, q, m)
				}
			}
		}
	}
	if cmp != nil {
		list, _ := jsonPath(cmp, "questions")
		for _, q := range list.([]any) {
			id := q.(map[string]any)["question"].(string)
			if seen["cmp/"+id+"/verdict"] == 0 {
				t.Errorf("question %s: verdict not in the HTML", id)
			}
			for _, d := range q.(map[string]any)["deltas"].([]any) {
				if seen["cmp/"+id+"/delta."+d.(map[string]any)["metric"].(string)] == 0 {
					t.Errorf("question %s: delta %v not in the HTML", id, d.(map[string]any)["metric"])
				}
			}
		}
		if seen["cmp/*"] == 0 {
			t.Errorf("overall verdict not in the HTML")
		}
	}
	return t.errs
}

// recorder collects errors instead of failing a test.
type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
