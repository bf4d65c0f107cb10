//go:build race

package testutil

// raceEnabled says this binary runs under the race detector.
const raceEnabled = true
