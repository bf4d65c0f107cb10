package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider/standin"
)

// compare BASE PROBE pairs a shuffle probe (answers mapped back to the
// set's order) and a repeat probe with their base item by item; for a
// distractor probe it pairs the questions it left alone and names the
// choice it changed as not comparable with the reason; for noul-vs-choice
// (other questions entirely) every question is named not comparable and
// the command exits 2 saying the runs share no answered item.
func TestCompareProbeRuns(t *testing.T) {
	isolate(t)
	words := []string{"charges", "invoice", "refund", "delivery", "late", "parcel", "login", "password", "today"}
	var states []string
	for i := 0; i < 30; i++ {
		states = append(states, fmt.Sprintf("ticket %d %s %s", i, words[i%len(words)], words[(i*5+2)%len(words)]))
	}
	dir, set := writeProbeFiles(t, states)
	_, url := startStandin(t, standin.Config{Synthetic: true, Seed: 2, Fragile: &standin.Fragile{PositionBias: 0.3, NegationGap: 0.15}})
	db := filepath.Join(dir, "j.db")
	reID := regexp.MustCompile(`runs (r-[0-9a-z-]+)(?:, r-[0-9a-z-]+)*(?:  base (r-[0-9a-z-]+))?`)
	want := map[string]struct {
		code int
		has  []string
	}{
		"shuffle": {0, []string{"question team (choice): NO SIGNIFICANT CHANGE — no labels: drift only", "paired 30 items", "of 30 decisions changed (0.", "question refund (noul): NO SIGNIFICANT CHANGE"}},
		"repeat":  {0, []string{"verdict: WITHIN NOISE", "question team (choice): WITHIN NOISE", "own noise (repeats)"}},
		"distractor": {0, []string{"question team (choice): NOT COMPARABLE — option unrelated of B is not in A",
			"question refund (noul): NO SIGNIFICANT CHANGE", "paired 30 items"}},
		"noul-vs-choice": {2, []string{"question team=billing (noul): NOT COMPARABLE — question absent from run A",
			"question team (choice): NOT COMPARABLE — question absent from run B", "share no answered item"}},
	}
	for _, kind := range []string{"shuffle", "repeat", "distractor", "noul-vs-choice"} {
		_, out, errOut := runJevlab(t, "--db", db, "--base-url", url, "probe", set, "--kind", kind)
		m := reID.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no run ids in\n%s\n%s", kind, out, errOut)
		}
		code, cout, cerr := runJevlab(t, "--db", db, "compare", m[2], m[1])
		if m[2] == "" {
			t.Fatalf("%s: no base run named in\n%s", kind, out)
		}
		w := want[kind]
		all := cout + cerr
		if code != w.code {
			t.Errorf("%s: compare exit %d, want %d\n%s", kind, code, w.code, all)
		}
		for _, h := range w.has {
			if !strings.Contains(all, h) {
				t.Errorf("%s: compare lacks %q:\n%s", kind, h, all)
			}
		}
	}
}
