package workbench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// CanonicalSeed seeds every bootstrap the commands and the workbench show
// by default, so the same run gives the same intervals everywhere.
const CanonicalSeed uint64 = 1

// MetricOptions tune the metrics of a run view (metrics.Options).
type MetricOptions = metrics.Options

// DefaultMetricOptions are the canonical metric settings: seed
// CanonicalSeed, every other field at its documented default.
func DefaultMetricOptions() MetricOptions { return MetricOptions{Seed: CanonicalSeed} }

// ItemResult is one item's first answer to one question in a stored run.
type ItemResult struct {
	// Answer is nil when the call failed; Err then says why.
	Answer *provider.Answer
	Err    string
	// Label is the item's label index in the run's question, -1 when the
	// item had none for it; LabelText its text.
	Label     int
	LabelText string
}

// itemResultOf is a stored answer as a view's item result.
func itemResultOf(a *store.ItemAnswer) *ItemResult {
	r := &ItemResult{Answer: a.Answer, Label: -1, LabelText: a.LabelText}
	if a.Answer == nil {
		r.Err = a.ErrKind
		if a.ErrMsg != "" {
			r.Err += ": " + a.ErrMsg
		}
	}
	if a.Label != nil {
		r.Label = *a.Label
	}
	return r
}

// RunView is a stored run read back once and measured once: what `show`
// prints and the evaluate screen draws.
type RunView struct {
	Run *Run
	// Set is the run's question-set snapshot: labels and decisions are
	// read against the questions as the run asked them.
	Set *questionset.Set
	// Report holds every question's metrics and the gates.
	Report *RunReport
	// Items maps item id → question id → the first repeat's result;
	// ItemIDs lists the items in dataset order.
	Items   map[string]map[string]*ItemResult
	ItemIDs []string
	// Variants are the variants the run asked beside their questions;
	// their answers are in Items under the derived ids and their pairing
	// in Report.Variants.
	Variants []questionset.VariantRef

	data compare.RunData
	// summarized: the report was read from the stored summary, so data
	// holds no observations (a ReportOnly view, never compared).
	summarized bool
	// streamed: the report was computed question by question from the
	// store (ReportOnly), so data holds no observations either; stream
	// reads them.
	streamed bool
	stream   *questionStream
}

// questionStream reads a stored run's answers one question at a time, as
// observations, counting them for the load's progress.
type questionStream struct {
	ctx      context.Context
	db       *store.DB
	run      string
	total    int
	read     int
	progress func(LoadProgress)
}

// each streams question qid's observations (in dataset order, repeats
// together) to fn; fn must not keep the pointer.
func (s *questionStream) each(qid string, fn func(*metrics.Obs)) error {
	return s.eachOf([]string{qid}, func(_ int, o *metrics.Obs) { fn(o) })
}

// eachOf is each for several questions in one pass over the run's rows:
// fn gets each observation with its question's place in qids.
func (s *questionStream) eachOf(qids []string, fn func(q int, o *metrics.Obs)) error {
	last := 0 // the answers of an item come in question id order, not qids'
	err := s.db.ForEachQuestionsAnswerNoRaw(s.ctx, s.run, qids, func(a *store.ItemAnswer) error {
		s.read++
		if s.progress != nil && s.read%progressEvery == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
			s.progress(LoadProgress{Read: s.read, Total: max(s.total, s.read)})
		}
		if qids[last] != a.QuestionID {
			k := slices.Index(qids, a.QuestionID)
			if k < 0 {
				return nil // not asked for (the store keeps only qids')
			}
			last = k
		}
		o := report.ObsOf(a)
		fn(last, &o)
		return nil
	})
	if err != nil {
		return fmt.Errorf("run %s question %s: %w", s.run, strings.Join(qids, ", "), err)
	}
	return nil
}

// DefaultPassBytes bounds what one pass over a stored run's rows measures
// at once (ViewConfig.PassBytes): each question measured holds its metric
// columns (about columnBytes per item) until the pass ends. Reading the
// rows is most of a report's time, so under the bound the questions share
// one pass: a 100,000-item run of 8 questions is read once instead of 8
// times; a million-item run a question at a time.
const DefaultPassBytes = 128 << 20

// columnBytes is about what a question's metric columns hold per item.
const columnBytes = 110

// passes groups questions (places in a set's questions) into passes of at
// most budget bytes of columns for a run of items items, in order (one
// question a pass at least).
func passes(questions []int, items, budget int) [][]int {
	per := max(1, budget/(max(items, 1)*columnBytes))
	var out [][]int
	for len(questions) > 0 {
		n := min(per, len(questions))
		out = append(out, questions[:n:n])
		questions = questions[n:]
	}
	return out
}

// ViewConfig says how to measure a run view.
type ViewConfig struct {
	// Metrics are the metric options (zero value: DefaultMetricOptions).
	Metrics *MetricOptions
	// Gates is the question-set file whose gates apply (snapshots leave
	// gates out); nil means the snapshot's (none) plus Flags.
	Gates *questionset.Set
	// Flags are gate overrides from the command line.
	Flags Gate
	// PassBytes bounds the metric columns one pass over a stored run's rows
	// measures at once (0: DefaultPassBytes); 1 measures a question a pass,
	// for the least memory at the cost of a read per question (eval, whose
	// peak memory is the run's).
	PassBytes int
	// ReportOnly skips the per-item results (Items), for callers that only
	// print the report (show, eval): less memory on large runs.
	ReportOnly bool
	// Build names the jevlab build measuring (version and commit). When it
	// is set and ReportOnly, a run that is not running has its report
	// stored (where the database is writable) and read back on the next
	// load by the same build with the same options, instead of reading
	// every answer again; a build whose metrics differ never reads another
	// build's summary. Empty: always computed.
	Build string
	// Progress, when set, is called from the loading goroutine as answers
	// are read (at most every progressEvery answers, and once at the end);
	// never from a Bubble Tea Update. Cancel the context to stop a load.
	Progress func(LoadProgress)
}

// LoadProgress says how far a load has read: Read answers of about Total
// (the run's stored items × repeats × questions; 0 when unknown). For
// CompareStored, Read and Total count the two runs' questions instead.
type LoadProgress struct {
	Read, Total int
	// Summary is true when the report came from the run's stored summary
	// (no answer is read).
	Summary bool
}

// progressEvery is how many answers a load reads between two Progress calls.
const progressEvery = 16384

// LoadRun resolves ref (an id, a unique prefix, latest or latest~N), reads
// the run's snapshot and answers once and computes its report.
func LoadRun(ctx context.Context, db *store.DB, ref string, cfg ViewConfig) (*RunView, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	run, err := db.ResolveRun(ctx, ref)
	if err != nil {
		return nil, &RefError{Ref: ref, Err: err}
	}
	return loadRun(ctx, db, run, cfg)
}

// LoadStoredRun is LoadRun for a run already resolved.
func LoadStoredRun(ctx context.Context, db *store.DB, run *Run, cfg ViewConfig) (*RunView, error) {
	return loadRun(ctx, db, run, cfg)
}

func loadRun(ctx context.Context, db *store.DB, run *Run, cfg ViewConfig) (*RunView, error) {
	snap, err := db.QuestionSet(ctx, run.SetHash)
	if err != nil {
		return nil, fmt.Errorf("run %s: question set: %w", run.ID, err)
	}
	set, err := runner.ParseSnapshot(run.SetName, snap.Body)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	v := &RunView{Run: run, Set: set}
	opt := DefaultMetricOptions()
	if cfg.Metrics != nil {
		opt = *cfg.Metrics
	}
	if opt.Model == "" && len(run.Models) > 0 {
		opt.Model = strings.Join(run.Models, "+")
	}
	var sumKey string
	if cfg.ReportOnly && cfg.Build != "" && run.Status != store.StatusRunning {
		sumKey = summaryKey(run, opt, cfg.Build, costSplit(opt, cfg))
		ok, err := v.fromSummary(ctx, db, sumKey, cfg)
		if err != nil {
			return nil, err
		}
		if ok {
			if cfg.Progress != nil {
				cfg.Progress(LoadProgress{Summary: true})
			}
			return v, nil
		}
	}
	// The comparison reads the same observations (compare.LoadRun builds
	// identical ones), so a comparison of two views equals CompareRuns.
	v.data = compare.RunData{ID: run.ID, Name: run.Name, Model: run.Model, Questions: set.Questions,
		Thresholds: map[string]float64{}}
	if len(run.Models) > 0 {
		v.data.Model = strings.Join(run.Models, "+")
	}
	for _, e := range set.Questions {
		v.data.Thresholds[e.ID] = set.Threshold(e.ID)
	}
	total := run.Done * len(set.Questions)
	if cfg.ReportOnly {
		// Question by question, without the raw bytes (no metric reads
		// them), each question's answers reduced to a compact record per
		// item as they stream: a large run's answers are never held. The
		// view keeps no observations, so it is never compared.
		v.streamed = true
		v.stream = &questionStream{ctx: ctx, db: db, run: run.ID, total: total, progress: cfg.Progress}
		v.data.Load = func(qid string) ([]metrics.Obs, error) {
			var obs []metrics.Obs
			err := v.stream.each(qid, func(o *metrics.Obs) { obs = append(obs, *o) })
			return obs, err
		}
	} else {
		if err := v.readAll(ctx, db, total, cfg.Progress); err != nil {
			return nil, err
		}
	}
	if err := v.measure(ctx, db, opt, cfg); err != nil {
		return nil, err
	}
	v.Variants = runner.RecordedVariants(run)
	if len(v.Variants) > 0 {
		if v.Report.Variants, err = compareVariants(v.data, set, v.Variants, opt); err != nil {
			return nil, err
		}
	}
	if sumKey != "" && !db.ReadOnly() {
		// Best effort: a summary not stored is computed again next time.
		_ = v.saveSummary(ctx, db, sumKey)
	}
	return v, nil
}

// addItem keeps a's result in the view's items when it is a first repeat.
func (v *RunView) addItem(a *store.ItemAnswer) {
	if a.Repeat != 0 {
		return
	}
	m := v.Items[a.ItemID]
	if m == nil {
		m = map[string]*ItemResult{}
		v.Items[a.ItemID] = m
		v.ItemIDs = append(v.ItemIDs, a.ItemID)
	}
	m[a.QuestionID] = itemResultOf(a)
}

// readAll reads every answer of the run once, raw bytes included, into
// the view's items and observations (the workbench's view of a run it
// shows item by item).
func (v *RunView) readAll(ctx context.Context, db *store.DB, total int, progress func(LoadProgress)) error {
	v.Items = map[string]map[string]*ItemResult{}
	obs := make(map[string][]metrics.Obs, len(v.Set.Questions))
	// Answers stream in dataset order, so the bootstrap resamples (and so
	// the intervals) are the same whatever order a concurrent run wrote them.
	read := 0
	err := db.ForEachAnswer(ctx, v.Run.ID, func(a *store.ItemAnswer) error {
		read++
		if progress != nil && read%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress(LoadProgress{Read: read, Total: max(total, read)})
		}
		obs[a.QuestionID] = append(obs[a.QuestionID], report.ObsOf(a))
		v.addItem(a)
		return nil
	})
	if err != nil {
		return fmt.Errorf("run %s: %w", v.Run.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if progress != nil {
		progress(LoadProgress{Read: read, Total: max(total, read)})
	}
	v.data.Obs = obs
	return nil
}

// measure computes the view's report question by question from the
// observations v.data gives (held, or read on demand), with the gates,
// the cost fits and the hold-out notes.
func (v *RunView) measure(ctx context.Context, db *store.DB, opt MetricOptions, cfg ViewConfig) error {
	run, set := v.Run, v.Set
	runSplit := ""
	if st, err := runner.ParseSettings(run); err == nil {
		runSplit = st.Split
	}
	sp := costSplit(opt, cfg)
	qs := make([]*QuestionReport, len(set.Questions))
	noulFits := make([]*report.CostFitter, len(set.Questions))
	choiceFits := make([]*report.ChoiceCostFitter, len(set.Questions))
	// start is question i's recorder, its cost fits reading each item's
	// Rec as it ends (no Rec is held).
	start := func(i int) *metrics.Recorder {
		e := set.Questions[i]
		rc := report.QuestionRecorder(set, e, opt)
		if f, ok := report.NewCostFitter(set, e, sp, runSplit); ok {
			noulFits[i] = f
			rc.OnItem(f.Add)
		} else if f, ok := report.NewChoiceCostFitter(set, e, sp, runSplit); ok {
			choiceFits[i] = f
			rc.OnItem(f.Add)
		}
		return rc
	}
	var streamed []int // the questions measured from the stored rows
	for i, e := range set.Questions {
		switch {
		case e.Question.Type == provider.Box:
			// Boxes are measured from their labelled edges (report.Question).
			obs, err := v.data.QuestionObs(e.ID)
			if err != nil {
				return err
			}
			qs[i] = report.Question(set, e, obs, opt)
		case v.stream != nil:
			streamed = append(streamed, i)
		default:
			rc := start(i)
			obs := v.data.Obs[e.ID]
			first := 0
			for i := range obs {
				if obs[i].Repeat == 0 {
					first++
				}
			}
			rc.Grow(first)
			for i := range obs {
				rc.Add(&obs[i])
			}
			qs[i] = report.FinishQuestion(e, rc)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	items := run.Done / max(run.Repeat, 1)
	budget := cfg.PassBytes
	if budget <= 0 {
		budget = DefaultPassBytes
	}
	for _, pass := range passes(streamed, items, budget) {
		rcs := make([]*metrics.Recorder, len(pass))
		qids := make([]string, len(pass))
		for k, i := range pass {
			rcs[k], qids[k] = start(i), set.Questions[i].ID
			// Room for the run's items in the metric columns up front.
			rcs[k].Grow(items)
		}
		if err := v.stream.eachOf(qids, func(k int, o *metrics.Obs) { rcs[k].Add(o) }); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		for k, i := range pass {
			qs[i] = report.FinishQuestion(set.Questions[i], rcs[k])
			rcs[k] = nil // its columns are no longer needed
		}
	}
	var noulCosts []report.CostFit
	var choiceCosts []report.ChoiceCostFit
	for i := range set.Questions {
		if noulFits[i] != nil {
			noulCosts = append(noulCosts, noulFits[i].Fit())
		}
		if choiceFits[i] != nil {
			choiceCosts = append(choiceCosts, choiceFits[i].Fit())
		}
	}
	if s := v.stream; s != nil && s.progress != nil {
		s.progress(LoadProgress{Read: s.read, Total: max(s.total, s.read)})
	}
	v.Report = report.Assemble(run, set, qs, questionset.Gate{})
	v.evaluateGates(cfg)
	v.Report.Costs, v.Report.ChoiceCosts = noulCosts, choiceCosts
	return v.holdout(ctx, db)
}

// costSplit is the dev/test split the cost fits use: the set file's
// (cfg.Gates), else half of the items by the metric seed.
func costSplit(opt MetricOptions, cfg ViewConfig) questionset.SplitSpec {
	sp := questionset.SplitSpec{Seed: opt.Seed, Test: 0.5}
	if cfg.Gates != nil && cfg.Gates.Split != nil {
		sp = *cfg.Gates.Split
	}
	return sp
}

// holdout sets the report's split (the part of the items the run asked)
// and, for a run on the test split, the hold-out notes from the store's
// ledger of test evaluations and relabels.
func (v *RunView) holdout(ctx context.Context, db *store.DB) error {
	run, set := v.Run, v.Set
	st, err := runner.ParseSettings(run)
	if err != nil || st.Split == "" {
		return nil
	}
	v.Report.Split = st.Split
	if st.Split != questionset.SplitTest {
		return nil
	}
	for _, e := range set.Questions {
		n, err := db.RevisionsOnSplitBy(ctx, set.Title(), e.ID, st.Split, run.ID)
		if err != nil {
			return err
		}
		rl, onTest, err := db.RelabelsBefore(ctx, set.Title(), e.ID, run.ID)
		if err != nil {
			return err
		}
		v.Report.Holdout = append(v.Report.Holdout, report.NewHoldoutNote(e.ID, n).WithRelabels(rl, onTest))
	}
	return nil
}

// evaluateGates evaluates the gates of cfg.Gates (nil: the snapshot's)
// plus cfg.Flags on the report's questions.
func (v *RunView) evaluateGates(cfg ViewConfig) {
	gates := cfg.Gates
	if gates == nil {
		gates = v.Set
	}
	v.Report.Gates = report.EvaluateGates(gates, cfg.Flags, v.Report.Questions)
	v.Report.Passed = true
	for _, g := range v.Report.Gates {
		if !g.Passed {
			v.Report.Passed = false
		}
	}
}

// Question returns the run's question id (as the run asked it).
func (v *RunView) Question(id string) *provider.Question {
	q, _ := v.Set.Questions.Get(id)
	return q
}

// QuestionReport returns question id's metrics, nil when the run has no
// such question.
func (v *RunView) QuestionReport(id string) *QuestionReport {
	for _, r := range v.Report.Questions {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Answer returns item's first answer to question q laid out for drawing,
// with its label marked.
func (v *RunView) Answer(item, q string) (AnswerView, *ItemResult) {
	r := v.Items[item][q]
	question := v.Question(q)
	if question == nil {
		return AnswerView{}, r
	}
	o := ViewOptions{Threshold: v.Set.Threshold(q), True: -1}
	var a *provider.Answer
	if r != nil {
		a, o.True = r.Answer, r.Label
	}
	return View(question, a, o), r
}

// Runs lists the newest stored runs first (limit 0: all).
func Runs(ctx context.Context, db *store.DB, limit int) ([]*Run, error) {
	if db == nil {
		return nil, fmt.Errorf("no database (choose one with --db or $JEVLAB_DB)")
	}
	return db.Runs(ctx, store.RunFilter{Limit: limit})
}

// NewestRun returns the newest stored run and its last update, for a cheap
// poll that notices runs stored by other processes; nil when there is none.
func NewestRun(ctx context.Context, db *store.DB) (*Run, error) {
	runs, err := Runs(ctx, db, 1)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return runs[0], nil
}
