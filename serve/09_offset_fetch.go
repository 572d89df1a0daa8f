// OffsetFetch: v1-9 (v8+ asks for several groups at once).
//
// The engine's committed offsets of a classic group (-1 where none), each
// with the metadata "" (the engine keeps no commit metadata). No
// topics (nil) asks for every committed partition. Offsets still pending in
// a transaction (sent to it and not yet committed or aborted by its marker)
// are not reported; with RequireStable (v7+) such a partition answers
// UNSTABLE_OFFSET_COMMIT, which the client retries, as Kafka does.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.OffsetFetch), 1, 9, (*Server).handleOffsetFetch) }

// noMetadata is the metadata of every fetched offset: the engine keeps no
// commit metadata, and Kafka answers "" (never null) for an offset
// without any.
var noMetadata = ""

type fetchedOffset struct {
	topic     string
	partition int32
	offset    int64
	code      int16
}

func (s *Server) groupOffsets(group string, topics map[string][]int32, all, requireStable bool) []fetchedOffset {
	committed := s.e.CommittedOffsets(group)
	var out []fetchedOffset
	add := func(tp engine.TopicPartition, off int64) {
		fo := fetchedOffset{tp.Topic, tp.Partition, off, 0}
		if requireStable && s.e.PendingOffset(group, tp) {
			fo.offset, fo.code = -1, kerr.UnstableOffsetCommit.Code
		}
		out = append(out, fo)
	}
	if all {
		for tp, off := range committed {
			add(tp, off)
		}
		return out
	}
	for t, ps := range topics {
		for _, p := range ps {
			tp := engine.TopicPartition{Topic: t, Partition: p}
			off, ok := committed[tp]
			if !ok {
				off = -1
			}
			add(tp, off)
		}
	}
	return out
}

func (s *Server) handleOffsetFetch(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version <= 7 {
		topics := map[string][]int32{}
		for _, t := range req.Topics {
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		byTopic := map[string]*kmsg.OffsetFetchResponseTopic{}
		var order []string
		for _, o := range s.groupOffsets(req.Group, topics, req.Topics == nil, req.Version >= 7 && req.RequireStable) {
			rt := byTopic[o.topic]
			if rt == nil {
				t := kmsg.NewOffsetFetchResponseTopic()
				t.Topic = o.topic
				rt = &t
				byTopic[o.topic] = rt
				order = append(order, o.topic)
			}
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = o.partition, o.offset, -1, o.code
			rp.Metadata = &noMetadata
			rt.Partitions = append(rt.Partitions, rp)
		}
		for _, t := range order {
			resp.Topics = append(resp.Topics, *byTopic[t])
		}
		return resp, nil
	}
	for _, g := range req.Groups {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group = g.Group
		topics := map[string][]int32{}
		for _, t := range g.Topics {
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		byTopic := map[string]*kmsg.OffsetFetchResponseGroupTopic{}
		var order []string
		for _, o := range s.groupOffsets(g.Group, topics, g.Topics == nil, req.RequireStable) {
			rt := byTopic[o.topic]
			if rt == nil {
				t := kmsg.NewOffsetFetchResponseGroupTopic()
				t.Topic = o.topic
				rt = &t
				byTopic[o.topic] = rt
				order = append(order, o.topic)
			}
			rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = o.partition, o.offset, -1, o.code
			rp.Metadata = &noMetadata
			rt.Partitions = append(rt.Partitions, rp)
		}
		for _, t := range order {
			rg.Topics = append(rg.Topics, *byTopic[t])
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
