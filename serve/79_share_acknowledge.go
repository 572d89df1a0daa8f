// ShareAcknowledge: v1-2.
//
// Acknowledgements outside a fetch. The share session epoch must be the
// next one (0 is invalid here); -1 applies the acknowledgements and then
// closes the session. IsRenewAck (v2) marks requests that carry RENEW. Each
// partition applies all or nothing; its error is in its ErrorCode:
// INVALID_RECORD_STATE for a record the member no longer holds (lock
// expired, acquired by another member, terminal), NONE for offsets below
// the share-partition start offset (a no-op, as Kafka answers). The share
// session, not group membership, decides: a member that left the group
// with its session open still holds its records, and its acknowledgements
// apply (member.go); once the session closed (epoch -1, its connection
// closed, or the member timed out) its records went back to the group and
// every request on it is answered SHARE_SESSION_NOT_FOUND, top level, with
// nothing applied, as Kafka answers.

package serve

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.ShareAcknowledge), 1, 2, (*Server).handleShareAcknowledge) }

func (s *Server) handleShareAcknowledge(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareAcknowledgeRequest)
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	var group, memberID string
	if req.GroupID != nil {
		group = *req.GroupID
	}
	if req.MemberID != nil {
		memberID = *req.MemberID
	}
	if cfg, err := s.e.ShareGroupConfig(group); err == nil {
		resp.AcquisitionLockTimeoutMillis = int32(cfg.LockDuration / time.Millisecond)
	}
	m := s.lookupMember(group, memberID)
	if m == nil {
		// Unknown, or removed with its session: no share session,
		// which is what Kafka checks here.
		resp.ErrorCode = kerr.ShareSessionNotFound.Code
		return resp, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone || m.em == nil {
		resp.ErrorCode = kerr.ShareSessionNotFound.Code
		return resp, nil
	}
	m.lastSeen = time.Now()
	if code := s.checkSessionLocked(m, c, req.ShareSessionEpoch, false); code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	var acks []engine.Acknowledgement
	results := make([][]ackPartition, len(req.Topics))
	for i, t := range req.Topics {
		name, known := s.topicName(t.TopicID)
		for _, p := range t.Partitions {
			ap := decodeAcks(name, known, p.Partition, p.AcknowledgementBatches, shareAckBatch)
			acks = append(acks, ap.acks...)
			results[i] = append(results[i], ap)
		}
	}
	failed, err := ackCodes(m.em, acks)
	if err != nil {
		resp.ErrorCode = ackCallCode(err)
		resp.ErrorMessage = msg(err)
		return resp, nil
	}
	for i, t := range req.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, r := range results[i] {
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = r.tp.Partition
			rp.CurrentLeader.LeaderID = nodeID
			rp.ErrorCode = r.code
			if e := failed[r.tp]; e != nil && r.code == 0 {
				rp.ErrorCode, rp.ErrorMessage = errCode(e), msg(e)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if req.ShareSessionEpoch == -1 {
		s.closeSessionLocked(m)
	}
	return resp, nil
}
