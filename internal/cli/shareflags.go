// This file holds the share-group flags of `sharebench run` that override
// the workload's: share.acquire.mode (KIP-1206) and the dead-letter queue
// (KIP-1191), named after Kafka's configs; and the list of knob names
// --knobs takes.

package cli

import (
	"strings"

	"github.com/spf13/pflag"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/workloads"
)

// knobList names the knobs --knobs takes one by one (engine.KnobNames
// after "safe" and "draft").
var knobList = strings.Join(eng.KnobNames()[2:], ", ")

type shareFlags struct {
	acquireMode   string
	dlqTopic      string
	dlqCopyRecord bool
}

func (s *shareFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.acquireMode, "acquire-mode", "", "share.acquire.mode of every share consumer: batch_optimized (Kafka's default: may acquire whole batches past the poll's max and the in-flight window) or record_limit (exact) (default: the workload's, else the target's)")
	fs.StringVar(&s.dlqTopic, "dlq-topic", "", "errors.deadletterqueue.topic.name: the share group's dead-letter topic; each mode run gets NAME.<run prefix>, which the verifier reads back (dlq-missing, dlq-duplicate) (default: the workload's; \"\" with the flag: none)")
	fs.BoolVar(&s.dlqCopyRecord, "dlq-copy-record", false, "errors.deadletterqueue.copy.record.enable: dead-letter records carry the source record's key and value (default: the workload's)")
}

// apply writes the flags given into spec; a bad value is a usage error
// naming the flag.
func (s *shareFlags) apply(fs *pflag.FlagSet, spec *workloads.Spec) error {
	if fs.Changed("acquire-mode") {
		switch s.acquireMode {
		case workloads.AcquireBatchOptimized, workloads.AcquireRecordLimit:
			spec.AcquireMode = s.acquireMode
		default:
			return usageErr("--acquire-mode %q: want %s (Kafka's default) or %s", s.acquireMode, workloads.AcquireBatchOptimized, workloads.AcquireRecordLimit)
		}
	}
	if fs.Changed("dlq-topic") {
		probe := *spec
		probe.DLQTopic, probe.DLQCopyRecord = s.dlqTopic, false
		if err := probe.Validate(); err != nil && s.dlqTopic != "" && spec.Validate() == nil {
			return usageErr("--dlq-topic %q: %v", s.dlqTopic, err)
		}
		spec.DLQTopic = s.dlqTopic
		if s.dlqTopic == "" {
			spec.DLQCopyRecord = false
		}
	}
	if fs.Changed("dlq-copy-record") {
		if s.dlqCopyRecord && spec.DLQTopic == "" {
			return usageErr("--dlq-copy-record needs a dead-letter topic: add --dlq-topic NAME (like dlq.sharebench) or set errors.deadletterqueue.topic.name in the workload")
		}
		spec.DLQCopyRecord = s.dlqCopyRecord
	}
	return nil
}
