// This file holds the simulated workers: one slot per worker position, one
// worker per incarnation, and each mode's loop (docs/design.md §5) cut into phases
// so the scheduler can interleave them and a crash can strike between any
// two.

package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/vocab"
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

// worker is one incarnation of a slot's worker: the load generator's own
// loop (a pipeline.Loop: the plain machine or the checkpoint machine)
// deciding what it does, and the engine target's
// worker (the load generator's adapter) making every call. The engine
// clients behind the adapter are read by the checks, never called.
type worker struct {
	s       *sim
	sl      *slot
	name    string
	tw      targets.Worker
	share   *engine.ShareMember   // observed: share-group modes
	classic *engine.ClassicMember // observed: classic-eos
	txn     *engine.Producer      // observed: transactional modes

	m    pipeline.Loop[*targets.Record]
	book *ledger.Book // its calls in the mode's ledger, booked as a run books them
	// cb books the checkpoint model's calls and performs its own steps
	// (the lane that runs it; nil elsewhere).
	cb         *ledger.CheckpointBook
	src        stepSource // the machine's random stream: the running step's
	open       *txnTrack
	stallUntil time.Duration
	zombie     bool
	gone       bool
	emptyPoll  bool // the last poll returned nothing (the drain moves on)
}

// stepSource hands the machine the random stream of the step that runs
// it, so a step's choices stay its own when shrinking removes others.
type stepSource struct{ r *rand.Rand }

func (s *stepSource) Float64() float64 { return s.r.Float64() }

var modeShort = [...]string{"imp", "exp", "def", "txn", "eos"}

// maxTxnRecords ends a simulated worker's transaction once it holds this
// many records.
const maxTxnRecords = 12

// newWorker joins the slot's group and creates its producer; a
// transactional producer fences the slot's previous incarnation.
func (sl *slot) newWorker() (*worker, error) {
	s := sl.s
	sl.inc++
	mode := modes[sl.mode]
	w := &worker{s: s, sl: sl, name: fmt.Sprintf("%s%d#%d", modeShort[sl.mode], sl.n, sl.inc)}
	// The transaction's end is the simulator's choice (Inputs.EndTxn), so
	// its age never ends it.
	mcfg := pipeline.Config{Mode: mode, MaxPollRecords: s.p.maxPoll,
		MaxRecords: maxTxnRecords, MaxDuration: 1000 * time.Hour, LockDuration: s.p.lock}
	now := func() int64 { return int64(s.clk.Now()) }
	cp := s.cps[sl.mode]
	if cp != nil {
		c := s.p.cp
		c.Key = ledger.RecordKey
		mcfg.Checkpoint = &c
		// A restarted task finishes or rolls back its last checkpoint
		// before its new producer fences the old one, as a run's does.
		for _, l := range cp.Recover(context.Background(), sl.n, s.t, s.tcfg[sl.mode], s.ledgers[sl.mode], nil, now) {
			s.say("recovery: %s", l)
		}
	}
	w.m = pipeline.New[*targets.Record](mcfg, &w.src)
	tw, err := s.t.NewWorker(context.Background(), s.tcfg[sl.mode], mode, sl.n)
	if err != nil {
		return nil, err
	}
	h, _ := enginetarget.HandlesOf(tw)
	w.tw, w.share, w.classic, w.txn = tw, h.Share, h.Classic, h.Txn
	w.book = s.ledgers[sl.mode].NewBook(sl.n, int64(sl.inc), now)
	if cp != nil {
		w.cb = cp.NewBook(w.book, nil)
	}
	if w.share != nil {
		s.members[w.share.ID()] = &memberInfo{lastSeen: s.clk.Now(), leftStep: -2}
	}
	return w, nil
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

func (w *worker) phaseName() string { return string(w.m.Phase()) }

func (w *worker) memberID() string {
	if w.share != nil {
		return w.share.ID()
	}
	return w.classic.ID()
}

// outcome turns the error of a call into the machine's result. A worker
// the adapter classified fenced is replaced (by the machine's next
// action); an expected error (expected says which) is one the loop goes
// on from; anything else is a simulator failure, since the simulated
// clients make only valid calls.
func (w *worker) outcome(what string, err error, expected bool) pipeline.Result[*targets.Record] {
	if err == nil {
		return pipeline.Result[*targets.Record]{}
	}
	w.s.say("%s: %s", what, errName(err))
	fenced := errors.Is(err, targets.ErrFenced) && !expected
	if !fenced && !expected {
		w.s.fail("sim", "%s %s: unexpected error: %v", w.name, what, err)
	}
	return pipeline.Result[*targets.Record]{Err: err, Fenced: fenced}
}

// inputs draws what this step tells the machine: the poll's size, the
// share of records rejected or released, whether locks are renewed and
// whether an open transaction ends now (and by abort). In the drain
// everything is accepted and every transaction commits.
func (w *worker) inputs(r *rand.Rand) pipeline.Inputs {
	s := w.s
	in := pipeline.Inputs{Now: simEpoch.Add(s.clk.Now()), MaxPoll: 1 + r.IntN(s.p.maxPoll)}
	end := r.IntN(100) >= 40
	if s.drain {
		in.MaxPoll, in.EndTxn = s.p.maxPoll, true
		return in
	}
	in.EndTxn = end
	switch modes[w.sl.mode] {
	case vocab.Explicit:
		in.RejectRatio, in.ReleaseRatio, in.RenewRatio = 0.08, 0.08, 0.125
	case vocab.Deferred:
		in.RejectRatio, in.RenewRatio, in.AbortRatio = 0.16, 0.10, 0.133
	case vocab.Transactional:
		in.RejectRatio, in.AbortRatio = 0.16, 0.25
	case vocab.ClassicEOS:
		in.AbortRatio = 0.25
	}
	return in
}

// simEpoch is the wall-clock reading of the manual clock's zero.
var simEpoch = time.Unix(0, 0)

// work moves the worker one action of its loop (processing takes no
// simulated time, so it goes with the action after it).
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
	w.src.r = r
	in := w.inputs(r)
	for {
		a := w.m.Next(in)
		if a.Op == pipeline.OpProcess {
			w.m.Done(pipeline.Result[*targets.Record]{})
			continue
		}
		res := w.perform(a, r)
		if w.cb != nil {
			w.cb.Done(w.tw, w.m.Open(), a, res)
		} else {
			w.book.Done(w.tw, w.m.Open(), a, res)
		}
		if !w.gone {
			w.m.Done(res)
		}
		return
	}
}

// perform makes the call a names, with the checks around it.
func (w *worker) perform(a pipeline.Action[*targets.Record], r *rand.Rand) pipeline.Result[*targets.Record] {
	s := w.s
	if w.cb != nil {
		// The checkpoint model's own steps (sink, snapshot) touch no
		// target: its book performs them, as in a run.
		if res, ok := w.cb.Perform(context.Background(), w.tw, a); ok {
			s.say("%s checkpoint %d%s", a.Op, a.Checkpoint, cpDetail(a, res))
			return res
		}
	}
	switch a.Op {
	case pipeline.OpPoll:
		return w.poll(a.Max, a.Recs)
	case pipeline.OpBegin:
		return w.begin()
	case pipeline.OpProduce:
		return w.outcome("produce", w.produce(a.Recs), false)
	case pipeline.OpStageAccept, pipeline.OpStageReject:
		if w.classic != nil {
			return w.sendOffsets(a.Recs)
		}
		if a.Op == pipeline.OpStageAccept && !s.drain && r.IntN(30) == 0 {
			if res, ok := w.stageRelease(a.Recs); !ok {
				return res
			}
		}
		t := engine.AckAccept
		if a.Op == pipeline.OpStageReject {
			t = engine.AckReject
		}
		return w.stage(a.Recs, t)
	case pipeline.OpAccept:
		return w.ack(a.Recs, engine.AckAccept, evAccept)
	case pipeline.OpReject:
		return w.ack(a.Recs, engine.AckReject, evReject)
	case pipeline.OpRelease, pipeline.OpReleaseHeld:
		return w.ack(a.Recs, engine.AckRelease, evRelease)
	case pipeline.OpRenew:
		return w.ack(a.Recs, engine.AckRenew, evRenew)
	case pipeline.OpCommit:
		return w.end(true)
	case pipeline.OpAbort:
		// (A classic consumer's abort also moves it back to its group's
		// committed offsets: the adapter does that.)
		return w.end(false)
	case pipeline.OpWait:
		s.say("(waits)")
	case pipeline.OpReplace:
		if w.zombie {
			s.say("(zombie exits)")
			w.abandon()
			break
		}
		s.say("replace %s", w.name)
		w.sl.replace(false)
	default:
		s.say("(%s)", a.Op)
	}
	return pipeline.Result[*targets.Record]{}
}

// poll acquires (share) or fetches (classic) up to max records; in
// implicit mode it first accepts accepts, the previous poll's records.
func (w *worker) poll(max int, accepts []*targets.Record) pipeline.Result[*targets.Record] {
	s := w.s
	g := w.sl.mode
	ctx := context.Background()
	if w.classic != nil {
		recs, err := w.tw.Poll(ctx, max)
		if err != nil {
			return w.outcome("poll", err, false)
		}
		s.say("poll %s", fmtRecs(recs))
		s.checkPolledInputs(w, recs)
		w.emptyPoll = len(recs) == 0
		return pipeline.Result[*targets.Record]{Recs: recs, At: simEpoch.Add(s.clk.Now())}
	}
	w.predictImplicit(accepts)
	recs, err := w.tw.Poll(ctx, max)
	if err != nil {
		return w.outcome("poll", err, false)
	}
	s.touch(w.share.ID())
	s.say("poll %s", fmtRecs(recs))
	for _, rec := range recs {
		s.addEvent(g, rec.Partition, rec.Offset, event{kind: evPolled, member: w.share.ID(), count: rec.DeliveryCount})
	}
	s.checkPolledInputs(w, recs)
	w.emptyPoll = len(recs) == 0
	return pipeline.Result[*targets.Record]{Recs: recs, At: simEpoch.Add(s.clk.Now())}
}

// predictImplicit records what the implicit acceptance of recs (by a
// poll or a close) must do.
func (w *worker) predictImplicit(recs []*targets.Record) {
	s := w.s
	g := w.sl.mode
	if len(recs) == 0 || modes[g] != vocab.Implicit {
		return
	}
	pred := s.predict(g, w.share.ID(), recs, false)
	for _, rec := range recs {
		if pred[rec.Partition] >= 0 && rec.Offset >= s.share[g][rec.Partition].spso {
			s.addEvent(g, rec.Partition, rec.Offset, event{kind: evImplicit, member: w.share.ID(), must: pred[rec.Partition] > 0})
		}
	}
}

// produce writes one output per record, with the load generator's
// output header (its input's id, the worker's transaction), to the mode's
// output topic, in the open transaction if there is one: one call per
// output partition.
func (w *worker) produce(recs []*targets.Record) error {
	s := w.s
	if len(recs) == 0 {
		return nil
	}
	outs := s.outs[w.sl.mode]
	_, epoch := w.tw.TxnInfo()
	seq, epoch := w.book.OutputTxn(w.m.Open(), modes[w.sl.mode], epoch)
	byPart := make([][]*targets.Record, len(outs))
	ids := make([][]uint64, len(outs))
	for _, rec := range recs {
		q := rec.Partition % int32(len(outs))
		id, _ := ledger.PayloadID(rec.Value)
		v := make([]byte, ledger.HeaderBytes)
		ledger.PutOutputHeader(v, id, 0, seq, epoch, uint16(w.sl.n))
		byPart[q] = append(byPart[q], &targets.Record{Topic: outs[q].tp.Topic, Partition: q, Value: v})
		ids[q] = append(ids[q], id)
	}
	ctx := context.Background()
	for q, batch := range byPart {
		if len(batch) == 0 {
			continue
		}
		op := outs[q]
		var err error
		if w.txn != nil {
			err = s.producerCall(w.txn, w.sl.tid, "produce", func() error { return w.tw.Produce(ctx, batch) })
		} else {
			err = w.tw.Produce(ctx, batch)
		}
		if err != nil {
			return err
		}
		base := batch[0].Offset
		if w.open != nil {
			w.open.wrote(op.tp, base, len(batch))
		}
		op.add(base, ids[q], w.open)
		s.say("produce %s[%d..%d]", op.tp, base, base+int64(len(batch))-1)
	}
	return nil
}

// ack acknowledges recs with t (explicit and deferred modes) and checks
// the outcome against what the model predicts.
func (w *worker) ack(recs []*targets.Record, t engine.AckType, ev evKind) pipeline.Result[*targets.Record] {
	s := w.s
	g := w.sl.mode
	if len(recs) == 0 {
		return pipeline.Result[*targets.Record]{}
	}
	pred := s.predict(g, w.share.ID(), recs, false)
	var err error
	if t == engine.AckRenew {
		err = w.tw.Renew(context.Background(), recs)
	} else {
		err = w.tw.Ack(context.Background(), recs, targetAck(t))
	}
	s.say("%s %s: %s", ackWord(t), fmtRecs(recs), errName(err))
	failed, whole := partitionErrors(err)
	if !whole {
		s.touch(w.share.ID())
	}
	s.checkPrediction(w, g, "ack", recs, pred, failed, whole)
	if whole {
		return w.outcome("ack", err, false)
	}
	for _, rec := range recs {
		if failed[rec.Partition] == nil && rec.Offset >= s.share[g][rec.Partition].spso {
			s.addEvent(g, rec.Partition, rec.Offset, event{kind: ev, member: w.share.ID(), must: true})
		}
	}
	// A partition whose records were not ours any more (their lock
	// expired): the load generator counts it and goes on.
	return pipeline.Result[*targets.Record]{Err: err}
}

// targetAck is the load generator's name of an acknowledgement type.
func targetAck(t engine.AckType) vocab.AckType {
	switch t {
	case engine.AckAccept:
		return vocab.AckAccept
	case engine.AckReject:
		return vocab.AckReject
	case engine.AckRelease:
		return vocab.AckRelease
	case engine.AckRenew:
		return vocab.AckRenew
	}
	return vocab.AckGap
}

func ackWord(t engine.AckType) string {
	switch t {
	case engine.AckAccept:
		return "accept"
	case engine.AckReject:
		return "reject"
	case engine.AckRelease:
		return "release"
	case engine.AckRenew:
		return "renew"
	}
	return "gap"
}

// partitionErrors says which partitions of an acknowledgement failed, or
// that the whole call failed.
func partitionErrors(err error) (map[int32]error, bool) {
	if err == nil {
		return nil, false
	}
	var ae *engine.AckError
	if !errors.As(err, &ae) {
		// Only no-op successes refused (records already below SPSO):
		// every partition was applied.
		return map[int32]error{}, !errors.Is(err, targets.ErrAckRefused)
	}
	out := map[int32]error{}
	for tp, perr := range ae.Partitions {
		out[tp.Partition] = perr
	}
	return out, false
}

// begin opens a transaction.
func (w *worker) begin() pipeline.Result[*targets.Record] {
	s := w.s
	err := s.producerCall(w.txn, w.sl.tid, "begin", func() error { return w.tw.Begin(context.Background()) })
	if errors.Is(err, engine.ErrConcurrentTransactions) {
		// The previous transaction's markers wait for a participant cut
		// off from the coordinator: the worker polls again and retries.
		return w.outcome("begin", err, true)
	}
	if err != nil {
		return w.outcome("begin", err, false)
	}
	w.open = s.newTrack(w.sl.tid, w.sl.idx)
	s.say("begin %s/%d", w.sl.tid, w.open.epoch)
	return pipeline.Result[*targets.Record]{}
}

// end commits or aborts the open transaction. The trace names the outcome
// the worker asked for, whatever the engine answered.
func (w *worker) end(commit bool) pipeline.Result[*targets.Record] {
	s := w.s
	what := "abort"
	if commit {
		what = "commit"
	}
	t := w.open
	switch {
	case commit && w.cb != nil:
		w.cb.CommitSent()
	case commit:
		w.book.CommitSent()
	}
	err := s.endTxn(w, commit)
	s.say("%s: %s", what, errName(err))
	if t != nil {
		t.clientEnd(commit, err)
	}
	w.open = nil
	return w.outcome(what, err, false)
}

// stage sends recs' acks of type t to the open transaction (KIP-1289).
func (w *worker) stage(recs []*targets.Record, typ engine.AckType) pipeline.Result[*targets.Record] {
	s := w.s
	g := w.sl.mode
	if len(recs) == 0 {
		return pipeline.Result[*targets.Record]{}
	}
	t := w.open
	valid := t != nil && !s.fenced(w.txn, w.sl.tid)
	pred := s.predict(g, w.share.ID(), recs, true)
	meta := w.share.Metadata()
	current, inGroup := s.memberEpoch(g, meta.MemberID)
	stale := inGroup && current != meta.MemberEpoch
	err := s.producerCall(w.txn, w.sl.tid, "stage", func() error { return w.tw.StageAcks(context.Background(), recs, targetAck(typ)) })
	s.say("stage %s %s: %s", ackWord(typ), fmtRecs(recs), errName(err))
	failed, whole := partitionErrors(err)
	if !whole {
		s.touch(w.share.ID())
	}
	if valid && stale && !errors.Is(err, engine.ErrFencedMemberEpoch) {
		s.fail(vocab.InvMemberEpoch, "%s: stage by %s with member epoch %d, the group has %d, returned %v, want fenced member epoch",
			w.name, meta.MemberID, meta.MemberEpoch, current, err)
		return pipeline.Result[*targets.Record]{Err: err}
	}
	if valid && inGroup && !stale && errors.Is(err, engine.ErrFencedMemberEpoch) {
		s.fail(vocab.InvMemberEpoch, "%s: stage by %s with its current member epoch %d was fenced: %v", w.name, meta.MemberID, current, err)
		return pipeline.Result[*targets.Record]{Err: err}
	}
	if valid && !stale {
		s.checkPrediction(w, g, "stage", recs, pred, failed, whole)
	}
	if errors.Is(err, engine.ErrFencedMemberEpoch) && !w.zombie {
		// A rebalance between the poll and the staging: abort, and the
		// next poll learns the new epoch (docs/design.md §3.9).
		if valid {
			w.probeAbortable("stage", err)
		}
		return pipeline.Result[*targets.Record]{Err: err}
	}
	if whole {
		return w.outcome("stage", err, false)
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
	for _, rec := range recs {
		m := s.share[g][rec.Partition]
		if rec.Offset < m.spso {
			continue
		}
		switch {
		case undone[rec.Partition]:
			s.addEvent(g, rec.Partition, rec.Offset, event{kind: evUndone, member: w.share.ID()})
		case failed[rec.Partition] == nil && t != nil:
			s.addEvent(g, rec.Partition, rec.Offset, event{kind: evStaged, member: w.share.ID(), must: true, pid: t.pid, epoch: t.epoch, typ: typ})
			t.staged++
		}
	}
	if err != nil && valid {
		// A partition failed: the transaction cannot commit what it
		// wrote for those records, so the worker aborts it.
		w.probeAbortable("stage", err)
	}
	return pipeline.Result[*targets.Record]{Err: err}
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
			return w.tw.Produce(context.Background(), []*targets.Record{{Topic: tp.Topic, Partition: tp.Partition, Value: []byte("probe")}})
		}},
		{"commit", func() error { return w.tw.Commit(context.Background()) }},
	} {
		err := p.call()
		s.say("probe %s after failed %s: %s", p.name, what, errName(err))
		if !errors.Is(err, engine.ErrAbortableTransaction) {
			s.fail(vocab.InvAbortable, "%s's %s after a failed %s (%v) returned %v, want ErrAbortableTransaction", w.name, p.name, what, cause, err)
			return
		}
	}
}

// stageRelease tries to stage RELEASE for recs, which KIP-1289 forbids:
// the engine must refuse it and change nothing but the transaction, which
// the refusal leaves abortable. It reports whether the transaction can go
// on (false: res is the staging's failure, and the worker aborts).
func (w *worker) stageRelease(recs []*targets.Record) (pipeline.Result[*targets.Record], bool) {
	s := w.s
	if len(recs) == 0 || w.open == nil {
		return pipeline.Result[*targets.Record]{}, true
	}
	valid := !s.fenced(w.txn, w.sl.tid)
	err := s.producerCall(w.txn, w.sl.tid, "stage-release", func() error {
		return w.tw.StageAcks(context.Background(), recs, vocab.AckRelease)
	})
	s.say("stage-release: %s", errName(err))
	if err == nil {
		s.fail(vocab.InvTxPendingHeld, "%s staged RELEASE for %s and the engine accepted it (docs/design.md §3.3: invalid request)", w.name, fmtRecs(recs))
	}
	if errors.As(err, new(*engine.AckError)) {
		s.touch(w.share.ID())
	}
	if err == nil {
		return pipeline.Result[*targets.Record]{}, true
	}
	if valid {
		w.probeAbortable("stage-release", err)
	}
	if engine.ErrorIsFenced(err) && !errors.Is(err, engine.ErrFencedMemberEpoch) {
		return w.outcome("stage-release", err, false), false
	}
	return pipeline.Result[*targets.Record]{Err: err}, false
}

// sendOffsets adds the classic member's next offsets past recs to the open
// transaction.
func (w *worker) sendOffsets(recs []*targets.Record) pipeline.Result[*targets.Record] {
	s := w.s
	offs := map[engine.TopicPartition]int64{}
	for _, rec := range recs {
		tp := engine.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}
		if rec.Offset+1 > offs[tp] {
			offs[tp] = rec.Offset + 1
		}
	}
	if len(offs) == 0 {
		return pipeline.Result[*targets.Record]{}
	}
	err := s.producerCall(w.txn, w.sl.tid, "send-offsets", func() error {
		return w.tw.StageAcks(context.Background(), recs, vocab.AckAccept)
	})
	s.say("send-offsets %s: %s", fmtOffsets(offs), errName(err))
	if errors.Is(err, engine.ErrIllegalGeneration) && !w.zombie {
		// A rebalance since the poll: abort and start over from the
		// committed offsets.
		w.probeAbortable("send-offsets", err)
		return pipeline.Result[*targets.Record]{Err: err}
	}
	if err != nil {
		return w.outcome("send-offsets", err, false)
	}
	if w.open != nil {
		for tp, off := range offs {
			w.open.offsets[tp.Partition] = off
		}
	}
	return pipeline.Result[*targets.Record]{}
}

// close leaves cleanly (KindLeave) through the adapter's Close: an
// implicit member's close accepts its last poll first; an open
// transaction aborts (here first, so its end is tracked).
func (w *worker) close() {
	s := w.s
	if w.gone {
		return
	}
	if w.open != nil {
		res := w.end(false)
		switch {
		case w.cb != nil:
			w.cb.Done(w.tw, false, pipeline.Action[*targets.Record]{Op: pipeline.OpAbort}, res)
		case res.Err == nil:
			w.book.Aborted()
		}
	}
	if w.share != nil {
		if m := s.members[w.share.ID()]; m != nil {
			m.left, m.leftStep = true, s.stepNo
		}
	}
	if modes[w.sl.mode] == vocab.Implicit && w.m.Phase() == vocab.AfterPoll {
		// Records polled and not yet produced: the adapter's Close would
		// accept them (a close accepts the whole last poll, as Kafka's
		// does), and the load generator closes only once they are
		// produced (OpClose). A leave in the middle of the loop leaves the
		// group without accepting.
		_ = w.share.Leave()
		return
	}
	w.predictImplicit(w.m.Pending())
	w.book.Closed(w.m.Pending())
	_ = w.tw.Close(context.Background())
}

// cpDetail says how a checkpoint step ended, for the trace.
func cpDetail(a pipeline.Action[*targets.Record], res pipeline.Result[*targets.Record]) string {
	switch {
	case res.Err != nil:
		return ": " + errName(res.Err)
	case a.Op == pipeline.OpEndCheckpoint && a.Cause != nil:
		return " " + a.End.String() + ": " + errName(a.Cause)
	case a.Op == pipeline.OpEndCheckpoint:
		return " " + a.End.String()
	case a.Op == pipeline.OpPreCommit:
		return " " + fmtRecs(a.Recs)
	}
	return ""
}

func fmtRecs(recs []*targets.Record) string {
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
