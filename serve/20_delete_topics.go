// DeleteTopics: v0-6 (v6 names topics by name or id).
//
// Engine.DeleteTopic: the topic goes with its records, share-partition
// state and committed offsets, durably under a data directory; a topic
// created later under the name gets a new id, and requests naming the old
// id get UNKNOWN_TOPIC_ID. An id no live topic has is UNKNOWN_TOPIC_ID.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.DeleteTopics), 0, 6, (*Server).handleDeleteTopics) }

func (s *Server) handleDeleteTopics(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type target struct {
		name string
		id   [16]byte
	}
	var ts []target
	if req.Version < 6 {
		for _, n := range req.TopicNames {
			ts = append(ts, target{name: n, id: s.topicID(n)})
		}
	} else {
		for _, t := range req.Topics {
			tg := target{id: t.TopicID}
			if t.Topic != nil && *t.Topic != "" {
				tg.name = *t.Topic
				tg.id = s.topicID(tg.name)
			} else if n, ok := s.topicName(t.TopicID); ok {
				tg.name = n
			}
			ts = append(ts, tg)
		}
	}
	for _, t := range ts {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		name := t.name
		rt.Topic, rt.TopicID = &name, t.id
		if name == "" {
			rt.ErrorCode = kerr.UnknownTopicID.Code
		} else if err := s.e.DeleteTopic(name); err != nil {
			rt.ErrorCode = errCode(err)
			if rt.ErrorCode == kerr.UnknownServerError.Code {
				rt.ErrorCode = kerr.InvalidRequest.Code
			}
			if req.Version >= 5 {
				rt.ErrorMessage = msg(err)
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
