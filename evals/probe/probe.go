// Package probe measures how robust a question set is: it builds, per
// dataset item, the requests of one probe kind (options reordered, the same
// request again, an extra option, the negated noul, one noul per option, an
// injected instruction, harmless edits of the state), and measures the
// answers against the base run's, with intervals: Wilson for shares,
// bootstrap over items for means.
//
// A probe is a stored run: its settings record the kind, the base run it
// is measured against and the seed (keys "probe", "base_run", "seed" and
// "probe_params"), so runs, show and compare see it and a recorded probe
// replays offline. Each kind documents how its requests are derived.
package probe

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/store"
)

// Kind is one probe kind.
type Kind string

// The probe kinds.
const (
	// Shuffle asks every choice with its options in a seeded random order
	// (score levels never: their order is meaning); answers are mapped
	// back to the set's order before they are stored.
	Shuffle Kind = "shuffle"
	// Repeat asks the same request again (fresh), or replays several
	// recordings of it (one fixture file per repeat).
	Repeat Kind = "repeat"
	// Distractor adds an option that fits no item to every choice.
	Distractor Kind = "distractor"
	// Negation asks each noul that has a negation: with that wording.
	Negation Kind = "negation"
	// NoulVsChoice asks, for every choice, one noul per option.
	NoulVsChoice Kind = "noul-vs-choice"
	// Injection puts an instruction to answer another way into the state.
	Injection Kind = "injection"
	// Perturb asks harmless edits of the state (whitespace, case, field
	// order, a trailing sentence).
	Perturb Kind = "perturb"
)

// Kinds lists every kind in the order they are run and shown.
var Kinds = []Kind{Repeat, Shuffle, Negation, Distractor, NoulVsChoice, Injection, Perturb}

// ParseKinds reads a comma-separated list of kinds ("shuffle,negation").
func ParseKinds(s string) ([]Kind, error) {
	var out []Kind
	for _, part := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(part))
		if k == "" {
			continue
		}
		if !slices.Contains(Kinds, k) {
			names := make([]string, len(Kinds))
			for i, k := range Kinds {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("unknown probe kind %q; use %s", k, strings.Join(names, ", "))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no probe kind given; use --kind shuffle,repeat,… (one or more)")
	}
	return out, nil
}

// Link is what a probe run records in its settings: its kind, the run it
// is measured against, its seed and the kind's parameters.
type Link struct {
	Probe   Kind   `json:"probe"`
	BaseRun string `json:"base_run,omitempty"`
	Seed    uint64 `json:"seed"`
	// Params are the kind's options as given (distractor label, injection
	// template, perturb sentence, repeat index and fixture file).
	Params Params `json:"probe_params"`
}

// Params are the options a probe kind was run with, recorded with it.
type Params struct {
	// DistractorLabel and DistractorText name the added option.
	DistractorLabel string `json:"distractor_label,omitempty"`
	DistractorText  string `json:"distractor_text,omitempty"`
	// InjectionTemplate is the injected sentence; {answer} is replaced by
	// the answer it asks for.
	InjectionTemplate string `json:"injection_template,omitempty"`
	// NoulTemplate asks "is it X?" for noul-vs-choice; {option} is the
	// label, {text} its description, {instructions} the choice's own.
	NoulTemplate string `json:"noul_template,omitempty"`
	// Sentence is perturb's trailing sentence.
	Sentence string `json:"sentence,omitempty"`
	// RepeatIndex and Fixture say which recording an offline repeat run
	// replays (0-based; the base run is index 0).
	RepeatIndex int    `json:"repeat_index,omitempty"`
	Fixture     string `json:"fixture,omitempty"`
	// Questions are the ids of the user's questions the probe measures.
	Questions []string `json:"questions,omitempty"`
}

// LinkOf reads the probe link of a stored run; ok is false for a run that
// is not a probe.
func LinkOf(r *store.Run) (Link, bool) {
	var l Link
	if r == nil || len(r.Settings) == 0 {
		return l, false
	}
	if err := json.Unmarshal(r.Settings, &l); err != nil || l.Probe == "" {
		return Link{}, false
	}
	return l, true
}

// apply records the link in run settings (keys probe, base_run, seed,
// probe_params).
func (l Link) apply(s *runner.Settings) {
	s.Probe, s.BaseRun, s.ProbeSeed = string(l.Probe), l.BaseRun, l.Seed
	s.ProbeParams, _ = json.Marshal(l.Params)
}

// Label is a short name for the run list: "probe shuffle of r-…".
func (l Link) Label() string {
	s := "probe " + string(l.Probe)
	if l.BaseRun != "" {
		s += " of " + l.BaseRun
	}
	if l.Probe == Repeat && l.Params.Fixture != "" {
		s += fmt.Sprintf(" (recording %d)", l.Params.RepeatIndex+1)
	}
	return s
}
