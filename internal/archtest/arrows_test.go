package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/jevlab/jevlab/"

// rule says which project packages a package (matched by prefix: "evals/"
// covers every evals package) may import. A package no rule matches fails
// the test, so a new top-level folder must be given its place here.
type rule struct {
	pkg   string   // package path relative to the module; a trailing / matches the subtree
	allow []string // allowed imports, same matching
	deny  []string // denied even when allow matches (more specific)
	why   string
}

// rules are design.md's arrows: cmd → tui; both → the use-case layer
// (evals/workbench) → evals → provider; evals → store; store knows provider;
// provider imports nothing of the project; tui is presentation only.
var rules = []rule{
	{pkg: "cmd/", allow: []string{""}, why: "main wires everything"},
	{pkg: "tui", allow: []string{"evals/workbench", "evals/questionset", "evals/lint", "provider", "internal/"},
		deny: []string{"provider/systemone", "provider/fixtures", "provider/standin", "internal/archtest"},
		why:  "screens present what evals/workbench computed: they never measure (metrics, compare, report), run (runner), load (dataset, store) or talk HTTP"},
	{pkg: "evals/workbench", allow: []string{"evals/", "store", "provider", "provider/", "internal/"}, why: "the use-case layer sits on evals, store and provider (provider/standin and provider/systemone: the in-process stand-in it starts)"},
	{pkg: "evals/", allow: []string{"evals/", "store", "provider", "internal/"}, deny: []string{"evals/workbench"},
		why: "evals never reach up into the use-case layer, the workbench or main"},
	{pkg: "store", allow: []string{"provider", "internal/"}, why: "store knows provider's answer types, never evals or the front ends"},
	{pkg: "provider/", allow: []string{"provider", "internal/"}, why: "the contract's packages import only the contract"},
	{pkg: "provider", allow: []string{"internal/"}, why: "provider imports nothing of the project"},
	{pkg: "internal/", allow: []string{"internal/"}, why: "helpers depend on nothing above them"},
	{pkg: "fixtures", allow: []string{"evals/questionset", "provider", "internal/"}, why: "the shipped examples parse as question sets"},
}

func matches(path, pattern string) bool {
	if pattern == "" {
		return true
	}
	if strings.HasSuffix(pattern, "/") {
		return strings.HasPrefix(path, pattern) || path == strings.TrimSuffix(pattern, "/")
	}
	return path == pattern
}

func ruleFor(pkg string) *rule {
	// The most specific rule wins: an exact match before a subtree.
	for i := range rules {
		if !strings.HasSuffix(rules[i].pkg, "/") && rules[i].pkg == pkg {
			return &rules[i]
		}
	}
	var best *rule
	for i := range rules {
		r := &rules[i]
		if strings.HasSuffix(r.pkg, "/") && matches(pkg, r.pkg) && (best == nil || len(r.pkg) > len(best.pkg)) {
			best = r
		}
	}
	return best
}

func allowed(r *rule, imp string) bool {
	for _, d := range r.deny {
		if matches(imp, d) {
			return false
		}
	}
	for _, a := range r.allow {
		if matches(imp, a) {
			return true
		}
	}
	return false
}

type listed struct {
	ImportPath string
	Imports    []string
}

// TestImportArrows lists every package of the module with `go list` and
// checks each project import against the rules.
func TestImportArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, module)
		if pkg == p.ImportPath {
			continue
		}
		n++
		r := ruleFor(pkg)
		if r == nil {
			t.Errorf("%s: no import rule covers this package; give it its place in design.md and in rules", pkg)
			continue
		}
		for _, imp := range p.Imports {
			rel := strings.TrimPrefix(imp, module)
			if rel == imp || rel == pkg {
				continue
			}
			if !allowed(r, rel) {
				t.Errorf("%s imports %s: not allowed (%s)", pkg, rel, r.why)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list found only %d packages", n)
	}
}

// TestRulesCatchViolations proves the rules can fail: imports design.md
// forbids are refused.
func TestRulesCatchViolations(t *testing.T) {
	bad := [][2]string{
		{"tui", "evals/metrics"}, {"tui", "evals/compare"}, {"tui", "evals/runner"}, {"tui", "store"},
		{"tui", "evals/report"}, {"tui", "evals/dataset"}, {"tui", "provider/systemone"},
		{"provider", "store"}, {"provider/fixtures", "store"}, {"store", "evals/runner"},
		{"evals/metrics", "evals/workbench"}, {"evals/workbench", "tui"}, {"internal/bars", "provider"},
	}
	for _, b := range bad {
		if allowed(ruleFor(b[0]), b[1]) {
			t.Errorf("%s → %s is allowed, want refused", b[0], b[1])
		}
	}
	good := [][2]string{{"tui", "evals/workbench"}, {"tui", "provider"}, {"evals/workbench", "evals/metrics"}, {"evals/report", "store"}, {"cmd/jevlab", "tui"}}
	for _, g := range good {
		if !allowed(ruleFor(g[0]), g[1]) {
			t.Errorf("%s → %s is refused, want allowed", g[0], g[1])
		}
	}
}
