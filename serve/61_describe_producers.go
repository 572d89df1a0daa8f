// DescribeProducers: v0.
//
// The producer-state entries each partition keeps, as Kafka's do, for
// every producer that wrote to it or ended a transaction on it through
// this server since it started: the producer id and the epoch of its last
// write or transaction marker (as the client holds them: after an epoch
// bump at a transaction's end, KIP-890 part 2, the new epoch; after an
// epoch overflow the new producer id has an entry of its own), the last
// sequence number (-1 once a marker at a new epoch ended its
// transaction), the time of the last write or marker in Unix
// milliseconds, the coordinator epoch of the last marker (0, the epoch of
// the server's one coordinator; -1 while no marker reached the partition,
// as in Kafka's producer state), and CurrentTxnStartOffset, the first
// offset of its transaction open on the partition (from the engine,
// Engine.OpenTransactions, durable), -1 once it ended. Entries outlive
// their transactions, and a producer another InitProducerId of its
// transactional id replaced keeps its entries for Kafka's default
// producer.id.expiration.ms, one day (at most 4096 replaced producers).
// Entries are kept in memory: after a restart of a durable engine only
// its open transactions are known, with sequence numbers, times and
// coordinator epochs -1.

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
	producers := make([]*producer, 0, len(s.state.mu.producers)+len(s.state.mu.retired))
	for _, p := range s.state.mu.producers {
		producers = append(producers, p)
	}
	for _, r := range s.state.mu.retired {
		producers = append(producers, r.p)
	}
	s.state.mu.Unlock()
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
			opens, err := s.e.OpenTransactions(tp)
			if err != nil {
				rp.ErrorCode = errCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			rp.ActiveProducers = describeProducers(tp, producers, opens)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// describeProducers lists every entry tp keeps of producers, by producer
// id, each with the first offset of its transaction open on tp (from
// opens, which the engine keys by its own producer ids), then the open
// transactions no entry names.
func describeProducers(tp engine.TopicPartition, producers []*producer, opens []engine.OpenTransaction) []kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	open := make(map[int64]engine.OpenTransaction, len(opens))
	for _, o := range opens {
		open[o.ProducerID] = o
	}
	var out []kmsg.DescribeProducersResponseTopicPartitionActiveProducer
	for _, p := range producers {
		enginePID := p.p.ProducerID()
		p.mu.Lock()
		for k, e := range p.entries {
			if k.tp != tp {
				continue
			}
			ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
			ap.ProducerID, ap.ProducerEpoch = k.pid, int32(e.epoch)
			ap.LastSequence, ap.LastTimestamp, ap.CoordinatorEpoch = e.lastSeq, e.lastMs, e.coordEpoch
			ap.CurrentTxnStartOffset = -1
			if o, inTxn := open[enginePID]; inTxn && k.pid == p.wirePID {
				ap.CurrentTxnStartOffset = o.FirstOffset
				delete(open, enginePID)
			}
			out = append(out, ap)
		}
		if o, inTxn := open[enginePID]; inTxn {
			// A transaction open on tp before its producer wrote here
			// through this server (its records came before a restart).
			ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
			ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ap.LastTimestamp = p.wirePID, int32(p.epoch), -1, -1
			ap.CoordinatorEpoch = -1
			ap.CurrentTxnStartOffset = o.FirstOffset
			delete(open, enginePID)
			out = append(out, ap)
		}
		p.mu.Unlock()
	}
	for _, o := range opens {
		if _, left := open[o.ProducerID]; !left {
			continue
		}
		// A transaction no wire producer holds (its producer was
		// re-initialised away, or wrote before a restart of the server):
		// named by the engine's ids.
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ap.LastTimestamp = o.ProducerID, int32(o.Epoch), -1, -1
		ap.CoordinatorEpoch = -1
		ap.CurrentTxnStartOffset = o.FirstOffset
		out = append(out, ap)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}
