//go:build long

// This file holds the load generator's long-tier tests of its internals
// (see long_test.go): those whose assertions compare measured rates.

package loadgen

import (
	"strings"
	"testing"
	"time"
)

// TestLongWindowWaitsForTheBacklog: a group that forms long after the warm-up
// (1.5 s of input queued, more than twice the window) must not put that
// backlog in the window: the window opens once the consumers have caught
// up, so an open loop's outputs/s inside it read as its input rate (under
// the rule "open once every worker has received records" they read about
// 3.5× it).
func TestLongWindowWaitsForTheBacklog(t *testing.T) {
	t.Parallel()
	const join = 1500 * time.Millisecond
	tgt := newMemTarget()
	tgt.joinDelay = join
	spec := quickSpec(t, "explicit", "transactional")
	spec.WarmupLength = 300 * time.Millisecond
	spec.TestLength = 600 * time.Millisecond
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed, OutDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range res.Modes {
		t.Run(m.Mode.String(), func(t *testing.T) {
			if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
				t.Fatalf("error %q verdict %+v", m.Error, m.Verify)
			}
			if m.WindowStartNs < int64(join) {
				t.Errorf("window opened at %v, before the workers joined at %v", time.Duration(m.WindowStartNs), join)
			}
			if r := m.Throughput / m.InputRate; r > 1.15 || r < 0.8 {
				t.Errorf("outputs/s %.0f at an input rate of %.0f/s (×%.2f): the backlog built before the window landed in it (window [%v, %v))",
					m.Throughput, m.InputRate, r, time.Duration(m.WindowStartNs), time.Duration(m.WindowEndNs))
			}
			for _, n := range m.Notes {
				if strings.Contains(n, "caught up") {
					t.Errorf("note %q: the in-memory target drains a 1.5 s backlog in far less than the limit", n)
				}
			}
		})
	}
}
