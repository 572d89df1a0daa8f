// This file is the seeded random-operation test of the pure share-partition
// state machine: thousands of random acquire / acknowledge / stage / marker /
// expire / release / log-start steps on one SharePartition with several
// owners and producers and a moving clock. After every step it runs
// sp.Check and checks docs/design.md §4's invariants 1–7 as they apply to one share
// partition, record by record, against the state before the step.
//
//	go test ./engine/internal/sharepart -run TestRandomOperations -seed N

package sharepart_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

var seedFlag = flag.Int64("seed", 0, "seed of TestRandomOperations (0: time-based)")

// norm keeps the fields that define a record's state, so records compare
// with ==: a terminal record's deadline reads NoDeadline inside the window
// and 0 below SPSO, which is no change.
func norm(ri sharepart.RecordInfo) sharepart.RecordInfo {
	n := sharepart.RecordInfo{Offset: ri.Offset, State: ri.State, DeliveryCount: ri.DeliveryCount}
	switch ri.State {
	case Acquired:
		n.Owner, n.Deadline = ri.Owner, ri.Deadline
	case TxPending:
		n.Producer, n.Epoch, n.Staged = ri.Producer, ri.Epoch, ri.Staged
		n.Owner, n.Deadline = ri.Owner, ri.Deadline // NoDeadline: the lock is cancelled
	case Archived:
		n.Reason = ri.Reason
	}
	return n
}

type randomConfig struct {
	name  string
	cfg   sharepart.Config
	steps int
}

func TestRandomOperations(t *testing.T) {
	t.Parallel()
	seed := *seedFlag
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d", seed)
	base := sharepart.Config{LockDuration: 10 * sec, KeepHistory: true}
	with := func(limit, locks int, k sharepart.Knobs) sharepart.Config {
		c := base
		c.DeliveryLimit, c.MaxRecordLocks, c.Knobs = limit, locks, k
		return c
	}
	draft := sharepart.Knobs{ExactEpochMatch: true, AbortToAvailableAtLimit: true, StageStopAtFirstFailure: true, RejectIdenticalRetry: true, FailedStageNoLock: true}
	configs := []randomConfig{
		{"safe/limit=3/locks=8", with(3, 8, sharepart.Knobs{}), 20000},
		{"safe/limit=1/locks=3", with(1, 3, sharepart.Knobs{}), 10000},
		{"safe/limit=5/locks=64", with(5, 64, sharepart.Knobs{}), 10000},
		{"draft/limit=2/locks=6", with(2, 6, draft), 10000},
		// TX_PENDING records past the first 2 hold lock slots; an abort
		// shrinks the window under records acquired before it.
		{"safe/limit=3/locks=4/tx-pending-limit=2", with(3, 4, sharepart.Knobs{TxPendingLimit: 2}), 20000},
		{"draft/limit=2/locks=6/tx-pending-limit=3", with(2, 6, withPendingLimit(draft, 3)), 10000},
	}
	for i, rc := range configs {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			s := newRandomSim(t, rc.cfg, seed+int64(i))
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("last steps:\n  %s", strings.Join(s.trail, "\n  "))
					t.Logf("repro: go test ./engine/internal/sharepart -run 'TestRandomOperations/%s' -seed %d", rc.name, seed)
				}
			})
			for s.step = 0; s.step < rc.steps && !t.Failed(); s.step++ {
				s.randomStep()
			}
			s.checkFrozen()
			c := s.sp.Counters()
			t.Logf("%d steps: spso=%d end=%d acquired=%d accepted=%d archived=%d staged=%d committed=%d aborted=%d expiries=%d sessionRel=%d",
				rc.steps, s.sp.SPSO(), s.sp.End(), c.Acquired, c.Accepted, c.Archived, c.Staged, c.TxCommitted, c.TxAborted, c.LockExpiries, c.SessionRel)
		})
	}
}

func withPendingLimit(k sharepart.Knobs, n int) sharepart.Knobs {
	k.TxPendingLimit = n
	return k
}

// slots counts, in recs, the ACQUIRED records and the TX_PENDING ones:
// the records holding a lock slot are the acquired ones plus the pending
// ones past the first TxPendingLimit.
func slots(recs map[int64]sharepart.RecordInfo, limit int) (held, pending int) {
	var acquired int
	for _, r := range recs {
		switch r.State {
		case Acquired:
			acquired++
		case TxPending:
			pending++
		}
	}
	return acquired + max(0, pending-limit), pending
}

// randomSim drives one share partition and checks every step.
type randomSim struct {
	t        *testing.T
	rng      *rand.Rand
	cfg      sharepart.Config
	sp       *sharepart.SharePartition
	step     int
	now      time.Duration
	hw       int64 // the log's high watermark: acquisition's fetch end
	gaps     gapLog
	logStart int64
	epochs   [4]int16 // producers 1..3: current epoch (staging epoch)

	prev     map[int64]sharepart.RecordInfo // normalized, offsets [prevSPSO, prevEnd+2)
	prevSPSO int64
	prevEnd  int64
	frozen   map[int64]sharepart.RecordInfo // every record ever seen terminal
	accepted map[int64]int                  // how many times each offset entered ACKNOWLEDGED

	lastStage *stageReq // a successful staging, for UnstageFailed
	trail     []string  // the last steps, printed on failure
}

type stageReq struct {
	owner   sharepart.Owner
	pid     sharepart.ProducerID
	epoch   int16
	batches []sharepart.Batch
}

const owners = 4

func newRandomSim(t *testing.T, cfg sharepart.Config, seed int64) *randomSim {
	sp, err := sharepart.New(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &randomSim{
		t: t, rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed)), cfg: cfg, sp: sp,
		gaps: gapLog{}, frozen: map[int64]sharepart.RecordInfo{}, accepted: map[int64]int{},
	}
	s.prev = s.snapshot(0, 0)
	return s
}

func (s *randomSim) snapshot(lo, hi int64) map[int64]sharepart.RecordInfo {
	m := make(map[int64]sharepart.RecordInfo, hi-lo)
	for o := lo; o < hi; o++ {
		m[o] = norm(s.sp.Record(o))
	}
	return m
}

func (s *randomSim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("step %d: %s", s.step, fmt.Sprintf(format, args...))
}

func (s *randomSim) logStep(desc string) {
	s.trail = append(s.trail, fmt.Sprintf("#%d now=%v %s", s.step, s.now, desc))
	if len(s.trail) > 12 {
		s.trail = s.trail[1:]
	}
}

// op is what one step did, for the transition checks.
type op struct {
	kind     string
	expires  bool // the call releases passed locks before it acts
	owner    sharepart.Owner
	max      int
	fetchEnd int64
	batches  []sharepart.Batch
	pid      sharepart.ProducerID
	epoch    int16
	commit   bool
	offset   int64
	ranges   []sharepart.Range
	err      error
	failAt   int // ack, stage: index of the first batch that must fail, len(batches) if none
}

func (s *randomSim) randomStep() {
	r := s.rng
	var o op
	n := r.IntN(100)
	if s.cfg.Knobs.TxPendingLimit > 0 && (n < 94 || n >= 97) { // 94-96: unstage
		// The engine undoes a staging whose write failed right after it,
		// under the same lock; with this knob a later undo could bring
		// back more held records than there are lock slots, so the undo
		// may only follow its staging.
		s.lastStage = nil
	}
	switch {
	case n < 10: // produce: the high watermark moves, some offsets are gaps
		k := 1 + r.IntN(6)
		for i := 0; i < k; i++ {
			if r.IntN(10) == 0 {
				s.gaps[s.hw] = true
			}
			s.hw++
		}
		s.logStep(fmt.Sprintf("produce %d (hw=%d)", k, s.hw))
		return
	case n < 20:
		d := time.Duration(r.IntN(int(6*sec/time.Millisecond))) * time.Millisecond
		if r.IntN(8) == 0 {
			d = s.cfg.LockDuration // exactly one lock duration: deadlines equal to now
		}
		s.now += d
		s.logStep(fmt.Sprintf("clock +%v", d))
		return
	case n < 42:
		o = op{kind: "acquire", expires: true, owner: s.randomOwner(), max: 1 + r.IntN(6), fetchEnd: s.hw}
		o.ranges = s.sp.Acquire(s.now, o.owner, o.max, o.fetchEnd, s.gaps, nil)
		s.logStep(fmt.Sprintf("acquire owner=%d max=%d fetchEnd=%d -> %s", o.owner, o.max, o.fetchEnd, renderRanges(o.ranges)))
	case n < 62:
		owner, batches := s.randomAcks(false)
		o = op{kind: "ack", expires: true, owner: owner, batches: batches}
		o.err = s.sp.Acknowledge(s.now, owner, batches)
		s.logStep(fmt.Sprintf("ack owner=%d %s -> %v", owner, renderBatches(batches), o.err))
	case n < 76:
		owner, batches := s.randomAcks(true)
		pid := sharepart.ProducerID(1 + r.IntN(3))
		epoch := s.epochs[pid]
		if r.IntN(10) == 0 && epoch > 0 {
			epoch-- // a zombie's staging at an older epoch
		}
		o = op{kind: "stage", expires: true, owner: owner, batches: batches, pid: pid, epoch: epoch}
		o.err = s.sp.Stage(s.now, owner, pid, epoch, batches)
		if o.err == nil {
			s.lastStage = &stageReq{owner, pid, epoch, batches}
		}
		s.logStep(fmt.Sprintf("stage owner=%d pid=%d epoch=%d %s -> %v", owner, pid, epoch, renderBatches(batches), o.err))
	case n < 84:
		pid := sharepart.ProducerID(1 + r.IntN(3))
		// The engine writes markers at the staged epoch + 1 and then
		// stages at that epoch; sometimes exact, sometimes stale.
		epoch := s.epochs[pid] + 1
		switch r.IntN(6) {
		case 0:
			epoch = s.epochs[pid]
		case 1:
			epoch = s.epochs[pid] - 1
		case 2, 3: // the epoch of one of its staged records, if any
			for off := s.prevSPSO; off < s.prevEnd; off++ {
				if p := s.prev[off]; p.State == TxPending && p.Producer == pid {
					epoch = p.Epoch
					break
				}
			}
		}
		o = op{kind: "marker", expires: true, pid: pid, epoch: epoch, commit: r.IntN(3) > 0}
		got := s.sp.Marker(s.now, pid, epoch, o.commit)
		if epoch > s.epochs[pid] {
			s.epochs[pid] = epoch
		}
		s.logStep(fmt.Sprintf("marker pid=%d epoch=%d commit=%v -> %d", pid, epoch, o.commit, got))
	case n < 89:
		o = op{kind: "expire", expires: true}
		got := s.sp.Expire(s.now)
		s.logStep(fmt.Sprintf("expire -> %d", got))
	case n < 94:
		o = op{kind: "releaseOwner", expires: true, owner: s.randomOwner()}
		got := s.sp.ReleaseOwner(s.now, o.owner)
		s.logStep(fmt.Sprintf("releaseOwner %d -> %d", o.owner, got))
	case n < 97:
		if s.lastStage == nil {
			return
		}
		st := s.lastStage
		s.lastStage = nil
		o = op{kind: "unstage", owner: st.owner, pid: st.pid, epoch: st.epoch, batches: st.batches}
		s.sp.UnstageFailed(s.now, st.owner, st.pid, st.epoch, st.batches)
		s.logStep(fmt.Sprintf("unstageFailed owner=%d pid=%d epoch=%d %s", st.owner, st.pid, st.epoch, renderBatches(st.batches)))
	default:
		off := s.logStart + int64(r.IntN(4))
		if off > s.hw {
			off = s.hw
		}
		if off > s.logStart {
			s.logStart = off
		}
		o = op{kind: "logStart", offset: off}
		s.sp.AdvanceLogStart(off)
		s.logStep(fmt.Sprintf("advanceLogStart %d", off))
	}
	s.check(&o)
}

func (s *randomSim) randomOwner() sharepart.Owner { return sharepart.Owner(1 + s.rng.IntN(owners)) }

// randomAcks builds a request: mostly ranges of one owner's acquired
// records, sometimes anything near the window (not acquired, beyond the
// end, below SPSO, bad types, overlapping batches).
func (s *randomSim) randomAcks(staging bool) (sharepart.Owner, []sharepart.Batch) {
	r := s.rng
	var held []int64
	owner := s.randomOwner()
	if r.IntN(5) > 0 {
		var acquired []int64
		for o := s.prevSPSO; o < s.prevEnd; o++ {
			if p := s.prev[o]; p.State == Acquired {
				acquired = append(acquired, o)
			}
		}
		if len(acquired) > 0 {
			owner = s.prev[acquired[r.IntN(len(acquired))]].Owner
			for _, o := range acquired {
				if s.prev[o].Owner == owner {
					held = append(held, o)
				}
			}
		}
	}
	typ := func() sharepart.AckType {
		n := r.IntN(100)
		switch {
		case n < 2:
			return badType
		case staging && n < 75:
			return Accept
		case staging && n < 88:
			return Reject
		case staging && n < 96:
			return Gap
		case staging:
			return []sharepart.AckType{Release, Renew}[n%2]
		case n < 45:
			return Accept
		case n < 65:
			return Release
		case n < 78:
			return Reject
		case n < 90:
			return Renew
		}
		return Gap
	}
	var batches []sharepart.Batch
	for k := 1 + r.IntN(3); k > 0; k-- {
		var first, last int64
		if len(held) > 0 && r.IntN(6) > 0 {
			first = held[r.IntN(len(held))]
			last = first
			for last+1 < s.prevEnd && s.prev[last+1].State == Acquired && s.prev[last+1].Owner == owner && r.IntN(4) > 0 {
				last++
			}
		} else {
			first = s.prevSPSO - 2 + int64(r.IntN(int(s.prevEnd-s.prevSPSO)+4))
			first = max(first, 0)
			last = first + int64(r.IntN(3))
		}
		b := sharepart.Batch{First: first, Last: last, Type: typ()}
		if r.IntN(6) == 0 {
			b.Type = 0
			for o := first; o <= last; o++ {
				b.Types = append(b.Types, typ())
			}
		}
		if r.IntN(60) == 0 {
			b.First, b.Last = b.Last+1, b.First // malformed
			b.Types = nil
		}
		batches = append(batches, b)
	}
	return owner, batches
}

// expired is a record after the op released passed locks.
func (s *randomSim) expired(p sharepart.RecordInfo) sharepart.RecordInfo {
	if p.State != Acquired || p.Deadline > s.now {
		return p
	}
	return s.madeAvailable(p)
}

// madeAvailable is a released record: AVAILABLE, or ARCHIVED at the limit
// or below the log start.
func (s *randomSim) madeAvailable(p sharepart.RecordInfo) sharepart.RecordInfo {
	e := sharepart.RecordInfo{Offset: p.Offset, State: Available, DeliveryCount: p.DeliveryCount}
	switch {
	case p.DeliveryCount >= s.cfg.DeliveryLimit:
		e.State, e.Reason = Archived, sharepart.ReasonLimit
	case p.Offset < s.logStart:
		e.State, e.Reason = Archived, sharepart.ReasonLogStart
	}
	return e
}

// inWindow lists the offsets of b that the call acts on: from SPSO (after
// the op's expiry) on.
func inWindow(b sharepart.Batch, spso int64) (int64, int64) { return max(b.First, spso), b.Last }

func typeAt(b sharepart.Batch, o int64) sharepart.AckType {
	if len(b.Types) > 0 {
		return b.Types[o-b.First]
	}
	return b.Type
}

// check compares the state after the op with the state before it: the
// structural check, the invariants, and that every record moved only along
// a transition of docs/design.md §3.2/§3.3 the op allows.
func (s *randomSim) check(o *op) {
	s.t.Helper()
	sp := s.sp
	if err := sp.Check(); err != nil {
		s.fatalf("%s: Check: %v", o.kind, err)
	}
	spso, end := sp.SPSO(), sp.End()
	// Invariant 5: SPSO never decreases.
	if spso < s.prevSPSO {
		s.fatalf("%s: SPSO moved back from %d to %d", o.kind, s.prevSPSO, spso)
	}
	// Offsets from the old SPSO to just past the window: everything lower
	// is frozen terminal, everything higher reads AVAILABLE with count 0.
	hi := max(end, s.prevEnd) + 2
	cur := s.snapshot(s.prevSPSO, hi)

	// E: every record as the op saw it once passed locks were released.
	e := make(map[int64]sharepart.RecordInfo, len(s.prev))
	for off := s.prevSPSO; off < hi; off++ {
		p, ok := s.prev[off]
		if !ok {
			p = sharepart.RecordInfo{Offset: off, State: Available}
		}
		if o.expires {
			p = s.expired(p)
		}
		e[off] = p
	}
	eSPSO := s.prevSPSO
	if o.expires {
		for e[eSPSO].State.Terminal() {
			eSPSO++
		}
	}

	switch o.kind {
	case "ack", "stage":
		s.checkRequest(o, e, eSPSO)
	case "acquire":
		s.checkAcquire(o, e, eSPSO, cur)
	}

	inFlight := 0
	for off := s.prevSPSO; off < hi; off++ {
		p, ev, c := s.prev[off], e[off], cur[off]
		if _, ok := s.prev[off]; !ok {
			p = sharepart.RecordInfo{Offset: off, State: Available}
		}
		want, why := s.expect(o, off, ev, eSPSO, cur)
		if c != want {
			s.fatalf("%s: record %d: before %q, after expiry %q, got %q, want %q (%s)",
				o.kind, off, describe(p), describe(ev), describe(c), describe(want), why)
		}
		// Invariant 1: nothing leaves ACKNOWLEDGED or ARCHIVED; nothing is
		// ACKNOWLEDGED twice.
		if p.State.Terminal() && c != p {
			s.fatalf("%s: record %d left terminal %q for %q", o.kind, off, describe(p), describe(c))
		}
		if c.State == Acknowledged && p.State != Acknowledged {
			s.accepted[off]++
			if s.accepted[off] > 1 {
				s.fatalf("%s: record %d ACKNOWLEDGED a second time", o.kind, off)
			}
		}
		// Invariant 2: an acquired record has exactly one owner.
		if (c.State == Acquired) != (c.Owner != 0) {
			s.fatalf("%s: record %d %q: owner iff ACQUIRED", o.kind, off, describe(c))
		}
		// Invariant 3: the delivery count grows by one on acquisition
		// only, and shrinks by one only on a session-close release.
		switch d := c.DeliveryCount - p.DeliveryCount; {
		case d == 1 && o.kind == "acquire" && c.State == Acquired && c.Owner == o.owner:
		case d == -1 && o.kind == "releaseOwner" && ev.State == Acquired && ev.Owner == o.owner:
		case d != 0:
			s.fatalf("%s: record %d count %d -> %d", o.kind, off, p.DeliveryCount, c.DeliveryCount)
		}
		// Invariant 4 (safe knobs): never delivered beyond the limit.
		if !s.cfg.Knobs.AbortToAvailableAtLimit && c.DeliveryCount > s.cfg.DeliveryLimit {
			s.fatalf("%s: record %d delivered %d times, limit %d", o.kind, off, c.DeliveryCount, s.cfg.DeliveryLimit)
		}
		// Invariant 5: everything below SPSO is terminal.
		if off < spso && !c.State.Terminal() {
			s.fatalf("%s: record %d below SPSO %d is %q", o.kind, off, spso, describe(c))
		}
		// Invariant 6: held records stay inside the window.
		if c.State == Acquired || c.State == TxPending {
			inFlight++
			if off >= spso+int64(s.cfg.MaxRecordLocks+s.cfg.Knobs.TxPendingLimit) {
				s.fatalf("%s: record %d %q beyond SPSO %d + max locks %d + tx-pending-limit %d", o.kind, off, describe(c), spso, s.cfg.MaxRecordLocks, s.cfg.Knobs.TxPendingLimit)
			}
		}
		// Invariant 7: TX_PENDING is never acquired nor released by a lock
		// or a session close; only its own marker (or a failed staging
		// write) moves it.
		if p.State == TxPending && c != p {
			own := (o.kind == "marker" && o.pid == p.Producer) || (o.kind == "unstage" && o.pid == p.Producer && o.epoch == p.Epoch)
			if !own {
				s.fatalf("%s: TX_PENDING record %d %q became %q", o.kind, off, describe(p), describe(c))
			}
		}
		if c.State.Terminal() {
			s.frozen[off] = c
		}
	}
	if n := s.cfg.Knobs.TxPendingLimit; n > 0 {
		if held, pending := slots(cur, n); held > s.cfg.MaxRecordLocks {
			s.fatalf("%s: %d records hold a lock slot (%d TX_PENDING, %d of them free), max locks %d", o.kind, held, pending, n, s.cfg.MaxRecordLocks)
		}
	} else if inFlight > s.cfg.MaxRecordLocks || sp.InFlight() > s.cfg.MaxRecordLocks {
		s.fatalf("%s: %d records held, %d in flight, max locks %d", o.kind, inFlight, sp.InFlight(), s.cfg.MaxRecordLocks)
	}
	// Counters agree with the records: each ACKNOWLEDGED record was
	// accepted once.
	if s.step%64 == 0 {
		s.checkFrozen()
	}
	s.prev, s.prevSPSO, s.prevEnd = cur, spso, end
}

// checkFrozen re-reads every record ever seen terminal (invariant 1 below
// SPSO, through the history) and the Accepted counter.
func (s *randomSim) checkFrozen() {
	s.t.Helper()
	acked := int64(0)
	for off, want := range s.frozen {
		if got := norm(s.sp.Record(off)); got != want {
			s.fatalf("terminal record %d changed: %q, was %q", off, describe(got), describe(want))
		}
		if want.State == Acknowledged {
			acked++
		}
	}
	if got := s.sp.Counters().Accepted; got != acked {
		s.fatalf("Counters.Accepted = %d, but %d records are ACKNOWLEDGED", got, acked)
	}
}

// checkRequest checks that an acknowledgement or staging request succeeded
// exactly when it should: only the owner of every record it names (inside
// the window) may ack or stage; RELEASE and RENEW cannot be staged;
// overlapping, malformed and out-of-range requests fail. It sets o.failAt.
func (s *randomSim) checkRequest(o *op, e map[int64]sharepart.RecordInfo, eSPSO int64) {
	s.t.Helper()
	o.failAt = len(o.batches)
	var why string
	for i, b := range o.batches {
		for _, c := range o.batches[:i] {
			if b.First <= b.Last && c.First <= c.Last && b.First <= c.Last && c.First <= b.Last {
				o.failAt, why = 0, "overlapping batches" // checked before any batch
			}
		}
	}
	for i, b := range o.batches {
		if i >= o.failAt {
			break
		}
		fail := func(w string) {
			if i < o.failAt {
				o.failAt, why = i, w
			}
		}
		if b.Last < b.First {
			fail("malformed batch")
			continue
		}
		if o.kind == "stage" && b.First < eSPSO {
			fail("staging below SPSO: terminal records")
			continue
		}
		if b.Last >= s.prevEnd {
			fail("beyond the window end")
			continue
		}
		first, last := inWindow(b, eSPSO)
		retry := o.kind == "stage" && first <= last
		for off := first; off <= last; off++ {
			ev := e[off]
			if !(ev.State == TxPending && ev.Producer == o.pid && ev.Epoch == o.epoch && ev.Staged == typeAt(b, off)) {
				retry = false
			}
		}
		if retry {
			if s.cfg.Knobs.RejectIdenticalRetry {
				fail("identical retry")
			}
			continue
		}
		for off := first; off <= last; off++ {
			ev := e[off]
			t := typeAt(b, off)
			switch {
			case ev.State != Acquired:
				fail(fmt.Sprintf("record %d is %v", off, ev.State))
			case ev.Owner != o.owner:
				fail(fmt.Sprintf("record %d is owned by %d", off, ev.Owner))
			case t > Renew:
				fail("bad type")
			case o.kind == "stage" && (t == Release || t == Renew):
				fail("RELEASE/RENEW staged")
			}
		}
	}
	valid := o.failAt == len(o.batches)
	if valid && o.err != nil {
		s.fatalf("%s owner=%d %s failed: %v", o.kind, o.owner, renderBatches(o.batches), o.err)
	}
	if !valid && o.err == nil {
		s.fatalf("%s owner=%d %s succeeded, want a failure (%s)", o.kind, o.owner, renderBatches(o.batches), why)
	}
}

// checkAcquire checks the acquired ranges: at most max records, lowest
// AVAILABLE offsets first, none beyond SPSO + max locks - 1 or the fetch
// end, and as many as there were to take.
func (s *randomSim) checkAcquire(o *op, e map[int64]sharepart.RecordInfo, eSPSO int64, cur map[int64]sharepart.RecordInfo) {
	s.t.Helper()
	// With the TxPendingLimit knob the window moves on by the pending
	// records (up to the limit) and a poll fills only the free slots.
	want := o.max
	limit := eSPSO + int64(s.cfg.MaxRecordLocks)
	if k := s.cfg.Knobs.TxPendingLimit; k > 0 {
		held, pending := slots(e, k)
		limit += int64(min(pending, k))
		want = min(want, max(0, s.cfg.MaxRecordLocks-held))
	}
	limit = min(limit, o.fetchEnd)
	n := 0
	for _, r := range o.ranges {
		for off := r.First; off <= r.Last; off++ {
			n++
			if off >= limit {
				s.fatalf("acquired %d beyond the limit %d", off, limit)
			}
			c := cur[off]
			if c.State != Acquired || c.Owner != o.owner || c.DeliveryCount != r.DeliveryCount {
				s.fatalf("range %v: record %d is %q", r, off, describe(c))
			}
		}
	}
	if n > want {
		s.fatalf("acquired %d records, max %d (%d lock slots free)", n, o.max, want)
	}
	// Nothing acquirable was left behind below an acquired offset, nor at
	// all when fewer than max were acquired.
	highest := int64(-1)
	if k := len(o.ranges); k > 0 {
		highest = o.ranges[k-1].Last
	}
	for off := eSPSO; off < limit; off++ {
		if c := cur[off]; c.State == Available && (off < highest || n < want) {
			s.fatalf("record %d left %q while acquiring %s (max %d)", off, describe(cur[off]), renderRanges(o.ranges), o.max)
		}
	}
}

// expect is the record after the op, given ev, the record once the op
// released passed locks, and a reason for the failure message.
func (s *randomSim) expect(o *op, off int64, ev sharepart.RecordInfo, eSPSO int64, cur map[int64]sharepart.RecordInfo) (sharepart.RecordInfo, string) {
	lock := s.now + s.cfg.LockDuration
	switch o.kind {
	case "acquire":
		c := cur[off]
		if c.State == Acquired && ev.State == Available {
			return sharepart.RecordInfo{Offset: off, State: Acquired, DeliveryCount: ev.DeliveryCount + 1, Owner: o.owner, Deadline: lock}, "acquired"
		}
		if off >= s.prevEnd && c.State == Archived && s.gaps[off] {
			return sharepart.RecordInfo{Offset: off, State: Archived, Reason: sharepart.ReasonGap}, "gap archived on acquisition"
		}
		return ev, "not acquired"
	case "ack":
		if o.err != nil {
			return ev, "failed request: all-or-nothing"
		}
		for _, b := range o.batches {
			if first, last := inWindow(b, eSPSO); off >= first && off <= last {
				switch t := typeAt(b, off); t {
				case Accept:
					return sharepart.RecordInfo{Offset: off, State: Acknowledged, DeliveryCount: ev.DeliveryCount}, "ACCEPT"
				case Reject, Gap:
					reason := sharepart.ReasonRejected
					if t == Gap {
						reason = sharepart.ReasonGap
					}
					return sharepart.RecordInfo{Offset: off, State: Archived, DeliveryCount: ev.DeliveryCount, Reason: reason}, t.String()
				case Release:
					return s.madeAvailable(ev), "RELEASE"
				case Renew:
					ev.Deadline = lock
					return ev, "RENEW"
				}
			}
		}
		return ev, "not acknowledged"
	case "stage":
		if o.err != nil && !s.cfg.Knobs.StageStopAtFirstFailure {
			return ev, "failed staging: all-or-nothing"
		}
		for bi, b := range o.batches {
			if first, last := inWindow(b, eSPSO); off >= first && off <= last {
				if bi >= o.failAt {
					return ev, "stop-at-first-failure: failed or not reached"
				}
				return sharepart.RecordInfo{Offset: off, State: TxPending, DeliveryCount: ev.DeliveryCount, Deadline: sharepart.NoDeadline, Producer: o.pid, Epoch: o.epoch, Staged: typeAt(b, off)}, "staged"
			}
		}
		return ev, "not staged"
	case "marker":
		if ev.State != TxPending || ev.Producer != o.pid {
			return ev, "not this producer's"
		}
		if s.cfg.Knobs.ExactEpochMatch && o.epoch != ev.Epoch || !s.cfg.Knobs.ExactEpochMatch && o.epoch < ev.Epoch {
			return ev, "epoch does not match"
		}
		if o.commit {
			switch ev.Staged {
			case Accept:
				return sharepart.RecordInfo{Offset: off, State: Acknowledged, DeliveryCount: ev.DeliveryCount}, "commit accept"
			case Gap:
				return sharepart.RecordInfo{Offset: off, State: Archived, DeliveryCount: ev.DeliveryCount, Reason: sharepart.ReasonGap}, "commit gap"
			}
			return sharepart.RecordInfo{Offset: off, State: Archived, DeliveryCount: ev.DeliveryCount, Reason: sharepart.ReasonRejected}, "commit reject"
		}
		r := sharepart.RecordInfo{Offset: off, State: Available, DeliveryCount: ev.DeliveryCount}
		switch {
		case ev.DeliveryCount >= s.cfg.DeliveryLimit && !s.cfg.Knobs.AbortToAvailableAtLimit:
			r.State, r.Reason = Archived, sharepart.ReasonLimit
		case off < s.logStart:
			r.State, r.Reason = Archived, sharepart.ReasonLogStart
		}
		return r, "abort: count kept, owner cleared"
	case "releaseOwner":
		if ev.State != Acquired || ev.Owner != o.owner {
			return ev, "not the owner's"
		}
		r := sharepart.RecordInfo{Offset: off, State: Available, DeliveryCount: ev.DeliveryCount - 1}
		if off < s.logStart {
			r.State, r.Reason = Archived, sharepart.ReasonLogStart
		}
		return r, "session close: count -1, never archived at the limit"
	case "unstage":
		if ev.State != TxPending || ev.Producer != o.pid || ev.Epoch != o.epoch {
			return ev, "not this staging's"
		}
		for _, b := range o.batches {
			if off >= b.First && off <= b.Last {
				d := lock
				if s.cfg.Knobs.FailedStageNoLock {
					d = sharepart.NoDeadline
				}
				return sharepart.RecordInfo{Offset: off, State: Acquired, DeliveryCount: ev.DeliveryCount, Owner: o.owner, Deadline: d}, "unstaged"
			}
		}
		return ev, "outside the failed staging"
	case "logStart":
		if off >= o.offset {
			return ev, "above the log start"
		}
		if ev.State == Available { // offsets never delivered (count 0) are skipped alike
			return sharepart.RecordInfo{Offset: off, State: Archived, DeliveryCount: ev.DeliveryCount, Reason: sharepart.ReasonLogStart}, "passed by the log start"
		}
		return ev, "held records stay"
	}
	return ev, "expiry only"
}
