// DescribeConfigs: v0-4.
//
// Share groups (resource type 32): the group's share.* settings from the
// engine. Topics and the broker: a few read-only defaults (the engine has
// no per-topic configuration). Each setting's documentation comes with it
// when the request asks (v3+); a resource's error message is "" on
// success, as Kafka answers.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.DescribeConfigs), 0, 4, (*Server).handleDescribeConfigs) }

func (s *Server) handleDescribeConfigs(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		var kvs [][2]string
		readOnly := true
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeGroupConfig:
			kvs, readOnly = groupConfigs(s.shareGroupConfig(r.ResourceName)), false
		case kmsg.ConfigResourceTypeTopic:
			if _, ok := s.partitions(r.ResourceName); !ok {
				rr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				break
			}
			kvs = topicConfigs
		case kmsg.ConfigResourceTypeBroker:
			kvs = brokerConfigs
		default:
			rr.ErrorCode = kerr.InvalidRequest.Code
		}
		// The error message is "" on success, as Kafka answers (it never
		// sets one), and the error's message otherwise.
		rr.ErrorMessage = kmsg.StringPtr("")
		if rr.ErrorCode != 0 {
			rr.ErrorMessage = msg(kerr.ErrorForCode(rr.ErrorCode))
		}
		for _, kv := range kvs {
			if len(r.ConfigNames) > 0 && !contains(r.ConfigNames, kv[0]) {
				continue
			}
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			v := kv[1]
			c.Name, c.Value, c.ReadOnly = kv[0], &v, readOnly
			if req.IncludeDocumentation {
				doc := configDocs[kv[0]]
				c.Documentation = &doc
			}
			c.Source = kmsg.ConfigSourceDefaultConfig
			if !readOnly {
				c.Source = kmsg.ConfigSource(8) // DYNAMIC_GROUP_CONFIG
			}
			rr.Configs = append(rr.Configs, c)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
