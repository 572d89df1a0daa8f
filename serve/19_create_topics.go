// CreateTopics: v0-7.
//
// Creates each topic in the engine (NumPartitions -1: the default count).
// Replication factors above 1 are refused (one broker), as are replica
// assignments. Topic configs are validated as Kafka validates them
// (topicconfigs.go: INVALID_CONFIG naming an unknown config or a bad
// value) and kept with the topic; the engine enforces none of them.
// ValidateOnly (v1+) checks without creating.
// A count past a partition cap (limits.go) is refused before the engine
// allocates anything: INVALID_PARTITIONS for the per-topic cap,
// POLICY_VIOLATION for the total, with a message naming the flag.
// Each topic is answered with its partition count and replication factor
// and (v5+) its configs with their source, as DescribeConfigs reports
// them: those it set as DYNAMIC_TOPIC_CONFIG, the rest as defaults.

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
		configs, err := createConfigs(t.Configs)
		switch {
		case !validTopicName(t.Topic):
			rt.ErrorCode = kerr.InvalidTopicException.Code
		case n < 1 || len(t.ReplicaAssignment) > 0:
			rt.ErrorCode = kerr.InvalidPartitions.Code
		case t.ReplicationFactor > 1:
			rt.ErrorCode = kerr.InvalidReplicationFactor.Code
		case err != nil:
			rt.ErrorCode = errCode(err)
		case req.ValidateOnly:
			if _, ok := s.partitions(t.Topic); ok {
				rt.ErrorCode = kerr.TopicAlreadyExists.Code
			} else if err = s.checkPartitions(t.Topic, n); err != nil {
				rt.ErrorCode = errCode(err)
			}
		default:
			err = s.createTopic(t.Topic, n, configs)
			rt.ErrorCode = errCode(err)
			if err == nil {
				rt.TopicID = s.topicID(t.Topic)
			}
		}
		if rt.ErrorCode == 0 {
			rt.Configs = createdConfigs(configs)
		}
		if rt.ErrorCode != 0 && req.Version >= 1 {
			// err is the message only when it is the error answered: a
			// bad name outranks a bad config.
			if err == nil || errCode(err) != rt.ErrorCode {
				err = kerr.ErrorForCode(rt.ErrorCode)
			}
			rt.ErrorMessage = msg(err)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// createConfigs are a CreateTopics topic's configs as a map, validated;
// a null value is refused as Kafka's controller refuses it.
func createConfigs(in []kmsg.CreateTopicsRequestTopicConfig) (map[string]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(in))
	for _, c := range in {
		if c.Value == nil {
			return nil, invalidConfig("Null value not supported for topic configs: %s", c.Name)
		}
		out[c.Name] = *c.Value
	}
	if err := validateTopicConfigs(out); err != nil {
		return nil, err
	}
	return out, nil
}

// createdConfigs are a created topic's configs, as CreateTopics answers
// them (v5+): those the request set (DYNAMIC_TOPIC_CONFIG) and the
// defaults DescribeConfigs reports.
func createdConfigs(set map[string]string) []kmsg.CreateTopicsResponseTopicConfig {
	entries := topicConfigEntries(set)
	out := make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(entries))
	for _, e := range entries {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		v := e.value
		c.Name, c.Value, c.Source = e.name, &v, int8(e.source)
		out = append(out, c)
	}
	return out
}
