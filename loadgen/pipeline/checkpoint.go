// This file holds CheckpointMachine, the checkpoint model (design §5.1)
// as its own machine: the loop of a stream-processing framework's source
// task that writes its outputs to an
// external two-phase sink and commits them together with its share
// acknowledgements at checkpoints. One checkpoint, at its barrier (every
// Interval after its first record, or once it holds MaxRecords records):
//
//	barrier                                       crash: before-barrier
//	stage the acks (transactional, staging at the barrier)
//	pre-commit the sink transaction               crash: after-precommit
//	snapshot (the checkpoint is complete)         crash: after-snapshot
//	notify-complete                               crash: after-notify
//	commit one side (SinkFirst says which)        crash: between-commits
//	commit the other
//
// A failure before the snapshot, or a snapshot later than Timeout after
// the barrier, fails the checkpoint: both sides abort and the held
// records go back.

package pipeline

import (
	"fmt"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// CheckpointConfig configures the checkpoint model (Mode Transactional:
// the acks commit in a producer transaction; Mode Explicit: they are
// explicit acknowledgements).
type CheckpointConfig struct {
	// Interval is the time from a checkpoint's first record to its
	// barrier; MaxRecords brings the barrier earlier once the checkpoint
	// holds that many records (0: no bound).
	Interval   time.Duration
	MaxRecords int
	// Timeout fails a checkpoint whose snapshot comes later than this
	// after its barrier.
	Timeout time.Duration
	// StageAtAcquisition stages each poll's acks in the transaction as it
	// is processed (their locks end; the transaction timeout holds them)
	// rather than at the barrier. Transactional mode only.
	StageAtAcquisition bool
	// Renew renews the locks of held, unstaged records once half of the
	// lock has passed, so they are still the worker's at the barrier.
	Renew bool
	// SinkFirst commits the sink before the acks (else the acks first).
	SinkFirst bool
	// PerPoll takes the barrier after every poll: on a target whose next
	// poll releases what the last one left unacknowledged, each poll is
	// its own checkpoint.
	PerPoll bool
	// Key names a record (its partition and offset; it is given an R).
	// With it, a record a poll delivers again while the open checkpoint
	// holds it replaces the held copy, whose lock is gone (it expired, or
	// the share partition failed over): the checkpoint then stages,
	// acknowledges and writes it once. Without it the checkpoint holds
	// both deliveries.
	Key func(record any) RecordKey
}

// RecordKey names a record: its partition and offset.
type RecordKey struct {
	Partition int32
	Offset    int64
}

// CheckpointEnd is how a checkpoint ended (the caller's books).
type CheckpointEnd uint8

// The ends of a checkpoint.
const (
	// CheckpointCommitted: both sides committed.
	CheckpointCommitted CheckpointEnd = iota + 1
	// CheckpointSinkLost: the acks committed and the sink commit failed
	// (acks first): the outputs are lost.
	CheckpointSinkLost
	// CheckpointAcksLost: the sink committed and the acks did not (sink
	// first): the records come back and are written again.
	CheckpointAcksLost
	// CheckpointAcksFailed: explicit acks first, some failed; the sink
	// committed anyway (the acks that landed cannot be taken back).
	CheckpointAcksFailed
	// CheckpointRolledBack: transactional acks first, their transaction
	// aborted; the sink rolled back.
	CheckpointRolledBack
	// CheckpointFailed: the checkpoint failed before its snapshot
	// (Action.Cause says why); both sides abort.
	CheckpointFailed
)

var endNames = [...]string{"?", "committed", "sink-lost", "acks-lost", "acks-failed", "rolled-back", "failed"}

func (e CheckpointEnd) String() string {
	if int(e) < len(endNames) {
		return endNames[e]
	}
	return "?"
}

// cpBatch is one poll's records held for the barrier.
type cpBatch[R any] struct {
	recs    []R
	renewAt time.Time // when their locks were last taken or renewed
}

// CheckpointMachine is one source task's loop in the checkpoint model. It
// is not safe for concurrent use; one goroutine (or one simulator) drives
// it.
type CheckpointMachine[R any] struct {
	core[R]
	cc    *CheckpointConfig
	steps []step[*CheckpointMachine[R], R]
	rows  []transition[*CheckpointMachine[R], R]

	// The open checkpoint.
	n          int64     // its number (from 1)
	start      time.Time // its first record
	batches    []cpBatch[R]
	nHeld      int
	ckAcc      []R  // processed and accepted (an output each)
	ckRej      []R  // rejected on purpose
	staged     bool // the acks are in the open transaction
	barrierAt  time.Time
	slowWaited bool
	renewNext  int
	renewAt    time.Time // the Now of the renew in flight

	// The poll being processed and its records' fates.
	poll, pAcc, pRej []R
	// again holds the keys of the poll being processed
	// (dropRedelivered), reused from poll to poll.
	again map[RecordKey]struct{}

	// Staging in progress.
	sAcc, sRej []R
	atAcq      bool // staging at acquisition (else at the barrier)

	// The completed checkpoint's acks.
	kAcc, kRej []R
	ackErr     error
	ackFenced  bool

	// How the checkpoint ends, and a failure's release in progress.
	failCause  error
	failFenced bool
	relNext    int
	end        CheckpointEnd
	endFenced  bool
}

// NewCheckpointMachine returns the checkpoint model of a worker of
// cfg.Mode (Transactional or Explicit) drawing from rng; cfg.Checkpoint
// must be set.
func NewCheckpointMachine[R any](cfg Config, rng Rand) *CheckpointMachine[R] {
	if cfg.Checkpoint == nil {
		panic("pipeline: NewCheckpointMachine without Config.Checkpoint")
	}
	return &CheckpointMachine[R]{core: newCore[R](cfg, rng), cc: cfg.Checkpoint,
		steps: checkpointSteps[R](), rows: checkpointRows[R]()}
}

// Checkpoint is the number of the worker's open checkpoint (0 before its
// first).
func (m *CheckpointMachine[R]) Checkpoint() int64 { return m.n }

// Next returns the worker's next action.
func (m *CheckpointMachine[R]) Next(in Inputs) Action[R] { return next(m, &m.core, m.steps, in) }

// Done takes the outcome of the action Next returned last, and returns the
// crash phase the worker crossed by it ("" for none): a crash scheduled
// for that phase strikes now, before the next action.
func (m *CheckpointMachine[R]) Done(res Result[R]) vocab.Phase {
	return apply(m, &m.core, m.rows, m.last, res)
}

// skip goes on from a step with nothing to send as if its call op had
// succeeded.
func (m *CheckpointMachine[R]) skip(op Op) { apply(m, &m.core, m.rows, op, Result[R]{}) }

// checkpointSteps is what each state asks for.
func checkpointSteps[R any]() []step[*CheckpointMachine[R], R] {
	type M = *CheckpointMachine[R]
	s := make([]step[M, R], stCount)
	s[stTop] = M.stepTop
	s[stCpProcess] = M.stepProcess
	s[stCpBegin] = M.stepBegin
	s[stCpStageAccept] = M.stepStageAccept
	s[stCpStageReject] = M.stepStageReject
	s[stCpBarrier] = M.stepBarrier
	s[stCpPreCommit] = M.stepPreCommit
	s[stCpSnapshot] = M.stepSnapshot
	s[stCpNotify] = M.stepNotify
	s[stCpCommitSink] = M.stepCommitSink
	s[stCpCommitAcks] = M.stepCommitAcks
	s[stCpAbortAcks] = M.stepAbortAcks
	s[stCpAckAccept] = M.stepAckAccept
	s[stCpAckReject] = M.stepAckReject
	s[stCpAbortSink] = M.stepAbortSink
	s[stCpEnd] = M.stepEnd
	s[stCpFailAbort] = M.stepFailAbort
	s[stCpFailRelease] = M.stepFailRelease
	return s
}

// checkpointRows is the checkpoint model (design §5.1), step by step: the
// polls fill the open checkpoint until its barrier; at the barrier the
// acks are staged (transactional, staging at the barrier), the sink
// pre-commits, the snapshot completes the checkpoint, notify-complete
// arrives, and the two sides commit in CheckpointConfig.SinkFirst's order.
// A failure before the snapshot fails the checkpoint (end-checkpoint
// failed): the transaction aborts and the held polls are released.
func checkpointRows[R any]() []transition[*CheckpointMachine[R], R] {
	type M = *CheckpointMachine[R]
	rows := []transition[M, R]{
		// Between checkpoint steps: polls, renews, a cut-off's wait.
		{from: stTop, op: OpWait, on: outAny},
		{from: stTop, op: OpRenew, on: outOK, do: M.renewed},
		{from: stTop, op: OpRenew, on: outErr},
		{from: stTop, op: OpPoll, on: outErr, do: M.fail},
		{from: stTop, op: OpPoll, on: outEmpty, to: stTop},
		{from: stTop, op: OpPoll, on: outOK, do: M.polled, to: stCpProcess, cross: vocab.AfterPoll},
		{from: stCpProcess, op: OpProcess, on: outAny, when: M.stagesAtAcquisition, do: M.keepPollStaging, to: stCpBegin},
		{from: stCpProcess, op: OpProcess, on: outAny, do: M.keepPoll, to: stTop},

		// Staging, at acquisition or at the barrier.
		{from: stCpBegin, op: OpBegin, on: outErr, do: M.failStaging, to: stCpEnd},
		{from: stCpBegin, op: OpBegin, on: outOK, do: M.begun, to: stCpStageAccept},
		{from: stCpStageAccept, op: OpStageAccept, on: outErr, do: M.failStaging, to: stCpEnd},
		{from: stCpStageAccept, op: OpStageAccept, on: outOK, to: stCpStageReject},
		{from: stCpStageReject, op: OpStageReject, on: outErr, do: M.failStaging, to: stCpEnd},
		{from: stCpStageReject, op: OpStageReject, on: outOK, when: M.stagingAtAcquisition, do: M.stagedAll, to: stTop},
		{from: stCpStageReject, op: OpStageReject, on: outOK, do: M.stagedAll, to: stCpPreCommit},

		// One checkpoint: barrier, pre-commit, snapshot, notify.
		{from: stCpBarrier, op: OpBarrier, on: outAny, when: M.stagesAtBarrier, do: M.stageAtBarrier, to: stCpBegin, cross: vocab.BeforeBarrier},
		{from: stCpBarrier, op: OpBarrier, on: outAny, to: stCpPreCommit, cross: vocab.BeforeBarrier},
		{from: stCpPreCommit, op: OpPreCommit, on: outErr, do: M.failPreCommit, to: stCpEnd},
		{from: stCpPreCommit, op: OpPreCommit, on: outOK, do: M.preCommitted, to: stCpSnapshot, cross: vocab.AfterPreCommit},
		{from: stCpSnapshot, op: OpWait, on: outAny},
		{from: stCpSnapshot, op: OpSnapshot, on: outAny, do: M.completed, to: stCpNotify, cross: vocab.AfterSnapshot},
		{from: stCpNotify, op: OpNotify, on: outAny, when: M.sinkFirst, to: stCpCommitSink, cross: vocab.AfterNotify},
		{from: stCpNotify, op: OpNotify, on: outAny, when: M.txnal, to: stCpCommitAcks, cross: vocab.AfterNotify},
		{from: stCpNotify, op: OpNotify, on: outAny, to: stCpAckAccept, cross: vocab.AfterNotify},
	}
	return append(append(rows, checkpointCommitRows[R]()...), coreRows[M, R]()...)
}

// checkpointCommitRows commit a completed checkpoint's two sides, or
// roll them back, in CheckpointConfig.SinkFirst's order (design §5.1,
// Orders), and end the checkpoint.
func checkpointCommitRows[R any]() []transition[*CheckpointMachine[R], R] {
	type M = *CheckpointMachine[R]
	return []transition[M, R]{
		// The sink's commit: first (then the acks), or second.
		{from: stCpCommitSink, op: OpCommitSink, on: outAny, when: M.sinkFirstTxnal, to: stCpCommitAcks, cross: vocab.BetweenCommits},
		{from: stCpCommitSink, op: OpCommitSink, on: outAny, when: M.sinkFirst, to: stCpAckAccept, cross: vocab.BetweenCommits},
		{from: stCpCommitSink, op: OpCommitSink, on: outAny, when: M.acksFailedFirst, do: M.endAcksFailed, to: stCpEnd},
		{from: stCpCommitSink, op: OpCommitSink, on: outErr, do: M.endSinkLost, to: stCpEnd},
		{from: stCpCommitSink, op: OpCommitSink, on: outOK, do: M.endCommitted, to: stCpEnd},

		// The acks' commit: the share-ack transaction, or the explicit
		// accepts then rejects as one group; a failure goes by acksFailed.
		{from: stCpCommitAcks, op: OpCommit, on: outErr, do: M.commitFailed, to: stCpAbortAcks},
		{from: stCpCommitAcks, op: OpCommit, on: outOK, when: M.sinkFirst, do: M.committedLast, to: stCpEnd},
		{from: stCpCommitAcks, op: OpCommit, on: outOK, do: M.committedFirst, to: stCpCommitSink, cross: vocab.BetweenCommits},
		{from: stCpAbortAcks, op: OpAbort, on: outAny, do: M.abortedAcks},
		{from: stCpAckAccept, op: OpAccept, on: outErr, do: M.ackFailed},
		{from: stCpAckAccept, op: OpAccept, on: outOK, when: M.rejects, to: stCpAckReject},
		{from: stCpAckAccept, op: OpAccept, on: outOK, when: M.sinkFirst, do: M.endCommitted, to: stCpEnd},
		{from: stCpAckAccept, op: OpAccept, on: outOK, to: stCpCommitSink, cross: vocab.BetweenCommits},
		{from: stCpAckReject, op: OpReject, on: outErr, do: M.ackFailed},
		{from: stCpAckReject, op: OpReject, on: outOK, when: M.sinkFirst, do: M.endCommitted, to: stCpEnd},
		{from: stCpAckReject, op: OpReject, on: outOK, to: stCpCommitSink, cross: vocab.BetweenCommits},
		{from: stCpAbortSink, op: OpAbortSink, on: outAny, when: M.rolledBack, to: stCpEnd},
		{from: stCpAbortSink, op: OpAbortSink, on: outAny, do: M.endFailed, to: stCpEnd},

		// The checkpoint's end; a failed one aborts and releases.
		{from: stCpEnd, op: OpEndCheckpoint, on: outAny, when: M.failedFenced, do: M.dropCheckpoint, to: stReplace},
		{from: stCpEnd, op: OpEndCheckpoint, on: outAny, when: M.failedOpen, to: stCpFailAbort},
		{from: stCpEnd, op: OpEndCheckpoint, on: outAny, when: M.failed, to: stCpFailRelease},
		{from: stCpEnd, op: OpEndCheckpoint, on: outAny, when: M.endedFenced, do: M.dropCheckpoint, to: stReplace},
		{from: stCpEnd, op: OpEndCheckpoint, on: outAny, do: M.resetCheckpoint, to: stTop},
		{from: stCpFailAbort, op: OpAbort, on: outAny, do: M.failAborted},
		// Whether a release landed, the next step is the same: the
		// records come back now or at lock expiry.
		{from: stCpFailRelease, op: OpReleaseHeld, on: outAny},
	}
}

// The steps.

func (m *CheckpointMachine[R]) stepTop(in Inputs) (Action[R], bool) {
	if in.Stop && !m.stopping {
		m.stopping = true
	}
	if m.stopping && m.nHeld == 0 {
		m.st = stClose
		return Action[R]{}, false
	}
	if !m.stopping && in.Now.Before(in.CutUntil) {
		return Action[R]{Op: OpWait, Until: in.CutUntil}, true
	}
	if m.barrierDue(in.Now) {
		m.st = stCpBarrier
		return Action[R]{}, false
	}
	if a, ok := m.renewDue(in.Now); ok {
		return a, true
	}
	timeout := pollTimeout
	if m.nHeld > 0 {
		timeout = pollTimeoutBefore(in.Now, m.start.Add(m.cc.Interval))
	}
	n := m.cfg.MaxPollRecords
	if m.cc.MaxRecords > 0 {
		n = min(n, m.cc.MaxRecords-m.nHeld)
	}
	return Action[R]{Op: OpPoll, Max: n, Timeout: timeout}, true
}

// barrierDue reports whether the open checkpoint's barrier has come.
func (m *CheckpointMachine[R]) barrierDue(now time.Time) bool {
	if m.nHeld == 0 {
		return false
	}
	if m.cc.PerPoll || m.stopping {
		return true
	}
	if m.cc.MaxRecords > 0 && m.nHeld >= m.cc.MaxRecords {
		return true
	}
	return !now.Before(m.start.Add(m.cc.Interval))
}

// renewDue returns the renew of the next held poll whose lock is half
// gone (CheckpointConfig.Renew), one poll per step, each pass from the
// first.
func (m *CheckpointMachine[R]) renewDue(now time.Time) (Action[R], bool) {
	if m.cc.Renew && !m.staged {
		half := m.cfg.LockDuration / 2
		for i := m.renewNext; i < len(m.batches); i++ {
			if now.Sub(m.batches[i].renewAt) >= half {
				m.renewNext, m.renewAt = i+1, now
				return Action[R]{Op: OpRenew, Recs: m.batches[i].recs}, true
			}
		}
	}
	m.renewNext = 0
	return Action[R]{}, false
}

func (m *CheckpointMachine[R]) stepProcess(in Inputs) (Action[R], bool) {
	m.held = m.poll
	m.split(in)
	m.pAcc, m.pRej = m.acc, m.rej
	return Action[R]{Op: OpProcess, Recs: m.poll, Checkpoint: m.n}, true
}

func (m *CheckpointMachine[R]) stepBegin(Inputs) (Action[R], bool) {
	if m.open {
		m.staged = true
		m.st = stCpStageAccept
		return Action[R]{}, false
	}
	return Action[R]{Op: OpBegin}, true
}

func (m *CheckpointMachine[R]) stepStageAccept(Inputs) (Action[R], bool) {
	if len(m.sAcc) == 0 {
		m.st = stCpStageReject
		return Action[R]{}, false
	}
	return Action[R]{Op: OpStageAccept, Recs: m.sAcc}, true
}

func (m *CheckpointMachine[R]) stepStageReject(Inputs) (Action[R], bool) {
	if len(m.sRej) == 0 {
		m.skip(OpStageReject)
		return Action[R]{}, false
	}
	return Action[R]{Op: OpStageReject, Recs: m.sRej}, true
}

func (m *CheckpointMachine[R]) stepBarrier(in Inputs) (Action[R], bool) {
	m.barrierAt = in.Now
	return Action[R]{Op: OpBarrier, Checkpoint: m.n, Since: m.start}, true
}

func (m *CheckpointMachine[R]) stepPreCommit(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpPreCommit, Recs: m.ckAcc, Checkpoint: m.n, Since: m.start}, true
}

// stepSnapshot waits out a slow checkpoint's delay once, then stores the
// snapshot, or fails the checkpoint if that is later than its timeout
// after the barrier.
func (m *CheckpointMachine[R]) stepSnapshot(in Inputs) (Action[R], bool) {
	if in.SnapshotDelay > 0 && !m.slowWaited {
		m.slowWaited = true
		return Action[R]{Op: OpWait, Until: in.Now.Add(in.SnapshotDelay), Slow: true, Checkpoint: m.n}, true
	}
	if late := in.Now.Sub(m.barrierAt); late > m.cc.Timeout {
		m.failCause = fmt.Errorf("checkpoint %d timed out (snapshot after %v, timeout %v)", m.n, late.Round(time.Millisecond), m.cc.Timeout)
		m.failFenced = false
		m.st = stCpAbortSink
		return Action[R]{}, false
	}
	return Action[R]{Op: OpSnapshot, Checkpoint: m.n, Since: m.start}, true
}

func (m *CheckpointMachine[R]) stepNotify(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpNotify, Checkpoint: m.n}, true
}

func (m *CheckpointMachine[R]) stepCommitSink(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpCommitSink, Checkpoint: m.n}, true
}

func (m *CheckpointMachine[R]) stepCommitAcks(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpCommit, Since: m.start, Checkpoint: m.n}, true
}

func (m *CheckpointMachine[R]) stepAbortAcks(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpAbort, Cause: m.ackErr, Checkpoint: m.n}, true
}

func (m *CheckpointMachine[R]) stepAckAccept(Inputs) (Action[R], bool) {
	if len(m.kAcc) == 0 {
		m.st = stCpAckReject
		return Action[R]{}, false
	}
	return Action[R]{Op: OpAccept, Recs: m.kAcc, Since: m.start, First: true, Last: len(m.kRej) == 0, Checkpoint: m.n}, true
}

func (m *CheckpointMachine[R]) stepAckReject(Inputs) (Action[R], bool) {
	if len(m.kRej) == 0 {
		m.skip(OpReject)
		return Action[R]{}, false
	}
	return Action[R]{Op: OpReject, Recs: m.kRej, Since: m.start, First: len(m.kAcc) == 0, Last: true, Checkpoint: m.n}, true
}

func (m *CheckpointMachine[R]) stepAbortSink(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpAbortSink, Checkpoint: m.n}, true
}

// stepEnd says how the checkpoint ended, and why when it did not commit
// both sides.
func (m *CheckpointMachine[R]) stepEnd(Inputs) (Action[R], bool) {
	a := Action[R]{Op: OpEndCheckpoint, End: m.end, Since: m.start, Checkpoint: m.n}
	switch m.end {
	case CheckpointFailed:
		a.Cause = m.failCause
	case CheckpointCommitted, CheckpointSinkLost:
	default:
		a.Cause = m.ackErr
	}
	return a, true
}

func (m *CheckpointMachine[R]) stepFailAbort(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpAbort, Cause: m.failCause, Checkpoint: m.n}, true
}

// stepFailRelease gives a failed checkpoint's held polls back one by one;
// staged transactional acks came back with the abort.
func (m *CheckpointMachine[R]) stepFailRelease(Inputs) (Action[R], bool) {
	if m.txnal() && m.staged || m.relNext >= len(m.batches) {
		m.reset()
		m.top()
		return Action[R]{}, false
	}
	b := m.batches[m.relNext]
	m.relNext++
	return Action[R]{Op: OpReleaseHeld, Recs: b.recs, Checkpoint: m.n}, true
}

// The guards.

func (m *CheckpointMachine[R]) txnal() bool { return m.cfg.Mode == vocab.Transactional }

func (m *CheckpointMachine[R]) stagesAtAcquisition() bool {
	return m.txnal() && m.cc.StageAtAcquisition
}

func (m *CheckpointMachine[R]) sinkFirst() bool            { return m.cc.SinkFirst }
func (m *CheckpointMachine[R]) sinkFirstTxnal() bool       { return m.cc.SinkFirst && m.txnal() }
func (m *CheckpointMachine[R]) stagingAtAcquisition() bool { return m.atAcq }
func (m *CheckpointMachine[R]) stagesAtBarrier() bool      { return m.txnal() && !m.staged }
func (m *CheckpointMachine[R]) rejects() bool              { return len(m.kRej) > 0 }
func (m *CheckpointMachine[R]) acksFailedFirst() bool      { return m.ackErr != nil }
func (m *CheckpointMachine[R]) rolledBack() bool           { return m.end == CheckpointRolledBack }
func (m *CheckpointMachine[R]) failed() bool               { return m.end == CheckpointFailed }
func (m *CheckpointMachine[R]) failedFenced() bool         { return m.failed() && m.failFenced }
func (m *CheckpointMachine[R]) failedOpen() bool           { return m.failed() && m.open }
func (m *CheckpointMachine[R]) endedFenced() bool          { return m.endFenced }

// The handlers.

func (m *CheckpointMachine[R]) renewed(Result[R]) { m.batches[m.renewNext-1].renewAt = m.renewAt }

// polled takes the poll into the open checkpoint, opening one if none is.
func (m *CheckpointMachine[R]) polled(res Result[R]) {
	if m.nHeld == 0 {
		m.start = res.At
		m.n++
	}
	m.poll, m.pollAt = res.Recs, res.At
}

func (m *CheckpointMachine[R]) keepPoll(Result[R]) { m.hold(false) }

func (m *CheckpointMachine[R]) keepPollStaging(Result[R]) { m.hold(true) }

// hold adds the processed poll to the open checkpoint, and with stage
// makes its acks the ones to stage now.
func (m *CheckpointMachine[R]) hold(stage bool) {
	m.dropRedelivered()
	m.ckAcc = append(m.ckAcc, m.pAcc...)
	m.ckRej = append(m.ckRej, m.pRej...)
	m.batches = append(m.batches, cpBatch[R]{recs: m.poll, renewAt: m.pollAt})
	m.nHeld += len(m.poll)
	if stage {
		m.sAcc, m.sRej, m.atAcq = m.pAcc, m.pRej, true
	}
	m.poll, m.pAcc, m.pRej = nil, nil, nil
}

// stageAtBarrier makes the whole checkpoint's acks the ones to stage.
func (m *CheckpointMachine[R]) stageAtBarrier(Result[R]) {
	m.sAcc, m.sRej, m.atAcq = m.ckAcc, m.ckRej, false
}

func (m *CheckpointMachine[R]) begun(Result[R]) {
	m.open, m.txnStart = true, m.pollAt
	m.staged = true
}

func (m *CheckpointMachine[R]) stagedAll(Result[R]) { m.sAcc, m.sRej = nil, nil }

func (m *CheckpointMachine[R]) preCommitted(Result[R]) { m.slowWaited = false }

// completed: the checkpoint is complete; its acks and its sink
// transaction now belong to the snapshot, to be committed.
func (m *CheckpointMachine[R]) completed(Result[R]) {
	acc, rej, open := m.ckAcc, m.ckRej, m.open
	m.reset()
	m.kAcc, m.kRej, m.open = acc, rej, open
}

func (m *CheckpointMachine[R]) endCommitted(Result[R]) { m.endAs(CheckpointCommitted) }
func (m *CheckpointMachine[R]) endSinkLost(Result[R])  { m.endAs(CheckpointSinkLost) }
func (m *CheckpointMachine[R]) endFailed(Result[R])    { m.endAs(CheckpointFailed) }

// endAcksFailed: explicit acks first, failed: the sink committed anyway.
func (m *CheckpointMachine[R]) endAcksFailed(Result[R]) { m.endAs(CheckpointAcksFailed) }

// commitFailed notes the share-ack transaction's failed commit; it is
// aborted next.
func (m *CheckpointMachine[R]) commitFailed(res Result[R]) {
	m.open = false
	m.ackErr, m.ackFenced = res.Err, res.Fenced
}

// committedFirst and committedLast: the share-ack transaction committed.
func (m *CheckpointMachine[R]) committedFirst(Result[R]) { m.open = false }

func (m *CheckpointMachine[R]) committedLast(res Result[R]) {
	m.open = false
	m.endCommitted(res)
}

// abortedAcks: the failed commit's transaction is over, whatever the abort
// said.
func (m *CheckpointMachine[R]) abortedAcks(Result[R]) { m.acksFailed() }

// ackFailed notes the explicit acks' failure.
func (m *CheckpointMachine[R]) ackFailed(res Result[R]) {
	m.ackErr, m.ackFenced = res.Err, res.Fenced
	m.acksFailed()
}

// acksFailed goes on after the acks could not commit.
func (m *CheckpointMachine[R]) acksFailed() {
	switch {
	case m.cc.SinkFirst:
		m.endAs(CheckpointAcksLost)
		m.st = stCpEnd
	case m.txnal():
		// The transaction aborted, so every record comes back: the sink
		// follows the acks and rolls back.
		m.end = CheckpointRolledBack
		m.endFenced = m.ackFenced
		m.st = stCpAbortSink
	default:
		// Explicit acks are not atomic: some may have landed. A rollback
		// would lose those records; committing duplicates the others,
		// which explicit acks allow.
		m.st = stCpCommitSink
	}
}

// endAs records how the checkpoint ended; the worker is replaced after it
// when the acks' failure was fencing.
func (m *CheckpointMachine[R]) endAs(e CheckpointEnd) {
	m.end = e
	m.endFenced = e != CheckpointCommitted && e != CheckpointSinkLost && e != CheckpointFailed && m.ackFenced
}

func (m *CheckpointMachine[R]) failStaging(res Result[R]) { m.failWith(res, m.stagingWhat()) }

func (m *CheckpointMachine[R]) failPreCommit(res Result[R]) {
	m.failWith(res, "pre-committing the sink")
}

func (m *CheckpointMachine[R]) stagingWhat() string {
	if m.atAcq {
		return "staging at acquisition"
	}
	return "staging at the barrier"
}

// failWith fails the open checkpoint after res's error, during what.
func (m *CheckpointMachine[R]) failWith(res Result[R], what string) {
	m.failCause = fmt.Errorf("%s: %w", what, res.Err)
	m.failFenced = res.Fenced
	m.endAs(CheckpointFailed)
}

// failAborted: the failed checkpoint's transaction is over; a fenced
// worker is replaced (the coordinator aborted), else the held polls are
// released.
func (m *CheckpointMachine[R]) failAborted(res Result[R]) {
	m.open = false
	if res.Fenced {
		m.dropCheckpoint(res)
		m.st = stReplace
		return
	}
	m.st = stCpFailRelease
}

// dropCheckpoint gives up the checkpoint for the worker's replacement; its
// records come back at lock expiry, and nothing was aborted by the replace.
func (m *CheckpointMachine[R]) dropCheckpoint(Result[R]) {
	m.open = false
	m.reset()
	m.aborted = false
}

func (m *CheckpointMachine[R]) resetCheckpoint(Result[R]) { m.reset() }

// dropRedelivered removes from the open checkpoint the records the poll
// being processed delivers again (CheckpointConfig.Key). It runs on every
// poll of a checkpoint that holds records, so it reuses one set of keys
// and copies the held records only when one of them came again.
func (m *CheckpointMachine[R]) dropRedelivered() {
	key := m.cc.Key
	if key == nil || m.nHeld == 0 {
		return
	}
	if m.again == nil {
		m.again = make(map[RecordKey]struct{}, len(m.poll))
	}
	clear(m.again)
	for _, r := range m.poll {
		m.again[key(any(r))] = struct{}{}
	}
	again := func(r R) bool {
		_, ok := m.again[key(any(r))]
		return ok
	}
	dropped := 0
	for _, b := range m.batches {
		for _, r := range b.recs {
			if again(r) {
				dropped++
			}
		}
	}
	if dropped == 0 {
		return
	}
	keep := func(rs []R) []R {
		out := make([]R, 0, len(rs))
		for _, r := range rs {
			if !again(r) {
				out = append(out, r)
			}
		}
		return out
	}
	batches := make([]cpBatch[R], 0, len(m.batches))
	for _, b := range m.batches {
		if b.recs = keep(b.recs); len(b.recs) > 0 {
			batches = append(batches, b)
		}
	}
	m.batches, m.nHeld, m.renewNext = batches, m.nHeld-dropped, 0
	m.ckAcc = keep(m.ckAcc)
	m.ckRej = keep(m.ckRej)
}

// reset empties the open checkpoint: its records now belong to a
// snapshot, or were given back.
func (m *CheckpointMachine[R]) reset() {
	m.open = false
	m.batches, m.nHeld = nil, 0
	m.ckAcc, m.ckRej = nil, nil
	m.staged, m.atAcq = false, false
	m.renewNext, m.relNext = 0, 0
	m.sAcc, m.sRej = nil, nil
	m.kAcc, m.kRej = nil, nil
	m.ackErr, m.ackFenced = nil, false
	m.failCause, m.failFenced = nil, false
	m.end, m.endFenced = 0, false
}
