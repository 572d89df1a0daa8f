// Package txncoord is the transaction coordinator's pure core: one
// transactional id's state (producer id and epoch, TxnState, timeout,
// participants) and the transitions the coordinator decides on it (init
// and fencing, begin, adding participants, prepare, complete, the timeout
// sweep's verdict, a resumed or adopted producer). Time is passed in as a
// value; the core holds no lock, does no I/O, journals nothing and calls
// no hook. The engine (engine/txn.go, markers.go) wraps it with the shard
// locks, the journal, the hooks and the marker delivery, and asks it every
// question whose answer is a rule of docs/design.md §3.5.
//
// A Txn is generic over its participant keys (P an output partition, S a
// share partition of a group) so that the core needs none of the engine's
// types; the scripts under testdata drive it with strings.
//
// With the invariants build tag every mutating method checks the
// transaction's structure afterwards (Check) and panics with what broke.
package txncoord
