// DescribeProducers: v0.
//
// The producers that wrote to each partition through this server since it
// started (producer id, the epoch the client holds, the last sequence
// number, the time of the last write in Unix milliseconds), and every
// producer with a transaction open on the partition, from the engine
// (Engine.OpenTransactions, durable): its CurrentTxnStartOffset is the
// transaction's first offset. Sequence numbers and times of producers that
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
	pids := make([]int64, 0, len(s.state.mu.producers))
	for pid, p := range s.state.mu.producers {
		producers = append(producers, p)
		pids = append(pids, pid)
	}
	s.state.mu.Unlock()
	order := make([]int, len(pids))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return pids[order[i]] < pids[order[j]] })
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
			for _, i := range order {
				p := producers[i]
				p.mu.Lock()
				st := p.seqs[tp]
				if st != nil && st.n > 0 {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch = pids[i], int32(p.epoch)
					ap.LastSequence, ap.LastTimestamp, ap.CoordinatorEpoch = st.next-1, st.lastMs, 0
					ap.CurrentTxnStartOffset = -1
					if o, ok := open[pids[i]]; ok {
						ap.CurrentTxnStartOffset = o.FirstOffset
						delete(open, pids[i])
					}
					rp.ActiveProducers = append(rp.ActiveProducers, ap)
				}
				p.mu.Unlock()
			}
			for _, o := range opens {
				if _, left := open[o.ProducerID]; !left {
					continue
				}
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
