package enginetarget

import (
	"testing"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/vocab"
)

// TestRecordStatesSpelledAsLedgers: each engine record state maps to the
// ledgers' state of the same name, so a ledger written from the engine
// reads back with the verifier's vocabulary.
func TestRecordStatesSpelledAsLedgers(t *testing.T) {
	for _, tc := range []struct {
		engine eng.RecordState
		want   vocab.RecordState
	}{
		{eng.StateAvailable, vocab.StateAvailable},
		{eng.StateAcquired, vocab.StateAcquired},
		{eng.StateAcknowledged, vocab.StateAcknowledged},
		{eng.StateArchived, vocab.StateArchived},
		{eng.StateTxPending, vocab.StateTxPending},
	} {
		if got := recordState(tc.engine); got != tc.want {
			t.Errorf("recordState(%d) = %q, want %q", tc.engine, got, tc.want)
		}
	}
}
