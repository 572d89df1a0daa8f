// This file checks that Check names the rule a broken share partition
// breaks, so callers (the simulator) tell rules apart by Rule, not by the
// message.

package sharepart

import (
	"errors"
	"testing"
	"time"
)

type noGaps struct{}

func (noGaps) IsGap(int64) bool              { return false }
func (noGaps) BatchEnd(o int64, _ int) int64 { return o }

func TestCheckNamesTheRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(sp *SharePartition)
		want  Rule
	}{
		{"an owner on an AVAILABLE run", func(sp *SharePartition) { sp.runs[sp.head].state, sp.runs[sp.head].owner = Available, 3 }, RuleOwner},
		{"an ACQUIRED run without an owner", func(sp *SharePartition) { sp.runs[sp.head].owner = 0 }, RuleOwner},
		{"a TX_PENDING run without its producer", func(sp *SharePartition) {
			sp.runs[sp.head].state, sp.runs[sp.head].owner, sp.runs[sp.head].pid = TxPending, 0, 0
		}, RuleTxPendingProducer},
		{"SPSO on a terminal record", func(sp *SharePartition) { sp.runs[sp.head].state, sp.runs[sp.head].owner = Acknowledged, 0 }, RuleSPSO},
		{"runs that stop short of the window end", func(sp *SharePartition) { sp.end++ }, RuleRuns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := New(Config{LockDuration: 10 * time.Second, DeliveryLimit: 3, MaxRecordLocks: 10}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := sp.Acquire(0, 7, 4, 4, noGaps{}, nil); len(got) == 0 {
				t.Fatal("nothing acquired")
			}
			if err := sp.Check(); err != nil {
				t.Fatalf("Check before breaking it: %v", err)
			}
			tc.spoil(sp)
			var ce *CheckError
			if err := sp.Check(); !errors.As(err, &ce) || ce.Rule != tc.want {
				t.Fatalf("Check = %v, want a CheckError of rule %d", err, tc.want)
			}
		})
	}
}
