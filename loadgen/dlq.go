// This file holds the dead-letter side of a mode run (KIP-1191): the DLQ
// topic a workload's errors.deadletterqueue.topic.name gives each mode run,
// and the read-back after the drain that hands every dead-letter record to
// the verifier.

package loadgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
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

// dlqTopic is the dead-letter topic of one mode run: the workload's name,
// then "." and the run's topic prefix, so the name keeps the prefix a
// broker may require of it ("dlq." by default in Kafka). A classic
// consumer group (classic-eos) has no dead-letter queue.
func dlqTopic(spec *workloads.Spec, m vocab.Mode, prefix string) string {
	if spec.DLQTopic == "" || !m.UsesShareGroup() {
		return ""
	}
	return spec.DLQTopic + "." + prefix
}

// dlqSettle bounds how long the read-back waits for dead letters a broker
// writes asynchronously (Kafka's DLQ manager sends them after the archive).
const dlqSettle = 5 * time.Second

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

// writeDLQLedger writes dir's dead-letter ledger (verify.DLQFile).
func writeDLQLedger(dir string, recs []verify.DLQRecord) error {
	f, err := os.Create(filepath.Join(dir, verify.DLQFile))
	if err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	enc := verify.NewEncoder(f)
	for _, d := range recs {
		if err := enc.EncodeDLQ(d); err != nil {
			break
		}
	}
	if err := errors.Join(enc.Flush(), f.Close()); err != nil {
		return fmt.Errorf("loadgen: writing the dead-letter ledger: %w", err)
	}
	return nil
}
