package metrics

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"
)

// Grow sizes the Recs once: a question whose item count is known (a
// stored run's) fills one slice, never a growing one whose old copy is
// held beside the new; and the report is the same as without it.
func TestRecorderGrowFillsOneSlice(t *testing.T) {
	mc := 0.4
	opt := Options{Seed: 3, Bootstrap: 100, Threshold: 0.6, MinConfidence: &mc, NoiseFloorDraws: 50}
	for name, q := range recQuestions() {
		obs := mixedObs(q, 500, 5)
		want, _ := json.Marshal(Compute(q, obs, opt))
		rc := NewRecorder(q, opt)
		rc.Grow(500)
		rc.Add(&obs[0])
		first := &rc.Recs()[0]
		for i := 1; i < len(obs); i++ {
			rc.Add(&obs[i])
		}
		recs := rc.Recs()
		if len(recs) != 500 || cap(recs) > 550 || &recs[0] != first {
			t.Fatalf("%s: %d recs, cap %d, moved %v; want 500 in the one slice Grow made", name, len(recs), cap(recs), &recs[0] != first)
		}
		got, _ := json.Marshal(rc.Report())
		if string(got) != string(want) {
			t.Fatalf("%s: report with Grow\n%s\nwant\n%s", name, got, want)
		}
	}
}

// Report releases the Recs once the metric columns are built from them:
// while the question's intervals are computed (and after), the Recorder
// no longer keeps them reachable, so a large question holds its Recs and
// its columns at once only while the columns are filled.
func TestRecorderReportReleasesRecs(t *testing.T) {
	mc := 0.4
	opt := Options{Seed: 3, Bootstrap: 100, MinConfidence: &mc}
	for name, q := range recQuestions() {
		obs := mixedObs(q, 400, 9)
		rc := NewRecorder(q, opt)
		rc.Grow(400)
		for i := range obs {
			rc.Add(&obs[i])
		}
		freed := make(chan struct{})
		runtime.AddCleanup(&rc.Recs()[0], func(ch chan struct{}) { close(ch) }, freed)
		r := rc.Report()
		if rc.Recs() != nil {
			t.Fatalf("%s: Recs still held after Report", name)
		}
		if r.N != 400 || r.Selective.Routing == nil {
			t.Fatalf("%s: n %d, routing %v: the report lost what it read from the Recs", name, r.N, r.Selective.Routing)
		}
		deadline := time.Now().Add(5 * time.Second)
		for done := false; !done; {
			runtime.GC()
			select {
			case <-freed:
				done = true
			case <-time.After(10 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatalf("%s: the Recs are still reachable from the Recorder after Report", name)
				}
			}
		}
		runtime.KeepAlive(rc)
	}
}
