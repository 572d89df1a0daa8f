//go:build !invariants

package invariants

// Enabled is false: this build has no invariants tag.
const Enabled = false
