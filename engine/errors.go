// This file holds the engine's sentinel errors. Check them with errors.Is:
// the engine wraps them with the detail of each failure.

package engine

import (
	"errors"
	"fmt"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// Errors of acknowledgement, staging, fetching and producing.
var (
	// ErrInvalidRecordState: the record is not in a state that allows the
	// request (not acquired, already terminal, TX_PENDING).
	ErrInvalidRecordState = errors.New("engine: invalid record state")
	// ErrNotOwner: the record is acquired by another member. It matches
	// ErrInvalidRecordState too, as Kafka answers INVALID_RECORD_STATE for
	// a record another member holds.
	ErrNotOwner = fmt.Errorf("%w: the record is acquired by another member", ErrInvalidRecordState)
	// ErrOffsetOutOfRange: an ack beyond what was ever acquired, or a fetch
	// outside the log (a fetch error matches ErrLogOffsetOutOfRange too).
	ErrOffsetOutOfRange = errors.New("engine: offset out of range")
	// ErrInvalidAckType: an unknown acknowledgement type.
	ErrInvalidAckType = errors.New("engine: invalid acknowledgement type")
	// ErrInvalidRequest: a malformed request, or RELEASE/RENEW staged in a
	// transaction.
	ErrInvalidRequest = errors.New("engine: invalid request")
	// ErrLogOffsetOutOfRange: a fetch outside [log start, high watermark].
	ErrLogOffsetOutOfRange = errors.New("engine: log offset out of range")
	// ErrOutOfOrderSequence: an idempotent producer skipped a sequence.
	ErrOutOfOrderSequence = errors.New("engine: out of order sequence number")
	// ErrInvalidRecord: a produce request the log cannot append (no
	// records, keys and values that do not pair up).
	ErrInvalidRecord = errors.New("engine: invalid record")
)

// init makes the internal share-partition state machine and partition log
// return the engine's sentinels above, so errors.Is matches the names a
// caller can import. It runs before any engine exists.
func init() {
	sharepart.ErrInvalidRecordState = ErrInvalidRecordState
	sharepart.ErrNotOwner = ErrNotOwner
	sharepart.ErrOutOfRange = ErrOffsetOutOfRange
	sharepart.ErrInvalidAckType = ErrInvalidAckType
	sharepart.ErrInvalidRequest = ErrInvalidRequest
	plog.ErrOffsetOutOfRange = ErrLogOffsetOutOfRange
	plog.ErrOutOfOrderSequence = ErrOutOfOrderSequence
	plog.ErrInvalidRecord = ErrInvalidRecord
}

// Errors of the engine itself.
var (
	ErrUnknownTopicOrPartition = errors.New("engine: unknown topic or partition")
	// ErrUnknownTopicID: no live topic has the id (TopicByID); the topic
	// was deleted, or never existed.
	ErrUnknownTopicID = errors.New("engine: unknown topic id")
	// ErrInvalidPartitions: a partition count CreatePartitions cannot
	// grow the topic to.
	ErrInvalidPartitions = errors.New("engine: invalid partition count")
	ErrTopicExists       = errors.New("engine: topic already exists")
	ErrUnknownGroup      = errors.New("engine: unknown group")
	ErrUnknownMember     = errors.New("engine: unknown member id")
	ErrFencedMemberEpoch = errors.New("engine: fenced member epoch")
	ErrIllegalGeneration = errors.New("engine: illegal generation")
	// ErrProducerFenced: a newer producer with the same transactional id
	// was initialised, or the transaction was aborted for its timeout and
	// the epoch bumped. The producer must be replaced.
	ErrProducerFenced = errors.New("engine: producer fenced")
	// ErrInvalidTxnState: the call does not fit the transaction's state
	// (commit without begin, produce outside a transaction, ...).
	ErrInvalidTxnState = errors.New("engine: invalid transaction state")
	// ErrAbortableTransaction: a staging call of the open transaction
	// failed (not owner, lock expired, fenced member epoch, invalid
	// state, a failed write), so the transaction can only abort: every
	// later Produce, staging and Commit fails with it, wrapping the cause
	// (errors.Is matches both), until Abort. Kafka's producer enters the
	// same state after a failed TxnOffsetCommit.
	ErrAbortableTransaction = errors.New("engine: transaction is abortable; only abort is allowed")
	// ErrTransactionTimedOut: the coordinator aborted the transaction
	// because it outlived its timeout.
	ErrTransactionTimedOut = errors.New("engine: transaction timed out")
	ErrInvalidConfig       = errors.New("engine: invalid configuration")
	ErrClosed              = errors.New("engine: closed")
	// ErrGroupTypeMismatch: a share group id used as a classic group, or the
	// reverse.
	ErrGroupTypeMismatch = errors.New("engine: group id is in use by another group type")
)

// Errors of durability (WithDataDir).
var (
	// ErrCrashed: the engine crashed (Crash, an injected crash, or a
	// journal I/O error); every call fails with it until Restart.
	ErrCrashed = errors.New("engine: crashed; restart it from its data directory")
	// ErrInjectedCrash: a hook returns an error wrapping it to crash the
	// engine at that hook point, after what was logged so far is durable
	// (see Hook). Deterministic crash points for tests and faults.
	ErrInjectedCrash = errors.New("engine: injected crash")
	// ErrInjectedCoordinatorCrash: a hook returns an error wrapping it at a
	// transaction hook point (HookTxnOngoing, HookTxnPrepared,
	// HookTxnMarker, HookTxnCompleted) to crash the transaction
	// coordinator alone there: what was logged so far is made durable and
	// the transaction's coordinator shard is reloaded from the transaction
	// log (decided transactions complete), while partitions stay up. The
	// producer sees its call succeed, as a client that retries against the
	// new coordinator would.
	ErrInjectedCoordinatorCrash = errors.New("engine: injected coordinator crash")
	// ErrNoDataDir: a durability operation on an engine without a data
	// directory.
	ErrNoDataDir = errors.New("engine: no data directory (WithDataDir)")
	// ErrNotDataDir: the directory is not a sharebench data directory.
	ErrNotDataDir = errors.New("engine: not a sharebench data directory")
	// ErrDataDirVersion: the data directory was written by a newer format.
	ErrDataDirVersion = errors.New("engine: data directory written by a newer format version")
	// ErrCorruptLog: a log in the data directory is corrupt where it is
	// not a torn tail (the error names the file and the offset), or lost
	// records it had synced: a meta log without a topic whose partition
	// log holds records (the error names those partition logs).
	ErrCorruptLog = errors.New("engine: corrupt log")
)
