// This file holds the engine faults of durable seeds (docs/design.md §3.6, §8): a
// full crash and restart from the data directory, a crash inside a
// transaction's end at a hook point, a coordinator-only crash and a
// share-partition failover. The checks hold recovery to invariants 9 and
// 12: a decided transaction completes with its decision, and the restored
// state is the state before the crash minus acquisitions.

package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/workloads"
)

// crashArm is a crash waiting for the next worker transaction to end.
type crashArm struct {
	point  engine.HookPoint
	marker int // HookTxnMarker: crash after this many markers
}

func (a *crashArm) String() string {
	switch a.point {
	case engine.HookTxnPrepared:
		return "after PREPARE is logged"
	case engine.HookTxnMarker:
		return fmt.Sprintf("after marker %d", a.marker)
	}
	return "after COMPLETE is logged"
}

// crashHook fires an armed crash in a transaction end a client asked for
// (not in a fencing or a timeout). It runs inside the engine with locks
// held and only reads and writes simulator fields.
func (s *sim) crashHook(pt engine.HookPoint, info engine.HookInfo) error {
	a := s.crashArm
	if a == nil || pt != a.point || info.TransactionalID == inTxnID {
		return nil
	}
	// PREPARE_* is logged inside the client's end; its markers and
	// COMPLETE_* follow when the timers deliver them.
	if !s.ending && !(s.delivering && pt != engine.HookTxnPrepared) {
		return nil
	}
	if pt == engine.HookTxnMarker && info.Marker != a.marker {
		return nil
	}
	s.crashArm = nil
	s.crashFired = fmt.Sprintf("%s %s of %s", a, endWord(info.Commit), info.TransactionalID)
	return fmt.Errorf("sim: %w", engine.ErrInjectedCrash)
}

// execDurable performs a durability step; on an in-memory seed it does
// nothing.
func (s *sim) execDurable(st Step, r *rand.Rand) {
	if !s.p.durable {
		s.say("%v: no data directory", st.Kind)
		return
	}
	switch st.Kind {
	case KindRestart:
		s.restart("restart")
	case KindCrashEnd:
		a := &crashArm{point: engine.HookTxnPrepared}
		switch r.IntN(3) {
		case 1:
			a.point, a.marker = engine.HookTxnMarker, 1
		case 2:
			a.point = engine.HookTxnCompleted
		}
		s.crashArm = a
		s.say("crash-end armed: %s", a)
	case KindCoordinatorCrash:
		if _, err := s.e.CrashCoordinator(); err != nil {
			s.fail("I12 recovery", "coordinator crash: %v", err)
			return
		}
		s.coordCrashed = true
		s.say("coordinator-crash")
	case KindFailover:
		g := r.IntN(len(s.share))
		part := int32(r.IntN(int(s.p.inParts)))
		err := s.e.FailoverSharePartition(s.groups[g], s.in[part].tp)
		switch {
		case errors.Is(err, engine.ErrUnknownGroup):
			s.say("failover %s p%d: no share partition yet", s.groups[g], part)
		case err != nil:
			s.fail("I12 recovery", "failover of %s %s: %v", s.groups[g], s.in[part].tp, err)
		default:
			s.failover[[2]int{g, int(part)}] = true
			s.say("failover %s p%d", s.groups[g], part)
		}
	}
}

// restart crashes the engine (if it is not already) and recovers it, by
// the engine target's engine-restart fault. Every member handle is gone
// afterwards; producers keep their epochs.
func (s *sim) restart(why string) {
	if _, err := s.t.FaultRunner().Apply(workloads.FaultEngineRestart, nil); err != nil {
		s.fail("I12 recovery", "restart: %v", err)
		return
	}
	s.restarted = true
	s.say("%s", why)
}

// endTxn ends a worker's transaction. When an armed crash strikes inside
// it, the engine restarts and the client retries, as a client retries
// EndTxn after a broker failure: the retry must find the transaction
// completed with the decision logged before the crash (invariant 9).
func (s *sim) endTxn(w *worker, commit bool) error {
	what := endWord(commit)
	ctx := context.Background()
	call := func() error { return w.tw.Abort(ctx) }
	if commit {
		call = func() error { return w.tw.Commit(ctx) }
	}
	s.ending = true
	err := s.producerCall(w.txn, w.sl.tid, what, call)
	s.ending = false
	if s.crashFired == "" || !errors.Is(err, engine.ErrCrashed) {
		return err
	}
	where := s.crashFired
	s.crashFired = ""
	s.restart("crash " + where + ", restart")
	if s.viol != nil {
		return err
	}
	// Not through producerCall: recovery bumped the epoch, and the retry
	// of the decided end is the one call the old epoch may still make.
	err = call()
	s.say("%s retried: %s", what, errName(err))
	// A classic consumer's abort also rewinds its member, which the
	// restart removed from its group: that is the member's error, not the
	// transaction's.
	rewound := !commit && w.classic != nil && errors.Is(err, engine.ErrUnknownMember)
	if err != nil && !rewound {
		s.fail("I9 recovery", "%s of %s decided before the crash (%s) did not complete after recovery: %v", what, w.sl.tid, where, err)
	}
	return err
}
