// ListOffsets: v1-9.
//
// Timestamp -2 (earliest) and -4 (earliest local): the log start offset;
// -1 (latest): the high watermark, or the last stable offset for
// read_committed (v2+). Other timestamps (a time lookup, -3 max timestamp,
// -5 tiered) need a time index the engine does not keep: they are answered
// with UNSUPPORTED_VERSION for that partition, never a guessed offset.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.ListOffsets), 1, 9, (*Server).handleListOffsets) }

func (s *Server) handleListOffsets(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Timestamp, rp.Offset, rp.LeaderEpoch = p.Partition, -1, -1, 0
			start, hw, lso, err := s.e.Offsets(engine.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			switch {
			case err != nil:
				rp.ErrorCode = partErrCode(err)
			case p.Timestamp == -2 || p.Timestamp == -4:
				rp.Offset = start
			case p.Timestamp == -1:
				rp.Offset = hw
				if req.IsolationLevel == 1 {
					rp.Offset = lso
				}
			default:
				rp.ErrorCode = kerr.UnsupportedVersion.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
