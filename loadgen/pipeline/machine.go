// This file holds Machine, one worker's loop in its mode (design §5) as a
// pure state machine: a step per state says what to do, and a table of
// transitions says where each call's outcome leads.

package pipeline

import (
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// Machine is one worker's loop in its acknowledgement mode. It is not safe
// for concurrent use; one goroutine (or one simulator) drives it.
type Machine[R any] struct {
	core[R]
	steps []step[*Machine[R], R]
	rows  []transition[*Machine[R], R]

	// resume is where a stall after producing goes on (staging, or the
	// commit check).
	resume state
	force  bool // the pending commit check commits whatever the size and age

	renewed bool // explicit: the held records' locks were renewed at this poll

	// The open transaction's size (deferred, transactional and
	// classic-eos transactions span polls).
	txnCount int
	// Deferred: the records held across the output transaction, acked
	// after it commits, released after it aborts.
	dHeld, dAcc, dRej []R

	// The acknowledgement group in flight.
	ackAcc, ackRej, ackRel []R
	ackSince               time.Time

	// beginFailing is when the current run of failed begins started
	// (zero while begins succeed).
	beginFailing time.Time

	renewOnly bool  // the renew to send is a choice, not the late-lock one
	cause     error // of the abort to send
}

// NewMachine returns the machine of a worker of cfg.Mode drawing from rng;
// it runs the mode's own loop whatever cfg.Checkpoint says.
func NewMachine[R any](cfg Config, rng Rand) *Machine[R] {
	return &Machine[R]{core: newCore[R](cfg, rng), steps: machineSteps[R](), rows: machineRows[R]()}
}

// Deadline is when the open transaction must commit by age.
func (m *Machine[R]) Deadline() time.Time { return m.txnStart.Add(m.cfg.MaxDuration) }

// Next returns the worker's next action.
func (m *Machine[R]) Next(in Inputs) Action[R] { return next(m, &m.core, m.steps, in) }

// Done takes the outcome of the action Next returned last, and returns the
// crash phase the worker crossed by it ("" for none): a crash scheduled
// for that phase strikes now, before the next action.
func (m *Machine[R]) Done(res Result[R]) vocab.Phase {
	return apply(m, &m.core, m.rows, m.last, res)
}

// machineSteps is what each state asks for.
func machineSteps[R any]() []step[*Machine[R], R] {
	type M = *Machine[R]
	s := make([]step[M, R], stCount)
	s[stTop] = M.stepTop
	s[stProcess] = M.stepProcess
	s[stBegin] = M.stepBegin
	s[stProduce] = M.stepProduce
	s[stStageAccept] = M.stepStageAccept
	s[stStageReject] = M.stepStageReject
	s[stStall] = M.stepStall
	s[stStallProduced] = M.stepStallProduced
	s[stCommitCheck] = M.stepCommitCheck
	s[stRenew] = M.stepRenew
	s[stCommit] = M.stepCommit
	s[stAckAccept] = M.stepAckAccept
	s[stAckReject] = M.stepAckReject
	s[stAckRelease] = M.stepAckRelease
	s[stAbort] = M.stepAbort
	s[stRelease] = M.stepRelease
	s[stRetryBegin] = M.stepRetryBegin
	return s
}

// machineRows is every mode's loop (design §5, §2.1), call by call:
//
//	implicit       poll, process, produce; the next poll accepts
//	explicit       poll, process, produce, ack each record, commit the acks
//	deferred       begin, produce, commit, then ack (renewing locks meanwhile)
//	transactional  begin, produce, stage the acks in the transaction, commit
//	classic-eos    begin, produce, stage the offsets in the transaction, commit
//
// A transaction spans polls until the commit check ends it (deferred: at
// every poll). A failure inside an open transaction aborts it; other
// failures go by core.fail.
func machineRows[R any]() []transition[*Machine[R], R] {
	type M = *Machine[R]
	rows := []transition[M, R]{
		// The top of the loop: a poll, or the wait of a cut-off worker.
		{from: stTop, op: OpWait, on: outAny},
		{from: stTop, op: OpPoll, on: outErr, do: M.fail},
		{from: stTop, op: OpPoll, on: outEmpty, do: M.pollEmpty, to: stCommitCheck},
		{from: stTop, op: OpPoll, on: outOK, do: M.polled, to: stProcess, cross: vocab.AfterPoll},

		// Processing (after an explicit worker's renew on purpose); a
		// transactional mode's first poll of a transaction opens it.
		{from: stProcess, op: OpRenew, on: outAny},
		{from: stProcess, op: OpProcess, on: outAny, when: M.implicit, do: M.keepPrev, to: stProduce},
		{from: stProcess, op: OpProcess, on: outAny, when: M.nonTxn, to: stProduce},
		{from: stProcess, op: OpProcess, on: outAny, when: M.closed, to: stBegin},
		{from: stProcess, op: OpProcess, on: outAny, do: M.holdDeferred, to: stProduce},

		// A failed begin keeps the poll's records and begins again.
		{from: stBegin, op: OpBegin, on: outFailed, to: stRetryBegin},
		{from: stBegin, op: OpBegin, on: outFenced | outCanceled, do: M.fail},
		{from: stBegin, op: OpBegin, on: outOK, do: M.begun, to: stProduce},
		{from: stRetryBegin, op: OpWait, on: outAny, to: stBegin},

		// The outputs; a stall at after-produce waits in stStallProduced.
		{from: stProduce, op: OpProduce, on: outErr, when: M.inTxn, do: M.abort},
		{from: stProduce, op: OpProduce, on: outErr, do: M.fail},
		{from: stProduce, op: OpProduce, on: outOK, when: M.implicit, to: stTop, cross: vocab.AfterProduce},
		{from: stProduce, op: OpProduce, on: outOK, when: M.explicit, do: M.ackPoll, to: stAckAccept, cross: vocab.AfterProduce},
		{from: stProduce, op: OpProduce, on: outOK, when: M.deferred, do: M.producedDeferred, to: stStallProduced, cross: vocab.AfterProduce},
		{from: stProduce, op: OpProduce, on: outOK, do: M.producedStaging, to: stStallProduced, cross: vocab.AfterProduce},

		// Staging the accepts, then the rejects, in the transaction.
		{from: stStageAccept, op: OpStageAccept, on: outErr, do: M.abort},
		{from: stStageAccept, op: OpStageAccept, on: outOK, when: M.rejects, to: stStageReject},
		{from: stStageAccept, op: OpStageAccept, on: outOK, to: stStall, cross: vocab.AfterStage},
		{from: stStageReject, op: OpStageReject, on: outErr, do: M.abort},
		{from: stStageReject, op: OpStageReject, on: outOK, to: stStall, cross: vocab.AfterStage},

		// A stall's wait: only Next leaves a stall, once it is over (a
		// wait the stop cut short leaves the worker stalled).
		{from: stStall, op: OpWait, on: outAny},
		{from: stStallProduced, op: OpWait, on: outAny},
	}
	return append(append(rows, machineEndRows[R]()...), coreRows[M, R]()...)
}

// machineEndRows end a transaction (renew the held locks, commit, or
// abort; deferred mode then acknowledges) and acknowledge a poll.
func machineEndRows[R any]() []transition[*Machine[R], R] {
	type M = *Machine[R]
	return []transition[M, R]{
		{from: stRenew, op: OpRenew, on: outAny, when: M.renewingOnly, do: M.renewedOnly, to: stCommitCheck},
		{from: stRenew, op: OpRenew, on: outAny, to: stCommit},
		{from: stCommit, op: OpCommit, on: outErr, do: M.abort},
		{from: stCommit, op: OpCommit, on: outOK, when: M.notDeferred, do: M.committed, to: stTop},
		{from: stCommit, op: OpCommit, on: outOK, do: M.committedDeferred, to: stAckAccept, cross: vocab.AfterCommitBeforeAck},
		{from: stAbort, op: OpAbort, on: outErr, do: M.fail},
		{from: stAbort, op: OpAbort, on: outOK, when: M.holdsDeferred, to: stRelease},
		{from: stAbort, op: OpAbort, on: outOK, do: M.dropDeferred, to: stTop},
		{from: stRelease, op: OpReleaseHeld, on: outAny, do: M.dropDeferred, to: stTop},

		// One acknowledgement group: accepts, rejects, releases.
		{from: stAckAccept, op: OpAccept, on: outErr, do: M.ackFailed},
		{from: stAckAccept, op: OpAccept, on: outOK, when: M.ackRejects, to: stAckReject},
		{from: stAckAccept, op: OpAccept, on: outOK, when: M.ackReleases, to: stAckRelease},
		{from: stAckAccept, op: OpAccept, on: outOK, do: M.acked, to: stTop},
		{from: stAckReject, op: OpReject, on: outErr, do: M.ackFailed},
		{from: stAckReject, op: OpReject, on: outOK, when: M.ackReleases, to: stAckRelease},
		{from: stAckReject, op: OpReject, on: outOK, do: M.acked, to: stTop},
		{from: stAckRelease, op: OpRelease, on: outErr, do: M.ackFailed},
		{from: stAckRelease, op: OpRelease, on: outOK, do: M.acked, to: stTop},
	}
}

// The steps.

func (m *Machine[R]) stepTop(in Inputs) (Action[R], bool) {
	if in.Stop && !m.stopping {
		m.stopping = true
		if m.open {
			m.force = true
			m.st = stCommitCheck
			return Action[R]{}, false
		}
	}
	if m.stopping {
		m.st = stClose
		return Action[R]{}, false
	}
	if in.Now.Before(in.CutUntil) {
		// Cut off: the worker's calls wait until the partition heals,
		// as a disconnected client's do.
		return Action[R]{Op: OpWait, Until: in.CutUntil}, true
	}
	timeout := pollTimeout
	if m.open {
		timeout = pollTimeoutBefore(in.Now, m.Deadline())
	}
	max := m.cfg.MaxPollRecords
	if in.MaxPoll > 0 {
		max = in.MaxPoll
	}
	return Action[R]{Op: OpPoll, Max: max, Timeout: timeout, Recs: m.prev}, true
}

func (m *Machine[R]) stepProcess(in Inputs) (Action[R], bool) {
	if m.cfg.Mode == vocab.Explicit && !m.renewed && in.RenewRatio > 0 && m.rng.Float64() < in.RenewRatio {
		m.renewed = true
		return Action[R]{Op: OpRenew, Recs: m.held}, true
	}
	m.renewed = false
	m.split(in)
	return Action[R]{Op: OpProcess, Recs: m.held}, true
}

func (m *Machine[R]) stepBegin(Inputs) (Action[R], bool) { return Action[R]{Op: OpBegin}, true }

func (m *Machine[R]) stepProduce(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpProduce, Recs: m.acc, Since: m.pollAt}, true
}

func (m *Machine[R]) stepStageAccept(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpStageAccept, Recs: m.acc}, true
}

func (m *Machine[R]) stepStageReject(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpStageReject, Recs: m.rej}, true
}

// stepStall holds the staged transaction open while a stall after staging
// lasts (past its timeout: the coordinator's sweep aborts it), then books
// the poll into it.
func (m *Machine[R]) stepStall(in Inputs) (Action[R], bool) {
	if a, ok := stalled[R](in, vocab.AfterStage); ok {
		return a, true
	}
	m.staged()
	return Action[R]{}, false
}

// stepStallProduced holds the transaction open after producing while a
// stall there lasts, then goes on where the mode resumes.
func (m *Machine[R]) stepStallProduced(in Inputs) (Action[R], bool) {
	if a, ok := stalled[R](in, vocab.AfterProduce); ok {
		return a, true
	}
	m.st = m.resume
	return Action[R]{}, false
}

// stalled is the wait of a stall at phase at that is still on; a worker
// stalled at the stop is abandoned.
func stalled[R any](in Inputs, at vocab.Phase) (Action[R], bool) {
	if !in.Now.Before(in.StallUntil) || (in.StallAt == vocab.AfterProduce) != (at == vocab.AfterProduce) {
		return Action[R]{}, false
	}
	if in.Stop {
		return Action[R]{Op: OpAbandon}, true
	}
	return Action[R]{Op: OpWait, Until: in.StallUntil}, true
}

func (m *Machine[R]) stepCommitCheck(in Inputs) (Action[R], bool) {
	m.commitCheck(in)
	return Action[R]{}, false
}

func (m *Machine[R]) stepRenew(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpRenew, Recs: m.dHeld}, true
}

func (m *Machine[R]) stepCommit(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpCommit, Since: m.txnStart}, true
}

func (m *Machine[R]) stepAckAccept(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpAccept, Recs: m.ackAcc, Since: m.ackSince, First: true, Last: len(m.ackRej) == 0 && len(m.ackRel) == 0}, true
}

func (m *Machine[R]) stepAckReject(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpReject, Recs: m.ackRej, Since: m.ackSince, Last: len(m.ackRel) == 0}, true
}

func (m *Machine[R]) stepAckRelease(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpRelease, Recs: m.ackRel, Since: m.ackSince, First: len(m.ackAcc) == 0 && len(m.ackRej) == 0, Last: true}, true
}

func (m *Machine[R]) stepAbort(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpAbort, Cause: m.cause}, true
}

func (m *Machine[R]) stepRelease(Inputs) (Action[R], bool) {
	return Action[R]{Op: OpReleaseHeld, Recs: m.dHeld}, true
}

// stepRetryBegin pauses before the next begin, unless the worker must stop
// or its begins have failed for Config.BeginGiveUp.
func (m *Machine[R]) stepRetryBegin(in Inputs) (Action[R], bool) {
	if in.Stop {
		// A begin that keeps failing is not retried past a stop: the
		// held records are left to the group (a share session's close
		// releases them; a classic group's offsets never moved past
		// them), and a worker that retried on would keep the run from
		// ending.
		m.stopping = true
		m.st = stClose
		return Action[R]{}, false
	}
	if m.beginFailing.IsZero() {
		m.beginFailing = in.Now
	}
	if g := m.cfg.BeginGiveUp; g > 0 && in.Now.Sub(m.beginFailing) >= g {
		// No transaction is open (its begin failed) and none was
		// aborted: the replace only says why.
		m.wedged = true
		m.st = stReplace
		return Action[R]{}, false
	}
	return m.retryWait(in), true
}

// commitCheck ends the open transaction when it is full or old enough (or
// forced), aborting it instead when the abort ratio says so; otherwise
// the worker polls on.
func (m *Machine[R]) commitCheck(in Inputs) {
	m.top()
	if !m.open {
		return
	}
	full := m.cfg.MaxRecords > 0 && m.txnCount >= m.cfg.MaxRecords
	if !m.force && !full && !in.EndTxn && in.Now.Before(m.Deadline()) {
		return
	}
	if m.cfg.Mode == vocab.Deferred && len(m.dHeld) > 0 && in.RenewRatio > 0 && m.rng.Float64() < in.RenewRatio {
		// Renewed on purpose; the end is decided again at the next step.
		m.st = stRenew
		m.renewOnly = true
		return
	}
	if !m.stopping && in.AbortRatio > 0 && m.rng.Float64() < in.AbortRatio {
		m.abort(Result[R]{})
		return
	}
	m.st = stCommit
	if m.cfg.Mode == vocab.Deferred && len(m.dHeld) > 0 && in.Now.Sub(m.txnStart) > m.cfg.LockDuration/2 {
		// The held records' locks must outlive the commit: renew them
		// when a good part of the lock is gone.
		m.st = stRenew
	}
}

// The guards.

func (m *Machine[R]) implicit() bool      { return m.cfg.Mode == vocab.Implicit }
func (m *Machine[R]) explicit() bool      { return m.cfg.Mode == vocab.Explicit }
func (m *Machine[R]) deferred() bool      { return m.cfg.Mode == vocab.Deferred }
func (m *Machine[R]) notDeferred() bool   { return m.cfg.Mode != vocab.Deferred }
func (m *Machine[R]) nonTxn() bool        { return !m.cfg.Mode.Transactional() }
func (m *Machine[R]) closed() bool        { return !m.open }
func (m *Machine[R]) inTxn() bool         { return m.open }
func (m *Machine[R]) rejects() bool       { return len(m.rej) > 0 }
func (m *Machine[R]) renewingOnly() bool  { return m.renewOnly }
func (m *Machine[R]) holdsDeferred() bool { return len(m.dHeld) > 0 }
func (m *Machine[R]) ackRejects() bool    { return len(m.ackRej) > 0 }
func (m *Machine[R]) ackReleases() bool   { return len(m.ackRel) > 0 }

// The handlers.

// polled holds the poll's records; the poll accepted the previous ones.
func (m *Machine[R]) polled(res Result[R]) {
	m.prev = m.prev[:0]
	m.held, m.pollAt = res.Recs, res.At
}

// pollEmpty: nothing came; the commit check decides on the open
// transaction by its size and age.
func (m *Machine[R]) pollEmpty(Result[R]) {
	m.prev = m.prev[:0]
	m.force = false
}

// keepPrev keeps an implicit worker's poll for the next poll to accept.
func (m *Machine[R]) keepPrev(Result[R]) { m.prev = append(m.prev[:0], m.held...) }

// holdDeferred keeps a deferred worker's records until its output
// transaction ends.
func (m *Machine[R]) holdDeferred(Result[R]) {
	if m.cfg.Mode != vocab.Deferred {
		return
	}
	m.dHeld = append(m.dHeld, m.held...)
	m.dAcc = append(m.dAcc, m.acc...)
	m.dRej = append(m.dRej, m.rej...)
}

// begun opens the transaction, dated by the poll that opened it.
func (m *Machine[R]) begun(res Result[R]) {
	m.open, m.txnStart, m.txnCount = true, m.pollAt, 0
	m.beginFailing = time.Time{}
	m.holdDeferred(res)
}

// ackPoll makes the poll's records the acknowledgement group to send.
func (m *Machine[R]) ackPoll(Result[R]) {
	m.ackAcc, m.ackRej, m.ackRel, m.ackSince = m.acc, m.rej, m.rel, m.pollAt
}

// producedDeferred: a share consumer must acknowledge a poll's records
// before its next poll (Kafka's explicit mode), so the output transaction
// ends with every poll.
func (m *Machine[R]) producedDeferred(Result[R]) {
	m.txnCount += len(m.held)
	m.force = true
	m.resume = stCommitCheck
}

// producedStaging: the acks or offsets are staged next.
func (m *Machine[R]) producedStaging(Result[R]) { m.resume = stStageAccept }

// staged books the staged poll into the transaction and checks whether it
// must end.
func (m *Machine[R]) staged() {
	m.txnCount += len(m.held)
	m.force = false
	m.st = stCommitCheck
}

func (m *Machine[R]) renewedOnly(Result[R]) { m.renewOnly = false }

func (m *Machine[R]) committed(Result[R]) { m.open = false }

// committedDeferred: the outputs are committed; the held records' acks
// follow.
func (m *Machine[R]) committedDeferred(Result[R]) {
	m.open = false
	m.ackAcc, m.ackRej, m.ackRel, m.ackSince = m.dAcc, m.dRej, nil, m.txnStart
	m.dHeld, m.dAcc, m.dRej = nil, nil, nil
}

// ackFailed drops the group after a failed ack: records whose lock expired
// before the ack are redelivered, and the output written for them becomes
// a duplicate, as these modes allow. A fenced worker is replaced.
func (m *Machine[R]) ackFailed(res Result[R]) {
	m.ackAcc, m.ackRej, m.ackRel = nil, nil, nil
	if res.Fenced {
		m.fail(res)
	} else {
		m.top()
	}
}

// acked: the group is done.
func (m *Machine[R]) acked(Result[R]) { m.ackAcc, m.ackRej, m.ackRel = nil, nil, nil }

func (m *Machine[R]) dropDeferred(Result[R]) { m.dHeld, m.dAcc, m.dRej = nil, nil, nil }

// abort ends the open transaction after res's error (none: on purpose). A
// fenced worker is replaced instead: the coordinator already aborted.
func (m *Machine[R]) abort(res Result[R]) {
	m.open = false
	if res.Fenced {
		m.dHeld, m.dAcc, m.dRej = nil, nil, nil
		m.aborted = true
		m.st = stReplace
		return
	}
	m.cause = res.Err
	m.st = stAbort
}
