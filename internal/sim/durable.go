// This file holds the engine faults of durable seeds (docs/design.md §3.6, §8): a
// full crash and restart from the data directory, a crash inside a
// transaction's end at a hook point, a coordinator-only crash and a
// share-partition failover, each the engine target's fault (its fault
// runner, as the load generator applies them). The checks hold recovery to
// invariants 9 and 12: a decided transaction completes with its decision,
// and the restored state is the state before the crash minus acquisitions.

package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// crashArm is a crash waiting for the next worker transaction to end: a
// whole-engine crash at a state of the engine target's coordinator-crash
// fault.
type crashArm struct {
	state string // workloads.StatePrepared, StateMarker or StateCompleted
}

func (a *crashArm) String() string {
	switch a.state {
	case workloads.StatePrepared:
		return "after PREPARE is logged"
	case workloads.StateMarker:
		return "after marker 1"
	}
	return "after COMPLETE is logged"
}

// armCrash arms the pending crash (KindCrashEnd) in the engine target's
// fault runner for one stretch of calls, and reports whether it did. The
// crash strikes a transaction end a client asked for: PREPARE_* is logged
// inside the client's commit or abort (delivering false), its markers and
// COMPLETE_* follow when the timers deliver them (delivering true; a
// PREPARE_* logged there is a timeout's abort, which does not count).
// Only the workers' transactions count, never the input producer's. The
// fault returns at once (wait 0s); settleCrash ends the stretch.
func (s *sim) armCrash(delivering bool) bool {
	a := s.crashArm
	if a == nil || delivering && a.state == workloads.StatePrepared {
		return false
	}
	_, err := s.t.FaultRunner().Apply(vocab.FaultCoordinatorCrash, map[string]string{
		"state": a.state, enginetarget.ParamScope: workloads.CrashScopeEngine, enginetarget.ParamWait: "0s",
		enginetarget.ParamTransactionalIDPrefix: s.workerTxnPrefixes})
	if err != nil {
		s.fail("sim", "arming the crash %s: %v", a, err)
		return false
	}
	return true
}

// settleCrash ends the stretch armCrash armed: a crash that struck (the
// engine is down until the caller restarts it) is recorded in
// crashFired; one that did not is disarmed and waits for the next
// stretch.
func (s *sim) settleCrash() {
	fr := s.t.FaultRunner()
	st, ok := fr.Struck()
	if !ok {
		fr.Disarm()
		return
	}
	s.crashFired = fmt.Sprintf("%s %s of %s", s.crashArm, endWord(st.Info.Commit), st.Info.TransactionalID)
	s.crashArm = nil
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
		a := &crashArm{state: workloads.StatePrepared}
		switch r.IntN(3) {
		case 1:
			a.state = workloads.StateMarker
		case 2:
			a.state = workloads.StateCompleted
		}
		s.crashArm = a
		s.say("crash-end armed: %s", a)
	case KindCoordinatorCrash:
		_, err := s.t.FaultRunner().Apply(vocab.FaultCoordinatorCrash, map[string]string{"state": workloads.StateNow})
		if err != nil {
			s.fail(vocab.InvRecovery, "coordinator crash: %v", err)
			return
		}
		s.coordCrashed = true
		s.say("coordinator-crash")
	case KindFailover:
		g := r.IntN(len(s.share))
		part := int32(r.IntN(int(s.p.inParts)))
		tp := s.in[part].tp
		// The fault fails over nothing where the group has no share
		// partition (nothing polled there yet); the model needs to know.
		_, err := s.e.SharePartition(s.groups[g], tp)
		exists := !errors.Is(err, engine.ErrUnknownGroup)
		_, err = s.t.FaultRunner().Apply(vocab.FaultShareFailover, map[string]string{
			enginetarget.ParamGroup: s.groups[g], enginetarget.ParamTopic: tp.Topic, "partition": strconv.Itoa(int(part))})
		switch {
		case err != nil:
			s.fail(vocab.InvRecovery, "failover of %s %s: %v", s.groups[g], tp, err)
		case !exists:
			s.say("failover %s p%d: no share partition yet", s.groups[g], part)
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
	if _, err := s.t.FaultRunner().Apply(vocab.FaultEngineRestart, nil); err != nil {
		s.fail(vocab.InvRecovery, "restart: %v", err)
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
	armed := s.armCrash(false)
	err := s.producerCall(w.txn, w.sl.tid, what, call)
	if armed {
		s.settleCrash()
	}
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
		s.fail(vocab.InvRecoveryDecided, "%s of %s decided before the crash (%s) did not complete after recovery: %v", what, w.sl.tid, where, err)
	}
	return err
}
