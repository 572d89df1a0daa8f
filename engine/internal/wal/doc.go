// Package wal is the engine's write-ahead log: records framed with a length
// and a CRC32C checksum, appended to segment files that start with a header
// carrying a magic number and a format version, and a writer that makes
// appends durable under a flush policy with group commit.
//
// A Group owns any number of Logs (one per stream: a partition, the
// transaction log, the share-state log, ...). Append copies a framed record
// into the log's pending buffer and returns a Ticket; it does no I/O, so the
// engine calls it under its shard locks and the order of records in a file
// is the order of the changes. Wait(ticket) returns once the record is as
// durable as the policy promises:
//
//   - SyncAlways: written and fsynced. Concurrent waiters share one fsync:
//     the first becomes the leader, writes every pending buffer and fsyncs
//     every file it wrote, and wakes everyone whose ticket that covered
//     (group commit). Fsyncs per second follow the flush rate, not the
//     record rate.
//   - SyncInterval: written (handed to the OS) before Wait returns; a
//     background goroutine fsyncs every interval.
//   - SyncNever: written before Wait returns; never fsynced (the OS decides).
//
// A leader writes the logs in priority order (lower first), so a crash in
// the middle of a flush leaves every earlier-priority log at least as new as
// the later ones.
//
// Recovery (Log.Replay) reads every segment in order and hands each frame to
// a callback. The last segment may end in a torn frame (a write cut short by
// a crash): replay truncates the file there and reports how many bytes it
// dropped. A bad frame that is followed by valid frames, or any bad frame in
// an earlier (sealed) segment, is corruption, not a torn tail: replay fails
// with an error naming the file and the offset, and never skips it silently.
package wal
