// OffsetDelete: v0.
//
// Deletes a classic consumer group's committed offsets of the named
// partitions, as Kafka's group coordinator does: an empty id is
// INVALID_GROUP_ID, an unknown group or a share group GROUP_ID_NOT_FOUND
// (Kafka's answer for a group that is not a consumer group), a group with
// members of a protocol type other than "consumer" NON_EMPTY_GROUP (the
// server cannot read their subscriptions); a partition of a topic a live
// member subscribes to is GROUP_SUBSCRIBED_TO_TOPIC, and a partition of an
// unknown topic UNKNOWN_TOPIC_OR_PARTITION. Every other named partition
// loses its committed offset (Engine.DeleteCommittedOffsets).

package serve

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.OffsetDelete), 0, 0, (*Server).handleOffsetDelete) }

func (s *Server) handleOffsetDelete(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp, nil
	}
	if s.isShareGroup(req.Group) {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp, nil
	}
	subscribed := map[string]bool{}
	g := s.classicGroup(req.Group, false)
	if g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if len(g.members) > 0 && g.protocolType != "consumer" {
			resp.ErrorCode = kerr.NonEmptyGroup.Code
			return resp, nil
		}
		for _, m := range g.members {
			var md kmsg.ConsumerMemberMetadata
			if md.ReadFrom(m.metadata(g.protocol)) == nil {
				for _, t := range md.Topics {
					subscribed[t] = true
				}
			}
		}
	}
	var del []engine.TopicPartition
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		_, known := s.partitions(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case !known:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case subscribed[t.Topic]:
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			default:
				del = append(del, engine.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	err := s.e.DeleteCommittedOffsets(req.Group, del)
	switch {
	case errors.Is(err, engine.ErrUnknownGroup) && g != nil:
		// A classic group that never committed: nothing to delete.
	case err != nil:
		resp.ErrorCode = errCode(err)
		if errors.Is(err, engine.ErrGroupTypeMismatch) {
			resp.ErrorCode = kerr.GroupIDNotFound.Code
		}
		resp.Topics = nil
	}
	return resp, nil
}
