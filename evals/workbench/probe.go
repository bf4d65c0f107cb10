package workbench

import (
	"context"
	"fmt"

	"github.com/jevlab/jevlab/evals/probe"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/store"
)

// Probe vocabulary for the screens (they do not import evals/probe).
type (
	// ProbeKind is one probe kind (shuffle, repeat, …).
	ProbeKind = probe.Kind
	// ProbeParams are a probe's options (distractor label, templates, …).
	ProbeParams = probe.Params
	// ProbeResult is what one probe measured.
	ProbeResult = probe.Result
	// ProbeItem is one item's effect in a probe's worst-items list.
	ProbeItem = probe.ItemEffect
)

// ProbeKinds lists every probe kind in the order the screens show them.
func ProbeKinds() []ProbeKind { return append([]ProbeKind(nil), probe.Kinds...) }

// ProbeLine is one probe kind's stability line for one question: the
// figures with their intervals, the worst items (one key away on the
// evaluate screen), and the question's gate on that kind if it has one.
type ProbeLine struct {
	Kind    ProbeKind `json:"kind"`
	Run     string    `json:"run"`
	BaseRun string    `json:"base_run"`
	// Line is the figures on one line, e.g. "flip_rate 2/40 (5.0%) [1.4–16.5% wilson]  mean_tv 0.031 […]".
	Line  string             `json:"line"`
	Worst []ProbeItem        `json:"worst,omitempty"`
	Gate  *report.GateResult `json:"gate,omitempty"`
}

// ProbeLines returns question qid's stability line per probe kind from the
// newest stored probe run of each kind measured against baseRun (a run id;
// "" = any base), in ProbeKinds order. Kinds never run are left out; set
// is the set as it is now, whose gates are checked.
func ProbeLines(ctx context.Context, db *store.DB, set *questionset.Set, baseRun, qid string) ([]ProbeLine, error) {
	runs, err := db.Runs(ctx, store.RunFilter{Status: store.StatusDone})
	if err != nil {
		return nil, err
	}
	newest := map[ProbeKind]*store.Run{}
	for _, r := range runs { // newest first
		l, ok := probe.LinkOf(r)
		if !ok || newest[l.Probe] != nil {
			continue
		}
		// An offline repeat is named by its first recording's run.
		if l.Probe == probe.Repeat && l.Params.Fixture != "" && l.BaseRun != "" {
			continue
		}
		if baseRun != "" && l.BaseRun != baseRun && !(l.Probe == probe.Repeat && r.ID == baseRun) {
			continue
		}
		newest[l.Probe] = r
	}
	var out []ProbeLine
	for _, k := range probe.Kinds {
		r := newest[k]
		if r == nil {
			continue
		}
		res, err := probe.Load(ctx, db, r.ID, probe.Stats{Seed: CanonicalSeed})
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", k, err)
		}
		q, ok := res.Question(qid)
		if !ok {
			continue
		}
		pl := ProbeLine{Kind: k, Run: r.ID, BaseRun: res.BaseRun, Line: q.Line(), Worst: q.Worst}
		for _, g := range probe.EvaluateGates(set, res) {
			if g.Question == qid {
				g := g
				pl.Gate = &g
			}
		}
		out = append(out, pl)
	}
	return out, nil
}

// ProbeSpec is one probe to run from the workbench.
type ProbeSpec struct {
	// Run is the set and dataset as for a run (Name and Resume unused).
	Run  RunSpec
	Kind ProbeKind
	// Question restricts the probe to one question ("" = every question
	// the kind applies to).
	Question string
	// Base names the run to measure against ("" = the newest finished run
	// of this set and dataset, else one is asked first).
	Base   string
	Seed   uint64
	Params ProbeParams
	// Resume continues an interrupted probe run.
	Resume string
}

// RunProbe runs spec from the template (the provider, database, spend cap
// and settings every run of this session uses) and returns what it
// measured, gates checked against spec.Run.Set. progress (may be nil)
// receives every run's progress. The online repeat probe asks two fresh
// repeats.
func (t *RunTemplate) RunProbe(ctx context.Context, spec ProbeSpec, progress func(Progress)) (*ProbeResult, error) {
	if t == nil || t.DB == nil || t.Provider == nil {
		return nil, fmt.Errorf("no database or provider to run the probe with")
	}
	cfg := probe.Config{Set: spec.Run.Set, Kind: spec.Kind, Run: t.Config(spec.Run), Base: spec.Base, Resume: spec.Resume,
		Seed: spec.Seed, Params: spec.Params, Repeats: 2, Stats: probe.Stats{Seed: CanonicalSeed}}
	if spec.Question != "" {
		cfg.Questions = []string{spec.Question}
	}
	if progress != nil {
		cfg.Progress = func(p runner.Progress) { progress(p) }
	}
	return probe.Run(ctx, cfg)
}

// ProbeKindsFor lists the probe kinds that apply to question qid of set,
// in ProbeKinds order: a kind applies when it can build its requests for
// that question alone (shuffle, distractor and noul-vs-choice need a
// choice, negation a noul with negation:). The evaluate screen offers
// these.
func ProbeKindsFor(set *questionset.Set, qid string) []ProbeKind {
	var out []ProbeKind
	for _, k := range probe.Kinds {
		plan, err := probe.BuildPlan(k, set, probe.Options{Seed: 1, Questions: []string{qid}})
		if err == nil && len(plan.Questions) > 0 {
			out = append(out, k)
		}
	}
	return out
}
