// This file holds the simulated workers: one slot per worker position, one
// worker per incarnation, and each mode's loop (DESIGN §5) cut into phases
// so the scheduler can interleave them and a crash can strike between any
// two.

package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// slot is one worker position: its mode, its transactional id, the
// current incarnation and possibly a zombie.
type slot struct {
	s      *sim
	idx    int
	mode   int // index in modes
	n      int // slot number within its mode
	tid    string
	inc    int
	cur    *worker
	zombie *worker
}

// phase is where a worker is in its loop.
type phase uint8

const (
	phIdle      phase = iota
	phPolled          // records held, nothing written
	phProduced        // outputs written (in the open transaction, if any)
	phStaged          // acks or offsets staged in the open transaction
	phCommitted       // deferred: outputs committed, acks not yet sent
)

var phaseNames = [...]string{"idle", "after-poll", "after-produce", "after-stage", "after-commit-before-ack"}

// worker is one incarnation of a slot's worker: a member and a producer.
type worker struct {
	s       *sim
	sl      *slot
	name    string
	share   *engine.ShareMember
	classic *engine.ClassicMember
	txn     *engine.Producer // transactional modes
	plain   *engine.Producer // implicit, explicit

	phase      phase
	held       []engine.Record // polled and not yet resolved
	acc, rej   []engine.Record // decided when producing
	rel        []engine.Record // explicit: released without output
	open       *txnTrack
	txnRecs    int
	stallUntil time.Duration
	zombie     bool
	gone       bool
	emptyPoll  bool // the last poll returned nothing (the drain moves on)
}

var modeShort = [...]string{"imp", "exp", "def", "txn", "eos"}

// newWorker joins the slot's group and creates its producer; a
// transactional producer fences the slot's previous incarnation.
func (sl *slot) newWorker() (*worker, error) {
	s := sl.s
	sl.inc++
	w := &worker{s: s, sl: sl, name: fmt.Sprintf("%s%d#%d", modeShort[sl.mode], sl.n, sl.inc)}
	var err error
	switch modes[sl.mode] {
	case "classic-eos":
		w.classic, err = s.e.JoinClassicGroup(s.groups[sl.mode], []string{inTopic}, engine.ResetEarliest)
	default:
		am := engine.AckExplicit
		switch modes[sl.mode] {
		case "implicit":
			am = engine.AckImplicit
		case "transactional":
			am = engine.AckTransactional
		}
		w.share, err = s.e.JoinShareGroup(s.groups[sl.mode], []string{inTopic}, am)
		if err == nil {
			s.members[w.share.ID()] = &memberInfo{lastSeen: s.clk.Now(), leftStep: -2}
		}
	}
	if err != nil {
		return nil, err
	}
	if sl.tid != "" {
		w.txn, err = s.e.NewProducer(engine.ProducerConfig{TransactionalID: sl.tid, TransactionTimeout: s.p.txnTimeout})
	} else {
		w.plain, err = s.e.NewProducer(engine.ProducerConfig{Idempotent: true})
	}
	return w, err
}

// replace starts the slot's next incarnation. The current worker is
// abandoned (crash) unless it was just made the slot's zombie.
func (sl *slot) replace(keepAsZombie bool) {
	if !keepAsZombie {
		sl.cur.abandon()
	}
	w, err := sl.newWorker()
	if errors.Is(err, engine.ErrConcurrentTransactions) {
		// Its predecessor's last transaction still waits for a marker:
		// the slot retries at its next step (work).
		sl.s.say("replacement of %s waits: %s", sl.cur.name, errName(err))
		sl.cur.gone = true
		return
	}
	if err != nil {
		sl.s.fail("sim", "starting %s's replacement: %v", sl.cur.name, err)
		return
	}
	sl.cur = w
	sl.s.say("-> %s", w.name)
}

// abandon drops the worker without a word, as a killed process: its locks
// expire, its session times out, its successor fences its producer.
func (w *worker) abandon() {
	w.gone = true
	w.open = nil
	if w.sl.zombie == w {
		w.sl.zombie = nil
	}
}

func (w *worker) phaseName() string { return phaseNames[w.phase] }

func (w *worker) memberID() string {
	if w.share != nil {
		return w.share.ID()
	}
	return w.classic.ID()
}

// failed handles an error a worker cannot go on from: a fenced worker is
// replaced (a zombie just exits), anything else is reported as a
// simulator failure, since the simulated clients make only valid calls.
func (w *worker) failed(what string, err error) {
	w.s.say("%s: %s", what, errName(err))
	if !engine.ErrorIsFenced(err) {
		w.s.fail("sim", "%s %s: unexpected error: %v", w.name, what, err)
		return
	}
	if w.zombie {
		w.s.say("(zombie exits)")
		w.abandon()
		return
	}
	w.sl.replace(false)
}

// work moves the worker one phase.
func (w *worker) work(r *rand.Rand) {
	s := w.s
	if w.gone {
		s.say("(gone)")
		if w == w.sl.cur {
			w.sl.replace(false)
		}
		return
	}
	if now := s.clk.Now(); now < w.stallUntil && !s.drain {
		s.say("(stalled at %s)", w.phaseName())
		return
	}
	switch modes[w.sl.mode] {
	case "implicit":
		w.workImplicit(r)
	case "explicit":
		w.workExplicit(r)
	case "deferred":
		w.workDeferred(r)
	case "transactional":
		w.workTransactional(r)
	case "classic-eos":
		w.workClassic(r)
	}
}

func (w *worker) workImplicit(r *rand.Rand) {
	if w.phase == phPolled {
		if err := w.produce(w.held); err != nil {
			w.failed("produce", err)
			return
		}
		w.phase = phProduced
		return
	}
	// The poll accepts the previous poll's records, then acquires.
	w.poll(r)
}

func (w *worker) workExplicit(r *rand.Rand) {
	switch w.phase {
	case phIdle:
		w.poll(r)
	case phPolled:
		if !w.s.drain && r.IntN(8) == 0 {
			w.ack(nil, nil, nil, w.held)
			return
		}
		w.decide(r, true)
		if err := w.produce(w.acc); err != nil {
			w.failed("produce", err)
			return
		}
		w.phase = phProduced
	case phProduced:
		w.ack(w.acc, w.rej, w.rel, nil)
		w.settle()
	}
}

func (w *worker) workDeferred(r *rand.Rand) {
	if w.pollThenProduce(r) {
		return
	}
	switch w.phase {
	case phProduced:
		x := r.IntN(100)
		switch {
		case !w.s.drain && x < 10:
			w.ack(nil, nil, nil, w.held)
		case !w.s.drain && x < 22:
			if w.abort() {
				// Release now so the records come back at once.
				w.ack(nil, nil, w.held, nil)
				w.settle()
			}
		default:
			if w.commit() {
				w.phase = phCommitted
			}
		}
	case phCommitted:
		w.ack(w.acc, w.rej, nil, nil)
		w.settle()
	}
}

// pollThenProduce runs the first two phases of the modes whose outputs go
// in a transaction (deferred, transactional): poll, then open the
// transaction if none is open, decide the records' fates and write the
// accepted ones' outputs. It reports whether the worker was in one of
// those phases (and so has taken its step).
func (w *worker) pollThenProduce(r *rand.Rand) bool {
	switch w.phase {
	case phIdle:
		w.poll(r)
	case phPolled:
		if w.open == nil && !w.begin() {
			return true
		}
		w.decide(r, false)
		if err := w.produce(w.acc); err != nil {
			w.failed("produce", err)
			return true
		}
		w.phase = phProduced
	default:
		return false
	}
	return true
}

func (w *worker) workTransactional(r *rand.Rand) {
	if w.pollThenProduce(r) {
		return
	}
	switch w.phase {
	case phProduced:
		if !w.s.drain && r.IntN(30) == 0 && !w.stageRelease() {
			return
		}
		if !w.stage() {
			return
		}
		w.txnRecs += len(w.held)
		w.held, w.acc, w.rej = nil, nil, nil
		w.phase = phStaged
	case phStaged:
		w.endOrPollMore(r, false)
	}
}

func (w *worker) workClassic(r *rand.Rand) {
	switch w.phase {
	case phIdle:
		w.poll(r)
	case phPolled:
		if w.open == nil && !w.begin() {
			return
		}
		w.acc = w.held
		if err := w.produce(w.acc); err != nil {
			w.failed("produce", err)
			return
		}
		w.phase = phProduced
	case phProduced:
		if !w.sendOffsets() {
			return
		}
		w.txnRecs += len(w.held)
		w.held, w.acc = nil, nil
		w.phase = phStaged
	case phStaged:
		w.endOrPollMore(r, true)
	}
}

// endOrPollMore ends the open transaction, or polls more records into it.
func (w *worker) endOrPollMore(r *rand.Rand, classic bool) {
	x := r.IntN(100)
	switch {
	case !w.s.drain && w.txnRecs < 12 && x < 40:
		w.poll(r)
	case !w.s.drain && x < 55:
		if w.abort() && classic {
			w.rewind()
		}
		w.settle()
	default:
		if w.commit() {
			w.settle()
		}
	}
}

// settle returns the worker to idle with nothing held.
func (w *worker) settle() {
	w.phase = phIdle
	w.held, w.acc, w.rej, w.rel = nil, nil, nil, nil
	w.txnRecs = 0
}

// decide splits the held records into accepted (an output is written),
// rejected and, with release, released ones (no output). In the drain
// everything is accepted.
func (w *worker) decide(r *rand.Rand, release bool) {
	w.acc, w.rej, w.rel = nil, nil, nil
	for _, rec := range w.held {
		x := r.IntN(100)
		switch {
		case w.s.drain || x < 84:
			w.acc = append(w.acc, rec)
		case x < 92 || !release:
			w.rej = append(w.rej, rec)
		default:
			w.rel = append(w.rel, rec)
		}
	}
}

// poll acquires (share) or fetches (classic) records.
func (w *worker) poll(r *rand.Rand) {
	s := w.s
	max := 1 + r.IntN(s.p.maxPoll)
	if s.drain {
		max = s.p.maxPoll
	}
	g := w.sl.mode
	if w.classic != nil {
		recs, err := w.classic.Poll(max)
		if err != nil {
			w.failed("poll", err)
			return
		}
		s.say("poll %s", fmtRecs(recs))
		s.checkPolledInputs(w, recs)
		w.gotRecords(recs)
		return
	}
	implicitAck := modes[g] == "implicit" && w.phase == phProduced && len(w.held) > 0
	var pred map[int32]int8
	if implicitAck {
		pred = s.predict(g, w.share.ID(), w.held, false)
		for _, rec := range w.held {
			if pred[rec.Partition] >= 0 && rec.Offset >= s.share[g][rec.Partition].spso {
				s.addEvent(g, rec.Partition, rec.Offset, event{kind: evImplicit, member: w.share.ID(), must: pred[rec.Partition] > 0})
			}
		}
	}
	recs, err := w.share.Poll(max)
	if err != nil {
		w.failed("poll", err)
		return
	}
	s.touch(w.share.ID())
	s.say("poll %s", fmtRecs(recs))
	for _, rec := range recs {
		s.addEvent(g, rec.Partition, rec.Offset, event{kind: evPolled, member: w.share.ID(), count: rec.DeliveryCount})
	}
	s.checkPolledInputs(w, recs)
	if implicitAck {
		w.held = nil
		w.phase = phIdle
	}
	w.gotRecords(recs)
}

// gotRecords takes a poll's records: a transaction keeps its phase when
// the poll came up empty.
func (w *worker) gotRecords(recs []engine.Record) {
	w.emptyPoll = len(recs) == 0
	if len(recs) == 0 {
		if w.phase != phStaged {
			w.phase = phIdle
			w.held = nil
		}
		return
	}
	w.held = recs
	w.phase = phPolled
}

// produce writes one output per record (its value is the input's id) to
// the mode's output topic, in the open transaction if there is one.
func (w *worker) produce(recs []engine.Record) error {
	s := w.s
	if len(recs) == 0 {
		return nil
	}
	outs := s.outs[w.sl.mode]
	byPart := make([][]engine.ProduceRecord, len(outs))
	ids := make([][]uint64, len(outs))
	for _, rec := range recs {
		q := rec.Partition % int32(len(outs))
		id := binary.BigEndian.Uint64(rec.Value)
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, id)
		byPart[q] = append(byPart[q], engine.ProduceRecord{Value: v})
		ids[q] = append(ids[q], id)
	}
	for q, batch := range byPart {
		if len(batch) == 0 {
			continue
		}
		op := outs[q]
		var base int64
		var err error
		if w.txn != nil {
			err = s.producerCall(w.txn, w.sl.tid, "produce", func() error {
				base, err = w.txn.Produce(op.tp.Topic, op.tp.Partition, batch)
				return err
			})
		} else {
			base, err = w.plain.Produce(op.tp.Topic, op.tp.Partition, batch)
		}
		if err != nil {
			return err
		}
		if w.open != nil {
			w.open.wrote(op.tp, base, len(batch))
		}
		op.add(base, ids[q], w.open)
		s.say("produce %s[%d..%d]", op.tp, base, base+int64(len(batch))-1)
	}
	return nil
}

// ack acknowledges records (explicit and deferred modes) and checks the
// outcome against what the model predicts.
func (w *worker) ack(acc, rej, rel, renew []engine.Record) {
	s := w.s
	g := w.sl.mode
	var all []engine.Record
	var acks []engine.Acknowledgement
	for _, x := range []struct {
		recs []engine.Record
		t    engine.AckType
		ev   evKind
	}{{acc, engine.AckAccept, evAccept}, {rej, engine.AckReject, evReject}, {rel, engine.AckRelease, evRelease}, {renew, engine.AckRenew, evRenew}} {
		acks = append(acks, ackRanges(x.recs, x.t)...)
		all = append(all, x.recs...)
	}
	if len(acks) == 0 {
		return
	}
	pred := s.predict(g, w.share.ID(), all, false)
	err := w.share.Acknowledge(acks)
	s.say("ack a%d r%d l%d n%d: %s", len(acc), len(rej), len(rel), len(renew), errName(err))
	failed, whole := partitionErrors(err)
	if !whole {
		s.touch(w.share.ID())
	}
	s.checkPrediction(w, g, "ack", all, pred, failed, whole)
	if whole {
		w.failed("ack", err)
		return
	}
	for _, x := range []struct {
		recs []engine.Record
		ev   evKind
	}{{acc, evAccept}, {rej, evReject}, {rel, evRelease}, {renew, evRenew}} {
		for _, rec := range x.recs {
			if failed[rec.Partition] == nil && rec.Offset >= s.share[g][rec.Partition].spso {
				s.addEvent(g, rec.Partition, rec.Offset, event{kind: x.ev, member: w.share.ID(), must: true})
			}
		}
	}
}

// partitionErrors says which partitions of an acknowledgement failed, or
// that the whole call failed.
func partitionErrors(err error) (map[int32]error, bool) {
	if err == nil {
		return nil, false
	}
	var ae *engine.AckError
	if !errors.As(err, &ae) {
		return nil, true
	}
	out := map[int32]error{}
	for tp, perr := range ae.Partitions {
		out[tp.Partition] = perr
	}
	return out, false
}

// begin opens a transaction.
func (w *worker) begin() bool {
	s := w.s
	err := s.producerCall(w.txn, w.sl.tid, "begin", w.txn.Begin)
	if errors.Is(err, engine.ErrConcurrentTransactions) {
		// The previous transaction's markers wait for a participant cut
		// off from the coordinator: retried at the worker's next step.
		s.say("begin: %s", errName(err))
		return false
	}
	if err != nil {
		w.failed("begin", err)
		return false
	}
	w.open = s.newTrack(w.sl.tid, w.txn, w.sl.idx)
	w.txnRecs = 0
	s.say("begin %s/%d", w.sl.tid, w.open.epoch)
	return true
}

// commit commits the open transaction.
func (w *worker) commit() bool { return w.end(true) }

// abort aborts the open transaction.
func (w *worker) abort() bool { return w.end(false) }

// end commits or aborts the open transaction. The trace names the outcome
// the worker asked for, whatever the engine answered.
func (w *worker) end(commit bool) bool {
	s := w.s
	what := "abort"
	if commit {
		what = "commit"
	}
	t := w.open
	err := s.endTxn(w, commit)
	s.say("%s: %s", what, errName(err))
	if t != nil {
		t.clientEnd(commit, err)
	}
	w.open = nil
	if err != nil {
		w.failed(what, err)
		return false
	}
	return true
}

// rewind moves a classic member back to its group's committed offsets, as
// a consumer must after an abort.
func (w *worker) rewind() {
	if err := w.classic.Rewind(); err != nil {
		w.failed("rewind", err)
	}
}

// stage sends the held records' acks to the open transaction (KIP-1289).
func (w *worker) stage() bool {
	s := w.s
	g := w.sl.mode
	acks := append(ackRanges(w.acc, engine.AckAccept), ackRanges(w.rej, engine.AckReject)...)
	if len(acks) == 0 {
		return true
	}
	t := w.open
	valid := t != nil && !s.fenced(w.txn, w.sl.tid)
	pred := s.predict(g, w.share.ID(), w.held, true)
	meta := w.share.Metadata()
	current, inGroup := s.memberEpoch(g, meta.MemberID)
	stale := inGroup && current != meta.MemberEpoch
	err := s.producerCall(w.txn, w.sl.tid, "stage", func() error { return w.txn.SendShareAcksToTransaction(acks, meta) })
	s.say("stage a%d r%d: %s", len(w.acc), len(w.rej), errName(err))
	failed, whole := partitionErrors(err)
	if !whole {
		s.touch(w.share.ID())
	}
	if valid && stale && !errors.Is(err, engine.ErrFencedMemberEpoch) {
		s.fail("I10 member-epoch", "%s: stage by %s with member epoch %d, the group has %d, returned %v, want fenced member epoch",
			w.name, meta.MemberID, meta.MemberEpoch, current, err)
		return false
	}
	if valid && inGroup && !stale && errors.Is(err, engine.ErrFencedMemberEpoch) {
		s.fail("I10 member-epoch", "%s: stage by %s with its current member epoch %d was fenced: %v", w.name, meta.MemberID, current, err)
		return false
	}
	if valid && !stale {
		s.checkPrediction(w, g, "stage", w.held, pred, failed, whole)
	}
	if errors.Is(err, engine.ErrFencedMemberEpoch) && !w.zombie {
		// A rebalance between the poll and the staging: abort, and the
		// next poll learns the new epoch (DESIGN §3.9).
		if valid {
			w.probeAbortable("stage", err)
		}
		if w.abort() {
			w.settle()
		}
		return false
	}
	if whole {
		w.failed("stage", err)
		return false
	}
	var undone map[int32]bool
	var ae *engine.AckError
	if errors.As(err, &ae) {
		for tp, perr := range ae.Partitions {
			if errors.Is(perr, errStageWrite) {
				if undone == nil {
					undone = map[int32]bool{}
				}
				undone[tp.Partition] = true
			}
		}
	}
	for _, x := range []struct {
		recs []engine.Record
		t    engine.AckType
	}{{w.acc, engine.AckAccept}, {w.rej, engine.AckReject}} {
		for _, rec := range x.recs {
			m := s.share[g][rec.Partition]
			if rec.Offset < m.spso {
				continue
			}
			switch {
			case undone[rec.Partition]:
				s.addEvent(g, rec.Partition, rec.Offset, event{kind: evUndone, member: w.share.ID()})
			case failed[rec.Partition] == nil && t != nil:
				s.addEvent(g, rec.Partition, rec.Offset, event{kind: evStaged, member: w.share.ID(), must: true, pid: t.pid, epoch: t.epoch, typ: x.t})
				t.staged++
			}
		}
	}
	if err != nil {
		// A partition failed: the transaction cannot commit what it
		// wrote for those records, so it aborts (as loadgen's worker does).
		if valid {
			w.probeAbortable("stage", err)
		}
		if w.abort() {
			w.settle()
		}
		return false
	}
	return true
}

// probeAbortable checks invariant 13 after a staging call failed with
// cause: the transaction is abortable, so a Produce and a Commit must both
// fail with ErrAbortableTransaction wrapping the cause (a client that
// ignores the failure must not make its outputs visible).
func (w *worker) probeAbortable(what string, cause error) {
	s := w.s
	if w.open == nil || errors.Is(cause, engine.ErrProducerFenced) || s.fenced(w.txn, w.sl.tid) {
		return
	}
	for _, p := range []struct {
		name string
		call func() error
	}{
		{"produce", func() error {
			tp := s.outs[w.sl.mode][0].tp
			_, err := w.txn.Produce(tp.Topic, tp.Partition, []engine.ProduceRecord{{Value: []byte("probe")}})
			return err
		}},
		{"commit", w.txn.Commit},
	} {
		err := p.call()
		s.say("probe %s after failed %s: %s", p.name, what, errName(err))
		if !errors.Is(err, engine.ErrAbortableTransaction) {
			s.fail("I13 abortable", "%s's %s after a failed %s (%v) returned %v, want ErrAbortableTransaction", w.name, p.name, what, cause, err)
			return
		}
	}
}

// stageRelease tries to stage RELEASE, which KIP-1289 forbids: the engine
// must refuse it and change nothing but the transaction, which the refusal
// leaves abortable, so the worker aborts it. It reports whether the
// transaction is still open.
func (w *worker) stageRelease() bool {
	s := w.s
	acks := ackRanges(w.held, engine.AckRelease)
	if len(acks) == 0 || w.open == nil {
		return true
	}
	valid := !s.fenced(w.txn, w.sl.tid)
	meta := w.share.Metadata()
	err := s.producerCall(w.txn, w.sl.tid, "stage-release", func() error { return w.txn.SendShareAcksToTransaction(acks, meta) })
	s.say("stage-release: %s", errName(err))
	if err == nil {
		s.fail("I7 tx-pending-held", "%s staged RELEASE for %s and the engine accepted it (DESIGN §3.3: invalid request)", w.name, fmtRecs(w.held))
	}
	if errors.As(err, new(*engine.AckError)) {
		s.touch(w.share.ID())
	}
	if err == nil {
		return true
	}
	if valid {
		w.probeAbortable("stage-release", err)
	}
	if w.abort() {
		w.settle()
	}
	return false
}

// sendOffsets adds the classic member's next offsets to the open
// transaction.
func (w *worker) sendOffsets() bool {
	s := w.s
	offs := map[engine.TopicPartition]int64{}
	for _, rec := range w.held {
		tp := engine.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}
		if rec.Offset+1 > offs[tp] {
			offs[tp] = rec.Offset + 1
		}
	}
	meta := w.classic.Metadata()
	err := s.producerCall(w.txn, w.sl.tid, "send-offsets", func() error { return w.txn.SendOffsetsToTransaction(offs, meta) })
	s.say("send-offsets %s: %s", fmtOffsets(offs), errName(err))
	if errors.Is(err, engine.ErrIllegalGeneration) && !w.zombie {
		// A rebalance since the poll: abort and start over from the
		// committed offsets.
		w.probeAbortable("send-offsets", err)
		if w.abort() {
			w.rewind()
		}
		w.settle()
		return false
	}
	if err != nil {
		w.failed("send-offsets", err)
		return false
	}
	if w.open != nil {
		for tp, off := range offs {
			w.open.offsets[tp.Partition] = off
		}
	}
	return true
}

// close leaves cleanly (KindLeave): an implicit member's close accepts its
// last poll first; an open transaction aborts.
func (w *worker) close() {
	s := w.s
	if w.gone {
		return
	}
	if w.share != nil && modes[w.sl.mode] == "implicit" && w.phase == phProduced && len(w.held) > 0 {
		g := w.sl.mode
		pred := s.predict(g, w.share.ID(), w.held, false)
		for _, rec := range w.held {
			if pred[rec.Partition] >= 0 && rec.Offset >= s.share[g][rec.Partition].spso {
				s.addEvent(g, rec.Partition, rec.Offset, event{kind: evImplicit, member: w.share.ID(), must: pred[rec.Partition] > 0})
			}
		}
		if _, err := w.share.Poll(0); err == nil {
			s.touch(w.share.ID())
		}
	}
	if w.open != nil {
		w.abort()
	}
	if w.share != nil {
		if m := s.members[w.share.ID()]; m != nil {
			m.left, m.leftStep = true, s.stepNo
		}
		_ = w.share.Leave()
	}
	if w.classic != nil {
		_ = w.classic.Leave()
	}
}

// ackRanges turns records into acknowledgements of consecutive offsets.
func ackRanges(recs []engine.Record, t engine.AckType) []engine.Acknowledgement {
	return engine.AckRanges(recs, recordAt, t)
}

func recordAt(r engine.Record) (string, int32, int64) { return r.Topic, r.Partition, r.Offset }

func fmtRecs(recs []engine.Record) string {
	if len(recs) == 0 {
		return "[]"
	}
	var b []byte
	b = append(b, '[')
	for i, r := range recs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = fmt.Appendf(b, "p%d@%d", r.Partition, r.Offset)
		if r.DeliveryCount > 1 {
			b = fmt.Appendf(b, "x%d", r.DeliveryCount)
		}
	}
	return string(append(b, ']'))
}

func fmtOffsets(offs map[engine.TopicPartition]int64) string {
	tps := make([]engine.TopicPartition, 0, len(offs))
	for tp := range offs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].Partition < tps[j].Partition })
	b := []byte{'{'}
	for i, tp := range tps {
		if i > 0 {
			b = append(b, ' ')
		}
		b = fmt.Appendf(b, "p%d:%d", tp.Partition, offs[tp])
	}
	return string(append(b, '}'))
}
