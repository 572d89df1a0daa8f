package engine_test

import (
	"fmt"

	"github.com/sharebench/sharebench/engine"
)

// A consume-transform-produce step whose acknowledgement commits with the
// producer's transaction (KIP-1289).
func Example() {
	clock := engine.NewManualClock()
	e, _ := engine.New(engine.WithClock(clock))
	defer e.Close()
	_ = e.CreateTopic("in", 1)
	_ = e.CreateTopic("out", 1)
	cfg := engine.DefaultGroupConfig() // Kafka's defaults
	cfg.AutoOffsetReset = engine.ResetEarliest
	_ = e.SetShareGroupConfig("g", cfg)
	_, _ = e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}})

	m, _ := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
	p, _ := e.NewProducer(engine.ProducerConfig{TransactionalID: "copier-0"})
	recs, _ := m.Poll(500)
	_ = p.Begin()
	for _, r := range recs {
		_, _ = p.Produce("out", 0, []engine.ProduceRecord{{Value: r.Value}})
	}
	_ = p.SendShareAcksToTransaction([]engine.Acknowledgement{{
		Topic: "in", Partition: 0, First: recs[0].Offset, Last: recs[len(recs)-1].Offset, Type: engine.AckAccept,
	}}, m.Metadata())

	tp := engine.TopicPartition{Topic: "in", Partition: 0}
	before, _ := e.ShareRecord("g", tp, 0)
	visible, _, _ := e.Fetch(engine.TopicPartition{Topic: "out", Partition: 0}, 0, 10, engine.ReadCommitted)
	fmt.Println("before commit:", before.State, len(visible), "outputs visible")

	// Commit returns once the decision (PREPARE_COMMIT) is durable; the
	// markers follow. On a manual clock they go out when the driver fires
	// timers.
	_ = p.Commit()
	txn, _ := e.Transaction("copier-0")
	after, _ := e.ShareRecord("g", tp, 0)
	visible, _, _ = e.Fetch(engine.TopicPartition{Topic: "out", Partition: 0}, 0, 10, engine.ReadCommitted)
	fmt.Println("after commit:", txn.State, after.State, len(visible), "outputs visible")

	e.FireTimers()
	txn, _ = e.Transaction("copier-0")
	after, _ = e.ShareRecord("g", tp, 0)
	visible, _, _ = e.Fetch(engine.TopicPartition{Topic: "out", Partition: 0}, 0, 10, engine.ReadCommitted)
	fmt.Println("after the markers:", txn.State, after.State, len(visible), "outputs visible")
	// Output:
	// before commit: TX_PENDING 0 outputs visible
	// after commit: PREPARE_COMMIT TX_PENDING 0 outputs visible
	// after the markers: COMPLETE_COMMIT ACKNOWLEDGED 2 outputs visible
}
