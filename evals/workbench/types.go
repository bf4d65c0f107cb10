package workbench

import (
	"github.com/jevlab/jevlab/evals/compare"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/evals/runner"
	"github.com/jevlab/jevlab/store"
)

// The layer's vocabulary: aliases of the evals and store types that a front
// end presents, so a screen names them through this package and never
// imports the packages that compute them.
type (
	// Run is a stored run's header (store.Run).
	Run = store.Run
	// RunStatus is a run's status (store.Status).
	RunStatus = store.Status
	// QuestionReport is one question's metrics (metrics.QuestionReport).
	QuestionReport = metrics.QuestionReport
	// Estimate is a point value with its interval (metrics.Estimate).
	Estimate = metrics.Estimate
	// CurvePoint is one point of the accuracy–coverage curve.
	CurvePoint = metrics.CurvePoint
	// RunReport is one run's report with its gates (report.RunReport).
	RunReport = report.RunReport
	// Comparison is a paired comparison of two runs (compare.Comparison).
	Comparison = compare.Comparison
	// QuestionComparison is one question of a Comparison.
	QuestionComparison = compare.QuestionComparison
	// Delta is one metric's paired change B − A.
	Delta = compare.Delta
	// FlipItem is one item whose correctness or decision changed.
	FlipItem = compare.FlipItem
	// Progress is one progress event of a run (runner.Progress).
	Progress = runner.Progress
	// CostEstimate is a dry run's estimate (runner.Estimate).
	CostEstimate = runner.Estimate
	// Gate is a question's gates (questionset.Gate).
	Gate = questionset.Gate
)

// Run statuses, re-exported for front ends.
const (
	StatusRunning     = store.StatusRunning
	StatusDone        = store.StatusDone
	StatusInterrupted = store.StatusInterrupted
	StatusFailed      = store.StatusFailed
)

// Verdicts, re-exported for front ends.
const (
	Improved      = compare.Improved
	Regressed     = compare.Regressed
	NoChange      = compare.NoChange
	WithinNoise   = compare.WithinNoise
	NotComparable = compare.NotComparable
)

// ErrInterrupted marks a run stopped before it finished (resumable).
var ErrInterrupted = runner.ErrInterrupted

// ResamplingNote is the clause show and compare print for the bag of
// little bootstraps behind a question's intervals (report.LittleClause),
// "" for the ordinary bootstrap (r nil).
func ResamplingNote(r *metrics.Resampling) string {
	if r == nil {
		return ""
	}
	return report.LittleClause(r)
}
