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
// offset).
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
	return out, nil
}
