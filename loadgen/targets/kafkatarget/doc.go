// Package kafkatarget is the Kafka target of the load generator: it implements
// targets.Target against a real Kafka cluster (4.1+ with share groups) through
// franz-go, or, when no brokers are given, against an embedded kfake cluster
// on 127.0.0.1 that lives as long as the Target.
//
//	t, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: []string{"localhost:9092"}})
//	if err != nil { ... }           // one line naming the brokers and the fix
//	defer t.Close()
//	if err := t.Supports(ctx, mode); err != nil { ... } // wraps targets.ErrUnsupported
//	err = t.Setup(ctx, cfg)          // topics + share group configs
//	w, err := t.NewWorker(ctx, cfg, mode, id)
//
// Example (example_test.go) runs this on the embedded cluster.
//
// How each mode maps onto Kafka (docs/design.md §5):
//
//   - implicit: a kgo share consumer; kgo accepts the previous poll's records
//     on the next poll (and Close accepts the last poll).
//   - explicit: a kgo share consumer; Ack marks the records and flushes them
//     synchronously (MarkAcks + FlushAcks), returning the per-partition
//     errors the broker reported. Records of a poll that were not acked are
//     released before the next poll, because kgo would otherwise accept them.
//   - deferred: explicit plus a transactional producer client: Begin,
//     Produce and Commit run on the producer, then Ack acknowledges. Renew
//     sends AckRenew (KIP-1222, Kafka 4.2+).
//   - transactional (KIP-1289): only on a broker that advertises the
//     draft's TxnShareAcknowledge (key 95, or key 93 on a broker without
//     streams-group APIs), which today means sharebench serve; elsewhere
//     Supports returns an error wrapping targets.ErrUnsupported that points
//     at deferred mode or the engine target. The worker (txn_worker.go)
//     is a share-group member of its own (heartbeats, ShareFetch,
//     ShareAcknowledge for releases and renewals), because staging needs
//     the member id and epoch and kgo's share consumer acknowledges by
//     itself; a kgo transactional producer writes the outputs; StageAcks
//     sends TxnShareAcknowledge with the member epoch of the last
//     heartbeat on a connection of its own to the transaction
//     coordinator. A fenced member epoch wraps targets.ErrFenced; after a
//     failed staging the transaction can only abort. A transaction with
//     acknowledgements and no outputs ends with an EndTxn of its own.
//   - classic-eos: a classic consumer group member that fetches
//     read_committed, inside kgo's GroupTransactSession: StageAcks adds
//     the consumed offsets to the transaction (sendOffsetsToTransaction),
//     Commit commits outputs and offsets together, Abort rewinds the
//     consumer to the last committed offsets.
//
// Share consumers fetch only while Poll runs, at most Config.MaxPollRecords
// per fetch (kgo's ShareMaxRecordsStrict): nothing is prefetched and locked
// out of the group's reach. An output Reader reads every partition of its
// topic from the start without a group.
//
// Transactional ids are Config.TransactionalIDPrefix + the worker id; a new
// worker initialises its producer id at once, which fences a crashed
// predecessor with the same id and aborts its open transaction. Crash cuts
// the worker's connections the way the operating system does for a killed
// process (the broker releases what the share session held) and sends
// nothing else: no ack, no leave, no end of the transaction.
//
// kfake limits worth knowing (each also appears in Info().Notes when it
// applies): kfake accepts the per-group share.record.lock.duration.ms,
// share.delivery.count.limit and share.partition.max.record.locks but applies
// only the broker-wide group.share.* defaults, so the embedded cluster sets
// those broker-wide too. Real brokers bound the per-group lock duration
// (group.share.min/max.record.lock.duration.ms, 15s to 60s by default); a
// refused optional setting becomes a note, while a refused
// share.auto.offset.reset=earliest fails Setup.
//
// Close the Target after its workers have stopped: it closes whatever they
// left open, and a worker is used from one goroutine only.
//
// Teardown deletes a finished mode's topics on an in-memory cluster (the
// embedded kfake cluster, or sharebench serve, known by its cluster id).
//
// Inspect reports share-partition start offsets (DescribeShareGroupOffsets);
// Kafka exposes no per-record share state, so ShareState.Records is empty.
package kafkatarget
