// DescribeProducers: v0.
//
// The producers that wrote to each partition through this server since it
// started (the producer id and epoch the client holds, after an epoch
// overflow the new producer id; the last sequence number; the time of the
// last write in Unix milliseconds), and every producer with a transaction
// open on the partition, from the engine (Engine.OpenTransactions,
// durable): its CurrentTxnStartOffset is the transaction's first offset. Sequence numbers and times of producers that
// wrote before a restart of a durable engine are not known (-1): the
// server keeps them in memory.

package serve

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.DescribeProducers), 0, 0, (*Server).handleDescribeProducers) }

func (s *Server) handleDescribeProducers(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	s.state.mu.Lock()
	producers := make([]*producer, 0, len(s.state.mu.producers))
	for _, p := range s.state.mu.producers {
		producers = append(producers, p)
	}
	s.state.mu.Unlock()
	// Each producer is named by the id and epoch its client holds; its
	// open transaction, which the engine keys by the engine's producer id,
	// is matched through that id.
	type described struct {
		p         *producer
		enginePID int64
		wire      wireID
	}
	ds := make([]described, 0, len(producers))
	for _, p := range producers {
		d := described{p: p, enginePID: p.p.ProducerID()}
		p.mu.Lock()
		d.wire = wireID{p.wirePID, p.epoch}
		p.mu.Unlock()
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].wire.pid < ds[j].wire.pid })
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		n, known := s.partitions(t.Topic)
		for _, part := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = part
			if !known || part < 0 || part >= n {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			tp := engine.TopicPartition{Topic: t.Topic, Partition: part}
			open := map[int64]engine.OpenTransaction{}
			opens, err := s.e.OpenTransactions(tp)
			if err != nil {
				rp.ErrorCode = errCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			for _, o := range opens {
				open[o.ProducerID] = o
			}
			for _, d := range ds {
				d.p.mu.Lock()
				st := d.p.seqs[tp]
				var last int32
				var lastMs int64
				wrote := st != nil && st.n > 0
				if wrote {
					last, lastMs = st.next-1, st.lastMs
				}
				d.p.mu.Unlock()
				o, inTxn := open[d.enginePID]
				if !wrote && !inTxn {
					continue
				}
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch = d.wire.pid, int32(d.wire.epoch)
				ap.LastSequence, ap.LastTimestamp, ap.CoordinatorEpoch = -1, -1, 0
				if wrote {
					ap.LastSequence, ap.LastTimestamp = last, lastMs
				}
				ap.CurrentTxnStartOffset = -1
				if inTxn {
					ap.CurrentTxnStartOffset = o.FirstOffset
					delete(open, d.enginePID)
				}
				rp.ActiveProducers = append(rp.ActiveProducers, ap)
			}
			for _, o := range opens {
				if _, left := open[o.ProducerID]; !left {
					continue
				}
				// A transaction no wire producer holds (its producer was
				// re-initialised away, or wrote before a restart of the
				// server): named by the engine's ids.
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ap.LastTimestamp = o.ProducerID, int32(o.Epoch), -1, -1
				ap.CurrentTxnStartOffset = o.FirstOffset
				rp.ActiveProducers = append(rp.ActiveProducers, ap)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
