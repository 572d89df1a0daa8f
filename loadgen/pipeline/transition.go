// This file holds how a machine is written down: its states, a step per
// state (what the state asks the worker to do, or a decision that needs no
// call), and a table of transitions (state × the outcome of its call → the
// effect, the next state and the crash phase crossed) that Done dispatches
// on.

package pipeline

import "github.com/sharebench/sharebench/vocab"

type state uint8

// The states. stNone is no state: in a transition, the state stays (or
// the transition's handler chose it).
const (
	stNone state = iota

	// The states both machines share.
	stTop     // between calls: a machine's own step decides what comes next
	stRetry   // the pause after a failed call
	stReplace // fenced, or wedged: a new incarnation takes the worker's place
	stClose   // leaving cleanly
	stExit    // the loop is over

	// Machine's states (machine.go).
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
	stRetryBegin

	// CheckpointMachine's states (checkpoint.go).
	stCpProcess
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

	stCount
)

// outcome classifies a call's Result; a transition takes a set of them.
type outcome uint8

const (
	outOK       outcome = 1 << iota // it succeeded (a poll: with records)
	outEmpty                        // a poll succeeded with no records
	outFailed                       // it failed, neither fenced nor cancelled
	outFenced                       // it failed fenced: the worker must be replaced
	outCanceled                     // it failed with the caller's context over

	outErr = outFailed | outFenced | outCanceled
	outAny = outOK | outEmpty | outErr
)

// outcomeOf classifies res, the outcome of op. A cancellation outranks
// fencing, as in core.fail.
func outcomeOf[R any](op Op, res Result[R]) outcome {
	switch {
	case res.Err == nil && op == OpPoll && len(res.Recs) == 0:
		return outEmpty
	case res.Err == nil:
		return outOK
	case res.Canceled:
		return outCanceled
	case res.Fenced:
		return outFenced
	}
	return outFailed
}

// transition is one row of a machine's table: in state from, an outcome in
// on of the call op, when the guard holds (nil: always), runs do (nil:
// nothing), moves to state to (stNone: do chose, or the state stays;
// stTop: the top of the loop, idle unless a transaction is open) and
// crosses phase cross (""; none). The first matching row of a table wins.
type transition[M, R any] struct {
	from  state
	op    Op
	on    outcome
	when  func(M) bool
	do    func(M, Result[R])
	to    state
	cross vocab.Phase
}

// step is a state's step: the action it asks for, or false after a
// decision that needs no call (it moved the machine on).
type step[M, R any] func(M, Inputs) (Action[R], bool)

// next runs m's steps from its state until one asks for a call; a state
// without a step of m's own is one of the core's.
func next[M, R any](m M, c *core[R], steps []step[M, R], in Inputs) Action[R] {
	for {
		var a Action[R]
		var ok bool
		if s := steps[c.st]; s != nil {
			a, ok = s(m, in)
		} else {
			a, ok = c.step(in)
		}
		if ok {
			c.last = a.Op
			return a
		}
	}
}

// apply takes res, the outcome of op, by the first row of rows that
// matches m's state, and returns the crash phase crossed. An outcome no
// row takes changes nothing.
func apply[M, R any](m M, c *core[R], rows []transition[M, R], op Op, res Result[R]) vocab.Phase {
	out := outcomeOf(op, res)
	for i := range rows {
		t := &rows[i]
		if t.from != c.st || t.op != op || t.on&out == 0 || t.when != nil && !t.when(m) {
			continue
		}
		if t.do != nil {
			t.do(m, res)
		}
		switch t.to {
		case stNone:
		case stTop:
			c.top()
		default:
			c.st = t.to
		}
		if t.cross != "" {
			return c.cross(t.cross)
		}
		return ""
	}
	return ""
}

// coreRows are the transitions of the states both machines share.
func coreRows[M, R any]() []transition[M, R] {
	return []transition[M, R]{
		{from: stRetry, op: OpWait, on: outAny, to: stTop},
		{from: stReplace, op: OpReplace, on: outAny, to: stExit},
		{from: stClose, op: OpClose, on: outAny, to: stExit},
		{from: stExit, op: OpExit, on: outAny, to: stExit},
	}
}
