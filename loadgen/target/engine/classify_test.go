package engine

import (
	"errors"
	"fmt"
	"testing"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/target"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err    error
		fenced bool
	}{
		{nil, false},
		{fmt.Errorf("commit: %w", eng.ErrProducerFenced), true},
		{fmt.Errorf("%w: %w", eng.ErrProducerFenced, eng.ErrTransactionTimedOut), true},
		{eng.ErrUnknownMember, true},
		{eng.ErrFencedMemberEpoch, true},
		{eng.ErrIllegalGeneration, true},
		{eng.ErrInvalidRecordState, false},
		{errors.New("producer fenced"), false}, // text is never matched
	} {
		got := classify(tc.err)
		if errors.Is(got, target.ErrFenced) != tc.fenced {
			t.Errorf("classify(%v): fenced %v, want %v", tc.err, !tc.fenced, tc.fenced)
		}
		if tc.err != nil && !errors.Is(got, tc.err) {
			t.Errorf("classify(%v) lost the original error: %v", tc.err, got)
		}
	}
}
