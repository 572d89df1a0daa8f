// This file holds the kinds of system under test a run drives.

package vocab

import "fmt"

// Target is the kind of system under test a run drives.
type Target string

// The target kinds.
const (
	// TargetEngine is the reference engine, in process.
	TargetEngine Target = "engine"
	// TargetKafka is a Kafka cluster (or anything that speaks its
	// protocol: sharebench serve, kfake) through franz-go.
	TargetKafka Target = "kafka"
)

// Targets lists the target kinds. The slice is the caller's.
func Targets() []Target { return []Target{TargetEngine, TargetKafka} }

// ParseTarget returns the target kind named s, or an error naming the valid
// ones.
func ParseTarget(s string) (Target, error) {
	for _, t := range Targets() {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("vocab: unknown target %q (valid: %s, %s)", s, TargetEngine, TargetKafka)
}

// String returns the target kind's name.
func (t Target) String() string { return string(t) }
