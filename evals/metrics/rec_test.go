package metrics

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
	"unsafe"

	"github.com/jevlab/jevlab/provider"
)

// mixedObs are observations of q over n items with 3 repeats each, some
// failed, some unlabelled, some whose choice is not the top option, in
// the store's order (item by item, repeats together).
func mixedObs(q *provider.Question, n int, seed uint64) []Obs {
	rng := rand.New(rand.NewPCG(seed, 7))
	k := q.Size()
	var out []Obs
	for i := range n {
		for rep := range 3 {
			o := Obs{ItemID: fmt.Sprintf("it%04d", i), Repeat: rep, LatencyMS: float64(rng.IntN(900)), Label: rng.IntN(k), HasLabel: i%7 != 0}
			if rng.IntN(20) == 0 {
				o.ErrKind = "timeout"
				out = append(out, o)
				continue
			}
			a := &provider.Answer{Type: q.Type}
			switch q.Type {
			case provider.Noul:
				a.P = float64(rng.IntN(101)) / 100
			default:
				p := make([]float64, k)
				left := 100
				for j := range k - 1 {
					v := rng.IntN(left + 1)
					p[j], left = float64(v)/100, left-v
				}
				p[k-1] = float64(left) / 100
				a.Probs = p
				if q.Type == provider.Choice {
					a.Choice = q.Options[argmax(p)].Label
					if rng.IntN(10) == 0 {
						a.Choice = q.Options[rng.IntN(k)].Label
					}
				} else {
					for j, v := range p {
						a.Score += float64(j) * v
					}
				}
				if rng.IntN(2) == 0 {
					a.Confidence, a.HasConfidence = float64(rng.IntN(101))/100, true
				}
			}
			o.Answer = a
			out = append(out, o)
		}
	}
	return out
}

func recQuestions() map[string]*provider.Question {
	ch := &provider.Question{Type: provider.Choice}
	for i := range 6 {
		ch.Options = append(ch.Options, provider.Option{Label: fmt.Sprintf("o%d", i)})
	}
	sc := &provider.Question{Type: provider.Score}
	for i := range 5 {
		sc.Levels = append(sc.Levels, json.RawMessage(fmt.Sprintf("%q", fmt.Sprint("level ", i))))
	}
	return map[string]*provider.Question{"choice": ch, "score": sc, "noul": {Type: provider.Noul}}
}

// A Recorder fed the store's order gives exactly Compute's report, for
// every question type, with repeats, failures, unlabelled items, routing
// and a non-default threshold; and Compute does not depend on the order
// repeats come in.
func TestRecorderIsCompute(t *testing.T) {
	mc := 0.4
	opt := Options{Seed: 3, Bootstrap: 200, Threshold: 0.6, MinConfidence: &mc, NoiseFloorDraws: 100}
	for name, q := range recQuestions() {
		obs := mixedObs(q, 300, 11)
		want, _ := json.Marshal(Compute(q, obs, opt))
		rc := NewRecorder(q, opt)
		for i := range obs {
			rc.Add(&obs[i])
		}
		rep := rc.Report()
		if rep.N != 300 {
			t.Fatalf("%s: %d items, want 300", name, rep.N)
		}
		got, _ := json.Marshal(rep)
		if string(got) != string(want) {
			t.Fatalf("%s: recorder\n%s\nwant Compute's\n%s", name, got, want)
		}
		// The same observations with every repeat after all first repeats.
		var moved []Obs
		for rep := range 3 {
			for _, o := range obs {
				if o.Repeat == rep {
					moved = append(moved, o)
				}
			}
		}
		again, _ := json.Marshal(Compute(q, moved, opt))
		if string(again) != string(want) {
			t.Fatalf("%s: Compute depends on the order of repeats", name)
		}
	}
}

// Without repeats every observation is its own item, even when two share
// an id (as Compute has always counted them).
func TestRecorderDistinctWithoutRepeats(t *testing.T) {
	q := &provider.Question{Type: provider.Noul}
	a := &provider.Answer{Type: provider.Noul, P: 0.9}
	obs := []Obs{{ItemID: "x", Answer: a, Label: 1, HasLabel: true}, {ItemID: "x", Answer: a, Label: 0, HasLabel: true}}
	r := Compute(q, obs, Options{Bootstrap: -1})
	if r.N != 2 || r.Labelled != 2 || r.Accuracy.Value != 0.5 {
		t.Fatalf("n %d labelled %d accuracy %v, want 2, 2, 0.5", r.N, r.Labelled, r.Accuracy.Value)
	}
}

// A Rec is small and fixed whatever the size of the answer: what a report
// holds per item.
func TestRecIsCompact(t *testing.T) {
	if s := unsafe.Sizeof(Rec{}); s > 96 {
		t.Fatalf("Rec is %d bytes, want at most 96", s)
	}
	q := recQuestions()["choice"]
	o := mixedObs(q, 1, 1)[0]
	r := RecOf(q, &o)
	if o.Answer != nil && !r.Usable() {
		t.Fatal("a usable answer reduced to an unusable Rec")
	}
}

// The reports over mixed observations (repeats, failures, unlabelled
// items, routing, a 0.6 threshold) are byte for byte those Compute gave
// before it read Recs (testdata/mixed_report_golden.json, written by the
// implementation that held every answer).
func TestRecsKeepEveryFigure(t *testing.T) {
	mc := 0.4
	opt := Options{Seed: 3, Bootstrap: 200, Threshold: 0.6, MinConfidence: &mc, NoiseFloorDraws: 100}
	var all []any
	for _, name := range []string{"choice", "score", "noul"} {
		q := recQuestions()[name]
		all = append(all, Compute(q, mixedObs(q, 300, 11), opt))
	}
	got, _ := json.MarshalIndent(all, "", " ")
	want, err := os.ReadFile("testdata/mixed_report_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("the reports changed (%d bytes, golden %d)", len(got), len(want))
	}
}

// RecColumns gives back every Rec as appended (a first repeat), for each
// question type, and Prepare over them is Prepare over the Recs.
func TestRecColumnsRoundTrip(t *testing.T) {
	for name, q := range recQuestions() {
		obs := mixedObs(q, 200, 5)
		names := NewItemNames(0)
		cols := NewRecColumns(q.Type, 0, names)
		var want []Rec
		for i := range obs {
			if obs[i].Repeat != 0 {
				continue
			}
			r := RecOf(q, &obs[i])
			r.Repeat = 0
			want = append(want, r)
			cols.Append(r, names.Add(r.ItemID))
		}
		for i := range want {
			got := cols.Rec(i)
			if q.Type != provider.Score {
				// Only the fields the type reads are kept.
				got.Score, got.Conf, got.RPS = want[i].Score, want[i].Conf, want[i].RPS
			}
			if q.Type == provider.Noul {
				got.Top, got.PLabel, got.PDec, got.Brier = want[i].Top, want[i].PLabel, want[i].PDec, want[i].Brier
			} else {
				got.P = want[i].P
			}
			if got != want[i] {
				t.Fatalf("%s rec %d: %+v, want %+v", name, i, got, want[i])
			}
		}
		back := make([]Rec, cols.Len())
		for i := range back {
			back[i] = cols.Rec(i)
		}
		opt := Options{Seed: 2, Bootstrap: 50}
		a, _ := json.Marshal(PrepareRecs(q, want, opt).Metrics())
		b, _ := json.Marshal(PrepareRecs(q, back, opt).Metrics())
		if string(a) != string(b) || PrepareRecs(q, back, opt).N != PrepareRecs(q, want, opt).N {
			t.Fatalf("%s: Prepare differs over the columns", name)
		}
		// PrepareColumns reads them in place, in any order, as PrepareRecs
		// reads them copied out in that order: the same Data.
		ord := make([]int32, cols.Len())
		for i := range ord {
			ord[i] = int32(i)
		}
		rand.New(rand.NewPCG(9, 9)).Shuffle(len(ord), func(i, j int) { ord[i], ord[j] = ord[j], ord[i] })
		perm := make([]Rec, len(ord))
		for i, j := range ord {
			perm[i] = back[j]
		}
		dc, dr := PrepareColumns(q, cols, ord, opt), PrepareRecs(q, perm, opt)
		if dc.N == 0 || !reflect.DeepEqual(dc, dr) {
			t.Fatalf("%s: PrepareColumns (N=%d) is not PrepareRecs over the Recs in that order (N=%d)", name, dc.N, dr.N)
		}
	}
}
