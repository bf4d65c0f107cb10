//go:build race

package htmlreport

// raceSlowdown scales time limits under the race detector, which slows
// this code about tenfold; the 2 s figure is measured without it.
const raceSlowdown = 10
