package workbench

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/report"
	"github.com/jevlab/jevlab/store"
)

func reportText(t *testing.T, rep *RunReport) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String() + jsonOf(t, rep)
}

// A finished run's report is stored by the first report-only load that
// names its build and read back by the next, figure for figure; storing
// an item drops it; another build or other options never read it.
func TestStoredSummaryIsTheComputedReport(t *testing.T) {
	db, _ := twoRuns(t)
	ctx := context.Background()
	acc := 0.99
	cfg := ViewConfig{ReportOnly: true, Build: "test 1", Flags: Gate{MinAccuracy: &acc}}
	want, err := LoadRun(ctx, db, "latest", ViewConfig{ReportOnly: true, Flags: cfg.Flags})
	if err != nil {
		t.Fatal(err)
	}
	first, err := LoadRun(ctx, db, "latest", cfg)
	if err != nil || first.summarized {
		t.Fatalf("first load: %v (summarized %v)", err, first != nil && first.summarized)
	}
	kopt := DefaultMetricOptions()
	kopt.Model = strings.Join(first.Run.Models, "+")
	key := summaryKey(first.Run, kopt, cfg.Build, costSplit(kopt, cfg))
	if body, err := db.RunSummary(ctx, first.Run.ID, key); err != nil || body == nil {
		t.Fatalf("no summary stored: %v", err)
	}
	again, err := LoadRun(ctx, db, "latest", cfg)
	if err != nil || !again.summarized {
		t.Fatalf("second load did not read the summary: %v", err)
	}
	if got, w := reportText(t, again.Report), reportText(t, want.Report); got != w {
		t.Fatalf("report from the summary differs:\n%s\n---\n%s", got, w)
	}
	if again.Report.Passed || len(again.Report.Gates) == 0 {
		t.Fatalf("gate flags not evaluated on the summary: %+v", again.Report.Gates)
	}
	if _, err := CompareViews(again, want, nil); err == nil {
		t.Fatal("compared a view that holds no answers")
	}
	// A read-only open reads it too (show).
	ro, err := store.OpenReadOnly(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, err := LoadRun(ctx, ro, "latest", cfg); err != nil || !v.summarized {
		t.Fatalf("read-only load: %v", err)
	}
	// Another build, or other metric options, compute.
	if v, _ := LoadRun(ctx, db, "latest", ViewConfig{ReportOnly: true, Build: "test 2"}); v.summarized {
		t.Fatal("another build read the summary")
	}
	opt := DefaultMetricOptions()
	opt.Bootstrap = 200
	if v, _ := LoadRun(ctx, db, "latest", ViewConfig{ReportOnly: true, Build: "test 1", Metrics: &opt}); v.summarized {
		t.Fatal("other options read the summary")
	}
	// Storing an item (a resume or a retry) drops the run's summaries.
	if _, err := db.SaveItems(ctx, first.Run.ID, []store.ItemResult{{ItemID: "extra", Seq: 99, ErrKind: "timeout",
		Answers: []store.ItemAnswer{{QuestionID: first.Set.Questions[0].ID, ErrKind: "timeout"}}}}); err != nil {
		t.Fatal(err)
	}
	if body, _ := db.RunSummary(ctx, first.Run.ID, key); body != nil {
		t.Fatal("summary kept after an item was stored")
	}
	after, err := LoadRun(ctx, db, "latest", cfg)
	if err != nil || after.summarized || after.Report.Questions[0].N != want.Report.Questions[0].N+1 {
		t.Fatalf("after storing an item: %v, summarized %v", err, after != nil && after.summarized)
	}
}

// The fitted costs come back from a stored summary as they were computed
// (they used to be dropped, so show --json lost them on the second load).
func TestStoredSummaryKeepsCosts(t *testing.T) {
	v, dir := costRun(t)
	db, err := store.Open(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	cfg := ViewConfig{ReportOnly: true, Build: "test 1"}
	first, err := LoadStoredRun(ctx, db, v.Run, cfg)
	if err != nil || first.summarized {
		t.Fatalf("first load: %v", err)
	}
	if len(first.Report.Costs) == 0 || len(first.Report.ChoiceCosts) == 0 {
		t.Fatalf("no cost fits computed: %d noul, %d choice", len(first.Report.Costs), len(first.Report.ChoiceCosts))
	}
	again, err := LoadStoredRun(ctx, db, v.Run, cfg)
	if err != nil || !again.summarized {
		t.Fatalf("second load did not read the summary: %v", err)
	}
	if got, want := jsonOf(t, again.Report), jsonOf(t, first.Report); got != want {
		t.Fatalf("report from the summary differs:\n%s\n---\n%s", got, want)
	}
}
