//go:build mutants

// Package mutant is the engine's mutation seam for mutation testing: each
// `if mutant.On("id") { ... }` in the engine breaks one rule of docs/design.md §4
// when the build has the mutants tag and SHAREBENCH_MUTANT names that id.
// The simulator's mutant test (internal/sim, -tags mutants) turns each on
// in turn and requires its checks to catch it.
//
// Without the tag (mutant_off.go) On is the constant false: every mutant
// branch is dead code the compiler removes, so a normal build pays nothing.
package mutant

import "os"

// Env is the environment variable naming the active mutant.
const Env = "SHAREBENCH_MUTANT"

// On reports whether mutant id is active. It reads the environment on every
// call so a test can switch mutants between runs with t.Setenv.
func On(id string) bool { return os.Getenv(Env) == id }
