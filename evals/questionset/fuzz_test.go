package questionset

import (
	"bytes"
	"testing"
)

// FuzzLoadQuestionSet: the loader never panics; a set it accepts saves,
// and the saved form (re-encoded through the node tree, not the
// unchanged-file shortcut) loads back to the same set.
func FuzzLoadQuestionSet(f *testing.F) {
	f.Add([]byte(designExample), "s.yaml")
	for _, c := range malformedSets {
		f.Add([]byte(c.in), c.file)
	}
	f.Add([]byte("questions:\n  a: &x {type: noul}\n  b: *x\n  c:\n    <<: *x\n    instructions: hi\n"), "m.yaml")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		s, err := Parse(name, data)
		if err != nil {
			return
		}
		want := s.canonicalJSON()
		s.orig = nil
		out, err := s.Marshal()
		if err != nil {
			t.Fatalf("accepted set does not marshal: %v", err)
		}
		back, err := Parse(name, out)
		if err != nil {
			t.Fatalf("saved set does not load: %v\ninput:\n%s\nsaved:\n%s", err, data, out)
		}
		if got := back.canonicalJSON(); !bytes.Equal(got, want) {
			t.Fatalf("saved set differs:\n got %s\nwant %s\nsaved:\n%s", got, want, out)
		}
	})
}
