// TxnShareAcknowledge (the KIP-1289 draft): key 93 v0, one acknowledge type
// per batch, served and advertised only with WithTxnShareAck(93). Key 95
// (95_txn_share_acknowledge.go) is the later shape; both run here.
//
// The producer (id, epoch, transactional id) must be the current one; its
// transaction is opened if none is (a transaction may carry only acks).
// The member id and member epoch must be the share member's current ones
// (else FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, top level). The
// acknowledgements are then staged in the engine transaction
// (Producer.SendShareAcksToTransaction): only ACCEPT, REJECT and gap; each
// partition stages all or nothing and reports its own error. A failed
// staging leaves the transaction for the engine to refuse anything but an
// abort.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/internal/txnshareack"
)

// txnShareAckAPI is the API table entry of the selected key.
func txnShareAckAPI(key int16) api {
	return api{
		min: 0, max: 0,
		newReq: func() kmsg.Request { return txnshareack.NewRequest(key) },
		fn:     (*Server).handleTxnShareAcknowledge,
	}
}

func (s *Server) handleTxnShareAcknowledge(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*txnshareack.Request)
	resp := req.ResponseKind().(*txnshareack.Response)
	// result is one partition's answer: its decoding's, else the
	// staging's.
	type result struct {
		ackPartition
		err error
	}
	results := make([][]result, len(req.Topics))
	var acks []engine.Acknowledgement
	for i, t := range req.Topics {
		name, known := s.topicName(t.TopicID)
		for _, p := range t.Partitions {
			ap := decodeAcks(name, known, p.Partition, p.Batches, txnShareAckBatch)
			acks = append(acks, ap.acks...)
			results[i] = append(results[i], result{ackPartition: ap})
		}
	}
	fill := func() (kmsg.Response, error) {
		for i, t := range req.Topics {
			rt := txnshareack.TopicResponse{TopicID: t.TopicID}
			for _, r := range results[i] {
				rt.Partitions = append(rt.Partitions, txnshareack.PartitionResponse{
					Partition: r.tp.Partition, ErrorCode: r.code, ErrorMessage: msg(r.err),
				})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	for i := range results {
		for _, r := range results[i] {
			if r.code != 0 {
				// A malformed partition fails the request before
				// anything stages.
				resp.ErrorCode = kerr.InvalidRequest.Code
				return fill()
			}
		}
	}
	p, code := s.lookupProducer(req.ProducerID, req.ProducerEpoch)
	if code == 0 && (req.TransactionalID == nil || p.txnID != *req.TransactionalID) {
		code = kerr.InvalidProducerIDMapping.Code
	}
	if code != 0 {
		resp.ErrorCode = code
		return fill()
	}
	m := s.lookupMember(req.GroupID, req.MemberID)
	if m == nil {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return fill()
	}
	m.mu.Lock()
	var meta engine.GroupMetadata
	switch {
	case m.gone || m.left || m.em == nil:
		code = kerr.UnknownMemberID.Code
	case req.MemberEpoch != m.epochLocked():
		code = kerr.FencedMemberEpoch.Code
	default:
		meta = m.em.Metadata()
		meta.MemberEpoch = req.MemberEpoch - m.base
	}
	m.mu.Unlock()
	if code != 0 {
		resp.ErrorCode = code
		return fill()
	}
	p.mu.Lock()
	err := p.beginLocked()
	if err == nil {
		err = p.p.SendShareAcksToTransaction(acks, meta)
	}
	p.mu.Unlock()
	if err != nil {
		var ae *engine.AckError
		if !asAckError(err, &ae) {
			resp.ErrorCode = errCode(err)
			for i := range results {
				for j := range results[i] {
					results[i][j].code, results[i][j].err = resp.ErrorCode, err
				}
			}
			return fill()
		}
		for i := range results {
			for j := range results[i] {
				if e := ae.Partitions[results[i][j].tp]; e != nil {
					results[i][j].code, results[i][j].err = errCode(e), e
				}
			}
		}
	}
	return fill()
}
