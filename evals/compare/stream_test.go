package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/jevlab/jevlab/evals/metrics"
	"github.com/jevlab/jevlab/provider"
)

// reusingStream streams r's items as a stored run's stream may: each
// item handed over in storage that is scribbled over as soon as yield
// returns (ids, labels, probabilities, boxes and orders), so a comparison
// that kept any of it past the item reads garbage.
func reusingStream(r *RunData) Items {
	held := heldItems(r)
	return func(yield func(*Item) error) error {
		return held(func(src *Item) error {
			it := Item{ID: src.ID, Order: src.Order, Obs: make([][]metrics.Obs, len(src.Obs))}
			if src.orders != nil {
				it.orders = append([]int(nil), src.orders...)
			}
			for qi, obs := range src.Obs {
				for _, o := range obs {
					if o.Answer != nil {
						a := *o.Answer
						a.Probs = append([]float64(nil), a.Probs...)
						if a.Box != nil {
							e := *a.Box
							a.Box = &e
						}
						o.Answer = &a
					}
					if o.LabelBox != nil {
						e := *o.LabelBox
						o.LabelBox = &e
					}
					it.Obs[qi] = append(it.Obs[qi], o)
				}
			}
			err := yield(&it)
			bad := provider.Edges{Top: 0.9, Bottom: 0.1, Left: 0.9, Right: 0.1}
			for i := range it.orders {
				it.orders[i] = 1 << 20
			}
			for _, obs := range it.Obs {
				for j := range obs {
					o := &obs[j]
					o.ItemID, o.Label, o.Repeat = "poisoned", 0, 7
					if o.LabelBox != nil {
						*o.LabelBox = bad
					}
					if a := o.Answer; a != nil {
						a.P, a.Score, a.Choice = math.NaN(), math.NaN(), "poisoned"
						for k := range a.Probs {
							a.Probs[k] = math.NaN()
						}
						if a.Box != nil {
							*a.Box = bad
						}
					}
				}
			}
			return err
		})
	}
}

// A comparison over streams that reuse every item's storage (as LoadRun's
// does) gives exactly the in-memory comparison: pull copies what the merge
// reads before the stream takes it back, recycling its batches, and
// nothing is kept past an item — over runs longer than many batches,
// with repeats, remapped options and box questions.
func TestReusedStreamEqualsHeld(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		a := randomRun("a", streamQuestions(false), 700, seed)
		b := randomRun("b", streamQuestions(seed%2 == 0), 700, seed+100)
		opt := Options{Seed: 5, Bootstrap: 50}
		want, _ := json.Marshal(Compare(a, b, opt))
		sa, sb := a, b
		sa.Stream, sb.Stream = reusingStream(&a), reusingStream(&b)
		c, err := CompareLoaded(sa, sb, opt)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(c)
		if string(got) != string(want) {
			t.Fatalf("seed %d: reused stream\n%s\nheld\n%s", seed, got, want)
		}
	}
	label := provider.Edges{Top: 0, Bottom: 0.5, Left: 0, Right: 0.5}
	var ba, bb, la []provider.Edges
	for i := range 1000 { // many more items than pull's batches hold
		w := 0.25 + float64(i%5)/20
		ba, bb, la = append(ba, provider.Edges{Top: 0, Bottom: 0.5 - float64(i%3)/10, Left: 0, Right: 0.5}), append(bb, provider.Edges{Top: 0, Bottom: 0.5, Left: 0, Right: w}), append(la, label)
	}
	a, b := boxRun("A", ba, la), boxRun("B", bb, la)
	want, _ := json.Marshal(Compare(a, b, Options{Seed: 1}))
	sa, sb := a, b
	sa.Stream, sb.Stream = reusingStream(&a), reusingStream(&b)
	c, err := CompareLoaded(sa, sb, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(c); string(got) != string(want) {
		t.Fatalf("box: reused stream\n%s\nheld\n%s", got, want)
	}
}

// countingStream yields n items (ids in order) and reports how it ended.
func countingStream(n int, fail error, ended chan<- error) Items {
	return func(yield func(*Item) error) error {
		it := Item{Obs: make([][]metrics.Obs, 1)}
		for i := range n {
			it.ID, it.Order = fmt.Sprintf("i%06d", i), i
			it.Obs[0] = []metrics.Obs{{ItemID: it.ID, Answer: &provider.Answer{Type: provider.Noul, P: float64(i) / float64(n)}}}
			if err := yield(&it); err != nil {
				ended <- err
				return err
			}
		}
		ended <- fail
		return fail
	}
}

// A consumer that stops after a few items of a long stream does not
// deadlock: stop ends the stream's goroutine, mid-batch or blocked on a
// full queue; the items read before were whole and in order. A stream's
// error comes after its last item.
func TestPullStopsEarlyAndReportsErrors(t *testing.T) {
	for _, take := range []int{0, 1, 63, 64, 65, 500} {
		ended := make(chan error, 1)
		next, stop := pull(countingStream(100000, nil, ended))
		for i := range take {
			it, err, ok := next()
			if !ok || err != nil || it.ID != fmt.Sprintf("i%06d", i) || it.Obs[0][0].Answer.P != float64(i)/100000 {
				t.Fatalf("take %d: item %d: %+v %v %v", take, i, it, err, ok)
			}
		}
		done := make(chan struct{})
		go func() { stop(); stop(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("take %d: stop did not return", take)
		}
		if err := <-ended; !errors.Is(err, errStopped) {
			t.Fatalf("take %d: the stream ended with %v, want it stopped", take, err)
		}
	}
	boom := errors.New("disk on fire")
	ended := make(chan error, 1)
	next, stop := pull(countingStream(130, boom, ended))
	defer stop()
	for i := 0; ; i++ {
		it, err, ok := next()
		if err != nil {
			if !errors.Is(err, boom) || i != 130 {
				t.Fatalf("error %v after %d items, want %v after 130", err, i, boom)
			}
			break
		}
		if !ok || it.ID != fmt.Sprintf("i%06d", i) {
			t.Fatalf("item %d: %+v %v", i, it, ok)
		}
	}
}
