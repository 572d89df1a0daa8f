// AlterConfigs: v0-2.
//
// Topics only: the request's configs replace all of the topic's configs
// (a config it leaves out goes back to its default), validated as
// CreateTopics validates them (topicconfigs.go) and kept by the engine;
// ValidateOnly checks without changing. A config named twice, or given no
// value, is INVALID_REQUEST, as Kafka's broker answers. Other resources are refused with
// INVALID_CONFIG: share group configs are altered with
// IncrementalAlterConfigs, and the engine has no broker configuration.

package serve

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.AlterConfigs), 0, 2, (*Server).handleAlterConfigs) }

func (s *Server) handleAlterConfigs(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		var err error
		if r.ResourceType == kmsg.ConfigResourceTypeTopic {
			err = s.replaceTopicConfigs(r.ResourceName, r.Configs, req.ValidateOnly)
		} else {
			err = &topicConfigError{kerr.InvalidConfig, "serve: AlterConfigs alters topic configs only (share group configs: IncrementalAlterConfigs; the engine has no broker configuration)"}
		}
		if err != nil {
			rr.ErrorCode, rr.ErrorMessage = errCode(err), msg(err)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// replaceTopicConfigs sets topic's configs to exactly configs;
// validateOnly checks and keeps nothing.
func (s *Server) replaceTopicConfigs(topic string, in []kmsg.AlterConfigsRequestResourceConfig, validateOnly bool) error {
	seen := make(map[string]bool, len(in))
	var nulls []string
	for _, c := range in {
		if seen[c.Name] {
			return &topicConfigError{kerr.InvalidRequest, "Error due to duplicate config keys"}
		}
		seen[c.Name] = true
		if c.Value == nil {
			nulls = append(nulls, c.Name)
		}
	}
	if err := nullUpdates(nulls); err != nil {
		return err
	}
	err := s.e.AlterTopicConfigs(topic, func(configs map[string]string) error {
		clear(configs)
		for _, c := range in {
			configs[c.Name] = *c.Value
		}
		return checkTopicConfigs(configs, validateOnly)
	})
	if errors.Is(err, errValidateOnly) {
		return nil
	}
	return err
}
