// This file holds a transactional id's coordinator state and its
// transitions.

package txncoord

import (
	"math"
	"time"

	"github.com/sharebench/sharebench/engine/internal/mutant"
)

// maxEpoch is the last epoch a producer id takes: one more bump rolls to
// a new producer id at epoch 0, as Kafka does before the epoch overflows.
const maxEpoch = math.MaxInt16 - 1

// Txn is one transactional id's coordinator state. P is an output
// partition's key, S a share partition's (group and partition); classic
// groups are named by their id.
type Txn[P, S comparable] struct {
	ID      string
	PID     int64
	Epoch   int16
	State   State
	Timeout time.Duration
	// Started is when the open transaction began; the timeout counts
	// from it.
	Started time.Duration
	// Seq counts the transactions begun under this id.
	Seq int64

	// The participants of the open or decided transaction: output
	// partitions, share partitions, classic groups. Each gets a marker.
	Parts  Set[P]
	Shares Set[S]
	Groups Set[string]

	// TimedOutEpoch is the epoch whose transaction the timeout sweep
	// aborted (-1 for none), so that producer's next call can say why it
	// is fenced.
	TimedOutEpoch int16
}

// New returns the state of a transactional id initialised for the first
// time: producer id pid at epoch 0, EMPTY.
func New[P, S comparable](id string, pid int64, timeout time.Duration) *Txn[P, S] {
	t := &Txn[P, S]{ID: id, PID: pid, State: Empty, Timeout: timeout, TimedOutEpoch: -1}
	t.checked()
	return t
}

// Next returns the producer id and epoch the transactional id takes at its
// next epoch bump: the epoch plus one, or, when that would pass maxEpoch,
// a fresh producer id from nextPID at epoch 0. nextPID is called only
// then.
func (t *Txn[P, S]) Next(nextPID func() int64) (int64, int16) {
	if t.Epoch >= maxEpoch {
		return nextPID(), 0
	}
	return t.PID, t.Epoch + 1
}

// BumpEpoch moves the transactional id to its next epoch (Next), fencing
// every producer of the current one.
func (t *Txn[P, S]) BumpEpoch(nextPID func() int64) {
	t.PID, t.Epoch = t.Next(nextPID)
	t.checked()
}

// FenceAborts reports whether initialising a new producer for the id must
// first abort the previous producer's transaction: it must when one is
// open.
func (t *Txn[P, S]) FenceAborts() bool {
	if mutant.On("fence-keeps-open-txn") {
		return false
	}
	return t.State == Ongoing
}

// Reinit is InitProducerId on an initialised id once its last transaction
// is decided and complete: the epoch is bumped (fencing the previous
// producer) and the id starts EMPTY with the new producer's timeout.
func (t *Txn[P, S]) Reinit(timeout time.Duration, nextPID func() int64) {
	t.PID, t.Epoch = t.Next(nextPID)
	t.State = Empty
	t.Timeout = timeout
	t.checked()
}

// Verdict is the coordinator's answer to a producer's call.
type Verdict int8

// Verdicts.
const (
	// Admitted: the producer is the id's current one.
	Admitted Verdict = iota
	// Fenced: a newer producer (or the coordinator) took the id over.
	Fenced
	// FencedTimedOut: fenced because the timeout sweep aborted this
	// producer's transaction.
	FencedTimedOut
)

func (v Verdict) String() string {
	switch v {
	case Admitted:
		return "admitted"
	case Fenced:
		return "fenced"
	case FencedTimedOut:
		return "fenced: timed out"
	}
	return "Verdict(?)"
}

// Admit validates a call of producer pid at epoch. decided says the id has
// a decided transaction whose markers are on their way: the coordinator
// ended it (timeout sweep, fencing) while the producer still holds its
// epoch, which is then as good as bumped, since a producer's own end
// moves it to the epoch after the markers.
func (t *Txn[P, S]) Admit(pid int64, epoch int16, decided bool) Verdict {
	if mutant.On("fenced-producer-accepted") {
		return Admitted
	}
	if t.PID == pid && t.Epoch == epoch && !decided {
		return Admitted
	}
	if t.PID == pid && t.TimedOutEpoch == epoch {
		return FencedTimedOut
	}
	return Fenced
}

// Begin opens a transaction at now. It refuses (false, state unchanged)
// unless the id is EMPTY or its last transaction is complete.
func (t *Txn[P, S]) Begin(now time.Duration) bool {
	switch t.State {
	case Empty, CompleteCommit, CompleteAbort:
	default:
		return false
	}
	t.State, t.Started = Ongoing, now
	t.Seq++
	t.checked()
	return true
}

// Ongoing reports whether a transaction is open: only then may it gain
// participants, stage, or end.
func (t *Txn[P, S]) Ongoing() bool { return t.State == Ongoing }

// AddPart, AddShare and AddGroup add a participant to the open
// transaction and report whether it is new (and so must be journaled
// before the data it covers). The caller has checked Ongoing.
func (t *Txn[P, S]) AddPart(p P) bool { return added(t, t.Parts.Add(p)) }

// AddShare adds a share partition; see AddPart.
func (t *Txn[P, S]) AddShare(s S) bool { return added(t, t.Shares.Add(s)) }

// AddGroup adds a classic group; see AddPart.
func (t *Txn[P, S]) AddGroup(g string) bool { return added(t, t.Groups.Add(g)) }

func added[P, S comparable](t *Txn[P, S], isNew bool) bool {
	if isNew {
		t.checked()
	}
	return isNew
}

// Prepare decides the open transaction (PREPARE_COMMIT or PREPARE_ABORT)
// and returns the epoch its markers carry: the next one (KIP-890), so the
// markers fence anything the old epoch still sends, or the current one at
// maxEpoch, where the next bump rolls the producer id instead. It refuses
// (false, state unchanged) unless a transaction is open.
func (t *Txn[P, S]) Prepare(commit bool) (markerEpoch int16, ok bool) {
	if t.State != Ongoing {
		return 0, false
	}
	t.State = PrepareAbort
	if commit {
		t.State = PrepareCommit
	}
	markerEpoch = t.Epoch + 1
	if t.Epoch >= maxEpoch {
		markerEpoch = t.Epoch
	}
	t.checked()
	return markerEpoch, true
}

// Complete records that every marker of the decided transaction is
// applied (COMPLETE_COMMIT or COMPLETE_ABORT) and moves the id to producer
// pid at epoch, fixed at the decision (Next). The participants stay until
// Forget, so the completion can be journaled with them. It refuses (false,
// state unchanged) unless the transaction was prepared with this outcome.
func (t *Txn[P, S]) Complete(commit bool, pid int64, epoch int16) bool {
	switch {
	case commit && t.State == PrepareCommit:
		t.State = CompleteCommit
	case !commit && t.State == PrepareAbort:
		t.State = CompleteAbort
	default:
		return false
	}
	t.PID, t.Epoch = pid, epoch
	t.checked()
	return true
}

// Forget drops the participants of a completed transaction (once its
// completion is journaled), keeping their storage for the next one.
func (t *Txn[P, S]) Forget() {
	t.Parts.reset()
	t.Shares.reset()
	t.Groups.reset()
	t.checked()
}

// TimedOut reports whether the timeout sweep at now must abort the id's
// transaction: it is open and has outlived its timeout.
func (t *Txn[P, S]) TimedOut(now time.Duration) bool {
	if mutant.On("sweep-skips-timed-out") {
		return false
	}
	return t.State == Ongoing && now-t.Started >= t.Timeout
}

// MarkTimedOut records that the sweep aborts the current epoch's
// transaction, before it is prepared, so the journaled decision and
// completion carry it.
func (t *Txn[P, S]) MarkTimedOut() {
	t.TimedOutEpoch = t.Epoch
	t.checked()
}

// Resumable reports whether producer pid at epoch may resume the id's
// open transaction without initialising (no bump, no abort): it must be
// the id's current producer, its transaction open and not decided.
func (t *Txn[P, S]) Resumable(pid int64, epoch int16, decided bool) bool {
	return t.PID == pid && t.Epoch == epoch && t.State == Ongoing && !decided
}

// Adopts reports whether a retried end (commit or abort) of the producer
// at pid and epoch, whose open transaction was the seq-th, finds that
// transaction completed with that outcome (recovery finished it after a
// crash cut the first attempt short), so the retry succeeds and the
// producer takes the bumped epoch, as KIP-890 lets a client retry EndTxn.
// A transaction the sweep aborted is not adopted: that producer is fenced.
func (t *Txn[P, S]) Adopts(seq int64, commit bool, pid int64, epoch int16) bool {
	want := CompleteAbort
	if commit {
		want = CompleteCommit
	}
	return seq != 0 && t.Seq == seq && t.State == want && t.PID == pid &&
		t.Epoch == epoch+1 && t.TimedOutEpoch != epoch
}
