package enginetarget

import (
	"testing"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/result"
)

// TestRecordStatesSpelledAsLedgers: each engine record state maps to the
// ledgers' state of the same name, so a ledger written from the engine
// reads back with the verifier's vocabulary.
func TestRecordStatesSpelledAsLedgers(t *testing.T) {
	for _, tc := range []struct {
		engine eng.RecordState
		want   result.RecordState
	}{
		{eng.StateAvailable, result.StateAvailable},
		{eng.StateAcquired, result.StateAcquired},
		{eng.StateAcknowledged, result.StateAcknowledged},
		{eng.StateArchived, result.StateArchived},
		{eng.StateTxPending, result.StateTxPending},
	} {
		if got := recordState(tc.engine); got != tc.want {
			t.Errorf("recordState(%d) = %q, want %q", tc.engine, got, tc.want)
		}
	}
}
