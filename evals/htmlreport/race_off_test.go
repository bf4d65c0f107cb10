//go:build !race

package htmlreport

// raceSlowdown scales time limits under the race detector (off here).
const raceSlowdown = 1
