// DescribeConfigs: v0-4.
//
// Share groups (resource type 32): the group's share.* settings from the
// engine. Topics: the configs the topic sets (source DYNAMIC_TOPIC_CONFIG,
// IsDefault false), kept by the engine, and a few defaults (source
// DEFAULT_CONFIG) for those it does not; topic configs are not read-only,
// as in Kafka. The broker: a few read-only defaults. Each setting's
// documentation comes with it when the request asks (v3+); a resource's
// error message is "" on success, as Kafka answers.

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
		var entries []configEntry
		readOnly := true
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeGroupConfig:
			readOnly = false
			for _, kv := range groupConfigs(s.shareGroupConfig(r.ResourceName)) {
				entries = append(entries, configEntry{kv[0], kv[1], kmsg.ConfigSource(8)}) // DYNAMIC_GROUP_CONFIG
			}
		case kmsg.ConfigResourceTypeTopic:
			set, err := s.e.TopicConfigs(r.ResourceName)
			if err != nil {
				rr.ErrorCode = errCode(err)
				break
			}
			readOnly, entries = false, topicConfigEntries(set)
		case kmsg.ConfigResourceTypeBroker:
			for _, kv := range brokerConfigs {
				entries = append(entries, configEntry{kv[0], kv[1], kmsg.ConfigSourceDefaultConfig})
			}
		default:
			rr.ErrorCode = kerr.InvalidRequest.Code
		}
		// The error message is "" on success, as Kafka answers (it never
		// sets one), and the error's message otherwise.
		rr.ErrorMessage = kmsg.StringPtr("")
		if rr.ErrorCode != 0 {
			rr.ErrorMessage = msg(kerr.ErrorForCode(rr.ErrorCode))
		}
		for _, e := range entries {
			if len(r.ConfigNames) > 0 && !contains(r.ConfigNames, e.name) {
				continue
			}
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			v := e.value
			c.Name, c.Value, c.ReadOnly = e.name, &v, readOnly
			if req.IncludeDocumentation {
				doc := topicConfigDoc(e.name)
				c.Documentation = &doc
			}
			// IsDefault (v0) is what Source says from v1.
			c.Source, c.IsDefault = e.source, e.source == kmsg.ConfigSourceDefaultConfig
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
