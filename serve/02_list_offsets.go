// ListOffsets: v1-9.
//
// Timestamp -2 (earliest) and -4 (earliest local): the log start offset;
// -1 (latest): the high watermark, or the last stable offset for
// read_committed (v2+). A timestamp (Unix milliseconds, 0 or more): the
// first offset whose record's timestamp is at or after it
// (Engine.OffsetForTime), with that timestamp; offset and timestamp -1 when
// no record visible at the request's isolation level is that late. -3 (max
// timestamp): the offset and timestamp of the record with the largest
// timestamp (Engine.MaxTimestamp), -1 for an empty partition. Record
// timestamps are the engine's append times, shown in Unix milliseconds as
// Fetch shows them. -5 (tiered storage) and other negative timestamps are
// answered with UNSUPPORTED_VERSION for that partition, never a guessed
// offset.

package serve

import (
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.ListOffsets), 1, 9, (*Server).handleListOffsets) }

func (s *Server) handleListOffsets(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	iso := engine.ReadUncommitted
	if req.IsolationLevel == 1 {
		iso = engine.ReadCommitted
	}
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Timestamp, rp.Offset, rp.LeaderEpoch = p.Partition, -1, -1, 0
			tp := engine.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			start, hw, lso, err := s.e.Offsets(tp)
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
			case p.Timestamp >= 0 || p.Timestamp == -3:
				rp.ErrorCode = s.timeLookup(&rp, tp, p.Timestamp, iso)
			default:
				rp.ErrorCode = kerr.UnsupportedVersion.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// timeLookup fills rp's offset and timestamp for a time lookup (ts in
// Unix milliseconds) or the max-timestamp lookup (ts -3).
func (s *Server) timeLookup(rp *kmsg.ListOffsetsResponseTopicPartition, tp engine.TopicPartition, ts int64, iso engine.IsolationLevel) int16 {
	var offset int64
	var at time.Duration
	var ok bool
	var err error
	if ts == -3 {
		offset, at, ok, err = s.e.MaxTimestamp(tp, iso)
	} else {
		// Fetch shows a record's timestamp as tsBase plus whole engine
		// milliseconds, so the record is at or after ts exactly when its
		// engine time is at or after (ts - tsBase) ms.
		ms := min(ts-s.tsBase, math.MaxInt64/int64(time.Millisecond)) // no overflow past year 2262
		offset, at, ok, err = s.e.OffsetForTime(tp, time.Duration(ms)*time.Millisecond, iso)
	}
	if err != nil {
		return partErrCode(err)
	}
	if ok {
		rp.Offset, rp.Timestamp = offset, s.tsBase+int64(at/time.Millisecond)
	}
	return 0
}
