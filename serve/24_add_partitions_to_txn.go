// AddPartitionsToTxn: v0-5.
//
// v0-3 (clients): opens the engine transaction if none is open and records
// the partitions; the engine adds a partition to the transaction when the
// first record is produced to it. v4+ (the broker-to-broker batch form)
// answers each transaction the same way; VerifyOnly checks that the
// partitions were added.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.AddPartitionsToTxn), 0, 5, (*Server).handleAddPartitionsToTxn) }

func (s *Server) handleAddPartitionsToTxn(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version <= 3 {
		topics := make(map[string][]int32, len(req.Topics))
		for _, t := range req.Topics {
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		codes := s.addPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, topics, false)
		for _, t := range req.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition = p
				rp.ErrorCode = codes[engine.TopicPartition{Topic: t.Topic, Partition: p}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	for _, tx := range req.Transactions {
		topics := make(map[string][]int32, len(tx.Topics))
		for _, t := range tx.Topics {
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		codes := s.addPartitions(tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, topics, tx.VerifyOnly)
		rtx := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rtx.TransactionalID = tx.TransactionalID
		for _, t := range tx.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition = p
				rp.ErrorCode = codes[engine.TopicPartition{Topic: t.Topic, Partition: p}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			rtx.Topics = append(rtx.Topics, rt)
		}
		resp.Transactions = append(resp.Transactions, rtx)
	}
	return resp, nil
}

// addPartitions adds partitions to a producer's transaction and returns
// each one's error code.
func (s *Server) addPartitions(txnID string, pid int64, epoch int16, topics map[string][]int32, verifyOnly bool) map[engine.TopicPartition]int16 {
	codes := map[engine.TopicPartition]int16{}
	setAll := func(code int16) map[engine.TopicPartition]int16 {
		for t, ps := range topics {
			for _, p := range ps {
				codes[engine.TopicPartition{Topic: t, Partition: p}] = code
			}
		}
		return codes
	}
	p, code := s.lookupProducer(pid, epoch)
	if code != 0 {
		return setAll(code)
	}
	if p.txnID == "" || p.txnID != txnID {
		return setAll(kerr.InvalidProducerIDMapping.Code)
	}
	// Unknown partitions fail alone; Kafka then fails the rest with
	// OPERATION_NOT_ATTEMPTED.
	bad := false
	for t, ps := range topics {
		n, ok := s.partitions(t)
		for _, part := range ps {
			if !ok || part < 0 || part >= n {
				codes[engine.TopicPartition{Topic: t, Partition: part}] = kerr.UnknownTopicOrPartition.Code
				bad = true
			}
		}
	}
	if bad {
		for t, ps := range topics {
			for _, part := range ps {
				tp := engine.TopicPartition{Topic: t, Partition: part}
				if codes[tp] == 0 {
					codes[tp] = kerr.OperationNotAttempted.Code
				}
			}
		}
		return codes
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if verifyOnly {
		for t, ps := range topics {
			for _, part := range ps {
				tp := engine.TopicPartition{Topic: t, Partition: part}
				if !p.inTxn || !p.addedTPs[tp] {
					codes[tp] = kerr.InvalidTxnState.Code
				}
			}
		}
		return codes
	}
	if err := p.beginLocked(); err != nil {
		return setAll(errCode(err))
	}
	for t, ps := range topics {
		for _, part := range ps {
			p.addedTPs[engine.TopicPartition{Topic: t, Partition: part}] = true
		}
	}
	return setAll(0)
}
