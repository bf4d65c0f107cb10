//go:build !race

package testutil

// raceEnabled: see race_on.go.
const raceEnabled = false
