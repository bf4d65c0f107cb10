package metrics

import (
	"encoding/json"
	"runtime"
	"testing"
	"unsafe"
)

// Grow sizes the columns once: a question whose item count is known (a
// stored run's) fills each column at its size, never a growing one whose
// old copy is held beside the new; and the report is the same as without
// it.
func TestRecorderGrowFillsOneSlice(t *testing.T) {
	mc := 0.4
	opt := Options{Seed: 3, Bootstrap: 100, Threshold: 0.6, MinConfidence: &mc, NoiseFloorDraws: 50}
	for name, q := range recQuestions() {
		obs := mixedObs(q, 500, 5)
		want, _ := json.Marshal(Compute(q, obs, opt))
		rc := NewRecorder(q, opt)
		rc.Grow(500)
		conf := unsafe.SliceData(rc.d.Conf[:1])
		for i := range obs {
			rc.Add(&obs[i])
		}
		d := rc.d
		if d.N == 0 || cap(d.Conf) > 550 || unsafe.SliceData(d.Conf) != conf {
			t.Fatalf("%s: %d labelled, cap %d, moved %v; want them in the one column Grow made", name, d.N, cap(d.Conf), unsafe.SliceData(d.Conf) != conf)
		}
		got, _ := json.Marshal(rc.Report())
		if string(got) != string(want) {
			t.Fatalf("%s: report with Grow\n%s\nwant\n%s", name, got, want)
		}
	}
}

// Reading an item keeps only its place in the metric columns: once Grow
// has made room, a Recorder allocates nothing per item (no Rec, answer or
// distribution is held); and Report only indexes the columns it filled
// (sort orders, tie groups, scratch), where building them from held Recs
// allocated the columns too, beside the Recs, at the report's peak.
func TestRecorderHoldsNoPerItemRecords(t *testing.T) {
	mc := 0.4
	opt := Options{Seed: 3, Bootstrap: 20, MinConfidence: &mc}
	for name, q := range recQuestions() {
		var obs []Obs
		for _, o := range mixedObs(q, 20000, 9) {
			if o.Repeat == 0 {
				obs = append(obs, o)
			}
		}
		rc := NewRecorder(q, opt)
		rc.Grow(len(obs))
		rc.Add(&obs[0]) // the error map, once
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 1; i < len(obs); i++ {
			rc.Add(&obs[i])
		}
		runtime.ReadMemStats(&after)
		if perItem := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(obs)); perItem > 4 {
			t.Fatalf("%s: %.1f bytes allocated per item read, want none beyond the columns Grow made", name, perItem)
		}
		r := rc.Report()
		runtime.ReadMemStats(&before)
		if perItem := float64(before.TotalAlloc-after.TotalAlloc) / float64(len(obs)); perItem > 130 {
			t.Fatalf("%s: Report allocated %.1f bytes per item, want at most 130 (its index, not the columns again)", name, perItem)
		}
		if r.N != len(obs) || r.Selective.Routing == nil {
			t.Fatalf("%s: n %d, routing %v: the report lost items", name, r.N, r.Selective.Routing)
		}
	}
}

// OnItem sees every item once, as it ends, with its lowest repeat, in the
// order items came; the report is Compute's with it set.
func TestRecorderOnItem(t *testing.T) {
	opt := Options{Seed: 3, Bootstrap: 50}
	for name, q := range recQuestions() {
		obs := mixedObs(q, 300, 4)
		want, _ := json.Marshal(Compute(q, obs, opt))
		rc := NewRecorder(q, opt)
		var seen []Rec
		rc.OnItem(func(r *Rec) { seen = append(seen, *r) })
		for i := range obs {
			rc.Add(&obs[i])
		}
		got, _ := json.Marshal(rc.Report())
		if string(got) != string(want) {
			t.Fatalf("%s: the report changed with OnItem", name)
		}
		if len(seen) != 300 {
			t.Fatalf("%s: OnItem saw %d items, want 300", name, len(seen))
		}
		for i, r := range seen {
			if w := RecOf(q, &obs[3*i]); r != w {
				t.Fatalf("%s: item %d: OnItem saw %+v, want its first repeat %+v", name, i, r, w)
			}
		}
	}
}
