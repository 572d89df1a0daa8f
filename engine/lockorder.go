// This file is the engine's lock order, in one place.

package engine

// Lock order. A goroutine may hold locks only in this order, and never two
// locks of the same kind at once:
//
// -1. Engine.adminMu     — one CreateTopic, DeleteTopic, CreatePartitions
//     or AlterTopicConfigs at a time (topicadmin.go, topicconfig.go); taken
//     before anything else, never under a lock.
//  0. markerQueue.sending — one DeliverMarkers call at a time (markers.go).
//  1. Producer.mu         — one producer handle's fields.
//  2. txnShard.mu         — transactional ids of one shard. Held for the
//     whole of a produce, staging, commit or abort of that transaction, so a
//     zombie and its successor (same id, same shard) are serialised.
//  3. ShareMember.mu / ClassicMember.mu — one member handle's fields.
//  4. groupShard.mu       — share and classic groups of one shard.
//  5. dataShard.mu        — partition logs and their share partitions.
//  6. topic.notifyMu, topicsMu, markerQueue.mu, durable.upMu — leaves:
//     nothing of the engine is taken while held.
//  7. the journal's wal.Group mutex — taken by Append under any of the
//     above (appending does no I/O); the flush leader releases it for the
//     I/O and then takes one log's file mutex at a time. Nothing of the
//     engine is taken under either.
//
// Durability (WithDataDir, journal.go, durability.go) adds:
//   - durable.restartMu is taken by Crash, Restart and Close before any
//     of the above, never under them; Restart waits for the gate (every
//     public call counts itself in flight) to drain, then installs the
//     recovered state one shard lock at a time.
//   - a call waits for its records to be durable (group commit) after
//     releasing its locks, except in two places: ending a transaction
//     waits for PREPARE_* under the transaction's shard lock (the decision
//     must be durable before any marker), and a member's Poll or
//     Acknowledge waits under the member handle's own lock.
//   - an injected crash (ErrInjectedCrash at a hook) flushes the journal
//     and crashes it with the operation's locks held; the wal takes none
//     of the engine's locks, so this cannot deadlock.
//   - the compactor takes one shard lock at a time, none other held.
//
// Deviations are not allowed; in particular a data shard lock is never held
// while taking a group shard lock (introspection resolves owner names after
// releasing the data lock), and ending a transaction takes each
// participant's data or group lock one at a time under the transaction lock.
// The hook is called with the operation's locks held and must not call back
// into the engine.
