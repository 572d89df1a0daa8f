package kafkatarget

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/loadgen/targets"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err    error
		fenced bool
	}{
		{nil, false},
		{fmt.Errorf("commit: %w", kerr.ProducerFenced), true},
		{fmt.Errorf("commit: %w", kerr.InvalidProducerEpoch), true},
		{fmt.Errorf("offsets: %w", kerr.IllegalGeneration), true},
		{kerr.UnknownMemberID, true},
		{kerr.FencedMemberEpoch, true},
		{fmt.Errorf("commit: %w", kerr.RebalanceInProgress), false},
		{errors.New("the producer was fenced, says some text"), false}, // text is never matched
		{fmt.Errorf("x: %w", ErrTxnAborted), false},
	} {
		got := classify(tc.err)
		if errors.Is(got, targets.ErrFenced) != tc.fenced {
			t.Errorf("classify(%v): fenced %v, want %v", tc.err, !tc.fenced, tc.fenced)
		}
		if tc.err != nil && !errors.Is(got, tc.err) {
			t.Errorf("classify(%v) lost the original error: %v", tc.err, got)
		}
	}
}
