// Package sim is sharebench's deterministic simulator: it drives the
// reference engine through the load generator's engine target adapter on
// a manual clock, with one
// seeded scheduler interleaving input producers, share-group workers in
// every acknowledgement mode (each running the load generator's own loop,
// a pipeline.Loop, one action per step), classic-eos workers, clock advances that fire
// the engine's timers (lock expiry, session timeouts, the transaction
// timeout sweep) and faults (worker crashes at any phase, aborts, stalls,
// zombie producers, clean leaves, failed staging writes). After every step
// it checks each invariant of docs/design.md §4 that a client can observe; at the
// end it drains and judges each mode as a run is judged: the workers book
// their calls in the ledger a run keeps (package loadgen/ledger: a
// ledger.Book per worker incarnation), and ledger.Ledger.Judge reads the
// outputs back through the adapter for the verifier.
//
// RunSeeds runs many seeds in parallel (a soak) and adds up their verdicts
// (Totals). The same seed gives the same history byte for byte:
//
//	out := sim.Run(sim.Config{Seed: 42, Steps: 400})
//	if out.Violation != nil {
//		kept, shrunk := sim.Shrink(cfg, out, 20*time.Second) // shortest trace found
//	}
//
// How it works: Generate turns the seed into a list of steps before
// anything runs (which actor moves, which fault strikes, how far the clock
// goes, plus a random word each step draws its own choices from), and
// paramsFor turns it into the world (partitions, lock duration, delivery
// limit, window, shards). Because each step carries its own randomness, a
// step means the same whatever steps are removed around it, which is what
// lets Shrink delta-debug the step list.
//
// The checks keep a model of every share-group record's last observed
// state and judge each change against what the step did (a poll, an
// acknowledgement the engine reported applied, a staging, a transaction
// that ended by commit, abort, fencing or timeout, a lock or session that
// expired), so a broken rule is caught in the step that broke it, named by
// its invariant (see check.go).
package sim
