// CreateTopics: v0-7.
//
// Creates each topic in the engine (NumPartitions -1: the default count).
// Replication factors above 1 are refused (one broker), as are replica
// assignments; topic configs are accepted and not applied (the engine has
// no per-topic configuration). ValidateOnly (v1+) checks without creating.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.CreateTopics), 0, 7, (*Server).handleCreateTopics) }

func (s *Server) handleCreateTopics(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		n := t.NumPartitions
		if n == -1 {
			n = s.cfg.partitions
		}
		rt.NumPartitions, rt.ReplicationFactor = n, 1
		// Kafka answers the created topic's configs (v5+); the engine has
		// none of its own, so the list is empty, never null: Kafka's own
		// kafka-topics --create fails on a null one.
		rt.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
		var err error
		switch {
		case !validTopicName(t.Topic):
			rt.ErrorCode = kerr.InvalidTopicException.Code
		case n < 1 || len(t.ReplicaAssignment) > 0:
			rt.ErrorCode = kerr.InvalidPartitions.Code
		case t.ReplicationFactor > 1:
			rt.ErrorCode = kerr.InvalidReplicationFactor.Code
		case req.ValidateOnly:
			if _, ok := s.partitions(t.Topic); ok {
				rt.ErrorCode = kerr.TopicAlreadyExists.Code
			}
		default:
			err = s.e.CreateTopic(t.Topic, n)
			rt.ErrorCode = errCode(err)
			if err == nil {
				rt.TopicID = s.topicID(t.Topic)
			}
		}
		if rt.ErrorCode != 0 && req.Version >= 1 {
			if err == nil {
				err = kerr.ErrorForCode(rt.ErrorCode)
			}
			rt.ErrorMessage = msg(err)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
