// This file holds the dead-letter side of a mode run (KIP-1191): the DLQ
// topic a workload's errors.deadletterqueue.topic.name gives each mode run,
// and the dead-letter ledger a run writes beside the others (the ledger's
// gathering reads the topic back for the verifier).

package loadgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
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
