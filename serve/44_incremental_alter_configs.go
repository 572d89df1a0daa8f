// IncrementalAlterConfigs: v0-1.
//
// Share group settings (SET and DELETE of share.record.lock.duration.ms,
// share.delivery.count.limit, share.partition.max.record.locks,
// share.auto.offset.reset, share.isolation.level,
// errors.deadletterqueue.topic.name and
// errors.deadletterqueue.copy.record.enable; share.acknowledgement.mode and
// share.acquire.mode are accepted) go to Engine.SetShareGroupConfig, all
// of a resource's settings at once or none. Topic configs: SET, DELETE,
// and APPEND and SUBTRACT of list configs (topicconfigs.go), applied to
// the topic's kept configs and the result validated as a whole, as Kafka's
// controller does, then kept by the engine (Engine.AlterTopicConfigs); a
// config named twice, or given no value by anything but a DELETE, is
// INVALID_REQUEST, as Kafka's broker answers. Broker settings are refused with
// INVALID_CONFIG: the engine keeps none.

package serve

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(int16(kmsg.IncrementalAlterConfigs), 0, 1, (*Server).handleIncrementalAlterConfigs)
}

func (s *Server) handleIncrementalAlterConfigs(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if r.ResourceType == kmsg.ConfigResourceTypeTopic {
			if err := s.alterTopicConfigs(r.ResourceName, r.Configs, req.ValidateOnly); err != nil {
				rr.ErrorCode, rr.ErrorMessage = errCode(err), msg(err)
			}
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		if r.ResourceType != kmsg.ConfigResourceTypeGroupConfig {
			rr.ErrorCode = kerr.InvalidConfig.Code
			m := "serve: only share group and topic configs can be altered (the engine has no broker configuration)"
			rr.ErrorMessage = &m
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		cfg := s.shareGroupConfig(r.ResourceName)
		var err error
		for _, c := range r.Configs {
			if err != nil {
				break
			}
			err = setGroupConfig(&cfg, c.Name, c.Value, c.Op)
		}
		if err == nil && !req.ValidateOnly {
			err = s.setShareGroupConfig(r.ResourceName, cfg)
		}
		if err != nil {
			rr.ErrorCode, rr.ErrorMessage = errCode(err), msg(err)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// alterTopicConfigs applies IncrementalAlterConfigs operations to topic's
// configs, all or none; validateOnly checks and keeps nothing.
func (s *Server) alterTopicConfigs(topic string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, validateOnly bool) error {
	seen := make(map[string]bool, len(ops))
	var nulls []string
	for _, c := range ops {
		if seen[c.Name] {
			return &topicConfigError{kerr.InvalidRequest, "Error due to duplicate config keys"}
		}
		seen[c.Name] = true
		if c.Value == nil && c.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, c.Name)
		}
	}
	if err := nullUpdates(nulls); err != nil {
		return err
	}
	err := s.e.AlterTopicConfigs(topic, func(configs map[string]string) error {
		for _, c := range ops {
			if err := alterTopicConfig(configs, c.Name, c.Value, c.Op); err != nil {
				return err
			}
		}
		return checkTopicConfigs(configs, validateOnly)
	})
	if errors.Is(err, errValidateOnly) {
		return nil
	}
	return err
}
