//go:build !mutants

// Package mutant is the engine's mutation seam (see mutant.go, built with
// -tags mutants). In a normal build On is the constant false, so every
// mutant branch in the engine is dead code the compiler removes.
package mutant

// On reports whether mutant id is active: never, without the mutants tag.
func On(string) bool { return false }
