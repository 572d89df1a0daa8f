// This file holds what the verifier needs beyond the plain target: a
// read_uncommitted reader that keeps control records (the transaction
// markers), and the transactions open on a topic from DescribeProducers.

package kafkatarget

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// NewMarkerReader reads topic from its start read_uncommitted, returning
// the control records too: a marker comes back as a Record with Control
// set and the producer id and epoch the marker was written with.
func (t *Target) NewMarkerReader(ctx context.Context, cfg targets.Config, topic string) (targets.Reader, error) {
	if topic == "" {
		return nil, errNoReaderTopic
	}
	cl, err := kgo.NewClient(append(t.conn.clientOpts(t.conn.newDialer(), "reader-markers"),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, wrapNewClient("reader", err)
	}
	r := &reader{t: t, cl: cl, markers: true, pos: map[int32]int64{}}
	if err := t.track(r); err != nil {
		cl.Close()
		return nil, err
	}
	return r, nil
}

// controlOf reads a control record's key: version (int16) then type
// (int16: 0 abort, 1 commit).
func controlOf(kr *kgo.Record) targets.Control {
	if len(kr.Key) >= 4 && binary.BigEndian.Uint16(kr.Key[2:4]) == 1 {
		return targets.ControlCommit
	}
	return targets.ControlAbort
}

// OpenTransactions lists the transactions open on topic's partitions
// (DescribeProducers: each producer with a current transaction start
// offset), each named by its transactional id where the cluster's
// transaction coordinators still know the producer (ListTransactions), so
// a transaction no worker of the run booked (a stray producer, an
// incarnation that crashed before its first booking) is named too.
func (t *Target) OpenTransactions(ctx context.Context, _ targets.Config, topic string) ([]targets.OpenTransaction, error) {
	resp, err := t.adm.DescribeProducers(ctx, kadm.TopicsSet{topic: nil})
	if err != nil {
		return nil, fmt.Errorf("kafka: describing the producers of %s: %w", topic, err)
	}
	var out []targets.OpenTransaction
	for _, dt := range resp {
		for _, p := range dt.Partitions {
			if p.Err != nil {
				return nil, fmt.Errorf("kafka: describing the producers of %s/%d: %w", topic, p.Partition, p.Err)
			}
			for _, prod := range p.ActiveProducers {
				if prod.CurrentTxnStartOffset >= 0 {
					out = append(out, targets.OpenTransaction{Partition: p.Partition, ProducerID: prod.ProducerID,
						ProducerEpoch: prod.ProducerEpoch, FirstOffset: prod.CurrentTxnStartOffset})
				}
			}
		}
	}
	t.nameTransactions(ctx, out)
	return out, nil
}

// nameTransactions fills in the transactional id of each open transaction
// whose producer a coordinator lists. A cluster that cannot list them
// (ListTransactions needs Kafka 3.0 and DESCRIBE on the ids) leaves the
// names to the run's own books: the names are evidence, not a verdict.
func (t *Target) nameTransactions(ctx context.Context, open []targets.OpenTransaction) {
	if len(open) == 0 {
		return
	}
	pids := make([]int64, 0, len(open))
	for _, o := range open {
		pids = append(pids, o.ProducerID)
	}
	listed, err := t.adm.ListTransactions(ctx, pids, nil)
	if err != nil {
		return
	}
	byPID := make(map[int64]string, len(listed))
	for _, lt := range listed {
		byPID[lt.ProducerID] = lt.TxnID
	}
	for i := range open {
		if id, ok := byPID[open[i].ProducerID]; ok && open[i].TransactionalID == "" {
			open[i].TransactionalID = id
		}
	}
}
