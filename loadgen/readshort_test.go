// This file checks that a run whose readers stop short of the end offsets
// the target reports is judged on incomplete evidence.

package loadgen

import (
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/verify"
)

// TestRunReadsShortInconclusive: when the readers cannot reach the end
// offsets the target reports, the evidence is incomplete: the verdict is
// INCONCLUSIVE, never PASS, and says which reads fell short.
func TestRunReadsShortInconclusive(t *testing.T) {
	t.Parallel()
	tgt := newMemTarget()
	tgt.endsAhead = 1
	spec := quickSpec(t, "explicit")
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed, readStall: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m := res.Modes[0]
	if m.Error != "" || m.Verify == nil {
		t.Fatalf("mode: error %q verdict %+v", m.Error, m.Verify)
	}
	if m.Verify.Verdict != verify.VerdictInconclusive {
		t.Errorf("verdict %s with every read short of its end offsets, want %s (counts %v)", m.Verify.Verdict, verify.VerdictInconclusive, m.Verify.Counts)
	}
	notes := strings.Join(m.Verify.Notes, "\n")
	for _, want := range []string{"the read_committed read of", "the read_uncommitted read of", "stopped short of the end offsets"} {
		if !strings.Contains(notes, want) {
			t.Errorf("verdict notes do not say %q:\n%s", want, notes)
		}
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "the tail reader stopped short of the end offsets") {
		t.Errorf("mode notes do not say the tail reader stopped short: %v", m.Notes)
	}
}
