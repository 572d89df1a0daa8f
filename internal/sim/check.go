// This file holds the checks run after every step: docs/design.md §4's invariants
// as far as the engine's public API lets a client observe them, each
// failure named by the invariant it breaks.

package sim

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

const noDeadline = time.Duration(math.MaxInt64)

// checkAll runs every check after a step.
func (s *sim) checkAll() {
	if err := s.e.CheckInvariants(); err != nil {
		s.fail(engineCheck(err), "engine.CheckInvariants: %v", err)
		return
	}
	s.checkEndedTxns()
	ongoing := s.ongoing()
	for g := range s.share {
		for _, m := range s.share[g] {
			if s.viol == nil {
				s.observe(m, ongoing)
			}
		}
	}
	if s.viol == nil {
		s.checkLSO()
	}
	if s.viol == nil {
		s.scanCommitted()
	}
	if s.viol == nil {
		s.checkClassicOffsets()
	}
	if s.viol == nil {
		s.checkDLQ(false)
	}
	if s.viol == nil && s.fired {
		s.checkSweep()
	}
	if s.viol == nil && s.cfg.check != nil {
		if v := s.cfg.check(s); v != nil {
			v.Step = s.step
			s.viol = v
		}
	}
}

// engineCheck names the invariant an engine.CheckInvariants failure breaks,
// by the rule the engine names.
func engineCheck(err error) vocab.Invariant {
	var ie *engine.InvariantError
	if !errors.As(err, &ie) {
		return vocab.InvEngineCheck
	}
	switch ie.Rule {
	case engine.RuleWindow:
		return vocab.InvWindow
	case engine.RuleSPSONotTerminal:
		return vocab.InvSPSO
	case engine.RuleOwnerOnAcquired:
		return vocab.InvOneOwner
	case engine.RuleTxPendingProducer, engine.RuleLockSlots:
		return vocab.InvTxPendingHeld
	}
	return vocab.InvEngineCheck
}

// ongoing returns the (producer, epoch) of every ONGOING transaction.
func (s *sim) ongoing() map[pidEpoch]bool {
	out := map[pidEpoch]bool{}
	for _, id := range s.txnIDs {
		// A decided transaction's staged records stay TX_PENDING until its
		// marker reaches their partition.
		if info, ok := s.e.Transaction(id); ok && (info.State == engine.TxnOngoing ||
			info.State == engine.TxnPrepareCommit || info.State == engine.TxnPrepareAbort) {
			out[pidEpoch{info.ProducerID, info.Epoch}] = true
		}
	}
	return out
}

// checkEndedTxns finds the transactions that ended in this step (by the
// client, by fencing or by the timeout sweep) and checks invariant 8 for
// their outputs and offsets: a commit makes them visible, an abort marks
// them aborted. Staged share records are checked by observe.
func (s *sim) checkEndedTxns() {
	s.ended = map[pidEpoch]*txnTrack{}
	// Transactions whose markers all landed in this step, judged in the
	// order they were decided (the order the coordinator sends markers).
	var completed []*txnTrack
	defer func() {
		sort.SliceStable(completed, func(i, j int) bool { return completed[i].decided < completed[j].decided })
		for _, t := range completed {
			if !s.checkOutputs(t) {
				return
			}
		}
	}()
	for _, t := range s.retired {
		// Completed within the step that began the next transaction: the
		// outcome is the decision (or what the client was told).
		commit := t.state == txnCommitted
		if !t.completing {
			commit = t.clientEnded && t.clientErr == nil && t.clientCommit
			s.decisions++
			t.decided = s.decisions
		}
		t.state, t.completing = txnAborted, false
		if commit {
			t.state = txnCommitted
		}
		s.ended[pidEpoch{t.pid, t.epoch}] = t
		if s.inOpen == t {
			s.inOpen = nil
		}
		completed = append(completed, t)
	}
	s.retired = s.retired[:0]
	for _, id := range s.txnIDs {
		t := s.tracks[id]
		if t == nil {
			continue
		}
		info, _ := s.e.Transaction(id)
		if t.completing {
			// Decided in an earlier step: its markers may land in this one.
			s.ended[pidEpoch{t.pid, t.epoch}] = t
			if info.ProducerID == t.pid && info.Epoch == t.epoch && info.MarkersPending > 0 {
				continue
			}
			t.completing = false
			completed = append(completed, t)
			continue
		}
		if t.state != txnOpen {
			continue
		}
		if info.ProducerID == t.pid && info.Epoch == t.epoch && info.State != engine.TxnOngoing &&
			(t.forgotten || (s.restarted || s.coordCrashed) && t.empty()) {
			// Begin is not logged until a participant joins: recovery
			// forgot this one, and the producer's next call reopens it.
			t.forgotten = true
			continue
		}
		t.forgotten = false
		if info.State == engine.TxnOngoing && info.ProducerID == t.pid && info.Epoch == t.epoch {
			if t.clientEnded && t.clientErr == nil {
				s.fail(vocab.InvCommitAtomic, "%s: the client's %s returned ok but the transaction is still ONGOING", t, endWord(t.clientCommit))
			}
			continue
		}
		decided := info.ProducerID == t.pid && info.Epoch == t.epoch &&
			(info.State == engine.TxnPrepareCommit || info.State == engine.TxnPrepareAbort)
		commit := info.State == engine.TxnCompleteCommit || decided && info.State == engine.TxnPrepareCommit
		t.state = txnAborted
		if commit {
			t.state = txnCommitted
		}
		s.ended[pidEpoch{t.pid, t.epoch}] = t
		if s.inOpen == t {
			s.inOpen = nil
		}
		switch {
		case t.clientEnded && t.clientErr == nil && t.clientCommit != commit:
			s.fail(vocab.InvCommitAtomic, "%s: the client's %s returned ok but the coordinator ended it in %v", t, endWord(t.clientCommit), info.State)
		case t.clientEnded && t.clientErr != nil && commit:
			s.fail(vocab.InvCommitAtomic, "%s: commit failed (%s) yet the transaction committed", t, errName(t.clientErr))
		}
		s.decisions++
		t.decided = s.decisions
		if decided {
			// The outputs are checked once every marker landed.
			t.completing = true
			continue
		}
		completed = append(completed, t)
	}
}

// checkOutputs checks invariant 8 for a completed transaction's outputs
// and classic offsets: a commit makes them visible, an abort marks them
// aborted. It reports false after a violation.
func (s *sim) checkOutputs(t *txnTrack) bool {
	commit := t.state == txnCommitted
	for _, o := range t.outputs {
		recs, _, err := s.e.Fetch(o.tp, o.off, 1, engine.ReadUncommitted)
		if err != nil || len(recs) == 0 || recs[0].Offset != o.off {
			s.fail("sim", "%s: its record %s@%d cannot be read back (%v)", t, o.tp, o.off, err)
			return false
		}
		if recs[0].Aborted == commit {
			if commit {
				s.fail(vocab.InvCommitAtomic, "%s committed but its record %s@%d is marked aborted", t, o.tp, o.off)
			} else {
				s.fail(vocab.InvCommitAtomic, "%s aborted but its record %s@%d is not marked aborted", t, o.tp, o.off)
			}
			return false
		}
	}
	if commit {
		for p, off := range t.offsets {
			s.classicWant[p] = off
		}
	}
	return true
}

func endWord(commit bool) string {
	if commit {
		return "commit"
	}
	return "abort"
}

// observe reads one share partition's state and checks every record's
// change since the last step (invariants 1–7), SPSO (5), the window (6),
// the delivery limit (4) and that TX_PENDING records belong to an ongoing
// transaction (7, 8).
func (s *sim) observe(m *spModel, ongoing map[pidEpoch]bool) {
	released := s.restarted || s.failover[[2]int{m.g, int(m.tp.Partition)}]
	info, err := s.e.SharePartition(m.group, m.tp)
	if errors.Is(err, engine.ErrUnknownGroup) {
		if !m.exists {
			return
		}
		if !s.restarted || m.spso > 0 {
			s.fail(vocab.InvRecovery, "%s %s: the share partition disappeared (SPSO was %d)", m.group, m.tp, m.spso)
			return
		}
		// A partition whose durable state never changed (only
		// acquisitions, which are not durable) is not in the log: after
		// a restart it is created again by the next poll. Every record
		// must then have been AVAILABLE at count 0 durably.
		info = engine.SharePartitionInfo{}
		m.exists = false
	} else if err == nil {
		m.exists = true
	}
	if err != nil && !errors.Is(err, engine.ErrUnknownGroup) {
		s.fail("sim", "%s %s: %v", m.group, m.tp, err)
		return
	}
	if info.SPSO < m.spso {
		s.fail(vocab.InvSPSO, "%s %s: SPSO moved back from %d to %d", m.group, m.tp, m.spso, info.SPSO)
		return
	}
	if info.End < m.end && !released {
		// (A restored partition drops trailing records AVAILABLE at count
		// 0, which is the same as never acquired: checked record by
		// record below.)
		s.fail(vocab.InvWindow, "%s %s: the window end moved back from %d to %d", m.group, m.tp, m.end, info.End)
		return
	}
	hi := max(m.end, info.End)
	cur := make([]rec, hi-m.spso)
	for i := range cur {
		cur[i] = rec{state: engine.StateAvailable}
	}
	for off := m.spso; off < min(info.SPSO, hi); off++ {
		ri, err := s.e.ShareRecord(m.group, m.tp, off)
		if err != nil || !ri.Known {
			s.fail("sim", "%s %s@%d: no history below SPSO (%v)", m.group, m.tp, off, err)
			return
		}
		cur[off-m.spso] = recOf(ri)
	}
	for _, rg := range info.Ranges {
		r := recOf(rg.Info)
		for off := max(rg.First, m.spso); off <= rg.Last && off < hi; off++ {
			cur[off-m.spso] = r
		}
	}
	for off := m.spso; off < hi; off++ {
		prev, c := m.get(off), cur[off-m.spso]
		evs := s.ev[evKey{m.g, m.tp.Partition, off}]
		if !s.transition(m, off, prev, c, evs, released) {
			return
		}
		if !prev.state.Terminal() {
			s.mustEvents(m, off, c, evs)
		}
		m.set(off, c)
	}
	for off := m.spso; off < info.SPSO; off++ {
		if r := m.get(off); !r.state.Terminal() {
			s.fail(vocab.InvSPSO, "%s %s: SPSO advanced to %d past offset %d, which is %s", m.group, m.tp, info.SPSO, off, r)
			return
		}
	}
	m.spso, m.end = info.SPSO, info.End
	s.checkWindow(m, ongoing)
	if s.viol != nil {
		return
	}
	if released {
		// A restored partition starts its counters from zero.
		m.ackBase, m.arcBase = m.nAck-info.Counters.Accepted, m.nArc-info.Counters.Archived
	}
	if info.Counters.Accepted != m.nAck-m.ackBase {
		s.fail(vocab.InvAcknowledgedOnce, "%s %s: %d acknowledgements counted for %d ACKNOWLEDGED records", m.group, m.tp, info.Counters.Accepted, m.nAck-m.ackBase)
	} else if info.Counters.Archived != m.nArc-m.arcBase {
		s.fail(vocab.InvAcknowledgedOnce, "%s %s: %d archivals counted for %d ARCHIVED records", m.group, m.tp, info.Counters.Archived, m.nArc-m.arcBase)
	}
}

// checkWindow checks the records of the in-flight window.
func (s *sim) checkWindow(m *spModel, ongoing map[pidEpoch]bool) {
	now := s.clk.Now()
	limit := s.p.limit
	if s.knobs.AbortToAvailableAtLimit {
		limit++ // the draft knob allows one delivery beyond the limit
	}
	for off := m.spso; off < m.end; off++ {
		r := m.get(off)
		at := func(check vocab.Invariant, format string, args ...any) {
			s.fail(check, "%s %s@%d %s: "+format, append([]any{m.group, m.tp, off, r}, args...)...)
		}
		switch {
		case r.count > limit:
			at(vocab.InvDeliveryLimit, "delivered %d times, limit %d", r.count, s.p.limit)
		case (r.state == engine.StateAcquired || r.state == engine.StateTxPending) && off >= m.spso+int64(s.p.maxLocks):
			at(vocab.InvWindow, "in flight beyond SPSO %d + %d record locks", m.spso, s.p.maxLocks)
		case r.state == engine.StateAcquired && (r.owner == "" || r.count < 1):
			at(vocab.InvOneOwner, "acquired without an owner or a delivery")
		case r.state == engine.StateAcquired && s.fired && r.deadline <= now:
			at("lock-expiry", "the lock expired at %s but the timers fired at %s left it acquired", fmtDur(r.deadline), fmtDur(now))
		case r.state == engine.StateTxPending && !ongoing[pidEpoch{r.pid, r.epoch}]:
			at(vocab.InvTxPendingHeld, "staged by a transaction that is not ongoing")
		case r.state == engine.StateArchived && r.reason == engine.ReasonLimit && r.count < s.p.limit:
			at(vocab.InvDeliveryLimit, "archived at the delivery limit after %d of %d deliveries", r.count, s.p.limit)
		case r.state == engine.StateArchived && r.reason == engine.ReasonGap && !s.in[m.tp.Partition].gap(off):
			at("read-committed", "archived as a gap, but it holds a committed input")
		case r.state == engine.StateArchived && (r.reason == engine.ReasonNone || r.reason == engine.ReasonLogStart):
			at("transition", "archived without a reason the simulation allows")
		}
		if s.viol != nil {
			return
		}
	}
}

// sessionEnded reports whether member's session may have ended in this
// step: it left, or the timers fired after its session timeout.
func (s *sim) sessionEnded(member string) bool {
	mi := s.members[member]
	if mi == nil {
		return false
	}
	if mi.left && mi.leftStep == s.stepNo {
		return true
	}
	return s.fired && s.clk.Now()-mi.lastSeen >= s.p.session
}

// transition checks one record's change in this step against the events
// of the step and docs/design.md §3.2–§3.3. released says the step dropped every
// acquisition of the partition (restart or failover): an ACQUIRED record
// is then durably AVAILABLE at its count before the acquisition, as after
// a session close. It reports false after a violation.
func (s *sim) transition(m *spModel, off int64, prev, cur rec, evs []event, released bool) bool {
	now := s.clk.Now()
	var polled, accept, reject, release, renew, staged, undone, implicit *event
	for i := range evs {
		e := &evs[i]
		switch e.kind {
		case evPolled:
			polled = e
		case evAccept:
			accept = e
		case evReject:
			reject = e
		case evRelease:
			release = e
		case evRenew:
			renew = e
		case evStaged:
			staged = e
		case evUndone:
			undone = e
		case evImplicit:
			implicit = e
		}
	}
	bad := func(check vocab.Invariant, why string) bool {
		if released {
			check, why = vocab.InvRecovery, why+" (across a restart or failover: the restored state must be the state before minus acquisitions)"
		}
		s.fail(check, "%s %s@%d: %s -> %s: %s", m.group, m.tp, off, prev, cur, why)
		return false
	}
	limit := s.p.limit
	if prev.state.Terminal() {
		if cur != prev {
			return bad(vocab.InvTerminalFinal, "a terminal record changed")
		}
		if polled != nil {
			return bad(vocab.InvTerminalFinal, "a poll returned a terminal record")
		}
		return true
	}
	switch prev.state {
	case engine.StateAvailable:
		switch {
		case cur == prev && polled == nil:
			return true
		case polled != nil && cur.state == engine.StateAcquired && cur.owner == polled.member &&
			cur.count == prev.count+1 && polled.count == cur.count:
			return true
		case polled == nil && cur.state == engine.StateArchived && cur.reason == engine.ReasonGap &&
			prev.count == 0 && cur.count == 0 && s.in[m.tp.Partition].gap(off):
			return true
		}
		switch {
		case polled != nil && (cur.count != prev.count+1 || polled.count != cur.count):
			return bad(vocab.InvDeliveryCount, "an acquisition must add exactly one delivery")
		case cur.state == engine.StateAcquired && polled == nil:
			return bad(vocab.InvOneOwner, "acquired without a poll")
		case polled != nil && cur.state != engine.StateAcquired:
			return bad(vocab.InvOneOwner, "a poll by "+polled.member+" returned it but did not acquire it")
		case polled != nil:
			return bad(vocab.InvOneOwner, "acquired for "+cur.owner+" by a poll of "+polled.member)
		case cur.state == engine.StateTxPending:
			return bad(vocab.InvOneOwner, "staged though nobody had acquired it")
		case cur.count != prev.count:
			return bad(vocab.InvDeliveryCount, "the delivery count changed without an acquisition")
		}
		return bad("transition", "an AVAILABLE record may only be acquired (or archived as a gap)")

	case engine.StateAcquired:
		live := prev.deadline > now
		sess := released || s.sessionEnded(prev.owner)
		by := func(e *event) bool { return e != nil && e.member == prev.owner }
		switch {
		case cur == prev && polled == nil:
			return true
		case polled == nil && cur.state == engine.StateAcquired && cur.owner == prev.owner && cur.count == prev.count &&
			(live && by(renew) && cur.deadline == now+s.p.lock || by(undone) && cur.deadline == s.undoneDeadline(now)):
			return true
		case polled != nil && !live && cur.state == engine.StateAcquired && cur.owner == polled.member &&
			cur.count == prev.count+1 && polled.count == cur.count:
			return true // the lock expired, then a poll acquired it again
		case cur.state == engine.StateAcknowledged && cur.count == prev.count && live && (by(accept) || by(implicit)):
			return true
		case cur.state == engine.StateArchived && cur.reason == engine.ReasonRejected && cur.count == prev.count && live && by(reject):
			return true
		case cur.state == engine.StateAvailable && cur.count == prev.count && prev.count < limit && (!live || by(release)):
			return true
		case cur.state == engine.StateArchived && cur.reason == engine.ReasonLimit && cur.count == prev.count &&
			prev.count >= limit && (!live || by(release)):
			return true
		case cur.state == engine.StateAvailable && cur.count == prev.count-1 && sess:
			return true // the session closed: the delivery never completed
		case live && by(staged) && cur.state == engine.StateTxPending && cur.pid == staged.pid &&
			cur.epoch == staged.epoch && cur.staged == staged.typ && cur.count == prev.count:
			return true
		case live && by(staged) && s.ended[pidEpoch{staged.pid, staged.epoch}] != nil &&
			s.ended[pidEpoch{staged.pid, staged.epoch}].state == txnAborted && cur.count == prev.count &&
			(cur.state == engine.StateAvailable && (prev.count < limit || s.knobs.AbortToAvailableAtLimit) ||
				cur.state == engine.StateArchived && cur.reason == engine.ReasonLimit && prev.count >= limit && !s.knobs.AbortToAvailableAtLimit):
			return true // staged, then the transaction aborted in the same step
		}
		switch {
		case cur.state == engine.StateAcquired && cur.owner != prev.owner && live:
			return bad(vocab.InvOneOwner, "acquired by a second member while the first held a live lock")
		case polled != nil && cur.state == engine.StateAcquired && cur.count != prev.count+1:
			return bad(vocab.InvDeliveryCount, "an acquisition must add exactly one delivery")
		case polled != nil:
			return bad(vocab.InvOneOwner, "a poll by "+polled.member+" returned a record held under a live lock")
		case sess && cur.state == engine.StateArchived:
			return bad(vocab.InvDeliveryCount, "a session close archived it (it must become AVAILABLE with one delivery less)")
		case cur.state == engine.StateAvailable && cur.count == prev.count && prev.count >= limit:
			return bad(vocab.InvDeliveryLimit, "released at the delivery limit instead of archived")
		case cur.count != prev.count:
			return bad(vocab.InvDeliveryCount, "the delivery count changed without an acquisition or a session close")
		case !live && (cur.state == engine.StateAcknowledged || cur.state == engine.StateTxPending):
			return bad(vocab.InvOneOwner, "acknowledged or staged after its lock expired")
		case cur.state == engine.StateAcknowledged || cur.state == engine.StateArchived || cur.state == engine.StateTxPending:
			return bad(vocab.InvOneOwner, "resolved without an acknowledgement or staging by its owner")
		}
		return bad("transition", "not a transition of docs/design.md §3.2/§3.3")

	case engine.StateTxPending:
		end := s.ended[pidEpoch{prev.pid, prev.epoch}]
		if end == nil {
			if cur == prev && polled == nil {
				return true
			}
			return bad(vocab.InvTxPendingHeld, "a TX_PENDING record changed outside its transaction (lock expiry, session close, poll or another producer's marker)")
		}
		if end.completing && cur == prev {
			// Decided, but the marker has not reached this partition yet:
			// it stays TX_PENDING between PREPARE_* and COMPLETE_*.
			return true
		}
		if cur.count != prev.count {
			return bad(vocab.InvDeliveryCount, "a marker changed the delivery count")
		}
		if end.state == txnCommitted {
			want, reason := engine.StateAcknowledged, engine.ReasonNone
			switch prev.staged {
			case engine.AckReject:
				want, reason = engine.StateArchived, engine.ReasonRejected
			case engine.AckGap:
				want, reason = engine.StateArchived, engine.ReasonGap
			}
			if cur.state == want && cur.reason == reason {
				return true
			}
			return bad(vocab.InvCommitAtomic, end.String()+" committed but the record did not take its staged outcome")
		}
		toLimit := prev.count >= limit && !s.knobs.AbortToAvailableAtLimit
		if !toLimit && cur.state == engine.StateAvailable || toLimit && cur.state == engine.StateArchived && cur.reason == engine.ReasonLimit {
			return true
		}
		if cur.state == engine.StateTxPending {
			return bad(vocab.InvCommitAtomic, end.String()+" aborted but the record is still TX_PENDING")
		}
		return bad(vocab.InvCommitAtomic, end.String()+" aborted but the record did not go back to AVAILABLE")
	}
	return bad("transition", "unknown state")
}

// undoneDeadline is the lock a record gets back when its staging write
// fails (docs/design.md §3.4).
func (s *sim) undoneDeadline(now time.Duration) time.Duration {
	if s.knobs.FailedStageNoLock {
		return noDeadline
	}
	return now + s.p.lock
}

// mustEvents checks that the acknowledgements the engine reported applied
// show in the record.
func (s *sim) mustEvents(m *spModel, off int64, cur rec, evs []event) {
	for _, e := range evs {
		if !e.must {
			continue
		}
		ok := true
		switch e.kind {
		case evAccept, evImplicit:
			ok = cur.state == engine.StateAcknowledged
		case evReject:
			ok = cur.state == engine.StateArchived && cur.reason == engine.ReasonRejected
		case evRelease:
			ok = cur.state == engine.StateAvailable || cur.state == engine.StateArchived && cur.reason == engine.ReasonLimit
		case evRenew:
			ok = cur.state == engine.StateAcquired && cur.owner == e.member
		case evStaged:
			ok = cur.state == engine.StateTxPending && cur.pid == e.pid && cur.epoch == e.epoch ||
				s.ended[pidEpoch{e.pid, e.epoch}] != nil
		}
		if !ok {
			s.fail("ack-liveness", "%s %s@%d: %s by %s was applied but the record is %s", m.group, m.tp, off, evNames[e.kind], e.member, cur)
			return
		}
	}
}

// predict says, per partition, whether an acknowledgement (or staging) of
// recs by member must succeed (2: the member holds a record, so it is
// alive; 1: every record is below SPSO, a no-op if the member is still in
// its group), must fail (-1) or may go either way (0), from the state
// observed after the previous step.
func (s *sim) predict(g int, member string, recs []*targets.Record, staging bool) map[int32]int8 {
	now := s.clk.Now()
	out := map[int32]int8{}
	for _, r := range recs {
		m := s.share[g][r.Partition]
		prev := m.get(r.Offset)
		var v int8
		switch {
		case r.Offset < m.spso:
			// Below SPSO: a no-op success for an ack, refused for staging.
			v = 1
			if staging {
				v = -1
			}
		case prev.state == engine.StateAcquired && prev.owner == member && prev.deadline > now:
			v = 2 // the member holds it, so its session is alive
		case staging:
			v = -1
		case prev.state.Terminal(), prev.state == engine.StateAcquired && prev.deadline <= now && prev.count >= s.p.limit:
			v = 0 // an expiry in the same call may move SPSO past it
		default:
			v = -1
		}
		cur, seen := out[r.Partition]
		switch {
		case !seen:
			out[r.Partition] = v
		case v < 0 || cur < 0:
			out[r.Partition] = -1
		case v == 0 || cur == 0:
			out[r.Partition] = 0
		case v == 2:
			out[r.Partition] = 2
		}
	}
	return out
}

// checkPrediction compares an acknowledgement's outcome with predict's.
func (s *sim) checkPrediction(w *worker, g int, what string, recs []*targets.Record, pred map[int32]int8, failed map[int32]error, whole bool) {
	if s.restarted {
		return // the engine restarted earlier in this step: the prediction is stale
	}
	for p := int32(0); p < s.p.inParts; p++ {
		v, ok := pred[p]
		if !ok {
			continue
		}
		applied := !whole && failed[p] == nil
		switch {
		case errors.Is(failed[p], errStageWrite):
			// The hook failed the write on purpose (KindFailStage).
		case v == 1 && whole:
			// Only no-op offsets: the member may have timed out meanwhile.
		case v > 0 && !applied:
			s.fail("ack-liveness", "%s: %s by %s of p%d refused though every record was its own under a live lock (or below SPSO)", w.name, what, w.memberID(), p)
			return
		case v < 0 && applied:
			check, why := vocab.InvOneOwner, "held by another member, AVAILABLE, or under an expired lock"
			m := s.share[g][p]
			for _, r := range recs {
				if r.Partition != p {
					continue
				}
				switch prev := m.get(r.Offset); {
				case r.Offset < m.spso || prev.state.Terminal():
					check, why = vocab.InvTerminalFinal, "already terminal"
				case prev.state == engine.StateTxPending:
					check, why = vocab.InvTxPendingHeld, "TX_PENDING in a transaction"
				default:
					continue
				}
				break
			}
			s.fail(check, "%s: %s by %s of %s in p%d succeeded though a record was %s", w.name, what, w.memberID(), fmtRecs(recs), p, why)
			return
		}
	}
}

// checkPolledInputs checks that a poll returned only committed input
// records (share groups and classic consumers read with read_committed).
func (s *sim) checkPolledInputs(w *worker, recs []*targets.Record) {
	for _, r := range recs {
		ip := s.in[r.Partition]
		if !ip.committed(r.Offset) {
			what := "a control marker"
			if in := ip.at(r.Offset); in.id != 0 {
				what = "a record of " + in.txn.String() + ", which has not committed"
			}
			s.fail("read-committed", "%s polled p%d@%d, %s", w.name, r.Partition, r.Offset, what)
			return
		}
		if id, ok := ledger.PayloadID(r.Value); !ok || id != ip.at(r.Offset).id {
			s.fail("sim", "%s polled p%d@%d with a value that is not the input written there", w.name, r.Partition, r.Offset)
			return
		}
	}
}

// payloadIs reports whether a payload's header names id.
func payloadIs(b []byte, id uint64) bool {
	got, ok := ledger.PayloadID(b)
	return ok && got == id
}

// checkLSO checks every partition's last stable offset: the first offset
// of its oldest open transaction, or the high watermark. A lower LSO hides
// committed records (a commit that did not reach the partition); a higher
// one shows uncommitted ones.
func (s *sim) checkLSO() {
	check := func(tp engine.TopicPartition) bool {
		_, hw, lso, err := s.e.Offsets(tp)
		if err != nil {
			s.fail("sim", "offsets of %s: %v", tp, err)
			return false
		}
		// want is the LSO the open transactions allow; low is lower still
		// by the decided transactions whose marker may not have reached tp
		// yet (their markers land one participant at a time).
		want, by := hw, (*txnTrack)(nil)
		low := hw
		for _, id := range s.txnIDs {
			t := s.tracks[id]
			if t == nil || t.state != txnOpen && !t.completing {
				continue
			}
			f, ok := t.first[tp]
			if !ok {
				continue
			}
			low = min(low, f)
			if t.state == txnOpen && f < want {
				want, by = f, t
			}
		}
		switch {
		case lso < low:
			s.fail(vocab.InvCommitAtomic, "%s: LSO %d, want %d: committed records stay invisible to read_committed", tp, lso, want)
		case lso > want:
			s.fail("read-committed", "%s: LSO %d passes %s's first record at %d: read_committed sees uncommitted records", tp, lso, by, want)
		}
		return s.viol == nil
	}
	for _, ip := range s.in {
		if !check(ip.tp) {
			return
		}
	}
	for m := range s.outs {
		for _, op := range s.outs[m] {
			if !check(op.tp) {
				return
			}
		}
	}
}

// scanCommitted reads what became visible to read_committed in every
// output partition since the last step: nothing aborted, nothing of a
// transaction that has not committed.
func (s *sim) scanCommitted() {
	for m := range s.outs {
		for _, op := range s.outs[m] {
			recs, next, err := s.e.Fetch(op.tp, op.rcNext, 1<<20, engine.ReadCommitted)
			if err != nil {
				s.fail("sim", "read_committed fetch of %s: %v", op.tp, err)
				return
			}
			for _, r := range recs {
				o := op.at(r.Offset)
				switch {
				case r.Aborted:
					s.fail("read-committed", "%s@%d: read_committed returned a record of an aborted transaction", op.tp, r.Offset)
				case !o.ok || !payloadIs(r.Value, o.inputID):
					s.fail("sim", "%s@%d: read_committed returned a record the workers did not write there", op.tp, r.Offset)
				case o.txn != nil && o.txn.state != txnCommitted:
					s.fail("read-committed", "%s@%d: read_committed returned a record of %s, which has not committed", op.tp, r.Offset, o.txn)
				}
				if s.viol != nil {
					return
				}
			}
			op.rcNext = next
		}
	}
}

// checkClassicOffsets checks the classic group's committed offsets: moved
// by committed transactions only (invariant 8 for sendOffsetsToTransaction).
func (s *sim) checkClassicOffsets() {
	g := len(modes) - 1
	for p := range s.classicWant {
		tp := s.in[p].tp
		off, ok := s.e.CommittedOffset(s.groups[g], tp)
		if !ok {
			off = -1
		}
		if off == s.classicWant[p] {
			continue
		}
		// A committed transaction whose markers are on their way may have
		// reached the group already.
		landed := false
		for _, id := range s.txnIDs {
			if t := s.tracks[id]; t != nil && t.completing && t.state == txnCommitted {
				if o, ok := t.offsets[int32(p)]; ok && o == off {
					landed = true
				}
			}
		}
		if !landed {
			s.fail(vocab.InvCommitAtomic, "classic group %s %s: committed offset %d, want %d (from the last committed transaction)", s.groups[g], tp, off, s.classicWant[p])
			return
		}
	}
}

// checkDLQ checks invariant 14: a record archived by a reject or at the
// delivery limit has one dead-letter copy under read_committed, and
// nothing else has one. A copy may show before the record's own marker
// lands (a staged REJECT's copy commits with the DLQ partition's marker);
// at the end (final) every such record must have its copy.
func (s *sim) checkDLQ(final bool) {
	for g := range s.share {
		d := &s.dlq[g]
		if d.copies == nil {
			d.copies = map[[2]int64]int{}
		}
		topic := "dlq-" + string(modes[g])
		recs, next, err := s.e.Fetch(engine.TopicPartition{Topic: topic}, d.next, 1<<20, engine.ReadCommitted)
		if err != nil {
			s.fail("sim", "read_committed fetch of %s: %v", topic, err)
			return
		}
		d.next = next
		for _, r := range recs {
			var part, off int64 = -1, -1
			for _, h := range r.Headers {
				switch h.Key {
				case engine.HeaderDLQPartition:
					part, _ = strconv.ParseInt(string(h.Value), 10, 32)
				case engine.HeaderDLQOffset:
					off, _ = strconv.ParseInt(string(h.Value), 10, 64)
				}
			}
			if part < 0 || part >= int64(len(s.share[g])) || off < 0 {
				s.fail(vocab.InvDLQ, "%s@%d: a dead-letter copy without its provenance", topic, r.Offset)
				return
			}
			k := [2]int64{part, off}
			d.copies[k]++
			if n := d.copies[k]; n > 1 {
				s.fail(vocab.InvDLQ, "%s: in-%d@%d has %d dead-letter copies, want one", topic, part, off, n)
				return
			}
			src := s.share[g][part].get(off)
			archived := src.state == engine.StateArchived && (src.reason == engine.ReasonRejected || src.reason == engine.ReasonLimit)
			staged := src.state == engine.StateTxPending && src.staged == engine.AckReject
			if !archived && !staged {
				s.fail(vocab.InvDLQ, "%s: in-%d@%d has a dead-letter copy but is %s", topic, part, off, src)
				return
			}
		}
		if !final {
			continue
		}
		for p, m := range s.share[g] {
			for off := int64(0); off < int64(len(m.recs)); off++ {
				r := m.recs[off]
				if r.state == engine.StateArchived && (r.reason == engine.ReasonRejected || r.reason == engine.ReasonLimit) && d.copies[[2]int64{int64(p), off}] != 1 {
					s.fail(vocab.InvDLQ, "%s: in-%d@%d is %s but has %d dead-letter copies, want one", topic, p, off, r, d.copies[[2]int64{int64(p), off}])
					return
				}
			}
		}
	}
}

// checkSweep checks invariant 11 after the timers fired: no transaction
// outlives its timeout past a sweep.
func (s *sim) checkSweep() {
	for _, id := range s.txnIDs {
		info, ok := s.e.Transaction(id)
		if ok && info.State == engine.TxnOngoing && s.lastSweep-info.Started >= info.Timeout {
			s.fail(vocab.InvTxnTimeout, "%s (producer %d epoch %d) started at %s with timeout %v is still ONGOING after the sweep at %s",
				id, info.ProducerID, info.Epoch, fmtDur(info.Started), info.Timeout, fmtDur(s.lastSweep))
			return
		}
	}
}
