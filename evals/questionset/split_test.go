package questionset

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The split depends on each item's own id only: adding, removing and
// reordering items never moves another one; new items are assigned by
// their id; the share is close to the ratio; seed matters.
func TestSplitNeverMoves(t *testing.T) {
	sp := SplitSpec{Seed: 7, Test: 0.25}
	ids := make([]string, 2000)
	for i := range ids {
		ids[i] = fmt.Sprintf("item-%04d", i)
	}
	first := map[string]string{}
	test := 0
	for _, id := range ids {
		first[id] = sp.Of(id)
		if first[id] == SplitTest {
			test++
		}
	}
	if share := float64(test) / 2000; share < 0.22 || share > 0.28 {
		t.Fatalf("test share %.3f, want ≈0.25", share)
	}
	// Reordered, half removed, new ones added: every kept item keeps its split.
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	kept := append(ids[:1000:1000], "new-1", "new-2", "new-3")
	for _, id := range kept {
		if f, ok := first[id]; ok && sp.Of(id) != f {
			t.Fatalf("%s moved from %s to %s", id, f, sp.Of(id))
		}
	}
	moved := 0
	for _, id := range ids[:200] {
		if (SplitSpec{Seed: 8, Test: 0.25}).Of(id) != first[id] {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("the seed changes nothing")
	}
}

func TestSplitInTheFile(t *testing.T) {
	s, err := Parse("t.yaml", []byte("questions:\n  q: {type: noul}\ndataset: d.jsonl # data\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetSplit(SplitSpec{Seed: 3, Test: 0.2}); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "split:") || !strings.Contains(string(out), "# data") {
		t.Fatalf("saved:\n%s", out)
	}
	back, err := Parse("t.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if back.Split == nil || *back.Split != (SplitSpec{Seed: 3, Test: 0.2}) {
		t.Fatalf("split %+v", back.Split)
	}
	if err := back.SetSplit(SplitSpec{Seed: 3, Test: 0.2}); err != nil {
		t.Fatal(err)
	}
	if err := back.SetSplit(SplitSpec{Seed: 3, Test: 0.3}); err == nil || !strings.Contains(err.Error(), "would move items") {
		t.Fatalf("changed split: %v", err)
	}
	for _, c := range []struct{ yaml, want string }{
		{"questions:\n  q: {type: noul}\nsplit: {seed: 1, test: 1.5}\n", "split.test: 1.5: the test share must be between 0 and 1"},
		{"questions:\n  q: {type: noul}\nsplit: {seed: 1}\n", "split.test: missing"},
		{"questions:\n  q: {type: noul}\nsplit: {seed: 1, tset: 0.2}\n", "split.tset: unknown field; did you mean test?"},
	} {
		if _, err := Parse("t.yaml", []byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
