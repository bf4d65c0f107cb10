package questionset

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// Hold-out split
//
// A labelled dataset is split into dev and test once, by a stable seeded
// hash of each item's id, and the split is written into the set:
//
//	split: {seed: 1, test: 0.2}
//
// An item is in test when the first 8 bytes of sha256(seed, id), read as a
// fraction of 2^64, are below the test share. The assignment depends on
// nothing but the item's own id, so adding, removing or reordering items
// never moves another item, and a new item is assigned by its id alone.
// Changing the seed or the share would move items, so SetSplit refuses to
// change a split once set.

// Split names.
const (
	SplitDev  = "dev"
	SplitTest = "test"
)

// DefaultTestShare is the share of items in test when none is given.
const DefaultTestShare = 0.2

// SplitSpec is a set's hold-out split.
type SplitSpec struct {
	Seed uint64
	// Test is the share of items in test, in (0, 1).
	Test float64
}

// Of returns the split ("dev" or "test") of the item with id.
func (sp SplitSpec) Of(id string) string {
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], sp.Seed)
	h := sha256.New()
	h.Write([]byte("jevlab-split\x00"))
	h.Write(seed[:])
	h.Write([]byte(id))
	sum := h.Sum(nil)
	x := float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
	if x < sp.Test {
		return SplitTest
	}
	return SplitDev
}

// String is "seed 1, test 0.2".
func (sp SplitSpec) String() string {
	return fmt.Sprintf("seed %d, test %s", sp.Seed, formatFloat(sp.Test))
}

// SetSplit writes the hold-out split into the set (saved with it). A set
// that already has a split keeps it: asking for another one is an error,
// since it would move items between dev and test.
func (s *Set) SetSplit(sp SplitSpec) error {
	if sp.Test <= 0 || sp.Test >= 1 {
		return fmt.Errorf("split: test share %s must be between 0 and 1 (exclusive)", formatFloat(sp.Test))
	}
	if s.Split != nil {
		if *s.Split != sp {
			return fmt.Errorf("the set's split is fixed (%s); a split of %s would move items between dev and test — remove split: from the file to re-split on purpose", s.Split, sp)
		}
		return nil
	}
	c := sp
	s.Split = &c
	return nil
}

func (p *parser) split(s *Set, n *yaml.Node) {
	d := deref(n)
	if d.Kind != yaml.MappingNode {
		p.errAt(d, "", "split", "must be a mapping such as {seed: 1, test: 0.2}")
		return
	}
	pairs, err := mappingPairs(d, 1)
	if err != nil {
		p.posErr(err, d, "", "split")
		return
	}
	sp := SplitSpec{Test: -1}
	for _, kv := range pairs {
		switch kv.key {
		case "seed":
			x, ok := p.number(kv.value, "", "split.seed")
			if !ok {
				continue
			}
			v, err := strconv.ParseUint(formatFloat(x), 10, 64)
			if err != nil {
				p.errAt(kv.value, "", "split.seed", "must be a whole number ≥ 0")
				continue
			}
			sp.Seed = v
		case "test":
			x, ok := p.number(kv.value, "", "split.test")
			if !ok {
				continue
			}
			if x <= 0 || x >= 1 {
				p.errAt(kv.value, "", "split.test", fmt.Sprintf("%s: the test share must be between 0 and 1 (exclusive)", formatFloat(x)))
				continue
			}
			sp.Test = x
		default:
			p.unknown(kv.keyNode, "", "split."+kv.key, []string{"seed", "test"}, "a split has seed and test")
		}
	}
	if sp.Test < 0 {
		p.errAt(d, "", "split.test", "missing; give the share of items held out for test, e.g. test: 0.2")
		return
	}
	s.Split = &sp
}

func (c *Costs) clone() *Costs {
	if c == nil {
		return nil
	}
	d := *c
	d.Abstain = clonePtr(c.Abstain)
	d.Other = clonePtr(c.Other)
	if c.Matrix != nil {
		d.Matrix = make(map[string]map[string]float64, len(c.Matrix))
		for k, row := range c.Matrix {
			d.Matrix[k] = maps.Clone(row)
		}
	}
	d.FalseChoice = maps.Clone(c.FalseChoice)
	return &d
}
