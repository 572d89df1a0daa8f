// Package engine is sharebench's reference engine: an in-process
// implementation of Kafka share groups (KIP-932) extended with transactional
// acknowledgements (KIP-1289), a two-phase transaction coordinator,
// read_committed partition logs and classic consumer groups with
// transactional offset commits. Embed it in tests the way kfake is embedded:
// it needs no network, and with a ManualClock it is fully deterministic.
//
// A consume-transform-produce step with a transactional acknowledgement:
//
//	e, _ := engine.New()
//	defer e.Close()
//	_ = e.CreateTopic("in", 1)
//	_ = e.CreateTopic("out", 1)
//	cfg := engine.DefaultGroupConfig() // Kafka's defaults
//	cfg.AutoOffsetReset = engine.ResetEarliest
//	_ = e.SetShareGroupConfig("g", cfg)
//	_, _ = e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("hello")}})
//
//	m, _ := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
//	p, _ := e.NewProducer(engine.ProducerConfig{TransactionalID: "copier-0"})
//	recs, _ := m.Poll(500)
//	_ = p.Begin()
//	for _, r := range recs {
//		_, _ = p.Produce("out", 0, []engine.ProduceRecord{{Value: r.Value}})
//	}
//	_ = p.SendShareAcksToTransaction([]engine.Acknowledgement{{
//		Topic: "in", Partition: 0, First: recs[0].Offset, Last: recs[len(recs)-1].Offset,
//		Type: engine.AckAccept,
//	}}, m.Metadata())
//	_ = p.Commit() // decided; the markers then make the outputs visible and the inputs ACKNOWLEDGED
//
// Semantics follow the design document's §3–§4 (docs/design.md): the record lifecycle
// (AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED, TX_PENDING), delivery counts
// and limits, acquisition locks, the in-flight window and SPSO; the
// coordinator's EMPTY → ONGOING → PREPARE_* → COMPLETE_* states, fencing by
// epoch, markers to every participant and the timeout sweep. The decisions
// the KIP-1289 draft leaves open are Knobs (WithKnobs), safe by default.
//
// Commit returns once the decision (PREPARE_COMMIT) is durable; the
// markers follow asynchronously (markers.go): a goroutine sends them, or,
// with a ManualClock, FireTimers and DeliverMarkers do, so a committed
// transaction's outputs become visible and its inputs terminal only then
// (WithMarkerDelivery(MarkersInline) sends them inside Commit). A failed
// staging leaves the transaction abortable (ErrAbortableTransaction);
// member epochs move with every membership change and are learned on the
// next poll.
//
// Durability (docs/design.md §3.6): WithDataDir makes every durable change —
// partition records and markers, share-state snapshots and deltas,
// transaction coordinator states, group configurations and offsets — go to
// checksummed logs in a directory before the call returns (WithFlushPolicy:
// fsynced with group commit by default), and New recovers what the
// directory holds. Crash and Restart simulate a process crash and
// recovery; CrashCoordinator and FailoverSharePartition reload one
// component; a hook returning ErrInjectedCrash (or
// ErrInjectedCoordinatorCrash) crashes the engine at a deterministic point
// of a transaction. The logs are internal/wal; the records and recovery
// are in journal.go, record.go and recover.go.
//
// Structure: the per-share-partition state machine (internal/sharepart) and
// the partition log (internal/plog) are pure — no I/O, no goroutines, time
// passed in. This package is the thin concurrent shell: lock shards
// (WithShards), the clock (WithClock; a ManualClock turns the timer
// goroutine off and FireTimers fires due timers), and the hook seam
// (WithHook) through which tests inject faults. Lock order is in
// lockorder.go.
package engine
