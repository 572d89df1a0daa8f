// CreateTopics: v0-7.
//
// Creates each topic in the engine (NumPartitions -1: the default count).
// Replication factors above 1 are refused (one broker), as are replica
// assignments; topic configs are accepted and not applied (the engine has
// no per-topic configuration). ValidateOnly (v1+) checks without creating.
// A count past a partition cap (limits.go) is refused before the engine
// allocates anything: INVALID_PARTITIONS for the per-topic cap,
// POLICY_VIOLATION for the total, with a message naming the flag.
// Each topic is answered with its partition count and replication factor
// and (v5+) its effective configs, the engine's topic settings with their
// source, as DescribeConfigs reports them.

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
		// The configs list is never null (v5+), an empty list for a topic
		// not created, as Kafka answers: its kafka-topics --create fails
		// on a null one.
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
			} else if err = s.checkPartitions(t.Topic, n); err != nil {
				rt.ErrorCode = errCode(err)
			}
		default:
			err = s.createTopic(t.Topic, n)
			rt.ErrorCode = errCode(err)
			if err == nil {
				rt.TopicID = s.topicID(t.Topic)
			}
		}
		if rt.ErrorCode == 0 {
			rt.Configs = createdConfigs()
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

// createdConfigs are a created topic's effective configs, as CreateTopics
// answers them (v5+): the engine's topic settings, each read-only at its
// default (ConfigSource DEFAULT_CONFIG), since the engine applies no
// topic config a request gives.
func createdConfigs() []kmsg.CreateTopicsResponseTopicConfig {
	out := make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(topicConfigs))
	for _, kv := range topicConfigs {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		v := kv[1]
		c.Name, c.Value, c.ReadOnly, c.Source = kv[0], &v, true, int8(kmsg.ConfigSourceDefaultConfig)
		out = append(out, c)
	}
	return out
}
