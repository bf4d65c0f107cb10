//go:build !race

package runner

// raceEnabled: see race_on_test.go.
const raceEnabled = false
