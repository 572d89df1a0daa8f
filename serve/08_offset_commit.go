// OffsetCommit: v2-9.
//
// Commits a classic group's offsets in the engine. A member id and a
// generation (not -1) are checked against the group first; generation -1
// is a commit from outside the group (an admin tool or a consumer that
// assigns partitions itself).

package serve

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.OffsetCommit), 2, 9, (*Server).handleOffsetCommit) }

func (s *Server) handleOffsetCommit(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := int16(0)
	if s.isShareGroup(req.Group) {
		code = errCode(engine.ErrGroupTypeMismatch)
	} else if req.Generation >= 0 || req.MemberID != "" {
		code = s.checkGeneration(req.Group, req.MemberID, req.Generation)
	}
	if code == 0 {
		offsets := map[engine.TopicPartition]int64{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				offsets[engine.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Offset
			}
		}
		code = errCode(s.e.CommitOffsets(req.Group, offsets))
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
