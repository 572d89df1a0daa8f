// This file tests what the scenario scripts do not express: the history of
// records below SPSO with and without KeepHistory, and config validation.
// The KIP-932 record lifecycle of docs/design.md §3.2 (every transition,
// every rule under it, every error case) is the scripts under testdata/.

package sharepart_test

import (
	"testing"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

func TestRecordHistory(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{true, false} {
		cfg := testConfig()
		cfg.KeepHistory = keep
		sp, _ := sharepart.New(cfg, 0)
		sp.Acquire(0, 1, 3, 3, nil, nil)
		if err := sp.Acknowledge(0, 1, []sharepart.Batch{b(0, 0, Accept), b(1, 1, Reject), b(2, 2, Release)}); err != nil {
			t.Fatal(err)
		}
		sp.Acquire(0, 1, 1, 3, nil, nil)
		if err := sp.Acknowledge(0, 1, []sharepart.Batch{b(2, 2, Accept)}); err != nil {
			t.Fatal(err)
		}
		for off, want := range map[int64]string{0: "ACKNOWLEDGED c1", 1: "ARCHIVED c1 rejected", 2: "ACKNOWLEDGED c2"} {
			ri := sp.Record(off)
			if ri.Known != keep {
				t.Errorf("keep=%v record %d: Known = %v", keep, off, ri.Known)
			}
			if !ri.State.Terminal() {
				t.Errorf("keep=%v record %d below SPSO is %v", keep, off, ri.State)
			}
			if got := describe(ri); keep && got != want {
				t.Errorf("record %d: got %q, want %q", off, got, want)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []sharepart.Config{
		{LockDuration: 0, DeliveryLimit: 5, MaxRecordLocks: 10},
		{LockDuration: sec, DeliveryLimit: 0, MaxRecordLocks: 10},
		{LockDuration: sec, DeliveryLimit: 1 << 16, MaxRecordLocks: 10},
		{LockDuration: sec, DeliveryLimit: 5, MaxRecordLocks: 0},
	} {
		if _, err := sharepart.New(c, 0); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", c)
		}
	}
}
