// DescribeShareGroupOffsets: v0-1.
//
// The share-partition start offset of each partition asked for (all
// partitions of the named topics when a topic lists none; every topic the
// group has a share partition in when Topics is null), with the lag to the
// high watermark (v1). A partition the group never fetched has start
// offset -1.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() {
	register(int16(kmsg.DescribeShareGroupOffsets), 0, 1, (*Server).handleDescribeShareGroupOffsets)
}

func (s *Server) handleDescribeShareGroupOffsets(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	for _, g := range req.Groups {
		rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		rg.GroupID = g.GroupID
		topics := g.Topics
		if topics == nil {
			for _, t := range s.e.Topics() {
				n, _ := s.partitions(t)
				for p := int32(0); p < n; p++ {
					if _, err := s.e.SharePartition(g.GroupID, engine.TopicPartition{Topic: t, Partition: p}); err == nil {
						rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
						rt.Topic = t
						topics = append(topics, rt)
						break
					}
				}
			}
		}
		for _, t := range topics {
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic, rt.TopicID = t.Topic, s.topicID(t.Topic)
			parts := t.Partitions
			n, known := s.partitions(t.Topic)
			if len(parts) == 0 {
				for p := int32(0); p < n; p++ {
					parts = append(parts, p)
				}
			}
			for _, p := range parts {
				rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, -1, 0, -1
				if !known || p < 0 || p >= n {
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				tp := engine.TopicPartition{Topic: t.Topic, Partition: p}
				if info, err := s.e.SharePartition(g.GroupID, tp); err == nil {
					rp.StartOffset = info.SPSO
					if _, hw, _, err := s.e.Offsets(tp); err == nil {
						rp.Lag = max(hw-info.SPSO, 0)
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rg.Topics = append(rg.Topics, rt)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
