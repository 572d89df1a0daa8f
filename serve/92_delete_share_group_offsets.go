// DeleteShareGroupOffsets: v0.
//
// Engine.DeleteShareGroupOffsets: the group's share partitions of each
// topic are forgotten, so the next member to fetch one starts it where
// share.auto.offset.reset says (kafka-share-groups --delete-offsets). The
// group must exist and be empty (else GROUP_ID_NOT_FOUND or
// NON_EMPTY_GROUP at the top level); a topic fails alone with
// UNKNOWN_TOPIC_OR_PARTITION or CONCURRENT_TRANSACTIONS (records staged in
// an open transaction). A durable engine (--data-dir) cannot record the
// deletion and answers INVALID_REQUEST with a message saying so.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(int16(kmsg.DeleteShareGroupOffsets), 0, 0, (*Server).handleDeleteShareGroupOffsets)
}

func (s *Server) handleDeleteShareGroupOffsets(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	var topics []string
	for _, t := range req.Topics {
		if _, known := s.partitions(t.Topic); known {
			topics = append(topics, t.Topic)
		}
	}
	failed, err := s.e.DeleteShareGroupOffsets(req.GroupID, topics)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errCode(err), msg(err)
		return resp, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, s.topicID(t.Topic)
		if _, known := s.partitions(t.Topic); !known {
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		for tp, err := range failed {
			if tp.Topic == t.Topic && rt.ErrorCode == 0 {
				rt.ErrorCode, rt.ErrorMessage = errCode(err), msg(err)
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
