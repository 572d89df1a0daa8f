package enginetarget

import (
	"errors"
	"fmt"
	"testing"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	abortable := func(cause error) error { return fmt.Errorf("%w: %w", eng.ErrAbortableTransaction, cause) }
	for _, tc := range []struct {
		err              error
		fenced           bool
		abortable, stale bool
	}{
		{nil, false, false, false},
		{fmt.Errorf("commit: %w", eng.ErrProducerFenced), true, false, false},
		{fmt.Errorf("%w: %w", eng.ErrProducerFenced, eng.ErrTransactionTimedOut), true, false, false},
		{eng.ErrUnknownMember, true, false, false},
		{eng.ErrFencedMemberEpoch, true, false, false},
		{eng.ErrIllegalGeneration, true, false, false},
		{eng.ErrInvalidRecordState, false, false, false},
		{errors.New("producer fenced"), false, false, false}, // text is never matched
		// A failed share staging leaves the transaction abortable: the
		// worker aborts and goes on; a stale member epoch is counted.
		{abortable(eng.ErrFencedMemberEpoch), false, true, true},
		{abortable(eng.ErrNotOwner), false, true, false},
		{abortable(eng.ErrInvalidRecordState), false, true, false},
		// A member gone or a producer fenced still replaces the worker.
		{abortable(eng.ErrUnknownMember), true, false, false},
		{abortable(eng.ErrIllegalGeneration), true, false, false},
	} {
		got := classify(tc.err)
		if errors.Is(got, targets.ErrFenced) != tc.fenced {
			t.Errorf("classify(%v): fenced %v, want %v", tc.err, !tc.fenced, tc.fenced)
		}
		if errors.Is(got, targets.ErrAbortable) != tc.abortable || errors.Is(got, targets.ErrStaleMemberEpoch) != tc.stale {
			t.Errorf("classify(%v) = %v: abortable %v stale %v, want %v %v", tc.err, got,
				errors.Is(got, targets.ErrAbortable), errors.Is(got, targets.ErrStaleMemberEpoch), tc.abortable, tc.stale)
		}
		if tc.err != nil && !errors.Is(got, tc.err) {
			t.Errorf("classify(%v) lost the original error: %v", tc.err, got)
		}
	}
}
