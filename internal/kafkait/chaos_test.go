// This file holds the chaos run: the chaos workload's client-side faults
// against the real broker in every supported mode.

package kafkait

import "testing"

// TestChaosClientFaults runs testdata/chaos-client.yaml (worker crashes at
// every phase, an abort ratio, lock expiry through slow processing, a worker
// stalled past its transaction timeout, a zombie producer) in each supported
// mode, in parallel. classic-eos must show no anomaly at all; implicit,
// explicit and deferred may show duplicates (their at-least-once promise)
// and nothing else. The verdict passes in every mode.
func TestChaosClientFaults(t *testing.T) {
	brokers(t)
	for _, mode := range supportedModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := sharebenchRun(t, "--workload", workload("chaos-client.yaml"), "--modes", mode,
				"--seed", seedFor(t.Name()))
			m := checkMode(t, r, mode)
			if len(m.Faults) == 0 {
				t.Errorf("mode %s: no fault fired", mode)
			}
			if mode == "classic-eos" {
				checkJudged(t, m)
			}
			for _, f := range m.Faults {
				t.Logf("  fault at %.2fs: %s %s", float64(f.AtNs)/1e9, f.Kind, f.Detail)
			}
		})
	}
}
