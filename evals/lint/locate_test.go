package lint

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocationsFromTheSetsOwnTree: LintFile locates findings in the tree
// the set was parsed into (no second parse); for a JSON file, whose tree
// questionset builds itself, the places are the same as YAML's reading of
// the file gives.
func TestLocationsFromTheSetsOwnTree(t *testing.T) {
	for name, src := range map[string]string{
		"s.json": "{\n  \"questions\": {\n    \"team\": {\n      \"type\": \"choice\",\n      \"criteria\": {\"billing\": \"x\", \"tech\": \"x\"}\n    },\n    \"tone\": {\"type\": \"score\", \"criteria\": [\"calm\", \"unknown\", \"angry\"]}\n  }\n}\n",
		"s.yaml": "questions:\n  team:\n    type: choice\n    criteria: {billing: x, tech: x}\n  tone: {type: score, criteria: [calm, unknown, angry]}\n",
	} {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		fs, err := LintFile(p, Options{NoData: true})
		if err != nil {
			t.Fatal(err)
		}
		ref := parseLocator([]byte(src))
		want := map[string][2]int{}
		for _, f := range fs {
			if f.Line == 0 {
				t.Errorf("%s: %s has no line", name, f)
			}
			want[f.ID] = [2]int{f.Line, f.Col}
		}
		// Hand-checked places of three findings, against YAML's own reading.
		checks := map[string][]string{IDNoCatchAll: {"team", "criteria"}, IDDuplicateDesc: {"team", "criteria", "tech"}, IDNonOrdinalLevel: {"tone", "criteria", "1"}}
		for id, path := range checks {
			got, ok := want[id]
			if !ok {
				t.Errorf("%s: no %s finding in %v", name, id, fs)
				continue
			}
			l, c := ref.at(path[0], path[1:]...)
			if got != [2]int{l, c} {
				t.Errorf("%s: %s at %d:%d, YAML reads that place as %d:%d", name, id, got[0], got[1], l, c)
			}
		}
	}
}
