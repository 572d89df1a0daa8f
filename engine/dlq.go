// This file holds the dead-letter queue (KIP-1191, docs/design.md §3.10): with
// errors.deadletterqueue.topic.name set for a share group, every record
// archived by a reject or at the delivery limit is copied once to that
// topic, its provenance in headers and its key and value only with
// errors.deadletterqueue.copy.record.enable. A transactional REJECT's copy
// is written in the transaction that staged it (the safe knob), or after
// the commit marker archives the record (Knobs.DLQAfterMarker).

package engine

import (
	"strconv"

	"github.com/sharebench/sharebench/engine/internal/mutant"
	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// Headers of a dead-letter record, named, ordered and valued as Kafka 4.4's
// share-group DLQ writes them (UTF-8 text; numbers in decimal), so one
// reader reads the engine's dead letters and a broker's alike.
const (
	HeaderDLQTopic         = "__dlq.errors.topic"
	HeaderDLQPartition     = "__dlq.errors.partition"
	HeaderDLQOffset        = "__dlq.errors.offset"
	HeaderDLQGroup         = "__dlq.errors.group"
	HeaderDLQDeliveryCount = "__dlq.errors.delivery.count"
	// HeaderDLQMessage says why the record was archived: DLQMessageRejected
	// or DLQMessageDeliveryLimit.
	HeaderDLQMessage = "__dlq.errors.message"
)

// Values of HeaderDLQMessage, as Kafka 4.4 words them.
const (
	DLQMessageRejected      = "Offset rejected by client."
	DLQMessageDeliveryLimit = "Offset delivery count exceeded the threshold."
)

// dlqMessage is the HeaderDLQMessage value for an archive reason.
func dlqMessage(r sharepart.Reason) []byte {
	if r == sharepart.ReasonRejected {
		return []byte(DLQMessageRejected)
	}
	return []byte(DLQMessageDeliveryLimit)
}

// deadLetters are dead-letter copies to append to one DLQ partition.
type deadLetters struct {
	tp   TopicPartition
	recs []ProduceRecord
}

// takeDeadLettersLocked turns the dead letters the share partitions of p
// reported into copies for their DLQ topics, skipping those of staged
// rejects when the transaction wrote them (the safe knob). The data shard
// lock of p is held; topicsMu is a leaf.
func (e *Engine) takeDeadLettersLocked(p *partition, dst []deadLetters) []deadLetters {
	for _, g := range p.groups {
		sp := p.shares[g]
		if !sp.HasDeadLetters() {
			continue
		}
		cfg := sp.Config()
		for _, dl := range sp.TakeDeadLetters(nil) {
			if dl.Staged && !e.cfg.knobs.DLQAfterMarker {
				continue // written in the transaction that staged the reject
			}
			count := dl.Count
			recs := e.deadLetterRecords(p, g, cfg, dl.First, dl.Last, func(int64) int { return count }, dl.Reason, nil)
			dst = e.addDeadLetters(dst, cfg.DeadLetterTopic, p.tp, recs)
		}
	}
	return dst
}

// deadLetterRecords builds the copies of offsets [first, last] of p for
// group's DLQ (those in set, when set is not nil).
func (e *Engine) deadLetterRecords(p *partition, group string, cfg sharepart.Config, first, last int64, count func(int64) int, reason sharepart.Reason, set func(int64) bool) []ProduceRecord {
	// The headers are built in two shared buffers (the log copies them).
	topic, part := []byte(p.tp.Topic), strconv.AppendInt(nil, int64(p.tp.Partition), 10)
	why, grp := dlqMessage(reason), []byte(group)
	n := int(last - first + 1)
	hs := make([]Header, 0, 6*n)
	num := make([]byte, 0, 24*n)
	out := make([]ProduceRecord, 0, n)
	for o := first; o <= last; o++ {
		if set != nil && !set(o) {
			continue
		}
		at := len(num)
		num = strconv.AppendInt(num, o, 10)
		mid := len(num)
		num = strconv.AppendInt(num, int64(count(o)), 10)
		h := len(hs)
		hs = append(hs,
			Header{Key: HeaderDLQTopic, Value: topic},
			Header{Key: HeaderDLQPartition, Value: part},
			Header{Key: HeaderDLQOffset, Value: num[at:mid:mid]},
			Header{Key: HeaderDLQGroup, Value: grp},
			Header{Key: HeaderDLQDeliveryCount, Value: num[mid:len(num):len(num)]},
			Header{Key: HeaderDLQMessage, Value: why},
		)
		r := ProduceRecord{Headers: hs[h:len(hs):len(hs)]}
		if cfg.CopyRecord {
			if rec, err := p.log.Read(o); err == nil {
				r.Key, r.Value = rec.Key, rec.Value
			}
		}
		out = append(out, r)
	}
	return out
}

// addDeadLetters adds recs for the DLQ topic (source partition src) to
// dst: the copy goes to the DLQ partition src.Partition modulo its count.
func (e *Engine) addDeadLetters(dst []deadLetters, topicName string, src TopicPartition, recs []ProduceRecord) []deadLetters {
	if len(recs) == 0 {
		return dst
	}
	t, err := e.topic(topicName)
	if err != nil {
		e.stats.dlqDropped.Add(int64(len(recs)))
		return dst
	}
	tp := TopicPartition{topicName, src.Partition % t.partitions.Load()}
	for i := range dst {
		if dst[i].tp == tp {
			dst[i].recs = append(dst[i].recs, recs...)
			return dst
		}
	}
	return append(dst, deadLetters{tp: tp, recs: recs})
}

// writeDeadLetters appends dead-letter copies (plain records), journaled
// into op. No data shard lock is held.
func (e *Engine) writeDeadLetters(op *syncPoint, dls []deadLetters) {
	now := int64(e.clock.Now())
	for _, dl := range dls {
		err := e.withPartitionOp(dl.tp, op, func(p *partition) error {
			_, err := e.appendLocked(p, batchOf(dl.recs, plog.NoProducer, 0, 0, false, now))
			return err
		})
		if err != nil {
			e.stats.dlqDropped.Add(int64(len(dl.recs)))
			continue
		}
		e.stats.dlqWritten.Add(int64(len(dl.recs)))
		if t, err := e.topic(dl.tp.Topic); err == nil {
			t.changed()
		}
	}
}

// stagedRejectCopies returns the dead-letter copies of the REJECTs among
// batches just staged in group's share partition of p, for the staging
// transaction to write (the safe knob). The data shard lock is held.
func (e *Engine) stagedRejectCopiesLocked(p *partition, group string, sp *sharepart.SharePartition, batches []sharepart.Batch, dst []deadLetters) []deadLetters {
	if mutant.On("dlq-staged-reject-not-copied") {
		return dst
	}
	cfg := sp.Config()
	if cfg.DeadLetterTopic == "" || e.cfg.knobs.DLQAfterMarker {
		return dst
	}
	for bi := range batches {
		b := &batches[bi]
		isReject := func(o int64) bool {
			if len(b.Types) > 0 {
				return b.Types[o-b.First] == sharepart.Reject
			}
			return b.Type == sharepart.Reject
		}
		first := max(b.First, sp.SPSO())
		if first > b.Last {
			continue
		}
		// The delivery count of the copy is the record's at staging; a
		// staged record is not acquired again before its marker.
		count := func(o int64) int { return sp.Record(o).DeliveryCount }
		recs := e.deadLetterRecords(p, group, cfg, first, b.Last, count, sharepart.ReasonRejected, isReject)
		dst = e.addDeadLetters(dst, cfg.DeadLetterTopic, p.tp, recs)
	}
	return dst
}
