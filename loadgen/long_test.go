//go:build long

// This file holds the load generator's long tier (go test -tags long -run
// '^TestLong' ./loadgen/, which .ci/run runs on its own): the checkpoint
// model's scenario battery, minutes of runs on 2 cores, and the tests whose
// assertions compare measured rates, which a loaded machine can break
// without a bug and which the default suite therefore leaves out.

package loadgen_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

func TestLongCheckpointModel(t *testing.T) {
	for _, sinkName := range checkpointSinks(t) {
		t.Run(sinkName, func(t *testing.T) {
			for _, c := range checkpointCases() {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					runCheckpointCase(t, sinkName, c)
				})
			}
		})
	}
}

// TestLongCheckpointMaxRecords measures the checkpoint.maxRecords mitigation
// against its absence, side by side: under dwell without RENEW, a bound of
// 100 records per checkpoint at 2000 records/s ends most checkpoints well
// inside the lock, so far fewer records are written twice. It cannot make
// them none: the last checkpoint before a quiet spell holds fewer records
// than the bound and waits for its interval.
func TestLongCheckpointMaxRecords(t *testing.T) {
	t.Parallel()
	dup := map[int]int64{}
	for _, limit := range []int{0, 100} {
		c := checkpointCase{name: fmt.Sprintf("max-records-%d", limit), mode: vocab.Explicit, want: duplicates, edit: func(s *workloads.Spec) {
			s.ProducerRate = 2000
			s.CheckpointInterval = 2500 * time.Millisecond
			s.LockDuration = time.Second
			s.TransactionTimeout = 10 * time.Second
			s.DeliveryLimit = 3
			s.Checkpoint.Renew = false
			s.Checkpoint.MaxRecords = limit
		}}
		v := runCheckpointCase(t, "memory", c)
		dup[limit] = v.Counts[vocab.KindDuplicate]
	}
	if !(dup[100]*4 < dup[0]) {
		t.Errorf("duplicates with maxRecords 100: %d, without: %d; want under a quarter of them", dup[100], dup[0])
	}
}
