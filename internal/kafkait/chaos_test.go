// This file holds the chaos run: the chaos workload's client-side faults
// against the real broker in every supported mode.

package kafkait

import (
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/reports"
)

// TestChaosClientFaults runs testdata/chaos-client.yaml (worker crashes at
// every phase, an abort ratio, lock expiry through slow processing, a worker
// stalled past its transaction timeout, a zombie producer) in each supported
// mode, in parallel. classic-eos must show no anomaly at all; implicit,
// explicit and deferred may show duplicates (their at-least-once promise)
// and nothing else. The verdict passes in every mode, except that a
// classic group a broker keeps rebalancing may not drain in time: then the
// verdict must say INCONCLUSIVE (exit 5), never PASS, and still show no
// forbidden anomaly.
func TestChaosClientFaults(t *testing.T) {
	brokers(t)
	for _, mode := range supportedModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := sharebenchRun(t, "--workload", workload("chaos-client.yaml"), "--modes", mode,
				"--seed", seedFor(t.Name()))
			if mode == "classic-eos" && r.code == reports.ExitInconclusive && r.res != nil && len(r.res.Modes) == 1 {
				m := r.res.Modes[0]
				v := m.Verify
				if !m.DrainTimedOut || v == nil || v.Verdict != verify.VerdictInconclusive || v.Pass || len(v.Forbidden) > 0 {
					t.Fatalf("classic-eos exit 5: drain timed out %v, verdict %+v; want an unfinished drain judged INCONCLUSIVE with no forbidden anomaly", m.DrainTimedOut, v)
				}
				for kind, n := range v.Counts {
					if n > 0 && !slices.Contains(informational, kind) {
						t.Errorf("classic-eos: %d %s", n, kind)
					}
				}
				t.Logf("classic-eos did not drain in %v (the group kept rebalancing): INCONCLUSIVE with %d unjudged, as it must be", time.Duration(m.DrainNs), v.Unjudged)
				return
			}
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
