// This file is the engine's lock order, in one place.

package engine

// Lock order. A goroutine may hold locks only in this order, and never two
// locks of the same kind at once:
//
//  1. Producer.mu         — one producer handle's fields.
//  2. txnShard.mu         — transactional ids of one shard. Held for the
//     whole of a produce, staging, commit or abort of that transaction, so a
//     zombie and its successor (same id, same shard) are serialised.
//  3. ShareMember.mu / ClassicMember.mu — one member handle's fields.
//  4. groupShard.mu       — share and classic groups of one shard.
//  5. dataShard.mu        — partition logs and their share partitions.
//  6. topic.notifyMu, topicsMu — leaves: nothing is taken while held.
//
// Deviations are not allowed; in particular a data shard lock is never held
// while taking a group shard lock (introspection resolves owner names after
// releasing the data lock), and ending a transaction takes each
// participant's data or group lock one at a time under the transaction lock.
// The hook is called with the operation's locks held and must not call back
// into the engine.
