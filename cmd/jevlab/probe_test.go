package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/provider/standin"
)

const probeSetYAML = `name: probe-cmd
questions:
  refund:
    type: noul
    instructions: Does the customer ask for a refund of a charge?
    negation: Does the customer not ask for a refund of a charge?
  team:
    type: choice
    instructions: Which team handles it?
    criteria:
      billing: charges invoice refund
      orders: delivery order late parcel
      account: login password locked
dataset: data.jsonl
gates:
  '*':
    max_negation_gap: 0.1
  team:
    max_shuffle_flip_rate: 0.05
`

func writeProbeFiles(t *testing.T, states []string) (dir, set string) {
	t.Helper()
	dir = t.TempDir()
	set = filepath.Join(dir, "set.yaml")
	if err := os.WriteFile(set, []byte(probeSetYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, s := range states {
		st, _ := json.Marshal(s)
		fmt.Fprintf(&b, "{\"id\":\"t%03d\",\"state\":%s}\n", i, st)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, set
}

// Probe gates that fail are failures in --junit and exit 1; the runs are
// stored with their kind, which runs shows.
func TestProbeGatesFailInJUnit(t *testing.T) {
	isolate(t)
	words := []string{"charges", "invoice", "refund", "delivery", "late", "parcel", "login", "password", "today"}
	var states []string
	for i := 0; i < 60; i++ {
		states = append(states, fmt.Sprintf("ticket %d %s %s", i, words[i%len(words)], words[(i*5+2)%len(words)]))
	}
	dir, set := writeProbeFiles(t, states)
	_, url := startStandin(t, standin.Config{Synthetic: true, Seed: 2, Fragile: &standin.Fragile{PositionBias: 0.3, NegationGap: 0.15}})
	db := filepath.Join(dir, "j.db")
	junit := filepath.Join(dir, "probe.xml")
	code, out, errOut := runJevlab(t, "--db", db, "--base-url", url, "probe", set, "--kind", "shuffle,negation", "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (gates failed)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"probe shuffle", "probe negation", "position_lift", "negation_gap", "gate FAIL team max_shuffle_flip_rate", "gate FAIL refund max_negation_gap"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`failures="2"`, `type="max_shuffle_flip_rate"`, `type="max_negation_gap"`, "probe shuffle: flip_rate"} {
		if !strings.Contains(string(x), want) {
			t.Errorf("junit lacks %q:\n%s", want, x)
		}
	}
	code, out, _ = runJevlab(t, "--db", db, "runs")
	if code != 0 || !strings.Contains(out, "probe shuffle of r-") || !strings.Contains(out, "probe negation of r-") {
		t.Errorf("runs does not show the probe kinds (exit %d):\n%s", code, out)
	}

	// Without the flaws the same gates pass (exit 0), against the same
	// base run, which the probe finds by itself.
	_, url2 := startStandin(t, standin.Config{Synthetic: true, Seed: 2, Fragile: &standin.Fragile{}})
	db2 := filepath.Join(dir, "j2.db")
	code, out, errOut = runJevlab(t, "--db", db2, "--base-url", url2, "probe", set, "--kind", "shuffle,negation", "--junit", junit)
	if code != 0 {
		t.Fatalf("ideal respondent: exit %d\n%s\n%s", code, out, errOut)
	}
	// --dry-run prints the cost and sends nothing.
	code, out, _ = runJevlab(t, "--db", db2, "--base-url", url2, "probe", set, "--kind", "distractor", "--dry-run")
	if code != 0 || !strings.Contains(out, "probe distractor (dry run, nothing sent)") || !strings.Contains(out, "total ~$") {
		t.Errorf("dry run (exit %d):\n%s", code, out)
	}
}

// A planted one-edit flip: the perturb probe finds it, reports the single
// edit as the smallest (the combination of every edit flips it too), and
// --keep writes it as a dataset row that lint accepts.
func TestPerturbKeepsSmallestFlip(t *testing.T) {
	isolate(t)
	states := []string{
		"my parcel",                      // orders by a hair: the sentence below flips it to billing
		"delivery order late parcel",     // orders, firmly
		"login password locked account",  // account, firmly
		"charges invoice refund charges", // billing already
	}
	dir, set := writeProbeFiles(t, states)
	_, url := startStandin(t, standin.Config{Synthetic: true})
	keep := filepath.Join(dir, "kept.jsonl")
	code, out, errOut := runJevlab(t, "--db", filepath.Join(dir, "j.db"), "--base-url", url, "probe", set,
		"--kind", "perturb", "--question", "team", "--sentence", "See the invoice for the charges.", "--keep", keep)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "flip_rate 1/4") || !strings.Contains(out, "flip_rate[sentence] 1/4") || !strings.Contains(out, "flip_rate[space] 0/4") {
		t.Errorf("perturb figures:\n%s", out)
	}
	b, err := os.ReadFile(keep)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"id":"t000~sentence"`) || !strings.Contains(lines[0], `my parcel See the invoice for the charges.`) {
		t.Fatalf("kept rows:\n%s", b)
	}
	code, out, errOut = runJevlab(t, "lint", set, "--data", keep)
	if code != 0 {
		t.Errorf("lint refuses the kept row (exit %d):\n%s\n%s", code, out, errOut)
	}
}

func TestServeFragileFlags(t *testing.T) {
	isolate(t)
	code, _, errOut := runJevlab(t, "serve", "--fragile", "--fixtures", "../../fixtures/demo-triage/recorded.jsonl", "--addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errOut, "add --synthetic") {
		t.Errorf("--fragile without --synthetic: exit %d, %s", code, errOut)
	}
	code, _, errOut = runJevlab(t, "serve", "--synthetic", "--position-bias", "0.9", "--addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errOut, "position bias 0.9 is outside [0, 0.5]") {
		t.Errorf("--position-bias 0.9: exit %d, %s", code, errOut)
	}
}
