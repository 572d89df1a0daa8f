// This file holds the reading of a dead-letter record (KIP-1191): where
// it came from, as its headers say, for the verifier.

package ledger

import (
	"strconv"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/verify"
)

// Dead-letter headers, as Kafka 4.4 writes them (the engine writes the
// same).
const (
	headerDLQTopic         = "__dlq.errors.topic"
	headerDLQPartition     = "__dlq.errors.partition"
	headerDLQOffset        = "__dlq.errors.offset"
	headerDLQDeliveryCount = "__dlq.errors.delivery.count"
	headerDLQMessage       = "__dlq.errors.message"
)

// dlqRecord reads a dead-letter record's provenance from its headers;
// Partition and Offset stay -1 when a header is missing or not a number.
func dlqRecord(r *targets.Record) verify.DLQRecord {
	d := verify.DLQRecord{Partition: -1, Offset: -1, DLQPartition: r.Partition, DLQOffset: r.Offset}
	var part, off int64 = -1, -1
	for _, h := range r.Headers {
		v := string(h.Value)
		switch h.Key {
		case headerDLQTopic:
			d.SourceTopic = v
		case headerDLQPartition:
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
				part = n
			}
		case headerDLQOffset:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				off = n
			}
		case headerDLQDeliveryCount:
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				d.DeliveryCount = n
			}
		case headerDLQMessage:
			d.Message = v
		}
	}
	if part >= 0 && off >= 0 {
		d.Partition, d.Offset = int32(part), off
	}
	return d
}
