//go:build !race

// See race_on_durability_test.go.

package engine_test

const raceEnabled = false
