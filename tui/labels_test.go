package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/testutil"
	"github.com/jevlab/jevlab/provider"
)

// fileDataset gives opt's session the demo-triage dataset as a file in a
// temporary folder, as JSON Lines (the shipped file) or as CSV (id,
// state, refund_request, queue, urgency), and returns its path and bytes.
func fileDataset(t *testing.T, opt *Options, format string) (string, []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "fixtures", "demo-triage", "dataset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data := src
	if format == "csv" {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write([]string{"id", "state", "refund_request", "queue", "urgency"})
		sc := bufio.NewScanner(bytes.NewReader(src))
		for sc.Scan() {
			var row struct {
				ID     string          `json:"id"`
				State  json.RawMessage `json:"state"`
				Labels struct {
					Refund  bool   `json:"refund_request"`
					Queue   string `json:"queue"`
					Urgency int    `json:"urgency"`
				} `json:"labels"`
			}
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				t.Fatal(err)
			}
			w.Write([]string{row.ID, string(row.State), strconv.FormatBool(row.Labels.Refund), row.Labels.Queue, strconv.Itoa(row.Labels.Urgency)})
		}
		w.Flush()
		data = b.Bytes()
	}
	p := filepath.Join(t.TempDir(), "dataset."+format)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	opt.Session = workbench.NewSession(opt.Set, workbench.DatasetSource{Path: p}, nil)
	return p, data
}

// TestLabelEdit: on a JSON Lines and on a CSV dataset, l on dt-003 picks
// refund_request true (it was false) and writes it: the file differs from
// the original in exactly that label, and the accuracy the dataset
// screen shows is what a run of the saved file reports (the same
// recordings, offline).
func TestLabelEdit(t *testing.T) {
	for _, format := range []string{"jsonl", "csv"} {
		t.Run(format, func(t *testing.T) {
			opt := demoTriage(t)
			path, before := fileDataset(t, &opt, format)
			db := withDB(&opt, openDB(t))
			tm := startDataset(t, opt, 160, 48)
			tm.Type("3r")
			waitFor(t, tm, "Metrics · run")
			tm.Type("2")
			waitFor(t, tm, "accuracy refund_request")
			typeKeys(tm, press(tea.KeyDown), press(tea.KeyDown))
			tm.Type("l")
			waitFor(t, tm, "Label of item dt-003")
			typeKeys(tm, press(tea.KeyDown), press(tea.KeyEnter))
			waitFor(t, tm, "dt-003: refund_request labelled true")
			fm, view := finish(t, tm)

			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := wantRelabelled(t, format, before)
			if !bytes.Equal(after, want) {
				t.Fatalf("the file differs in more than dt-003's refund_request:\n got %q\nwant %q", after, want)
			}

			// What the saved file evaluates to, offline, from the same
			// recordings.
			ctx := context.Background()
			sess := workbench.NewSession(opt.Set, workbench.DatasetSource{Path: path}, &workbench.RunTemplate{DB: db, Provider: opt.Provider, ProviderKind: "offline", Offline: true, Concurrency: 1, Version: "test"})
			items, err := workbench.LoadItems(ctx, opt.Set, sess.Dataset)
			if err != nil {
				t.Fatal(err)
			}
			id, err := sess.StartRun(ctx, items, "saved", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			v, err := workbench.LoadRun(ctx, db, id, workbench.ViewConfig{})
			if err != nil {
				t.Fatal(err)
			}
			ds := fm.screens[screenDataset].(*datasetModel)
			shown := workbench.ItemAccuracy(opt.Set, ds.labelled, ds.lookup)
			for _, q := range v.Report.Questions {
				line := fmt.Sprintf("%s %.3f (n %d)", q.ID, q.Accuracy.Value, q.Labelled)
				if !strings.Contains(view, line) {
					t.Errorf("the screen lacks %q (the saved file's run):\n%s", line, view)
				}
				for _, h := range shown {
					if h.ID == q.ID && (h.Labelled != q.Labelled || math.Abs(h.Accuracy-q.Accuracy.Value) > 1e-12) {
						t.Errorf("%s: screen %v over %d, run of the saved file %v over %d", q.ID, h.Accuracy, h.Labelled, q.Accuracy.Value, q.Labelled)
					}
				}
				if q.ID == "refund_request" && q.Accuracy.Value != 0.9 {
					t.Errorf("refund_request accuracy %v after the relabel, want 0.9 (dt-003 is now wrong)", q.Accuracy.Value)
				}
			}
		})
	}
}

// wantRelabelled is the dataset with dt-003's refund_request false made
// true and not one other byte changed.
func wantRelabelled(t *testing.T, format string, before []byte) []byte {
	t.Helper()
	lines := bytes.SplitAfter(before, []byte("\n"))
	i := 2 // dt-003 (JSONL line 3)
	from, to := `"labels": {"refund_request": false`, `"labels": {"refund_request": true`
	if format == "csv" {
		i = 3 // after the header
		from, to = ",false,billing,", ",true,billing,"
	}
	if !bytes.Contains(lines[i], []byte("dt-003")) || bytes.Count(lines[i], []byte(from)) != 1 {
		t.Fatalf("line %d is not dt-003's refund_request false: %q", i+1, lines[i])
	}
	lines[i] = bytes.Replace(lines[i], []byte(from), []byte(to), 1)
	return bytes.Join(lines, nil)
}

// TestDatasetOrders: after an evaluation of the recordings, o orders the
// items by the most confident wrong decision, the smallest top-two margin
// and the base-vs-variant disagreement; and l opens the label picker.
func TestDatasetOrders(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			for _, step := range []string{"confident-wrong", "margin", "picker"} {
				t.Run(step, func(t *testing.T) {
					opt := demoTriage(t)
					fileDataset(t, &opt, "jsonl")
					withDB(&opt, openDB(t))
					tm := startDataset(t, opt, sz.w, sz.h)
					tm.Type("3r")
					waitFor(t, tm, "Metrics · run")
					tm.Type("2")
					waitFor(t, tm, "accuracy refund_request")
					switch step {
					case "confident-wrong":
						tm.Type("o")
						waitFor(t, tm, "order: most confident wrong")
					case "margin":
						tm.Type("oo")
						waitFor(t, tm, "order: smallest top-two margin")
					case "picker":
						tm.Type("l]")
						waitFor(t, tm, "question queue (2 of 3")
					}
					_, view := finish(t, tm)
					golden.RequireEqual(t, []byte(normalize(view)))
				})
			}
		})
	}
}

// TestLabelEditRefused: the shipped example's dataset is embedded, so l
// says it cannot be rewritten and opens nothing; a label the file's
// reader refuses (a file changed under the workbench to lose the item)
// is reported and the items stay as they were.
func TestLabelEditRefused(t *testing.T) {
	m := newModel(t, demoTriage(t))
	drive(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	runCmd(m, m.Init(), 0)
	drive(m, keys("2l")...)
	ds := m.screens[screenDataset].(*datasetModel)
	if ds.labeling || !m.e.flashBad || !strings.Contains(m.e.flash, "embedded and cannot be rewritten") {
		t.Errorf("labeling %v, flash %q", ds.labeling, m.e.flash)
	}

	opt := demoTriage(t)
	path, before := fileDataset(t, &opt, "jsonl")
	m = newModel(t, opt)
	drive(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	runCmd(m, m.Init(), 0)
	ds = m.screens[screenDataset].(*datasetModel)
	drive(m, keys("2")...)
	drive(m, press(tea.KeyDown), press(tea.KeyDown))
	drive(m, keys("l")...)
	// The file loses dt-003 before enter.
	lines := bytes.SplitAfter(before, []byte("\n"))
	if err := os.WriteFile(path, bytes.Join(append(lines[:2:2], lines[3:]...), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	drive(m, press(tea.KeyEnter))
	if !m.e.flashBad || !strings.Contains(m.e.flash, "label of dt-003 not written") || len(ds.items) != 10 || ds.saving {
		t.Errorf("flash %q, %d items, saving %v", m.e.flash, len(ds.items), ds.saving)
	}
}

// TestVariantsTable: a run of demo-triage with a reworded queue (v2)
// against the stand-in draws the variants table on the evaluate screen
// from RunView.VariantPairs: the figures shown are the run's paired
// comparison.
func TestVariantsTable(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			opt := demoTriage(t)
			if err := opt.Set.AddVariant("queue", questionset.Variant{Name: "v2", Instructions: provider.String("Route the message to one team.")}); err != nil {
				t.Fatal(err)
			}
			opt.Provider, opt.Mode = standinClient(t), "stand-in"
			fileDataset(t, &opt, "jsonl")
			withDB(&opt, openDB(t))
			tm := startDataset(t, opt, sz.w, sz.h)
			tm.Type("3r")
			waitFor(t, tm, "Variants · each against its question")
			fm, view := finish(t, tm)
			ev := fm.screens[screenEval].(*evalModel)
			pairs := ev.v.VariantPairs()
			if len(pairs) != 1 || pairs[0].Comparison == nil {
				t.Fatalf("variant pairs %+v", pairs)
			}
			q := pairs[0].Comparison.Comparison
			if want := fmt.Sprintf("%d/%d/%d", q.Flips.Fixed, q.Flips.Broken, q.Flips.Changed); !strings.Contains(view, "queue~v2") || !strings.Contains(view, want) {
				t.Errorf("the table lacks queue~v2 or its flips %s:\n%s", want, view)
			}
			golden.RequireEqual(t, []byte(normalize(view)))
		})
	}
}
