// This file holds what the verifier needs beyond the plain target: a
// read_uncommitted reader that keeps the transaction markers, the open
// transactions of a topic, and a worker's producer id.

package enginetarget

import (
	"context"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
)

// NewMarkerReader tails a topic read_uncommitted from its start, returning
// transaction markers as records with Control set.
func (t *Target) NewMarkerReader(_ context.Context, _ targets.Config, topic string) (targets.Reader, error) {
	n, err := t.e.Partitions(topic)
	if err != nil {
		return nil, err
	}
	return &reader{t: t, topic: topic, pos: make([]int64, n), markers: true}, nil
}

// fetchMarkers is the marker reader's fetch of one partition.
func (r *reader) fetchMarkers(tp eng.TopicPartition) ([]eng.Record, int64, error) {
	return r.t.e.FetchWithMarkers(tp, r.pos[tp.Partition], readerBatch)
}

// toTarget converts an engine record for a reader.
func toTarget(topic string, rec *eng.Record) *targets.Record {
	tr := &targets.Record{Topic: topic, Partition: rec.Partition, Offset: rec.Offset, Key: rec.Key, Value: rec.Value,
		Aborted: rec.Aborted, ProducerID: rec.ProducerID, ProducerEpoch: rec.Epoch, Transactional: rec.Transactional}
	if len(rec.Headers) > 0 {
		tr.Headers = make([]targets.Header, len(rec.Headers))
		for i, h := range rec.Headers {
			tr.Headers[i] = targets.Header{Key: h.Key, Value: h.Value}
		}
	}
	switch {
	case rec.Control && rec.Commit:
		tr.Control = targets.ControlCommit
	case rec.Control:
		tr.Control = targets.ControlAbort
	}
	return tr
}

// OpenTransactions lists the transactions open on topic's partitions, with
// the transactional id of each where a worker of cfg owns the producer.
func (t *Target) OpenTransactions(ctx context.Context, cfg targets.Config, topic string) ([]targets.OpenTransaction, error) {
	return retryRestart(ctx, t, func() ([]targets.OpenTransaction, error) {
		n, err := t.e.Partitions(topic)
		if err != nil {
			return nil, err
		}
		var out []targets.OpenTransaction
		for p := int32(0); p < n; p++ {
			open, err := t.e.OpenTransactions(eng.TopicPartition{Topic: topic, Partition: p})
			if err != nil {
				return nil, err
			}
			for _, o := range open {
				out = append(out, targets.OpenTransaction{Partition: p, ProducerID: o.ProducerID, ProducerEpoch: o.Epoch, FirstOffset: o.FirstOffset})
			}
		}
		return out, nil
	})
}

// ProducerID returns the worker's transactional producer id (0 without
// one).
func (w *worker) ProducerID() int64 {
	if w.txn == nil {
		return 0
	}
	return w.txn.ProducerID()
}
