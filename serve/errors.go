// This file maps engine errors onto Kafka error codes.

package serve

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/engine"
)

// errCode is the Kafka error code of an engine error (0 for nil).
func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return ke.Code
	case errors.Is(err, engine.ErrUnknownTopicOrPartition):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, engine.ErrUnknownTopicID):
		return kerr.UnknownTopicID.Code
	case errors.Is(err, engine.ErrInvalidPartitions):
		return kerr.InvalidPartitions.Code
	case errors.Is(err, engine.ErrTopicExists):
		return kerr.TopicAlreadyExists.Code
	case errors.Is(err, engine.ErrFencedMemberEpoch):
		return kerr.FencedMemberEpoch.Code
	case errors.Is(err, engine.ErrUnknownMember):
		return kerr.UnknownMemberID.Code
	case errors.Is(err, engine.ErrIllegalGeneration):
		return kerr.IllegalGeneration.Code
	case errors.Is(err, engine.ErrGroupTypeMismatch):
		return kerr.InconsistentGroupProtocol.Code
	case errors.Is(err, engine.ErrUnknownGroup):
		return kerr.GroupIDNotFound.Code
	case errors.Is(err, engine.ErrTransactionTimedOut), errors.Is(err, engine.ErrProducerFenced):
		return kerr.ProducerFenced.Code
	case errors.Is(err, engine.ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, engine.ErrNotOwner), errors.Is(err, engine.ErrInvalidRecordState):
		return kerr.InvalidRecordState.Code
	case errors.Is(err, engine.ErrInvalidAckType), errors.Is(err, engine.ErrInvalidRequest):
		return kerr.InvalidRequest.Code
	case errors.Is(err, engine.ErrOffsetOutOfRange), errors.Is(err, engine.ErrLogOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, engine.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, engine.ErrInvalidConfig):
		return kerr.InvalidConfig.Code
	case errors.Is(err, engine.ErrGroupNotEmpty):
		return kerr.NonEmptyGroup.Code
	case errors.Is(err, engine.ErrTransactionPending):
		// Retriable: the transaction's marker resolves the staged records.
		return kerr.ConcurrentTransactions.Code
	case errors.Is(err, engine.ErrCrashed), errors.Is(err, engine.ErrClosed):
		// Retriable: a client retries until the engine is back.
		return kerr.CoordinatorLoadInProgress.Code
	}
	return kerr.UnknownServerError.Code
}

// msg is the error message of err for responses that carry one.
func msg(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// partErrCode is errCode for the partition APIs (Produce, Fetch,
// ListOffsets): while the engine restarts they answer NOT_LEADER_OR_FOLLOWER,
// the error clients retry after a metadata refresh, as after a leader
// change.
func partErrCode(err error) int16 {
	if errors.Is(err, engine.ErrCrashed) || errors.Is(err, engine.ErrClosed) {
		return kerr.NotLeaderForPartition.Code
	}
	return errCode(err)
}
