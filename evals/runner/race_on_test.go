//go:build race

package runner

// raceEnabled: the race detector slows every goroutine switch, so the soak
// asks fewer items under it (the same faults, the same checks).
const raceEnabled = true
