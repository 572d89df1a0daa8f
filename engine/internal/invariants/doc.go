// Package invariants says whether this build runs the engine's expensive
// invariant checks. Build with -tags invariants (as CI's invariants tier
// does) and Enabled is true: the pure cores (share partitions, the
// transaction coordinator) verify their structure after every mutation
// and panic with what broke. Without the tag Enabled is the constant
// false, so every `if invariants.Enabled { ... }` is dead code the
// compiler removes and a normal build pays nothing.
//
// Cheap assertions stay on in every build; only checks that walk a
// structure (a share partition's runs, a transaction's participant sets)
// sit behind the tag.
package invariants
