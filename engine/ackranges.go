// This file holds AckRanges, the client helper that turns a batch of
// records into range acknowledgements.

package engine

import "sort"

// AckRanges returns acknowledgements of type t for recs, one per run of
// consecutive offsets within a topic's partition, sorted by topic,
// partition, then offset. at reports a record's topic, partition and
// offset; it is generic so that callers holding their own record type (a
// load generator's, a pointer) need not convert the batch first. recs is
// not modified. A poll of a group subscribed to several topics returns
// records of each, so a range never spans two topics.
func AckRanges[R any](recs []R, at func(R) (topic string, partition int32, offset int64), t AckType) []Acknowledgement {
	type pos struct {
		topic     string
		partition int32
		offset    int64
	}
	sorted := make([]pos, len(recs))
	for i, r := range recs {
		sorted[i].topic, sorted[i].partition, sorted[i].offset = at(r)
	}
	// A range never spans topics: records of several topics (a group
	// subscribed to more than one) share partition numbers and offsets.
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].topic != sorted[j].topic {
			return sorted[i].topic < sorted[j].topic
		}
		if sorted[i].partition != sorted[j].partition {
			return sorted[i].partition < sorted[j].partition
		}
		return sorted[i].offset < sorted[j].offset
	})
	var out []Acknowledgement
	for _, p := range sorted {
		if n := len(out); n > 0 && out[n-1].Topic == p.topic && out[n-1].Partition == p.partition && out[n-1].Last+1 == p.offset {
			out[n-1].Last = p.offset
			continue
		}
		out = append(out, Acknowledgement{Topic: p.topic, Partition: p.partition, First: p.offset, Last: p.offset, Type: t})
	}
	return out
}
