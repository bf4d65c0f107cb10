package workbench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/store"
)

// A stored summary is a run's computed report (each question's metrics
// and the variant pairings), kept in the store so show and eval open a
// large finished run without reading every answer. Gates are not part of
// it: they are evaluated on it at every load (cheap), so --min-* flags
// apply as before.

// summaryFormat numbers the layout of storedSummary and the inputs of
// summaryKey; change it when either changes.
const summaryFormat = 2

// storedSummary is what is stored: exactly the report's computed parts
// (the split and hold-out notes read the store's ledger, which other runs
// move, so they are read again at every load).
type storedSummary struct {
	Questions   []*metrics.QuestionReport   `json:"questions"`
	Variants    []compare.VariantComparison `json:"variants,omitempty"`
	Costs       []report.CostFit            `json:"costs,omitempty"`
	ChoiceCosts []report.ChoiceCostFit      `json:"choice_costs,omitempty"`
}

// summaryKey names everything a run's report is computed from: the run's
// stored state (its counts and last update change with every item stored,
// resumed or retried), its question set, the metric options and the build.
func summaryKey(run *Run, opt metrics.Options, build string, split questionset.SplitSpec) string {
	k := struct {
		Format   int             `json:"format"`
		Build    string          `json:"build"`
		Run      string          `json:"run"`
		Status   store.Status    `json:"status"`
		Done     int             `json:"done"`
		Errors   int             `json:"errors"`
		Total    int             `json:"total"`
		Updated  string          `json:"updated"`
		Finished string          `json:"finished"`
		SetHash  string          `json:"set_hash"`
		Models   []string        `json:"models"`
		Options  metrics.Options `json:"options"`
		Settings json.RawMessage `json:"settings,omitempty"`
		Split    string          `json:"split"` // the cost fits' dev/test split
	}{summaryFormat, build, run.ID, run.Status, run.Done, run.Errors, run.Total, run.UpdatedAt.String(), run.FinishedAt.String(),
		run.SetHash, run.Models, opt.WithDefaults(), run.Settings, split.String()}
	b, err := json.Marshal(k)
	if err != nil {
		return "" // unreachable: every field marshals
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// fromSummary fills v's report from the summary stored under key, if any,
// and evaluates the gates on it. It reports whether there was one.
func (v *RunView) fromSummary(ctx context.Context, db *store.DB, key string, cfg ViewConfig) (bool, error) {
	if key == "" {
		return false, nil
	}
	body, err := db.RunSummary(ctx, v.Run.ID, key)
	if err != nil || body == nil {
		return false, err
	}
	var s storedSummary
	if err := json.Unmarshal(body, &s); err != nil || len(s.Questions) != len(v.Set.Questions) {
		return false, nil // unreadable: computed again
	}
	for i, e := range v.Set.Questions {
		if s.Questions[i] == nil || s.Questions[i].ID != e.ID {
			return false, nil
		}
	}
	v.Report = &report.RunReport{Run: v.Run, Set: v.Set, Questions: s.Questions, Variants: s.Variants,
		Costs: s.Costs, ChoiceCosts: s.ChoiceCosts}
	v.Variants = runner.RecordedVariants(v.Run)
	v.evaluateGates(cfg)
	if err := v.holdout(ctx, db); err != nil {
		return false, err
	}
	v.summarized = true
	return true, nil
}

// saveSummary stores v's computed report under key.
func (v *RunView) saveSummary(ctx context.Context, db *store.DB, key string) error {
	body, err := json.Marshal(storedSummary{Questions: v.Report.Questions, Variants: v.Report.Variants,
		Costs: v.Report.Costs, ChoiceCosts: v.Report.ChoiceCosts})
	if err != nil {
		return fmt.Errorf("run %s: summary: %w", v.Run.ID, err)
	}
	return db.SaveRunSummary(ctx, v.Run.ID, key, body)
}
