// This file holds Machine, one worker's loop in every mode as a pure state
// machine: Next says what to do, Done takes the outcome.

package pipeline

import (
	"time"

	"github.com/sharebench/sharebench/vocab"
)

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

// Config is what a machine needs of its workload.
type Config struct {
	Mode           vocab.Mode
	MaxPollRecords int
	// MaxRecords ends a transaction once it holds that many records (0: no
	// bound). MaxDuration ends it once it is that old (0: 1s).
	MaxRecords  int
	MaxDuration time.Duration
	// LockDuration is the share group's lock duration: a deferred worker
	// renews its held records' locks before a commit that comes past half
	// of it.
	LockDuration time.Duration
	// Checkpoint, when set, runs the checkpoint model (checkpoint.go)
	// instead of the mode's own loop: Mode Transactional or Explicit.
	Checkpoint *CheckpointConfig
	// BeginGiveUp replaces a worker whose begins have failed for that
	// long (0: it retries until the stop). A producer that cannot open a
	// transaction for a transaction timeout is wedged (its connection, its
	// producer id); a new incarnation gets new ones, as an application
	// recreates its producer, and the records it held go back to the
	// group (a share session's end releases them; a classic group's
	// offsets never moved past them).
	BeginGiveUp time.Duration
}

// Inputs is what the machine is told at each step.
type Inputs struct {
	Now time.Time
	// Stop asks the worker to finish: commit its open transaction (never
	// abort it by choice) and close.
	Stop bool
	// CutUntil: the worker is cut off from the target (a network
	// partition) until then; its calls wait.
	CutUntil time.Time
	// StallUntil: the worker stalls (holding its transaction open) until
	// then, at StallAt: AfterStage (the zero value: its acks or offsets
	// staged, the transaction whole) or AfterProduce (its outputs written
	// and nothing staged yet, so a commit that lands meanwhile is torn). A
	// worker still stalled at a stop is abandoned (OpAbandon).
	StallUntil time.Time
	StallAt    vocab.Phase
	// AbortRatio is the share of transactions to abort on purpose.
	AbortRatio float64
	// RejectRatio is the share of a poll's records rejected on purpose
	// (modes that can reject); ReleaseRatio the share released on purpose
	// without an output (explicit mode only: the other modes' acks are
	// part of, or follow, a transaction).
	RejectRatio, ReleaseRatio float64
	// RenewRatio is the chance that the worker renews its held records'
	// locks before it goes on with them (explicit: before processing a
	// poll; deferred: before ending its transaction).
	RenewRatio float64
	// EndTxn ends the open transaction at this step's commit check,
	// whatever its size and age (a checkpoint, or a simulator's choice).
	EndTxn bool
	// MaxPoll bounds this step's poll (0: Config.MaxPollRecords).
	MaxPoll int
	// SnapshotDelay is how long the worker's next snapshot takes (a
	// slow-checkpoint fault; checkpoint model). The machine waits it out
	// once per checkpoint; the caller clears it when the wait ends.
	SnapshotDelay time.Duration
}

// Idle poll bound: a worker with nothing to do polls at least this often,
// so it sees a stop or a due commit.
const pollTimeout = 100 * time.Millisecond

// RetryPause is how long a worker waits after a call failed with an error
// that is neither fencing nor a cancellation, before it goes on.
const RetryPause = 10 * time.Millisecond

type state uint8

const (
	stTop state = iota
	stProcess
	stBegin
	stProduce
	stStageAccept
	stStageReject
	stStall
	stStallProduced
	stCommitCheck
	stRenew
	stCommit
	stAckAccept
	stAckReject
	stAckRelease
	stAbort
	stRelease
	stRetry
	stRetryBegin
	stReplace
	stClose
	stExit
)

// Machine is one worker's loop. It is not safe for concurrent use; one
// goroutine (or one simulator) drives it.
type Machine[R any] struct {
	cfg   Config
	rng   Rand
	st    state
	phase vocab.Phase
	// resume is where a stall after producing goes on (staging, or the
	// commit check).
	resume state
	last   Op

	stopping bool
	force    bool // the pending commit check commits whatever the size and age

	// The poll being processed.
	pollAt        time.Time
	held          []R
	acc, rej, rel []R
	renewed       bool // explicit: the held records' locks were renewed at this poll
	// Implicit mode: the previous poll's records, which the next poll (or
	// the close) accepts.
	prev []R

	// The open transaction (deferred, transactional and classic-eos
	// transactions span polls).
	open     bool
	txnStart time.Time
	txnCount int
	// Deferred: the records held across the output transaction, acked
	// after it commits, released after it aborts.
	dHeld, dAcc, dRej []R

	// The acknowledgement group in flight.
	ackAcc, ackRej, ackRel []R
	ackSince               time.Time

	cp *cpState[R] // the checkpoint model's state (Config.Checkpoint)

	// beginFailing is when the current run of failed begins started
	// (zero while begins succeed).
	beginFailing time.Time

	renewOnly bool  // the renew to send is a choice, not the late-lock one
	cause     error // of the abort to send
	aborted   bool  // of the replace to send
	wedged    bool  // of the replace to send
}

// New returns the machine of a worker of cfg.Mode drawing from rng.
func New[R any](cfg Config, rng Rand) *Machine[R] {
	if cfg.MaxDuration <= 0 {
		cfg.MaxDuration = time.Second
	}
	m := &Machine[R]{cfg: cfg, rng: rng, phase: vocab.Idle}
	if cfg.Checkpoint != nil {
		m.cp = &cpState[R]{}
	}
	return m
}

// Phase is the boundary the worker last crossed.
func (m *Machine[R]) Phase() vocab.Phase { return m.phase }

// Pending returns the records the next poll (or the close) accepts:
// implicit mode's previous poll. The slice is the machine's.
func (m *Machine[R]) Pending() []R { return m.prev }

// Open reports whether a transaction is open.
func (m *Machine[R]) Open() bool { return m.open }

// Stopping reports whether the worker was asked to stop.
func (m *Machine[R]) Stopping() bool { return m.stopping }

// Deadline is when the open transaction must commit by age.
func (m *Machine[R]) Deadline() time.Time { return m.txnStart.Add(m.cfg.MaxDuration) }

// Next returns the worker's next action.
func (m *Machine[R]) Next(in Inputs) Action[R] {
	for {
		var a Action[R]
		var ok bool
		if m.cp != nil {
			a, ok = m.cpNext(in)
		} else {
			a, ok = m.next(in)
		}
		if ok {
			m.last = a.Op
			return a
		}
	}
}

// next returns the action of the current state, or false after a
// transition that needs no call.
func (m *Machine[R]) next(in Inputs) (Action[R], bool) {
	switch m.st {
	case stTop:
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
			if d := m.Deadline().Sub(in.Now); d < timeout {
				timeout = max(d, time.Millisecond)
			}
		}
		max := m.cfg.MaxPollRecords
		if in.MaxPoll > 0 {
			max = in.MaxPoll
		}
		return Action[R]{Op: OpPoll, Max: max, Timeout: timeout, Recs: m.prev}, true
	case stProcess:
		if m.cfg.Mode == vocab.Explicit && !m.renewed && in.RenewRatio > 0 && m.rng.Float64() < in.RenewRatio {
			m.renewed = true
			return Action[R]{Op: OpRenew, Recs: m.held}, true
		}
		m.renewed = false
		m.split(in)
		return Action[R]{Op: OpProcess, Recs: m.held}, true
	case stBegin:
		return Action[R]{Op: OpBegin}, true
	case stProduce:
		return Action[R]{Op: OpProduce, Recs: m.acc, Since: m.pollAt}, true
	case stStageAccept:
		return Action[R]{Op: OpStageAccept, Recs: m.acc}, true
	case stStageReject:
		return Action[R]{Op: OpStageReject, Recs: m.rej}, true
	case stStall, stStallProduced:
		// A stalled worker holds its transaction open (past its timeout:
		// the coordinator's sweep aborts it), here after staging or, in
		// stStallProduced, after producing.
		at := vocab.AfterStage
		if m.st == stStallProduced {
			at = vocab.AfterProduce
		}
		if in.Now.Before(in.StallUntil) && (in.StallAt == vocab.AfterProduce) == (at == vocab.AfterProduce) {
			if in.Stop {
				return Action[R]{Op: OpAbandon}, true
			}
			return Action[R]{Op: OpWait, Until: in.StallUntil}, true
		}
		if m.st == stStall {
			m.staged()
		} else {
			m.st = m.resume
		}
		return Action[R]{}, false
	case stCommitCheck:
		m.commitCheck(in)
		return Action[R]{}, false
	case stRenew:
		return Action[R]{Op: OpRenew, Recs: m.dHeld}, true
	case stCommit:
		return Action[R]{Op: OpCommit, Since: m.txnStart}, true
	case stAckAccept:
		return Action[R]{Op: OpAccept, Recs: m.ackAcc, Since: m.ackSince, First: true, Last: len(m.ackRej) == 0 && len(m.ackRel) == 0}, true
	case stAckReject:
		return Action[R]{Op: OpReject, Recs: m.ackRej, Since: m.ackSince, Last: len(m.ackRel) == 0}, true
	case stAckRelease:
		return Action[R]{Op: OpRelease, Recs: m.ackRel, Since: m.ackSince, First: len(m.ackAcc) == 0 && len(m.ackRej) == 0, Last: true}, true
	case stAbort:
		return Action[R]{Op: OpAbort, Cause: m.cause}, true
	case stRelease:
		return Action[R]{Op: OpReleaseHeld, Recs: m.dHeld}, true
	case stRetry, stRetryBegin:
		if m.st == stRetryBegin && in.Stop {
			// A begin that keeps failing is not retried past a stop: the
			// held records are left to the group (a share session's close
			// releases them; a classic group's offsets never moved past
			// them), and a worker that retried on would keep the run from
			// ending.
			m.stopping = true
			m.st = stClose
			return Action[R]{}, false
		}
		if m.st == stRetryBegin {
			if m.beginFailing.IsZero() {
				m.beginFailing = in.Now
			}
			if g := m.cfg.BeginGiveUp; g > 0 && in.Now.Sub(m.beginFailing) >= g {
				// No transaction is open (its begin failed) and none
				// was aborted: the replace only says why.
				m.wedged = true
				m.st = stReplace
				return Action[R]{}, false
			}
		}
		return Action[R]{Op: OpWait, Until: in.Now.Add(RetryPause), Retry: true}, true
	case stReplace:
		return Action[R]{Op: OpReplace, Aborted: m.aborted, Wedged: m.wedged}, true
	case stClose:
		return Action[R]{Op: OpClose, Recs: m.prev}, true
	}
	return Action[R]{Op: OpExit}, true
}

// Done takes the outcome of the action Next returned last, and returns the
// crash phase the worker crossed by it ("" for none): a crash scheduled
// for that phase strikes now, before the next action.
func (m *Machine[R]) Done(res Result[R]) vocab.Phase {
	if m.cp != nil {
		return m.cpDone(res)
	}
	return m.done(res)
}

func (m *Machine[R]) done(res Result[R]) vocab.Phase {
	switch m.last {
	case OpPoll:
		if res.Err != nil {
			m.fail(res)
			return ""
		}
		m.prev = m.prev[:0] // the poll accepted them
		if len(res.Recs) == 0 {
			m.force = false
			m.st = stCommitCheck
			return ""
		}
		m.held, m.pollAt = res.Recs, res.At
		m.st = stProcess
		return m.cross(vocab.AfterPoll)
	case OpProcess:
		switch {
		case m.cfg.Mode == vocab.Implicit:
			m.prev = append(m.prev[:0], m.held...)
			m.st = stProduce
		case !m.cfg.Mode.Transactional():
			m.st = stProduce
		case !m.open:
			m.st = stBegin
		default:
			m.holdDeferred()
			m.st = stProduce
		}
	case OpBegin:
		if res.Err != nil && !res.Fenced && !res.Canceled {
			// The worker keeps the poll's records and begins again after
			// a pause (the previous transaction's markers may still be on
			// their way): a consumer group's position has moved past
			// them, so polling on would skip them for good.
			m.st = stRetryBegin
			return ""
		}
		if res.Err != nil {
			m.fail(res)
			return ""
		}
		m.open, m.txnStart, m.txnCount = true, m.pollAt, 0
		m.beginFailing = time.Time{}
		m.holdDeferred()
		m.st = stProduce
	case OpProduce:
		if res.Err != nil {
			if m.open {
				m.abort(res)
			} else {
				m.fail(res)
			}
			return ""
		}
		switch m.cfg.Mode {
		case vocab.Implicit:
			m.st = stTop
		case vocab.Explicit:
			m.ackAcc, m.ackRej, m.ackRel, m.ackSince = m.acc, m.rej, m.rel, m.pollAt
			m.st = stAckAccept
		case vocab.Deferred:
			// A share consumer must acknowledge a poll's records before
			// its next poll (Kafka's explicit mode), so the output
			// transaction ends with every poll.
			m.txnCount += len(m.held)
			m.force = true
			m.resume, m.st = stCommitCheck, stStallProduced
		default:
			m.resume, m.st = stStageAccept, stStallProduced
		}
		// A stall at AfterProduce waits in stStallProduced, inside the
		// transaction.
		return m.cross(vocab.AfterProduce)
	case OpStageAccept, OpStageReject:
		if res.Err != nil {
			m.abort(res)
			return ""
		}
		if m.last == OpStageAccept && len(m.rej) > 0 {
			m.st = stStageReject
			return ""
		}
		m.st = stStall
		return m.cross(vocab.AfterStage)
	case OpWait:
		switch m.st {
		case stStall, stStallProduced:
			// Next goes on once the stall is over: a wait cut short (by
			// a stop) leaves the worker stalled.
		case stRetry:
			m.top()
		case stRetryBegin:
			m.st = stBegin
		}
	case OpRenew:
		switch {
		case m.st == stRenew && m.renewOnly:
			m.renewOnly = false
			m.st = stCommitCheck
		case m.st == stRenew:
			m.st = stCommit
		}
	case OpCommit:
		if res.Err != nil {
			m.abort(res)
			return ""
		}
		m.open = false
		if m.cfg.Mode != vocab.Deferred {
			m.top()
			return ""
		}
		m.ackAcc, m.ackRej, m.ackRel, m.ackSince = m.dAcc, m.dRej, nil, m.txnStart
		m.dHeld, m.dAcc, m.dRej = nil, nil, nil
		m.st = stAckAccept
		return m.cross(vocab.AfterCommitBeforeAck)
	case OpAccept, OpReject, OpRelease:
		if res.Err != nil {
			// Records whose lock expired before the ack are redelivered:
			// the output written for them becomes a duplicate, as these
			// modes allow.
			m.ackAcc, m.ackRej, m.ackRel = nil, nil, nil
			if res.Fenced {
				m.fail(res)
			} else {
				m.top()
			}
			return ""
		}
		switch {
		case m.last == OpAccept && len(m.ackRej) > 0:
			m.st = stAckReject
		case m.last != OpRelease && len(m.ackRel) > 0:
			m.st = stAckRelease
		default:
			m.ackAcc, m.ackRej, m.ackRel = nil, nil, nil
			m.top()
		}
	case OpAbort:
		if res.Err != nil {
			m.fail(res)
			return ""
		}
		if len(m.dHeld) > 0 {
			m.st = stRelease
			return ""
		}
		m.dHeld, m.dAcc, m.dRej = nil, nil, nil
		m.top()
	case OpReleaseHeld:
		m.dHeld, m.dAcc, m.dRej = nil, nil, nil
		m.top()
	case OpReplace, OpClose, OpExit:
		m.st = stExit
	}
	return ""
}

func (m *Machine[R]) cross(p vocab.Phase) vocab.Phase {
	m.phase = p
	return p
}

// split decides the fate of the poll's records: rejected on purpose at the
// reject ratio (modes that can reject), released at the release ratio
// (explicit mode), accepted otherwise.
func (m *Machine[R]) split(in Inputs) {
	m.acc, m.rej, m.rel = m.held, nil, nil
	rej, rel := in.RejectRatio, in.ReleaseRatio
	if !m.cfg.Mode.CanReject() {
		rej = 0
	}
	if m.cfg.Mode != vocab.Explicit {
		rel = 0
	}
	if rej <= 0 && rel <= 0 {
		return
	}
	m.acc = nil
	for _, r := range m.held {
		switch x := m.rng.Float64(); {
		case x < rej:
			m.rej = append(m.rej, r)
		case x < rej+rel:
			m.rel = append(m.rel, r)
		default:
			m.acc = append(m.acc, r)
		}
	}
}

// top sends the worker back to the top of its loop: to poll again, in its
// open transaction if one is open, else idle.
func (m *Machine[R]) top() {
	m.st = stTop
	if !m.open {
		m.phase = vocab.Idle
	}
}

// holdDeferred keeps a deferred worker's records until its output
// transaction ends.
func (m *Machine[R]) holdDeferred() {
	if m.cfg.Mode != vocab.Deferred {
		return
	}
	m.dHeld = append(m.dHeld, m.held...)
	m.dAcc = append(m.dAcc, m.acc...)
	m.dRej = append(m.dRej, m.rej...)
}

// staged books the staged poll into the transaction and checks whether it
// must end.
func (m *Machine[R]) staged() {
	m.txnCount += len(m.held)
	m.force = false
	m.st = stCommitCheck
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

// fail handles a failed call: a cancelled one ends the loop, a fenced
// worker is replaced, anything else is retried after a pause.
func (m *Machine[R]) fail(res Result[R]) {
	switch {
	case res.Canceled:
		m.st = stExit
	case res.Fenced:
		m.open = false
		m.aborted = false
		m.st = stReplace
	default:
		m.st = stRetry
	}
}
