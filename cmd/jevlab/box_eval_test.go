package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/store"
)

const boxEvalSet = `name: mugs
model: jev-1.14.0
assets:
  img-a: a.png
  img-b: b.png
dataset: d.jsonl
questions:
  mug:
    type: box
    instructions: the red square in ` + "`photo`" + `
  present:
    type: noul
    instructions: Is there a red square in ` + "`photo`" + `?
`

// storedBoxes reads a run's box answers of question q back from the
// store without raw bytes: item → (answer edges, label text).
func storedBoxes(t *testing.T, dbPath, runID, q string) (map[string]provider.Edges, map[string]string) {
	t.Helper()
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pred, labels := map[string]provider.Edges{}, map[string]string{}
	err = db.ForEachAnswerNoRaw(context.Background(), runID, func(a *store.ItemAnswer) error {
		if a.QuestionID != q || a.Answer == nil {
			return nil
		}
		if a.Answer.Raw != nil || a.Answer.Box == nil {
			return fmt.Errorf("item %s: raw %q, box %v", a.ItemID, a.Answer.Raw, a.Answer.Box)
		}
		pred[a.ItemID], labels[a.ItemID] = *a.Answer.Box, a.LabelText
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pred, labels
}

type boxShow struct {
	Questions []struct {
		ID       string             `json:"question"`
		Labelled int                `json:"labelled"`
		Box      *metrics.BoxReport `json:"box"`
	} `json:"questions"`
	Gates []struct {
		Question, Gate, Metric string
		Passed                 bool
		Msg                    string `json:"message"`
	} `json:"gates"`
}

// TestEvalBoxEndToEnd is issue 14's box evaluation end to end: a set with
// image assets and a box question, its dataset labelled with boxes,
// evaluated against the in-process stand-in — each item's request carries
// the images its state references and the Images header — its box answers
// stored with their edges (read back without raw bytes), and show --json
// giving the mean IoU metrics.Boxes gives over the same pairs; then with
// labels built from the answers, figures checked by hand: IoU 1 (the
// answer itself), its area (the whole image as label) and 0 (disjoint).
func TestEvalBoxEndToEnd(t *testing.T) {
	isolate(t)
	si, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	rec := &sent{}
	srv := httptest.NewServer(rec.wrap(si))
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.png"), pngOf(t, 300, 400, 200), 0o600)
	os.WriteFile(filepath.Join(dir, "b.png"), pngOf(t, 400, 300, 50), 0o600)
	setPath := filepath.Join(dir, "mugs.yaml")
	os.WriteFile(setPath, []byte(boxEvalSet), 0o600)
	writeData := func(labels map[string]string) {
		var b strings.Builder
		for _, it := range []struct{ id, img string }{{"i1", "img-a"}, {"i2", "img-a"}, {"i3", "img-b"}} {
			lab := ""
			if l, ok := labels[it.id]; ok {
				lab = `, "labels": {"mug": ` + l + `, "present": true}`
			}
			fmt.Fprintf(&b, `{"id": %q, "state": {"photo": %q, "n": %q}%s}`+"\n", it.id, it.img, it.id, lab)
		}
		os.WriteFile(filepath.Join(dir, "d.jsonl"), []byte(b.String()), 0o600)
	}
	writeData(map[string]string{
		"i1": `{"top": 0.3, "bottom": 0.7, "left": 0.3, "right": 0.7}`,
		"i2": `{"top": 0.1, "bottom": 0.5, "left": 0.2, "right": 0.6}`,
		"i3": `{"top": 0.33, "bottom": 0.67, "left": 0.33, "right": 0.67}`,
	})
	db := filepath.Join(dir, "db")

	// Not opted in: refused before anything is sent.
	code, out, errOut := runJevlab(t, "eval", "--db", db, "--base-url", srv.URL, setPath)
	if code != 2 || !strings.Contains(errOut, "need the Images Danger-Zone opt-in: --images") || len(rec.take()) != 0 {
		t.Fatalf("without --images: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runJevlab(t, "eval", "--db", db, "--base-url", srv.URL, "--images", "--name", "first", setPath)
	if code != 0 {
		t.Fatalf("eval: %d\n%s\n%s", code, out, errOut)
	}
	reqs := rec.take()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		var body struct {
			State  struct{ Photo string }
			Assets map[string]json.RawMessage
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if r.images != "true" || len(body.Assets) != 1 || body.Assets[body.State.Photo] == nil {
			t.Errorf("request for %s: images header %q, assets %v", body.State.Photo, r.images, len(body.Assets))
		}
	}
	runs := runIDs(t, db)
	pred, labels := storedBoxes(t, db, runs[0], "mug")
	if len(pred) != 3 || labels["i1"] != `{"top":0.3,"bottom":0.7,"left":0.3,"right":0.7}` {
		t.Fatalf("stored boxes %v labels %v", pred, labels)
	}
	var pairs []metrics.BoxObs
	for _, id := range []string{"i1", "i2", "i3"} {
		l := dataset.StoredBoxLabel(labels[id])
		pairs = append(pairs, metrics.BoxObs{Pred: pred[id], Label: *l})
	}
	want := metrics.Boxes(pairs, metrics.Options{Seed: 1})
	code, out, errOut = runJevlab(t, "show", "--db", db, runs[0], "--json")
	if code != 0 {
		t.Fatalf("show --json: %d %s", code, errOut)
	}
	var rep boxShow
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Questions[0].ID != "mug" || rep.Questions[0].Box == nil {
		t.Fatalf("no box report:\n%s", out)
	}
	got := rep.Questions[0].Box
	if got.N != 3 || got.MeanIoU.Value != want.MeanIoU.Value || got.MeanIoU.Lo != want.MeanIoU.Lo || got.MeanIoU.Hi != want.MeanIoU.Hi ||
		got.Hits != want.Hits || got.Hit50.Value != want.Hit50.Value || got.Hit50.Lo != want.Hit50.Lo {
		t.Errorf("show --json box %+v\nmetrics.Boxes %+v", got, want)
	}
	if rep.Questions[1].Box != nil {
		t.Errorf("the noul has a box report")
	}

	// Labels from the answers: i1 the answer itself (IoU 1), i2 the whole
	// image (IoU = the answer's area), i3 a corner the answer misses (0).
	label := func(e provider.Edges) string { return dataset.BoxLabelText(e) }
	writeData(map[string]string{
		"i1": label(pred["i1"]),
		"i2": `{"top": 0, "bottom": 1, "left": 0, "right": 1}`,
		"i3": `{"top": 0, "bottom": 0.01, "left": 0, "right": 0.01}`,
	})
	code, out, errOut = runJevlab(t, "eval", "--db", db, "--base-url", srv.URL, "--images", "--name", "second", setPath)
	if code != 0 {
		t.Fatalf("second eval: %d\n%s\n%s", code, out, errOut)
	}
	e2 := pred["i2"]
	area := (e2.Bottom - e2.Top) * (e2.Right - e2.Left)
	if p3 := pred["i3"]; p3.Top < 0.01 || p3.Left < 0.01 || area >= 0.5 {
		t.Fatalf("the stand-in's boxes moved outside what this case assumes: %v %v", p3, e2)
	}
	code, out, _ = runJevlab(t, "show", "--db", db, "latest", "--json")
	rep = boxShow{}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("show: %d %v", code, err)
	}
	b := rep.Questions[0].Box
	if math.Abs(b.MeanIoU.Value-(1+area+0)/3) > 1e-12 || b.Hits != 1 || math.Abs(b.Hit50.Value-1.0/3) > 1e-12 {
		t.Errorf("hand-computed: mean IoU %v, want %v; hits %d, want 1", b.MeanIoU.Value, (1+area)/3, b.Hits)
	}
	// Text: n, mean IoU and IoU≥0.5 accuracy with their intervals; no
	// accuracy or Brier line for the box.
	code, out, _ = runJevlab(t, "show", "--db", db, "latest")
	if code != 0 || !strings.Contains(out, "mean IoU") || !strings.Contains(out, "IoU≥0.5 accuracy") {
		t.Errorf("show text:\n%s", out)
	}
	// The workbench's evaluate screen: the same figures as show.
	sdb, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	set, err := questionset.Load(setPath)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := workbench.DatasetFor(set, "", dataset.Options{}.ForSet(set), nil)
	if err != nil {
		t.Fatal(err)
	}
	latest := runIDs(t, db)
	view := screenOf(t, set, ds, sdb, []string{"enter"}, "Metrics · run ")
	row := rowOf(t, view, "mug")
	for _, want := range []string{"box · mean IoU " + parityEst(b.MeanIoU), "IoU≥0.5 accuracy " + parityEst(b.Hit50), "(1/3)"} {
		if !strings.Contains(row, want) {
			t.Errorf("evaluate screen row lacks %q (runs %v):\n%s", want, latest, row)
		}
	}
	if !strings.Contains(view, "Box · mug") || strings.Contains(view, "Accuracy–coverage") || strings.Contains(view, "Confusion · rows") {
		t.Errorf("evaluate screen's box section:\n%s", view)
	}

	// compare: the box question compared paired by item, never dropped.
	code, out, errOut = runJevlab(t, "compare", "--db", db, runs[0], "latest", "--json")
	var cmp struct {
		Questions []struct {
			ID      string `json:"question"`
			Verdict string
			Deltas  []struct{ Metric string }
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &cmp); err != nil || len(cmp.Questions) == 0 {
		t.Fatalf("compare --json: %d %v\n%s\n%s", code, err, out, errOut)
	}
	if q := cmp.Questions[0]; q.ID != "mug" || len(q.Deltas) != 2 || q.Deltas[0].Metric != "mean_iou" || q.Deltas[1].Metric != "iou50_accuracy" || q.Verdict == "not comparable" {
		t.Errorf("compare of the box question: %+v", q)
	}
}
