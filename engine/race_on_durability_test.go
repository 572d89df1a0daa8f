//go:build race

// This file tells the heavy durability tests that the race detector is on:
// they sample (every byte becomes every 7th) instead of running in full,
// since -race makes each recovery ten times slower. The full runs happen
// in the plain go test ./... of CI.

package engine_test

const raceEnabled = true
