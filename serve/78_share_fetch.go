// ShareFetch: v1-2.
//
// In order: the share session (epoch 0 opens one on this connection, -1
// closes it after the acknowledgements, any other epoch must be the next
// one), the piggybacked acknowledgements (each partition all or nothing;
// errors in AcknowledgeErrorCode), then, unless the session closes or the
// request carries lock renewals (IsRenewAck, v2: the acknowledgements are applied and nothing is fetched), a poll of the engine member for up
// to MaxRecords records, waiting up to MaxWaitMillis for records to become
// available. The engine acquires at most MaxRecords, which both acquire
// modes (batch_optimized and record_limit, v2) allow. Acquired records come
// back as batches with their acquired ranges and delivery counts; those of
// a batch produced compressed come back in that batch, compressed with its
// codec, its base and last offsets the produced batch's (records.go).

package serve

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.ShareFetch), 1, 2, (*Server).handleShareFetch) }

// defaultShareMaxRecords is the poll size when a request gives none.
const defaultShareMaxRecords = 500

// sharePollTick is how often a waiting share fetch polls again for
// records that became available without a produce (lock expiries,
// releases, aborted transactions).
const sharePollTick = 20 * time.Millisecond

// maxPollBuf bounds the records buffer a connection keeps between share
// fetches (about 600 KiB); a larger poll's buffer is left to the GC.
const maxPollBuf = 4096

func (s *Server) handleShareFetch(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareFetchRequest)
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	resp.NodeEndpoints = []kmsg.ShareFetchResponseNodeEndpoint{nodeEndpoint(s)}
	var group, memberID string
	if req.GroupID != nil {
		group = *req.GroupID
	}
	if req.MemberID != nil {
		memberID = *req.MemberID
	}
	if cfg, err := s.e.ShareGroupConfig(group); err == nil {
		resp.AcquisitionLockTimeoutMillis = int32(cfg.LockDuration / time.Millisecond)
	}
	if req.Version >= 2 && req.ShareAcquireMode != 0 && req.ShareAcquireMode != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	// A member the server does not know (never joined, or removed with
	// its session) has no share session: a request continuing one is
	// answered so, and only one opening a session (epoch 0) is a question
	// of membership. A member that left the group keeps the session it
	// has open (member.go) but cannot open another.
	noMember := kerr.UnknownMemberID.Code
	if req.ShareSessionEpoch != 0 {
		noMember = kerr.ShareSessionNotFound.Code
	}
	m := s.lookupMember(group, memberID)
	if m == nil {
		resp.ErrorCode = noMember
		return resp, nil
	}

	m.mu.Lock()
	if m.gone || m.em == nil || (m.left && req.ShareSessionEpoch == 0) {
		m.mu.Unlock()
		resp.ErrorCode = noMember
		return resp, nil
	}
	m.lastSeen = time.Now()
	if code := s.checkSessionLocked(m, c, req.ShareSessionEpoch, true); code != 0 {
		m.mu.Unlock()
		resp.ErrorCode = code
		return resp, nil
	}
	// Partitions of the response, in request order.
	type partKey struct {
		topic [16]byte
		part  int32
	}
	var order []partKey
	parts := map[partKey]*kmsg.ShareFetchResponseTopicPartition{}
	get := func(k partKey) *kmsg.ShareFetchResponseTopicPartition {
		if rp := parts[k]; rp != nil {
			return rp
		}
		rp := kmsg.NewShareFetchResponseTopicPartition()
		rp.Partition = k.part
		rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = nodeID, 0
		parts[k] = &rp
		order = append(order, k)
		return &rp
	}
	var acks []engine.Acknowledgement
	ackTP := map[engine.TopicPartition]partKey{}
	for _, t := range req.Topics {
		name, known := s.topicName(t.TopicID)
		for _, p := range t.Partitions {
			k := partKey{t.TopicID, p.Partition}
			ap := decodeAcks(name, known, p.Partition, p.AcknowledgementBatches, shareFetchBatch)
			if !known {
				get(k).ErrorCode = ap.code
				continue
			}
			if m.session != nil {
				m.session.parts[ap.tp] = true
			}
			switch {
			case ap.code != 0:
				get(k).AcknowledgeErrorCode = ap.code
			case len(ap.acks) > 0:
				acks = append(acks, ap.acks...)
				ackTP[ap.tp] = k
				get(k)
			}
		}
	}
	for _, f := range req.ForgottenTopicsData {
		if name, ok := s.topicName(f.TopicID); ok && m.session != nil {
			for _, p := range f.Partitions {
				delete(m.session.parts, engine.TopicPartition{Topic: name, Partition: p})
			}
		}
	}
	em := m.em
	failed, err := ackCodes(em, acks)
	if err != nil {
		m.mu.Unlock()
		resp.ErrorCode = ackCallCode(err)
		resp.ErrorMessage = msg(err)
		return resp, nil
	}
	for tp, k := range ackTP {
		if e := failed[tp]; e != nil {
			rp := get(k)
			rp.AcknowledgeErrorCode = errCode(e)
			rp.AcknowledgeErrorMessage = msg(e)
		}
	}
	closing := req.ShareSessionEpoch == -1
	if closing {
		s.closeSessionLocked(m)
	}
	m.mu.Unlock()

	if !closing && !(req.Version >= 2 && req.IsRenewAck) {
		maxRecs := int(req.MaxRecords)
		if maxRecs <= 0 {
			maxRecs = defaultShareMaxRecords
		}
		recs, err := s.pollShare(c, m, em, maxRecs, req.MaxWaitMillis)
		if err != nil {
			resp.ErrorCode = errCode(err)
			resp.ErrorMessage = msg(err)
		}
		var w batchWriter
		for len(recs) > 0 {
			// One partition's records are contiguous in a poll.
			j := 1
			for j < len(recs) && recs[j].Topic == recs[0].Topic && recs[j].Partition == recs[0].Partition {
				j++
			}
			rp := get(partKey{s.topicID(recs[0].Topic), recs[0].Partition})
			w.reset(rp.Records, s.tsBase)
			if rp.Records == nil {
				w.reset(getBuf(encodedSize(recs[:j])), s.tsBase)
			} else {
				w.grow(encodedSize(recs[:j]))
			}
			// Acquired records of a batch produced compressed go out in
			// that batch, compressed as it was; AcquiredRecords say which
			// of its offsets the member holds.
			tp := engine.TopicPartition{Topic: recs[0].Topic, Partition: recs[0].Partition}
			w.setCoded(s.state.stored.covering(nil, tp, recs[0].Offset, recs[j-1].Offset))
			for i := range recs[:j] {
				r := &recs[i]
				w.add(r)
				n := len(rp.AcquiredRecords)
				if n > 0 && rp.AcquiredRecords[n-1].LastOffset+1 == r.Offset && rp.AcquiredRecords[n-1].DeliveryCount == int16(r.DeliveryCount) {
					rp.AcquiredRecords[n-1].LastOffset = r.Offset
					continue
				}
				ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
				ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = r.Offset, r.Offset, int16(r.DeliveryCount)
				rp.AcquiredRecords = append(rp.AcquiredRecords, ar)
			}
			rp.Records = w.bytes()
			recs = recs[j:]
		}
	}
	byTopic := map[[16]byte]int{}
	for _, k := range order {
		if parts[k].Records == nil {
			parts[k].Records = noRecords // empty, never null (as in Fetch)
		}
		i, ok := byTopic[k.topic]
		if !ok {
			rt := kmsg.NewShareFetchResponseTopic()
			rt.TopicID = k.topic
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			byTopic[k.topic] = i
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, *parts[k])
	}
	return resp, nil
}

// pollShare polls em, waiting up to maxWait for records.
func (s *Server) pollShare(c *conn, m *member, em *engine.ShareMember, max int, maxWaitMs int32) ([]engine.Record, error) {
	deadline := time.Now().Add(time.Duration(maxWaitMs) * time.Millisecond)
	m.mu.Lock()
	topics := m.joined
	m.mu.Unlock()
	for {
		var waits []<-chan struct{}
		for _, t := range topics {
			if ch, err := s.e.Notify(t); err == nil {
				waits = append(waits, ch)
			}
		}
		recs, err := em.PollAppend(c.pollBuf[:0], max)
		if cap(recs) <= maxPollBuf {
			c.pollBuf = recs[:0]
		}
		if err != nil || len(recs) > 0 || !time.Now().Before(deadline) {
			return recs, err
		}
		wait := min(time.Until(deadline), sharePollTick)
		waitAny(waits, time.Now().Add(wait), c.gone)
		select {
		case <-c.gone:
			return nil, nil
		default:
		}
	}
}
