// This file holds the vocabulary both machines speak to their drivers:
// the actions a machine asks for (Op, Action) and the outcomes the driver
// hands back (Result).

package pipeline

import "time"

// Op is what an action asks the worker to do.
type Op uint8

// The actions. Each names one call on the target (or a pause); the records
// an action carries are the ones the call is about.
const (
	// OpPoll polls up to Max records, waiting at most Timeout. In implicit
	// mode a successful poll accepts Recs, the previous poll's records.
	OpPoll Op = iota + 1
	// OpProcess spends the workload's processing time on Recs (the caller
	// samples it and adds any slow-processing delay in force).
	OpProcess
	// OpBegin opens a producer transaction.
	OpBegin
	// OpProduce writes one output per record of Recs (in the open
	// transaction, if there is one). Recs may be empty (every record of
	// the poll was rejected): nothing to write, and the call succeeds.
	OpProduce
	// OpStageAccept and OpStageReject add Recs' acks (share acks, or the
	// consumed offsets in classic-eos mode) to the open transaction.
	OpStageAccept
	OpStageReject
	// OpAccept, OpReject and OpRelease acknowledge Recs and commit the
	// acknowledgements (explicit mode, and deferred mode after its output
	// transaction committed). The calls of one poll's acknowledgement form
	// a group: First opens it, Last closes it; the group succeeded when
	// its Last call did. Since is when its records were polled. Released
	// records got no output: they are redelivered.
	OpAccept
	OpReject
	OpRelease
	// OpReleaseHeld releases Recs after an abort (deferred mode), so they
	// are redelivered at once rather than at lock expiry. Its outcome does
	// not change what comes next.
	OpReleaseHeld
	// OpRenew extends Recs' locks (deferred mode, before a commit that
	// comes late in the lock; or on purpose at Inputs.RenewRatio). Its
	// outcome does not change what comes next.
	OpRenew
	// OpCommit commits the open transaction, which opened at Since.
	OpCommit
	// OpAbort aborts the open transaction; Cause is why (nil: the abort
	// ratio chose it).
	OpAbort
	// OpWait does nothing until Until: a cut-off from the target, a
	// stall, or the pause after an error (Retry).
	OpWait
	// OpReplace ends this worker: it was fenced (or its member left the
	// group) and a new incarnation takes its place. Aborted is set when
	// the fencing aborted its open transaction.
	OpReplace
	// OpClose leaves cleanly; in implicit mode the close accepts Recs, the
	// last poll's records.
	OpClose
	// OpExit: the loop is over (after OpReplace, OpClose, or a cancelled
	// call).
	OpExit
	// OpAbandon: the worker is stalled past the stop, a process that hangs
	// until it is killed: the caller drops its client without a word and
	// leaves its open transaction to the coordinator's timeout, which is
	// what ends a hung producer's transaction on a real cluster.
	OpAbandon

	// The checkpoint model's actions (Config.Checkpoint). OpBarrier: the
	// open checkpoint's barrier has come (no call; Since is its first
	// record). OpPreCommit prepares the sink transaction of checkpoint
	// number Checkpoint holding one output per record of Recs (none: no
	// sink transaction). OpSnapshot stores the completed checkpoint.
	// OpNotify: the framework's notify-complete (no call). OpCommitSink
	// and OpAbortSink commit and roll back the checkpoint's sink
	// transaction (their outcomes change what comes next only where
	// CheckpointEnd says). OpEndCheckpoint: the checkpoint is over, as End
	// says (no call). In this model OpCommit commits the checkpoint's
	// share-ack transaction, OpAccept and OpReject its explicit acks,
	// OpReleaseHeld gives a failed checkpoint's records back, OpRenew
	// renews one held poll's locks, and a wait with Slow set is the
	// slow-checkpoint delay before the snapshot.
	OpBarrier
	OpPreCommit
	OpSnapshot
	OpNotify
	OpCommitSink
	OpAbortSink
	OpEndCheckpoint
)

var opNames = [...]string{"?", "poll", "process", "begin", "produce", "stage-accept", "stage-reject",
	"accept", "reject", "release", "release-held", "renew", "commit", "abort", "wait", "replace", "close", "exit",
	"abandon", "barrier", "precommit", "snapshot", "notify", "commit-sink", "abort-sink", "end-checkpoint"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "?"
}

// Action is one thing the worker does next.
type Action[R any] struct {
	Op   Op
	Recs []R
	// Poll.
	Max     int
	Timeout time.Duration
	// Wait.
	Until time.Time
	Retry bool // the pause after a failed call
	// Acknowledgement groups and commits.
	Since       time.Time
	First, Last bool
	// Abort: why (nil: on purpose); Replace: the fencing aborted the open
	// transaction (Aborted), or the worker's begins failed for
	// Config.BeginGiveUp (Wedged).
	Cause   error
	Aborted bool
	Wedged  bool
	// Checkpoint model: the checkpoint the action belongs to, how it
	// ended (OpEndCheckpoint), and whether a wait is the slow-checkpoint
	// delay.
	Checkpoint int64
	End        CheckpointEnd
	Slow       bool
}

// Result is the outcome of an action's call.
type Result[R any] struct {
	// Recs are a poll's records.
	Recs []R
	// At is when the call returned (for a poll: when the records were
	// polled, which dates the transaction they open).
	At  time.Time
	Err error
	// Fenced says Err means the worker must be replaced (its producer was
	// fenced, its member left the group).
	Fenced bool
	// Canceled says the caller's context ended: the loop is over.
	Canceled bool
}

// Rand is the random stream a machine draws its choices from.
type Rand interface{ Float64() float64 }
