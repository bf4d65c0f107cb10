package workbench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jevlab/jevlab/evals/compare"
)

// itemStream yields n items named by prefix, then err.
func itemStream(prefix string, n int, err error) compare.Items {
	return func(yield func(*compare.Item) error) error {
		for i := range n {
			if e := yield(&compare.Item{ID: fmt.Sprintf("%s%06d", prefix, i)}); e != nil {
				return e
			}
		}
		return err
	}
}

// The compare screen's progress counts both runs' items as they stream:
// never Read = Total before both streams end (the hint counts one item
// more than A holds), then exactly once Read = Total, from one caller at a
// time.
func TestCompareProgressCountsItems(t *testing.T) {
	var data [2]compare.RunData
	data[0] = compare.RunData{ItemsHint: 20_001, Stream: itemStream("a", 20_000, nil)}
	data[1] = compare.RunData{ItemsHint: 10_000, Stream: itemStream("b", 10_000, nil)}
	var seen []LoadProgress
	busy := false
	countItems(&data, 1, func(p LoadProgress) {
		if busy {
			t.Error("progress called while a call was running")
		}
		busy = true
		seen = append(seen, p)
		busy = false
	})
	done := make(chan error, 2)
	for i := range data {
		go func() { done <- data[i].Stream(func(*compare.Item) error { return nil }) }()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// 20,000 and 10,000 items: 2 + 1 reports on the way, 2 as each ends.
	if len(seen) != 5 {
		t.Fatalf("%d reports, want 5: %+v", len(seen), seen)
	}
	for i, p := range seen[:4] {
		if p.Total != 30_001 || p.Read >= p.Total || i > 0 && p.Read < seen[i-1].Read {
			t.Errorf("report %d: %+v (total 30,001, below it, never backwards)", i, p)
		}
	}
	if last := seen[4]; last.Read != last.Total || last.Total != 30_001 {
		t.Errorf("last report %+v, want Read = Total", last)
	}

	// A stream's error still ends it, and is returned.
	boom := errors.New("boom")
	data[0] = compare.RunData{ItemsHint: 3, Stream: itemStream("a", 3, boom)}
	data[1] = compare.RunData{}
	seen = nil
	countItems(&data, 1, func(p LoadProgress) { seen = append(seen, p) })
	if err := data[0].Stream(func(*compare.Item) error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("stream error: %v", err)
	}
	if len(seen) != 1 || seen[0].Read != 3 || seen[0].Total != 3 {
		t.Errorf("after an error: %+v", seen)
	}
}

// Over two passes (each reading both runs) the total counts both reads,
// and Read = Total comes only after the second.
func TestCompareProgressOverPasses(t *testing.T) {
	var data [2]compare.RunData
	data[0] = compare.RunData{ItemsHint: 10, Stream: itemStream("a", 10, nil)}
	data[1] = compare.RunData{ItemsHint: 10, Stream: itemStream("b", 10, nil)}
	var seen []LoadProgress
	countItems(&data, 2, func(p LoadProgress) { seen = append(seen, p) })
	for range 2 {
		for i := range data {
			if err := data[i].Stream(func(*compare.Item) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(seen) != 4 {
		t.Fatalf("%d reports, want 4 (one as each read ends)", len(seen))
	}
	for i, p := range seen[:3] {
		if p.Total != 40 || p.Read >= 40 {
			t.Errorf("report %d: %+v, want below 40 of 40", i, p)
		}
	}
	if last := seen[3]; last.Read != 40 || last.Total != 40 {
		t.Errorf("last report %+v, want 40 of 40", last)
	}
}
