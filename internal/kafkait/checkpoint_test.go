// This file holds the checkpoint model on a real broker: what today's Kafka
// gives a stream framework's source (the sink commits, then explicit acks).

package kafkait

import "testing"

// TestCheckpointModelOnKafka runs the checkpoint workload's explicit half
// against the broker with the in-process two-phase sink: on Kafka each poll
// is its own checkpoint (the next poll releases what is unacknowledged), the
// sink commits first, then the acks. With no faults every input must reach
// the sink exactly once: the verifier reads the sink back and must pass with
// a finished drain and nothing the mode does not allow.
func TestCheckpointModelOnKafka(t *testing.T) {
	brokers(t)
	r := sharebenchRun(t, "--workload", "checkpoint", "--modes", "explicit",
		"--duration", "3s", "--rate", "500", "--seed", seedFor(t.Name()))
	m := checkMode(t, r, "explicit")
	if n := m.Verify.Counts["duplicate"]; n != 0 {
		t.Errorf("%d duplicates in the sink without any fault, want 0", n)
	}
}
