// This file holds the checkpoint model as a mode of Machine: the loop of a
// stream-processing framework's source task that writes its outputs to an
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

// CheckpointConfig turns a machine into the checkpoint model (Mode
// Transactional: the acks commit in a producer transaction; Mode Explicit:
// they are explicit acknowledgements).
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

// cpState is the checkpoint model's part of a machine.
type cpState[R any] struct {
	n       int64     // the open checkpoint's number (from 1)
	start   time.Time // its first record
	batches []cpBatch[R]
	nHeld   int
	acc     []R  // processed and accepted (an output each)
	rej     []R  // rejected on purpose
	staged  bool // the acks are in the open transaction
	// The poll being processed.
	poll []R
	pAcc []R
	pRej []R
	// again holds the keys of the poll being processed
	// (cpDropRedelivered), reused from poll to poll.
	again map[RecordKey]struct{}
	// Staging in progress.
	sAcc, sRej []R
	atAcq      bool // staging at acquisition (else at the barrier)
	// The barrier and the snapshot.
	barrierAt  time.Time
	slowWaited bool
	renewNext  int
	renewAt    time.Time // the Now of the renew in flight
	// The completed checkpoint's acks.
	kAcc, kRej []R
	ackErr     error
	ackFenced  bool
	// The failure in progress.
	failCause  error
	failFenced bool
	relNext    int
	end        CheckpointEnd
	endFenced  bool
}

// The checkpoint model's states.
const (
	stCpProcess state = iota + 100
	stCpBegin
	stCpStageAccept
	stCpStageReject
	stCpBarrier
	stCpPreCommit
	stCpSnapshot
	stCpNotify
	stCpCommitSink
	stCpCommitAcks
	stCpAbortAcks
	stCpAckAccept
	stCpAckReject
	stCpAbortSink
	stCpEnd
	stCpFailAbort
	stCpFailRelease
)

// Checkpoint is the number of the worker's open checkpoint (checkpoint
// model; 0 before its first).
func (m *Machine[R]) Checkpoint() int64 {
	if m.cp == nil {
		return 0
	}
	return m.cp.n
}

// cpBarrierDue reports whether the open checkpoint's barrier has come.
func (m *Machine[R]) cpBarrierDue(now time.Time) bool {
	c, cc := m.cp, m.cfg.Checkpoint
	if c.nHeld == 0 {
		return false
	}
	if cc.PerPoll || m.stopping {
		return true
	}
	if cc.MaxRecords > 0 && c.nHeld >= cc.MaxRecords {
		return true
	}
	return !now.Before(c.start.Add(cc.Interval))
}

// cpNext returns the checkpoint model's next action, or false after a
// transition that needs no call.
func (m *Machine[R]) cpNext(in Inputs) (Action[R], bool) {
	c, cc := m.cp, m.cfg.Checkpoint
	switch m.st {
	case stTop:
		if in.Stop && !m.stopping {
			m.stopping = true
		}
		if m.stopping && c.nHeld == 0 {
			m.st = stClose
			return Action[R]{}, false
		}
		if !m.stopping && in.Now.Before(in.CutUntil) {
			return Action[R]{Op: OpWait, Until: in.CutUntil}, true
		}
		if m.cpBarrierDue(in.Now) {
			m.st = stCpBarrier
			return Action[R]{}, false
		}
		if cc.Renew && !c.staged {
			half := m.cfg.LockDuration / 2
			for i := c.renewNext; i < len(c.batches); i++ {
				if in.Now.Sub(c.batches[i].renewAt) >= half {
					c.renewNext, c.renewAt = i+1, in.Now
					return Action[R]{Op: OpRenew, Recs: c.batches[i].recs}, true
				}
			}
		}
		c.renewNext = 0
		timeout := pollTimeout
		if c.nHeld > 0 {
			if d := c.start.Add(cc.Interval).Sub(in.Now); d < timeout {
				timeout = max(d, time.Millisecond)
			}
		}
		n := m.cfg.MaxPollRecords
		if cc.MaxRecords > 0 {
			n = min(n, cc.MaxRecords-c.nHeld)
		}
		return Action[R]{Op: OpPoll, Max: n, Timeout: timeout}, true
	case stCpProcess:
		m.held = c.poll
		m.split(in)
		c.pAcc, c.pRej = m.acc, m.rej
		return Action[R]{Op: OpProcess, Recs: c.poll, Checkpoint: c.n}, true
	case stCpBegin:
		if m.open {
			c.staged = true
			m.st = stCpStageAccept
			return Action[R]{}, false
		}
		return Action[R]{Op: OpBegin}, true
	case stCpStageAccept:
		if len(c.sAcc) == 0 {
			m.st = stCpStageReject
			return Action[R]{}, false
		}
		return Action[R]{Op: OpStageAccept, Recs: c.sAcc}, true
	case stCpStageReject:
		if len(c.sRej) == 0 {
			m.cpStaged()
			return Action[R]{}, false
		}
		return Action[R]{Op: OpStageReject, Recs: c.sRej}, true
	case stCpBarrier:
		c.barrierAt = in.Now
		return Action[R]{Op: OpBarrier, Checkpoint: c.n, Since: c.start}, true
	case stCpPreCommit:
		return Action[R]{Op: OpPreCommit, Recs: c.acc, Checkpoint: c.n, Since: c.start}, true
	case stCpSnapshot:
		if in.SnapshotDelay > 0 && !c.slowWaited {
			c.slowWaited = true
			return Action[R]{Op: OpWait, Until: in.Now.Add(in.SnapshotDelay), Slow: true, Checkpoint: c.n}, true
		}
		if late := in.Now.Sub(c.barrierAt); late > cc.Timeout {
			c.failCause = fmt.Errorf("checkpoint %d timed out (snapshot after %v, timeout %v)", c.n, late.Round(time.Millisecond), cc.Timeout)
			c.failFenced = false
			m.st = stCpAbortSink
			return Action[R]{}, false
		}
		return Action[R]{Op: OpSnapshot, Checkpoint: c.n, Since: c.start}, true
	case stCpNotify:
		return Action[R]{Op: OpNotify, Checkpoint: c.n}, true
	case stCpCommitSink:
		return Action[R]{Op: OpCommitSink, Checkpoint: c.n}, true
	case stCpCommitAcks:
		return Action[R]{Op: OpCommit, Since: c.start, Checkpoint: c.n}, true
	case stCpAbortAcks:
		return Action[R]{Op: OpAbort, Cause: c.ackErr, Checkpoint: c.n}, true
	case stCpAckAccept:
		if len(c.kAcc) == 0 {
			m.st = stCpAckReject
			return Action[R]{}, false
		}
		return Action[R]{Op: OpAccept, Recs: c.kAcc, Since: c.start, First: true, Last: len(c.kRej) == 0, Checkpoint: c.n}, true
	case stCpAckReject:
		if len(c.kRej) == 0 {
			m.cpAcksDone(Result[R]{})
			return Action[R]{}, false
		}
		return Action[R]{Op: OpReject, Recs: c.kRej, Since: c.start, First: len(c.kAcc) == 0, Last: true, Checkpoint: c.n}, true
	case stCpAbortSink:
		return Action[R]{Op: OpAbortSink, Checkpoint: c.n}, true
	case stCpEnd:
		a := Action[R]{Op: OpEndCheckpoint, End: c.end, Since: c.start, Checkpoint: c.n}
		switch c.end {
		case CheckpointFailed:
			a.Cause = c.failCause
		case CheckpointCommitted, CheckpointSinkLost:
		default:
			a.Cause = c.ackErr
		}
		return a, true
	case stCpFailAbort:
		return Action[R]{Op: OpAbort, Cause: c.failCause, Checkpoint: c.n}, true
	case stCpFailRelease:
		if m.cfg.Mode == vocab.Transactional && c.staged || c.relNext >= len(c.batches) {
			m.cpReset()
			m.top()
			return Action[R]{}, false
		}
		b := c.batches[c.relNext]
		c.relNext++
		return Action[R]{Op: OpReleaseHeld, Recs: b.recs, Checkpoint: c.n}, true
	}
	return m.next(in)
}

// cpDone takes the outcome of the checkpoint model's last action.
func (m *Machine[R]) cpDone(res Result[R]) vocab.Phase {
	c, cc := m.cp, m.cfg.Checkpoint
	txnal := m.cfg.Mode == vocab.Transactional
	switch m.last {
	case OpPoll:
		if res.Err != nil {
			m.fail(res)
			return ""
		}
		if len(res.Recs) == 0 {
			m.top()
			return ""
		}
		if c.nHeld == 0 {
			c.start = res.At
			c.n++
		}
		c.poll, m.pollAt = res.Recs, res.At
		m.st = stCpProcess
		return m.cross(vocab.AfterPoll)
	case OpProcess:
		m.cpDropRedelivered()
		c.acc = append(c.acc, c.pAcc...)
		c.rej = append(c.rej, c.pRej...)
		c.batches = append(c.batches, cpBatch[R]{recs: c.poll, renewAt: m.pollAt})
		c.nHeld += len(c.poll)
		if txnal && cc.StageAtAcquisition {
			c.sAcc, c.sRej, c.atAcq = c.pAcc, c.pRej, true
			m.st = stCpBegin
		} else {
			m.top()
		}
		c.poll, c.pAcc, c.pRej = nil, nil, nil
	case OpRenew:
		if res.Err == nil {
			c.batches[c.renewNext-1].renewAt = c.renewAt
		}
	case OpBegin:
		if res.Err != nil {
			m.cpFail(res, m.stagingWhat())
			return ""
		}
		m.open, m.txnStart = true, m.pollAt
		c.staged = true
		m.st = stCpStageAccept
	case OpStageAccept, OpStageReject:
		if res.Err != nil {
			m.cpFail(res, m.stagingWhat())
			return ""
		}
		if m.last == OpStageAccept {
			m.st = stCpStageReject
			return ""
		}
		m.cpStaged()
	case OpBarrier:
		if txnal && !c.staged {
			c.sAcc, c.sRej, c.atAcq = c.acc, c.rej, false
			m.st = stCpBegin
		} else {
			m.st = stCpPreCommit
		}
		return m.cross(vocab.BeforeBarrier)
	case OpPreCommit:
		if res.Err != nil {
			m.cpFail(res, "pre-committing the sink")
			return ""
		}
		c.slowWaited = false
		m.st = stCpSnapshot
		return m.cross(vocab.AfterPreCommit)
	case OpSnapshot:
		// The checkpoint is complete: its acks and its sink transaction
		// now belong to the snapshot, to be committed.
		acc, rej, open := c.acc, c.rej, m.open
		m.cpReset()
		c.kAcc, c.kRej, m.open = acc, rej, open
		m.st = stCpNotify
		return m.cross(vocab.AfterSnapshot)
	case OpNotify:
		if cc.SinkFirst {
			m.st = stCpCommitSink
		} else {
			m.cpAcks()
		}
		return m.cross(vocab.AfterNotify)
	case OpCommitSink:
		switch {
		case cc.SinkFirst:
			m.cpAcks()
			return m.cross(vocab.BetweenCommits)
		case c.ackErr != nil:
			// Explicit acks first, failed: the sink committed anyway.
			m.cpEnd(CheckpointAcksFailed)
		case res.Err != nil:
			m.cpEnd(CheckpointSinkLost)
		default:
			m.cpEnd(CheckpointCommitted)
		}
	case OpCommit:
		m.open = false
		if res.Err != nil {
			c.ackErr, c.ackFenced = res.Err, res.Fenced
			m.st = stCpAbortAcks
			return ""
		}
		return m.cpAcksDone(res)
	case OpAccept, OpReject:
		if res.Err != nil || m.last == OpReject || len(c.kRej) == 0 {
			return m.cpAcksDone(res)
		}
		m.st = stCpAckReject
	case OpAbort:
		if m.st == stCpAbortAcks {
			// The failed commit's transaction is over, whatever the
			// abort said.
			m.cpAcksFailed()
			return ""
		}
		m.open = false
		if res.Fenced {
			m.cpReset()
			m.aborted = false
			m.st = stReplace
			return ""
		}
		m.st = stCpFailRelease
	case OpAbortSink:
		if c.end == CheckpointRolledBack {
			m.st = stCpEnd
			return ""
		}
		m.cpEnd(CheckpointFailed)
	case OpEndCheckpoint:
		switch {
		case c.end == CheckpointFailed && c.failFenced:
			m.open = false
			m.cpReset()
			m.aborted = false
			m.st = stReplace
		case c.end == CheckpointFailed && m.open:
			m.st = stCpFailAbort
		case c.end == CheckpointFailed:
			m.st = stCpFailRelease
		case c.endFenced:
			m.cpReset()
			m.aborted = false
			m.st = stReplace
		default:
			m.cpReset()
			m.top()
		}
	case OpReleaseHeld:
		// Whether the release landed, the next step is the same: the
		// records come back now or at lock expiry.
	case OpWait:
		switch m.st {
		case stRetry:
			m.top()
		}
	default:
		return m.done(res)
	}
	return ""
}

func (m *Machine[R]) stagingWhat() string {
	if m.cp.atAcq {
		return "staging at acquisition"
	}
	return "staging at the barrier"
}

// cpStaged goes on after the acks were staged: back to polling (staging
// at acquisition) or on to the pre-commit (at the barrier).
func (m *Machine[R]) cpStaged() {
	c := m.cp
	c.sAcc, c.sRej = nil, nil
	if c.atAcq {
		m.top()
		return
	}
	m.st = stCpPreCommit
}

// cpAcks commits the completed checkpoint's acks: its transaction, or the
// explicit accepts then rejects.
func (m *Machine[R]) cpAcks() {
	if m.cfg.Mode == vocab.Transactional {
		m.st = stCpCommitAcks
		return
	}
	m.st = stCpAckAccept
}

// cpAcksDone goes on after the acks' commit returned res.
func (m *Machine[R]) cpAcksDone(res Result[R]) vocab.Phase {
	c := m.cp
	if res.Err != nil {
		c.ackErr, c.ackFenced = res.Err, res.Fenced
		m.cpAcksFailed()
		return ""
	}
	if m.cfg.Checkpoint.SinkFirst {
		m.cpEnd(CheckpointCommitted)
		return ""
	}
	m.st = stCpCommitSink
	return m.cross(vocab.BetweenCommits)
}

// cpAcksFailed goes on after the acks could not commit.
func (m *Machine[R]) cpAcksFailed() {
	c := m.cp
	switch {
	case m.cfg.Checkpoint.SinkFirst:
		m.cpEnd(CheckpointAcksLost)
	case m.cfg.Mode == vocab.Transactional:
		// The transaction aborted, so every record comes back: the sink
		// follows the acks and rolls back.
		c.end = CheckpointRolledBack
		c.endFenced = c.ackFenced
		m.st = stCpAbortSink
	default:
		// Explicit acks are not atomic: some may have landed. A rollback
		// would lose those records; committing duplicates the others,
		// which explicit acks allow.
		m.st = stCpCommitSink
	}
}

func (m *Machine[R]) cpEnd(e CheckpointEnd) {
	c := m.cp
	c.end = e
	c.endFenced = e != CheckpointCommitted && e != CheckpointSinkLost && e != CheckpointFailed && c.ackFenced
	m.st = stCpEnd
}

// cpFail fails the open checkpoint after res's error, during what.
func (m *Machine[R]) cpFail(res Result[R], what string) {
	c := m.cp
	c.failCause = fmt.Errorf("%s: %w", what, res.Err)
	c.failFenced = res.Fenced
	m.cpEnd(CheckpointFailed)
}

// cpDropRedelivered removes from the open checkpoint the records the poll
// being processed delivers again (CheckpointConfig.Key). It runs on every
// poll of a checkpoint that holds records, so it reuses one set of keys
// and copies the held records only when one of them came again.
func (m *Machine[R]) cpDropRedelivered() {
	c, key := m.cp, m.cfg.Checkpoint.Key
	if key == nil || c.nHeld == 0 {
		return
	}
	if c.again == nil {
		c.again = make(map[RecordKey]struct{}, len(c.poll))
	}
	clear(c.again)
	for _, r := range c.poll {
		c.again[key(any(r))] = struct{}{}
	}
	again := func(r R) bool {
		_, ok := c.again[key(any(r))]
		return ok
	}
	dropped := 0
	for _, b := range c.batches {
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
	batches := make([]cpBatch[R], 0, len(c.batches))
	for _, b := range c.batches {
		if b.recs = keep(b.recs); len(b.recs) > 0 {
			batches = append(batches, b)
		}
	}
	c.batches, c.nHeld, c.renewNext = batches, c.nHeld-dropped, 0
	c.acc = keep(c.acc)
	c.rej = keep(c.rej)
}

// cpReset empties the open checkpoint: its records now belong to a
// snapshot, or were given back.
func (m *Machine[R]) cpReset() {
	c := m.cp
	m.open = false
	c.batches, c.nHeld = nil, 0
	c.acc, c.rej = nil, nil
	c.staged, c.atAcq = false, false
	c.renewNext, c.relNext = 0, 0
	c.sAcc, c.sRej = nil, nil
	c.kAcc, c.kRej = nil, nil
	c.ackErr, c.ackFenced = nil, false
	c.failCause, c.failFenced = nil, false
	c.end, c.endFenced = 0, false
}
