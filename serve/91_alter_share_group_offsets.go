// AlterShareGroupOffsets: v0.
//
// Engine.AlterShareGroupOffsets: each partition's share-partition start
// offset moves to the offset given and its delivery state starts afresh
// there (kafka-share-groups --reset-offsets). The group must exist and be
// empty (else GROUP_ID_NOT_FOUND or NON_EMPTY_GROUP at the top level); a
// partition fails alone with UNKNOWN_TOPIC_OR_PARTITION, OFFSET_OUT_OF_RANGE
// (outside [log start, high watermark]) or CONCURRENT_TRANSACTIONS (records
// of the partition are staged in an open transaction).

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() {
	register(int16(kmsg.AlterShareGroupOffsets), 0, 0, (*Server).handleAlterShareGroupOffsets)
}

func (s *Server) handleAlterShareGroupOffsets(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	offsets := map[engine.TopicPartition]int64{}
	unknown := map[engine.TopicPartition]bool{}
	for _, t := range req.Topics {
		n, known := s.partitions(t.Topic)
		for _, p := range t.Partitions {
			tp := engine.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if !known || p.Partition < 0 || p.Partition >= n {
				unknown[tp] = true
				continue
			}
			offsets[tp] = p.StartOffset
		}
	}
	failed, err := s.e.AlterShareGroupOffsets(req.GroupID, offsets)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errCode(err), msg(err)
		return resp, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, s.topicID(t.Topic)
		for _, p := range t.Partitions {
			tp := engine.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case unknown[tp]:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case failed[tp] != nil:
				rp.ErrorCode, rp.ErrorMessage = errCode(failed[tp]), msg(failed[tp])
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
