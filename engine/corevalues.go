// This file ties the engine's exported constants to the values of the
// internal share-partition state machine: the engine converts between the
// two by a plain type conversion (and views []AckType as the core's slice
// without a copy), which is right only while each pair is equal. Each line
// below fails to compile when a pair differs: a constant index outside
// [0, 1) is a compile error.

package engine

import "github.com/sharebench/sharebench/engine/internal/sharepart"

var (
	_ = [1]struct{}{}[int(StateAvailable)-int(sharepart.Available)]
	_ = [1]struct{}{}[int(StateAcquired)-int(sharepart.Acquired)]
	_ = [1]struct{}{}[int(StateAcknowledged)-int(sharepart.Acknowledged)]
	_ = [1]struct{}{}[int(StateArchived)-int(sharepart.Archived)]
	_ = [1]struct{}{}[int(StateTxPending)-int(sharepart.TxPending)]

	_ = [1]struct{}{}[int(ReasonNone)-int(sharepart.ReasonNone)]
	_ = [1]struct{}{}[int(ReasonRejected)-int(sharepart.ReasonRejected)]
	_ = [1]struct{}{}[int(ReasonGap)-int(sharepart.ReasonGap)]
	_ = [1]struct{}{}[int(ReasonLimit)-int(sharepart.ReasonLimit)]
	_ = [1]struct{}{}[int(ReasonLogStart)-int(sharepart.ReasonLogStart)]

	_ = [1]struct{}{}[int(AcquireRecordLimit)-int(sharepart.RecordLimit)]
	_ = [1]struct{}{}[int(AcquireBatchOptimized)-int(sharepart.BatchOptimized)]

	_ = [1]struct{}{}[int(AckGap)-int(sharepart.Gap)]
	_ = [1]struct{}{}[int(AckAccept)-int(sharepart.Accept)]
	_ = [1]struct{}{}[int(AckRelease)-int(sharepart.Release)]
	_ = [1]struct{}{}[int(AckReject)-int(sharepart.Reject)]
	_ = [1]struct{}{}[int(AckRenew)-int(sharepart.Renew)]
)
