// This file exports internals to the durability tests (package engine_test).

package engine

// CompactNow runs the journal's compaction synchronously, so tests see
// segment deletion deterministically.
func CompactNow(e *Engine) { e.compactNow() }
