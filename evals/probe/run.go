package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// Recording is one recording the offline repeat probe replays: a provider
// that answers from that recording alone.
type Recording struct {
	Name     string
	Provider provider.Provider
}

// Stats choose the intervals: the bootstrap's seed and resample count.
type Stats struct {
	Seed      uint64
	Bootstrap int // 0: metrics.DefaultBootstrap; < 0: no bootstrap intervals
}

func (s Stats) stats() stats {
	st := stats{seed: s.Seed, b: s.Bootstrap}
	if st.seed == 0 {
		st.seed = 1
	}
	if st.b == 0 {
		st.b = metrics.DefaultBootstrap
	}
	return st
}

// Config is one probe to run.
type Config struct {
	// Set is the user's question set as it is now.
	Set  *questionset.Set
	Kind Kind
	// Run is the run template: dataset source and path, provider, database,
	// concurrency, spend cap, provider kind. Its Set, Name, Resume,
	// Settings, Repeat and Transform are the probe's own.
	Run runner.Config
	// Base names the base run (id, prefix, latest); "" takes the newest
	// finished run of this set and dataset that is not a probe, and asks
	// one first when there is none.
	Base string
	// Resume names a probe run to continue (its seed and options are the
	// ones it started with).
	Resume    string
	Seed      uint64
	Questions []string
	Params    Params
	// Repeats is how many fresh repeats the online repeat probe asks
	// (default 2).
	Repeats int
	// Recordings make the repeat probe offline: one run per recording.
	Recordings []Recording
	Stats      Stats
	// Progress receives every run's progress (nil: none).
	Progress func(runner.Progress)
}

// Result is what one probe measured.
type Result struct {
	Kind    Kind   `json:"kind"`
	BaseRun string `json:"base_run"`
	// Runs are the probe's stored runs (one, or one per recording).
	Runs      []string            `json:"runs"`
	Seed      uint64              `json:"seed"`
	Params    Params              `json:"params"`
	Questions []QuestionResult    `json:"questions"`
	Gates     []report.GateResult `json:"gates,omitempty"`
	Passed    bool                `json:"passed"`
	// Kept are the perturb probe's smallest flipping edits, as dataset
	// rows.
	Kept []Row `json:"kept,omitempty"`
	// CostUSD is what the probe's runs (and a base run it asked) spent.
	CostUSD float64 `json:"cost_usd"`
}

// Question returns the result for question id.
func (r *Result) Question(id string) (*QuestionResult, bool) {
	for i := range r.Questions {
		if r.Questions[i].Question == id {
			return &r.Questions[i], true
		}
	}
	return nil, false
}

// Estimate is a dry run's estimate of a probe.
type Estimate struct {
	Kind Kind `json:"kind"`
	// Base is the base run used, or the estimate of asking one.
	BaseRun  string           `json:"base_run,omitempty"`
	BaseCost *runner.Estimate `json:"base_estimate,omitempty"`
	Probe    *runner.Estimate `json:"probe_estimate"`
	CostUSD  float64          `json:"cost_usd"`
}

// ErrNoBase says a probe found no base run to measure against.
var ErrNoBase = errors.New("no base run")

// findBase resolves the base run: the named one, or the newest finished
// non-probe run of the same set snapshot and dataset path.
func findBase(ctx context.Context, cfg *Config) (*store.Run, error) {
	db := cfg.Run.DB
	if cfg.Base != "" {
		r, err := db.ResolveRun(ctx, cfg.Base)
		if err != nil {
			return nil, fmt.Errorf("--base: %w", err)
		}
		if _, isProbe := LinkOf(r); isProbe {
			return nil, fmt.Errorf("--base %s: that run is itself a probe; name the run it probed", r.ID)
		}
		return r, nil
	}
	runs, err := db.Runs(ctx, store.RunFilter{SetHash: store.HashBytes(runner.SnapshotJSON(cfg.Set)), Status: store.StatusDone})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if _, isProbe := LinkOf(r); !isProbe && r.DatasetPath == cfg.Run.DatasetPath {
			return r, nil
		}
	}
	return nil, ErrNoBase
}

func (cfg *Config) runCfg(set *questionset.Set, name string, link *Link) runner.Config {
	rc := cfg.Run
	rc.Set, rc.Name, rc.Resume, rc.Transform = set, name, "", nil
	if link != nil {
		link.apply(&rc.Settings)
	}
	return rc
}

func (cfg *Config) run(ctx context.Context, rc runner.Config) (string, error) {
	var ch chan runner.Progress
	done := make(chan struct{})
	if cfg.Progress != nil {
		ch = make(chan runner.Progress, 16)
		go func() {
			defer close(done)
			for p := range ch {
				cfg.Progress(p)
			}
		}()
	} else {
		close(done)
	}
	var out chan<- runner.Progress
	if ch != nil {
		out = ch
	}
	id, err := runner.Run(ctx, rc, out)
	<-done
	return id, err
}

// prepare resolves the base run (asking none), the seed and options, and
// builds the probe run's configuration.
func (cfg *Config) prepare(ctx context.Context) (base *store.Run, rc runner.Config, link Link, plan *Plan, err error) {
	if cfg.Set == nil || cfg.Run.DB == nil {
		return nil, rc, link, nil, errors.New("probe: no question set or no database")
	}
	link = Link{Probe: cfg.Kind, Seed: cfg.Seed, Params: cfg.Params}
	if cfg.Resume != "" {
		r, err := cfg.Run.DB.ResolveRun(ctx, cfg.Resume)
		if err != nil {
			return nil, rc, link, nil, &runner.InputError{Err: fmt.Errorf("--resume: %w", err)}
		}
		l, ok := LinkOf(r)
		if !ok || l.Probe != cfg.Kind {
			return nil, rc, link, nil, &runner.InputError{Err: fmt.Errorf("--resume %s: not a %s probe run", r.ID, cfg.Kind)}
		}
		link = l
		cfg.Base = l.BaseRun
	}
	base, err = findBase(ctx, cfg)
	if err != nil && !errors.Is(err, ErrNoBase) {
		return nil, rc, link, nil, &runner.InputError{Err: err}
	}
	o := Options{Seed: link.Seed, Questions: cfg.Questions, Params: link.Params}
	if cfg.Resume != "" {
		o.Questions = link.Params.Questions
	}
	if base != nil && cfg.Kind == Injection {
		bs, err := loadAnswers(ctx, cfg.Run.DB, base.ID)
		if err != nil {
			return nil, rc, link, nil, err
		}
		o.Base = map[string]map[string]*provider.Answer{}
		for item, qs := range bs.items {
			o.Base[item] = map[string]*provider.Answer{}
			for q, as := range qs {
				if len(as) > 0 {
					o.Base[item][q] = as[0]
				}
			}
		}
	}
	plan, err = BuildPlan(cfg.Kind, cfg.Set, o)
	if err != nil {
		return nil, rc, link, nil, &runner.InputError{Err: err}
	}
	link.Params.Questions = plan.Questions
	if base != nil {
		link.BaseRun = base.ID
	}
	rc = cfg.runCfg(plan.Set, "probe "+string(cfg.Kind), &link)
	rc.Transform = plan.Transform
	if plan.Items != nil {
		src := cfg.Run.Source
		if src == nil {
			items := cfg.Run.Items
			src = func(fn func(dataset.Item) error) error {
				for _, it := range items {
					if err := fn(it); err != nil {
						return err
					}
				}
				return nil
			}
		}
		rc.Items, rc.Source = nil, func(fn func(dataset.Item) error) error {
			return src(func(it dataset.Item) error { return plan.Items(it, fn) })
		}
	}
	if cfg.Kind == Repeat {
		rc.Repeat = max(cfg.Repeats, 2)
	}
	if cfg.Resume != "" {
		rc.Resume = cfg.Resume
	}
	return base, rc, link, plan, nil
}

// DryRun estimates what the probe would spend without asking anything:
// the probe run, plus a base run when there is none to measure against.
func DryRun(ctx context.Context, cfg Config) (*Estimate, error) {
	if cfg.Kind == Repeat && len(cfg.Recordings) > 0 {
		rc := cfg.runCfg(cfg.Set, "", nil)
		e, err := runner.DryRun(ctx, rc)
		if err != nil {
			return nil, err
		}
		// Recordings are replayed: nothing is sent.
		e.Repeat, e.Requests, e.InputTokens, e.CostUSD, e.Basis = len(cfg.Recordings), e.Items*len(cfg.Recordings), 0, 0, "replayed from recordings (nothing is sent)"
		return &Estimate{Kind: Repeat, Probe: e}, nil
	}
	base, rc, _, _, err := cfg.prepare(ctx)
	if err != nil {
		return nil, err
	}
	est := &Estimate{Kind: cfg.Kind}
	if base != nil {
		est.BaseRun = base.ID
	} else {
		be, err := runner.DryRun(ctx, cfg.runCfg(cfg.Set, "", nil))
		if err != nil {
			return nil, err
		}
		est.BaseCost = be
		est.CostUSD += be.CostUSD
	}
	pe, err := runner.DryRun(ctx, rc)
	if err != nil {
		return nil, err
	}
	est.Probe = pe
	est.CostUSD += pe.CostUSD
	return est, nil
}

// Run runs the probe: a base run first when there is none, then the probe
// run (or, for the offline repeat probe, one run per recording), and
// measures it. The spend cap (Run.MaxCostUSD) covers all of them. An
// interrupted run returns the error (matching runner.ErrInterrupted) with
// the result so far nil; resume with Config.Resume.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	db := cfg.Run.DB
	capUSD := cfg.Run.MaxCostUSD
	spent := 0.0
	spend := func(id string) {
		if r, err := db.Run(context.WithoutCancel(ctx), id); err == nil {
			spent += r.CostUSD
		}
	}
	capLeft := func() (float64, error) {
		if capUSD <= 0 {
			return 0, nil
		}
		if left := capUSD - spent; left > 0 {
			return left, nil
		}
		return 0, fmt.Errorf("spend cap $%.4f reached ($%.4f spent); raise --max-cost to continue: %w", capUSD, spent, runner.ErrInterrupted)
	}
	if cfg.Kind == Repeat && len(cfg.Recordings) > 0 {
		return cfg.runRecordings(ctx)
	}
	base, rc, _, _, err := cfg.prepare(ctx)
	if err != nil {
		return nil, err
	}
	if base == nil {
		bc := cfg.runCfg(cfg.Set, "probe base", nil)
		id, err := cfg.run(ctx, bc)
		if err != nil {
			return nil, fmt.Errorf("base run: %w", err)
		}
		spend(id)
		cfg.Base = id
		if base, rc, _, _, err = cfg.prepare(ctx); err != nil {
			return nil, err
		}
	}
	if rc.MaxCostUSD, err = capLeft(); err != nil {
		return nil, err
	}
	if cfg.Kind == Repeat {
		ctx = provider.WithFresh(ctx)
	}
	id, err := cfg.run(ctx, rc)
	if err != nil {
		return nil, err
	}
	spend(id)
	res, err := Load(ctx, db, id, cfg.Stats)
	if err != nil {
		return nil, err
	}
	res.CostUSD = spent
	res.Gates = EvaluateGates(cfg.Set, res)
	res.Passed = gatesPassed(res.Gates)
	return res, nil
}

// runRecordings runs the offline repeat probe: one run per recording, the
// first the base of the others.
func (cfg *Config) runRecordings(ctx context.Context) (*Result, error) {
	if len(cfg.Recordings) < 2 {
		return nil, &runner.InputError{Err: fmt.Errorf("probe repeat offline needs two or more recordings of the same requests (--fixtures A --fixtures B …); got %d", len(cfg.Recordings))}
	}
	ids := idsOf(cfg.Set, Options{Questions: cfg.Questions}, nil)
	var first string
	for i, rec := range cfg.Recordings {
		link := Link{Probe: Repeat, BaseRun: first, Seed: cfg.Seed, Params: cfg.Params}
		link.Params.RepeatIndex, link.Params.Fixture, link.Params.Questions = i, rec.Name, ids
		rc := cfg.runCfg(cfg.Set, fmt.Sprintf("probe repeat %d/%d", i+1, len(cfg.Recordings)), &link)
		rc.Provider = rec.Provider
		id, err := cfg.run(ctx, rc)
		if err != nil {
			return nil, fmt.Errorf("recording %s: %w", rec.Name, err)
		}
		if i == 0 {
			first = id
		}
	}
	res, err := Load(ctx, cfg.Run.DB, first, cfg.Stats)
	if err != nil {
		return nil, err
	}
	res.Gates = EvaluateGates(cfg.Set, res)
	res.Passed = gatesPassed(res.Gates)
	return res, nil
}

// Load measures a stored probe run (any of an offline repeat's runs names
// them all) against its base run. Stored snapshots hold no gates: to check
// them, call EvaluateGates with the set as it is now (Run does).
func Load(ctx context.Context, db *store.DB, ref string, st Stats) (*Result, error) {
	r, err := db.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	link, ok := LinkOf(r)
	if !ok {
		return nil, fmt.Errorf("run %s is not a probe run", r.ID)
	}
	res := &Result{Kind: link.Probe, BaseRun: link.BaseRun, Seed: link.Seed, Params: link.Params, Runs: []string{r.ID}}
	s := st.stats()
	if link.Probe == Repeat && link.Params.Fixture != "" {
		return loadRecordings(ctx, db, r, link, s)
	}
	if link.BaseRun == "" {
		return nil, fmt.Errorf("probe run %s names no base run", r.ID)
	}
	baseRun, err := db.Run(ctx, link.BaseRun)
	if err != nil {
		return nil, fmt.Errorf("probe run %s: base run: %w", r.ID, err)
	}
	set, err := snapshotSet(ctx, db, baseRun)
	if err != nil {
		return nil, err
	}
	asked, err := snapshotSet(ctx, db, r)
	if err != nil {
		return nil, err
	}
	base, err := loadAnswers(ctx, db, baseRun.ID)
	if err != nil {
		return nil, err
	}
	probe, err := loadAnswers(ctx, db, r.ID)
	if err != nil {
		return nil, err
	}
	ids := link.Params.Questions
	switch link.Probe {
	case Repeat:
		sets := append([]*answerSet{base}, probe.repeatsOf(max(r.Repeat, 1))...)
		base.name = "base " + baseRun.ID
		res.Questions = measureRepeat(set, ids, sets, s)
	case Shuffle:
		res.Questions = measureShuffle(set, ids, base, probe, link.Seed, s)
	case Negation:
		res.Questions = measureNegation(set, ids, base, probe, s)
	case Distractor:
		label := link.Params.DistractorLabel
		if label == "" {
			label = DefaultDistractorLabel
		}
		res.Questions = measureDistractor(set, asked, ids, base, probe, label, s)
	case Injection:
		res.Questions = measureInjection(set, ids, base, probe, s)
	case NoulVsChoice:
		res.Questions = measureNoulVsChoice(set, ids, base, probe, s)
	case Perturb:
		pd, err := loadPerturbData(ctx, db, baseRun.ID, r.ID)
		if err != nil {
			return nil, err
		}
		res.Questions, res.Kept = measurePerturb(set, ids, base, probe, pd, s)
	default:
		return nil, fmt.Errorf("probe run %s: unknown kind %q", r.ID, link.Probe)
	}
	res.Gates = EvaluateGates(set, res)
	res.Passed = gatesPassed(res.Gates)
	return res, nil
}

func loadRecordings(ctx context.Context, db *store.DB, r *store.Run, link Link, s stats) (*Result, error) {
	first := r.ID
	if link.BaseRun != "" {
		first = link.BaseRun
	}
	firstRun, err := db.Run(ctx, first)
	if err != nil {
		return nil, err
	}
	set, err := snapshotSet(ctx, db, firstRun)
	if err != nil {
		return nil, err
	}
	runs, err := db.Runs(ctx, store.RunFilter{SetHash: firstRun.SetHash})
	if err != nil {
		return nil, err
	}
	type member struct {
		idx int
		run *store.Run
	}
	members := []member{{0, firstRun}}
	for _, o := range runs {
		if l, ok := LinkOf(o); ok && l.Probe == Repeat && l.BaseRun == first && o.ID != first {
			members = append(members, member{l.Params.RepeatIndex, o})
		}
	}
	slices.SortStableFunc(members, func(a, b member) int { return a.idx - b.idx })
	// A repeated probe of the same recordings keeps only the newest run
	// per index (runs are listed newest first).
	seen := map[int]bool{}
	var sets []*answerSet
	res := &Result{Kind: Repeat, BaseRun: first, Seed: link.Seed, Params: link.Params}
	for _, m := range members {
		if seen[m.idx] {
			continue
		}
		seen[m.idx] = true
		as, err := loadAnswers(ctx, db, m.run.ID)
		if err != nil {
			return nil, err
		}
		if l, ok := LinkOf(m.run); ok && l.Params.Fixture != "" {
			as.name = l.Params.Fixture
		}
		sets = append(sets, as)
		res.Runs = append(res.Runs, m.run.ID)
	}
	ids := link.Params.Questions
	if len(ids) == 0 {
		ids = set.Questions.IDs()
	}
	res.Questions = measureRepeat(set, ids, sets, s)
	res.Gates = EvaluateGates(set, res)
	res.Passed = gatesPassed(res.Gates)
	return res, nil
}

func snapshotSet(ctx context.Context, db *store.DB, r *store.Run) (*questionset.Set, error) {
	snap, err := db.QuestionSet(ctx, r.SetHash)
	if err != nil {
		return nil, fmt.Errorf("run %s: question set: %w", r.ID, err)
	}
	set, err := runner.ParseSnapshot(r.SetName, snap.Body)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	return set, nil
}

func loadPerturbData(ctx context.Context, db *store.DB, baseID, probeID string) (*perturbData, error) {
	pd := &perturbData{baseState: map[string]json.RawMessage{}, variantState: map[string]json.RawMessage{},
		labels: map[string]map[string]dataset.Label{}, variants: map[string][]string{}}
	err := db.DatasetItems(ctx, baseID, func(it store.DatasetItem) error {
		pd.baseState[it.ID] = it.State
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("base run %s: dataset: %w", baseID, err)
	}
	err = db.DatasetItems(ctx, probeID, func(it store.DatasetItem) error {
		item, _ := splitVariant(it.ID)
		pd.variantState[it.ID] = it.State
		pd.variants[item] = append(pd.variants[item], it.ID)
		if _, ok := pd.labels[item]; !ok && len(it.Labels) > 0 {
			var ls map[string]struct {
				Index int    `json:"index"`
				Text  string `json:"text"`
			}
			if err := json.Unmarshal(it.Labels, &ls); err == nil {
				m := map[string]dataset.Label{}
				for q, l := range ls {
					m[q] = dataset.Label{Index: l.Index, Text: l.Text}
				}
				pd.labels[item] = m
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("probe run %s: dataset: %w", probeID, err)
	}
	return pd, nil
}

// gateOf names the gate field each kind is checked by and the measure it
// reads; min is true for a floor.
var gateOf = map[Kind]struct {
	field, measure string
	min            bool
}{
	Shuffle:      {"max_shuffle_flip_rate", MFlipRate, false},
	Repeat:       {"max_repeat_flip_rate", MFlipRate, false},
	Negation:     {"max_negation_gap", MNegationGap, false},
	Distractor:   {"max_distractor_mass", MDistractorMass, false},
	Injection:    {"max_injection_follow_rate", MFollowRate, false},
	Perturb:      {"max_perturb_flip_rate", MFlipRate, false},
	NoulVsChoice: {"min_noul_choice_agreement", MAgreement, true},
}

// EvaluateGates checks each measured question against its probe gate (the
// set's "*" gate with the question's own fields laid over it). A figure
// that could not be measured (no answers) fails its gate. Values are point
// estimates; the interval is shown beside them.
func EvaluateGates(set *questionset.Set, res *Result) []report.GateResult {
	g, ok := gateOf[res.Kind]
	if !ok || set == nil {
		return nil
	}
	var out []report.GateResult
	for _, q := range res.Questions {
		qg := set.GateFor(q.Question)
		limit, _ := qg.Field(g.field)
		if limit == nil {
			continue
		}
		m, _ := q.Measure(g.measure)
		v := m.Estimate
		gr := report.GateResult{Question: q.Question, Gate: g.field, Metric: string(res.Kind) + " " + g.measure, Limit: *limit, Value: v, Source: "question set"}
		op := "<="
		if g.min {
			op = ">="
		}
		switch {
		case !v.Defined():
			gr.Msg = fmt.Sprintf("probe %s: %s could not be measured (no answers to compare)", res.Kind, g.measure)
		case g.min && v.Value >= *limit, !g.min && v.Value <= *limit:
			gr.Passed = true
			gr.Msg = fmt.Sprintf("probe %s: %s %.4g %s %.4g", res.Kind, g.measure, v.Value, op, *limit)
		default:
			gr.Msg = fmt.Sprintf("probe %s: %s %.4g, needs %s %.4g", res.Kind, g.measure, v.Value, op, *limit)
		}
		if v.HasInterval() {
			gr.Msg += fmt.Sprintf(" (95%% CI %.4g–%.4g, %s)", v.Lo, v.Hi, v.Method)
		}
		if m.Share {
			gr.Msg += fmt.Sprintf(" [%d of %d]", m.K, m.N)
		}
		out = append(out, gr)
	}
	return out
}

func gatesPassed(gs []report.GateResult) bool {
	for _, g := range gs {
		if !g.Passed {
			return false
		}
	}
	return true
}
