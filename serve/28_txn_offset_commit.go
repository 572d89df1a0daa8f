// TxnOffsetCommit: v0-5.
//
// Adds a classic group's offsets to the producer's open transaction
// (sendOffsetsToTransaction). With v3+ the member id and generation are
// checked against the server's classic group first, as Kafka's group
// coordinator does; the offsets become the group's committed offsets only
// with the commit marker. Under transaction.version 2, v5 adds the group to
// the transaction itself (opening it if needed; KIP-890 part 2 clients
// send no AddOffsetsToTxn).

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.TxnOffsetCommit), 0, 5, (*Server).handleTxnOffsetCommit) }

func (s *Server) handleTxnOffsetCommit(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	code := int16(0)
	p, code := s.lookupProducer(req.ProducerID, req.ProducerEpoch)
	if code == 0 && p.txnID != req.TransactionalID {
		code = kerr.InvalidProducerIDMapping.Code
	}
	if code == 0 && req.Version >= 3 && req.Generation >= 0 {
		code = s.checkGeneration(req.Group, req.MemberID, req.Generation)
	}
	offsets := map[engine.TopicPartition]int64{}
	for _, t := range req.Topics {
		for _, pt := range t.Partitions {
			offsets[engine.TopicPartition{Topic: t.Topic, Partition: pt.Partition}] = pt.Offset
		}
	}
	if code == 0 {
		p.mu.Lock()
		code = p.txnOffsetCommitLocked(req.Group, offsets, req.Version >= 5 && s.cfg.txnVersion >= 2)
		p.mu.Unlock()
	}
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, pt := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = pt.Partition
			rp.ErrorCode = code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// txnOffsetCommitLocked stages offsets in the open transaction; with
// implicitAdd the group joins the transaction (opening it) if it has not.
// p.mu is held.
func (p *producer) txnOffsetCommitLocked(group string, offsets map[engine.TopicPartition]int64, implicitAdd bool) int16 {
	if implicitAdd && (!p.inTxn || !p.addedGrps[group]) {
		if err := p.beginLocked(); err != nil {
			return errCode(err)
		}
		p.addedGrps[group] = true
	}
	if !p.inTxn || !p.addedGrps[group] {
		return kerr.InvalidTxnState.Code
	}
	return errCode(p.p.SendGroupOffsetsToTransaction(group, offsets))
}
