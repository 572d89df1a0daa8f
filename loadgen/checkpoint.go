// This file holds the checkpoint model (ackOnly workloads): the worker loop
// of a stream-processing framework's source task that writes its results to
// an external two-phase sink and commits them together with its share
// acknowledgements at checkpoints, and the recovery a restarted task runs.
//
// One checkpoint, at its barrier (every checkpointInterval, or earlier once
// it holds checkpoint.maxRecords records):
//
//	stage the acks (transactional, staging at the barrier)
//	pre-commit the sink transaction               crash: after-precommit
//	snapshot (the checkpoint is complete)         crash: after-snapshot
//	notify-complete                               crash: after-notify
//	commit one side (checkpoint.order)            crash: between-commits
//	commit the other
//
// A failure before the snapshot (or a snapshot later than
// checkpoint.timeout) aborts both sides. A restarted task commits what its
// last completed snapshot says was pre-committed and rolls back every
// other prepared sink transaction of its own, before its new producer
// fences the old one (see recoverCheckpoint).

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/sink"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/workloads"
)

// The checkpoint model's crash phases (defined with the others in
// pipeline).
const (
	PhaseBeforeBarrier  = pipeline.BeforeBarrier
	PhaseAfterPreCommit = pipeline.AfterPreCommit
	PhaseAfterSnapshot  = pipeline.AfterSnapshot
	PhaseAfterNotify    = pipeline.AfterNotify
	PhaseBetweenCommits = pipeline.BetweenCommits
)

// snapshot is a completed checkpoint as the framework's checkpoint storage
// holds it, until both of its commits have landed.
type snapshot struct {
	cp       int64
	start    time.Time // the checkpoint's first record
	gid      string    // the sink transaction ("" when it had no outputs)
	sinkTxn  int32     // the ledger's record of the sink transaction
	ackTxn   int32     // the ledger's record of the share-ack transaction (-1: explicit acks)
	tid      string    // share-ack transaction: transactional id, producer id, epoch
	pid      int64
	epoch    int16
	accTags  []int64 // explicit acks: what to accept and reject
	rejTags  []int64
	rejected []int64 // staged rejects, settled once the acks commit
	acks     []*targets.Record
	rejs     []*targets.Record
	entries  []sink.Entry
	// What landed: set before the next crash point.
	acksDone, sinkDone bool
}

// sinkTxnInfo is what the run knows of one sink transaction it
// pre-committed: where its outputs go in the ledger, and the inputs whose
// outputs it holds (kept until it is resolved).
type sinkTxnInfo struct {
	worker  uint16
	seq     int64
	epoch   int16
	ledger  int32
	ids     []uint64
	visible int64 // ns since start when its commit returned; 0 before
}

// checkpointState is the mode run's share of the checkpoint model: the
// sink, the checkpoint storage (one pending snapshot per worker id), the
// sink transactions, and the slow-checkpoint faults.
type checkpointState struct {
	sink   sink.Sink
	ownsIt bool
	prefix string // every sink transaction id of this mode run starts with it

	mu        sync.Mutex
	snapshots map[int]*snapshot
	txns      map[string]*sinkTxnInfo
	settled   chunks[uint8] // per input id - 1: 1 once a sink commit holding it returned
	nSettled  atomic.Int64
	slow      []atomic.Int64 // per worker: delay of its next snapshot, ns

	failed    atomic.Int64 // checkpoints that failed (timed out, a staging or commit error)
	completed atomic.Int64
	renewals  atomic.Int64
	lostAcks  atomic.Int64 // sink committed, acks could not commit (sink-first)
	lostSink  atomic.Int64 // acks committed, sink could not commit (acks-first)
}

// initCheckpoint sets up the checkpoint model of an ackOnly mode run.
func (mr *modeRun) initCheckpoint() error {
	if !mr.spec.AckOnly {
		return nil
	}
	switch mr.mode {
	case pipeline.Transactional, pipeline.Explicit:
	default:
		return fmt.Errorf("%w: ackOnly (the checkpoint model) runs the transactional and explicit modes, not %s; on the kafka target use explicit (the sink commits, then the explicit acks)", ErrBadConfig, mr.mode)
	}
	cs := &checkpointState{sink: mr.cfg.Sink, snapshots: map[int]*snapshot{}, txns: map[string]*sinkTxnInfo{}}
	if cs.sink == nil {
		s, err := sink.OpenMemory("")
		if err != nil {
			return err
		}
		cs.sink, cs.ownsIt = s, true
	}
	cs.prefix = sinkSafe(mr.cfg.RunID+"-"+mr.name) + "-"
	cs.slow = make([]atomic.Int64, mr.spec.Consumers)
	mr.cp = cs
	return nil
}

// sinkSafe maps s to the characters a sink transaction id may hold.
func sinkSafe(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			return c
		}
		return '_'
	}, s)
}

// workerPrefix starts every sink transaction id of worker id.
func (cs *checkpointState) workerPrefix(id int) string {
	return cs.prefix + "w" + strconv.Itoa(id) + "-"
}

// settledInputs is how many inputs have a committed output or were
// rejected on purpose: on the output topic, and in the sink of the
// checkpoint model.
func (mr *modeRun) settledInputs() int64 {
	n := mr.ledger.settled()
	if mr.cp != nil {
		n += mr.cp.settledCount()
	}
	return n
}

// settledCount is how many inputs have an output in a sink commit that
// returned (the drain waits for it as it waits for outputs on the topic).
func (cs *checkpointState) settledCount() int64 { return cs.nSettled.Load() }

// markSettled books the inputs of a sink transaction whose commit returned.
func (cs *checkpointState) markSettled(ids []uint64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, id := range ids {
		if id == 0 {
			continue
		}
		if int(id) > cs.settled.len() {
			cs.settled.grow(int(id), 0)
		}
		if p := cs.settled.at(int(id) - 1); *p == 0 {
			*p = 1
			cs.nSettled.Add(1)
		}
	}
}

func (cs *checkpointState) setSnapshot(id int, s *snapshot) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if s == nil {
		delete(cs.snapshots, id)
		return
	}
	cs.snapshots[id] = s
}

func (cs *checkpointState) getSnapshot(id int) *snapshot {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.snapshots[id]
}

func (cs *checkpointState) txnInfo(gid string) *sinkTxnInfo {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.txns[gid]
}

// heldBatch is one poll's records held for the barrier.
type heldBatch struct {
	recs    []*targets.Record
	renewAt time.Time // when their locks were last taken or renewed
}

// checkpointLoop is one incarnation of a checkpointing source task.
type checkpointLoop struct {
	*workerLoop
	cs     *checkpointState
	txnal  bool // share acks in a producer transaction (else explicit acks)
	cp     int64
	start  time.Time // the checkpoint's first record
	held   []heldBatch
	nHeld  int
	acc    []*targets.Record // processed and accepted (an entry each)
	rej    []*targets.Record
	staged bool // transactional, staging at acquisition: the acks are in the open transaction
	ackTxn int32
	// entries are the outputs of the checkpoint, written to the sink at
	// the barrier (a pre-commit makes them durable; nothing of the sink
	// transaction is visible before its commit).
	entries []sink.Entry
	exited  bool // the loop must end (crashed or replaced)
	open    bool // the share-ack transaction is open
	// stopping: the run is draining; the last checkpoint commits.
	stopping bool
	rng      *rand.Rand
	// perPoll takes the barrier after every poll, on targets whose next
	// poll releases what the last one left unacknowledged (Kafka): the
	// deferred mode's shape, one checkpoint per poll.
	perPoll bool
}

func (mr *modeRun) runCheckpointLoop(ctx context.Context, wl *workerLoop) {
	cl := &checkpointLoop{workerLoop: wl, cs: mr.cp, txnal: mr.mode == pipeline.Transactional, ackTxn: -1,
		perPoll: mr.cfg.Target.Info().AcksBeforeNextPoll,
		rng:     mr.rng("worker/" + strconv.Itoa(wl.id) + "/incarnation/" + strconv.FormatInt(wl.inc, 10) + "/checkpoint")}
	cl.run(ctx)
}

func (cl *checkpointLoop) spec() *workloads.Spec { return cl.mr.spec }

func (cl *checkpointLoop) run(ctx context.Context) {
	mr := cl.mr
	for {
		select {
		case <-mr.stopWorkers:
			cl.shutdown(ctx)
			return
		default:
		}
		if until := mr.ctl[cl.id].cutUntil.Load(); time.Now().UnixNano() < until {
			sleepCtx(ctx, time.Duration(until-time.Now().UnixNano()))
			continue
		}
		if cl.barrierDue() {
			if cl.checkpoint(ctx) != nil {
				return
			}
			continue
		}
		cl.renewHeld(ctx)
		wait := 100 * time.Millisecond
		if cl.nHeld > 0 {
			if d := time.Until(cl.start.Add(cl.spec().CheckpointInterval)); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		if limit := cl.spec().Checkpoint.MaxRecords; limit > 0 && cl.nHeld >= limit {
			continue // the barrier is due
		}
		max := mr.spec.MaxPollRecords
		if limit := cl.spec().Checkpoint.MaxRecords; limit > 0 {
			max = min(max, limit-cl.nHeld)
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		recs, err := cl.w.Poll(pctx, max)
		cancel()
		if err != nil {
			if cl.pollFailed(ctx, err) != nil {
				return
			}
			continue
		}
		if len(recs) == 0 {
			continue
		}
		mr.ledger.addDeliveries(cl.id, recs, mr.sinceStart(time.Now()))
		if cl.take(ctx, recs) != nil {
			return
		}
	}
}

// pollFailed handles a failed poll: a fenced worker is replaced; anything
// else is retried after a pause. It returns errExit when the loop must end.
func (cl *checkpointLoop) pollFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errExit
	}
	if isFenced(err) {
		cl.reset()
		return cl.replace(ctx, false)
	}
	cl.mr.counts.ackErrors.Add(1)
	sleepCtx(ctx, 10*time.Millisecond)
	return nil
}

// barrierDue reports whether the open checkpoint's barrier has come: its
// interval has passed since its first record, or it holds maxRecords.
func (cl *checkpointLoop) barrierDue() bool {
	if cl.nHeld == 0 {
		return false
	}
	if cl.perPoll {
		return true
	}
	if limit := cl.spec().Checkpoint.MaxRecords; limit > 0 && cl.nHeld >= limit {
		return true
	}
	return !time.Now().Before(cl.start.Add(cl.spec().CheckpointInterval))
}

// take processes one poll's records into the open checkpoint.
func (cl *checkpointLoop) take(ctx context.Context, recs []*targets.Record) error {
	mr := cl.mr
	now := time.Now()
	mr.bookPoll(cl.id, now, recs)
	if err := cl.crashAt(ctx, pipeline.AfterPoll); err != nil {
		return err
	}
	if cl.nHeld == 0 {
		cl.start = now
		cl.cp++
	}
	var work time.Duration
	for range recs {
		work += cl.sample()
	}
	ctl := mr.ctl[cl.id]
	if time.Now().UnixNano() < ctl.slowUntil.Load() {
		work += time.Duration(ctl.slowDelay.Load())
	}
	sleepCtx(ctx, work)
	var acc, rej []*targets.Record
	for _, r := range recs {
		if mr.spec.RejectRatio > 0 && cl.rng.Float64() < mr.spec.RejectRatio {
			rej = append(rej, r)
			continue
		}
		acc = append(acc, r)
		if h, err := readInput(r.Value); err == nil {
			cl.entries = append(cl.entries, sink.Entry{InputID: h.ID, Worker: uint16(cl.id), IntendedNs: h.IntendedNs})
		}
	}
	cl.acc = append(cl.acc, acc...)
	cl.rej = append(cl.rej, rej...)
	cl.held = append(cl.held, heldBatch{recs: recs, renewAt: now})
	cl.nHeld += len(recs)
	if cl.txnal && cl.spec().Checkpoint.Staging == workloads.StageAtAcquisition {
		// The acks go TX_PENDING now: their locks are cancelled and the
		// transaction timeout holds them instead.
		if err := cl.stage(ctx, acc, rej); err != nil {
			return cl.fail(ctx, "staging at acquisition", err)
		}
	}
	return nil
}

// stage adds acks to the open share-ack transaction (opening it first).
func (cl *checkpointLoop) stage(ctx context.Context, acc, rej []*targets.Record) error {
	mr := cl.mr
	if !cl.open {
		if err := cl.w.Begin(ctx); err != nil {
			return err
		}
		cl.book.Began(cl.w)
		cl.open = true
		cl.ackTxn = cl.book.txnIdx
	}
	cl.staged = true
	if len(acc) > 0 {
		if err := cl.w.StageAcks(ctx, acc, targets.AckAccept); err != nil {
			mr.ledger.setAck(cl.book.tags(acc), ackAccept, fateFailed)
			return err
		}
		mr.ledger.stageAcks(cl.book.tags(acc), ackAccept, cl.ackTxn)
	}
	if len(rej) > 0 {
		if err := cl.w.StageAcks(ctx, rej, targets.AckReject); err != nil {
			mr.ledger.setAck(cl.book.tags(rej), ackReject, fateFailed)
			return err
		}
		mr.ledger.stageAcks(cl.book.tags(rej), ackReject, cl.ackTxn)
		cl.book.stagedRejects = appendTags(cl.book.stagedRejects, rej)
	}
	return nil
}

// renewHeld renews the locks of held records that have used half of their
// lock (checkpoint.renew), so records acquired long before the barrier are
// still this worker's when it comes. Records already staged have no lock.
func (cl *checkpointLoop) renewHeld(ctx context.Context) {
	if !cl.spec().Checkpoint.Renew || cl.staged || len(cl.held) == 0 {
		return
	}
	half := cl.spec().LockDuration / 2
	now := time.Now()
	for i := range cl.held {
		b := &cl.held[i]
		if now.Sub(b.renewAt) < half {
			continue
		}
		if err := cl.w.Renew(ctx, b.recs); err != nil {
			cl.mr.counts.ackErrors.Add(1)
			continue
		}
		b.renewAt = now
		cl.cs.renewals.Add(1)
	}
}

// gid names the sink transaction of checkpoint cp of this incarnation.
func (cl *checkpointLoop) gid() string {
	return fmt.Sprintf("%si%d-c%d", cl.cs.workerPrefix(cl.id), cl.inc, cl.cp)
}

// checkpoint runs the open checkpoint from its barrier to its commits.
func (cl *checkpointLoop) checkpoint(ctx context.Context) error {
	mr, cs := cl.mr, cl.cs
	if err := cl.crashAt(ctx, PhaseBeforeBarrier); err != nil {
		return err
	}
	barrier := time.Now()
	if cl.txnal && !cl.staged {
		if err := cl.stage(ctx, cl.acc, cl.rej); err != nil {
			return cl.fail(ctx, "staging at the barrier", err)
		}
	}
	snap := &snapshot{cp: cl.cp, start: cl.start, ackTxn: -1, sinkTxn: -1}
	if cl.txnal {
		snap.ackTxn = cl.ackTxn
		snap.tid, snap.epoch = cl.w.TxnInfo()
		if p, ok := cl.w.(targets.ProducerIDer); ok {
			snap.pid = p.ProducerID()
		}
		snap.rejected = append([]int64(nil), cl.book.stagedRejects...)
	} else {
		snap.acks, snap.rejs = cl.acc, cl.rej
		snap.accTags, snap.rejTags = appendTags(nil, cl.acc), appendTags(nil, cl.rej)
	}
	if len(cl.entries) > 0 {
		snap.gid = cl.gid()
		snap.entries = cl.entries
		// Sink transactions number apart from the share-ack ones in the
		// ledger (bit 31 of the incarnation's half).
		seq := cl.inc<<32 | 1<<31 | cl.cp
		snap.sinkTxn = mr.ledger.beginTxn(cl.id, seq, snap.pid, snap.epoch)
		mr.ledger.txnOutputs(snap.sinkTxn, len(cl.entries))
		ids := make([]uint64, len(cl.entries))
		for i, e := range cl.entries {
			ids[i] = e.InputID
		}
		cs.mu.Lock()
		cs.txns[snap.gid] = &sinkTxnInfo{worker: uint16(cl.id), seq: seq, epoch: snap.epoch, ledger: snap.sinkTxn, ids: ids}
		cs.mu.Unlock()
		if err := cs.sink.PreCommit(ctx, snap.gid, cl.entries); err != nil {
			mr.ledger.endTxn(snap.sinkTxn, outcomeAborted)
			return cl.fail(ctx, "pre-committing the sink", err)
		}
	}
	if err := cl.crashAt(ctx, PhaseAfterPreCommit); err != nil {
		return err
	}
	// The snapshot: the checkpoint is complete once it is stored, unless
	// it came later than the checkpoint timeout.
	if d := cs.slow[cl.id].Swap(0); d > 0 {
		mr.addFault(string(workloads.FaultSlowCheckpoint), fmt.Sprintf("worker %d checkpoint %d takes %v to snapshot", cl.id, cl.cp, time.Duration(d)))
		sleepCtx(ctx, time.Duration(d))
	}
	if time.Since(barrier) > cl.spec().Checkpoint.Timeout {
		cs.abortSink(ctx, snap, mr)
		return cl.fail(ctx, fmt.Sprintf("checkpoint %d timed out (snapshot after %v, timeout %v)", cl.cp, time.Since(barrier).Round(time.Millisecond), cl.spec().Checkpoint.Timeout), nil)
	}
	cs.setSnapshot(cl.id, snap)
	cl.reset()
	if err := cl.crashAt(ctx, PhaseAfterSnapshot); err != nil {
		return err
	}
	// notify-complete
	if err := cl.crashAt(ctx, PhaseAfterNotify); err != nil {
		return err
	}
	t0 := time.Now()
	ok := cl.commitBoth(ctx, snap)
	if cl.exited {
		return errExit
	}
	if ok {
		done := time.Now()
		mr.counts.commits.Add(1)
		cs.completed.Add(1)
		cl.recordCommit(done, done.Sub(t0), done.Sub(snap.start))
	}
	return nil
}

// commitBoth commits a completed checkpoint in checkpoint.order, with the
// between-commits crash point after the first. It reports whether both
// sides committed.
func (cl *checkpointLoop) commitBoth(ctx context.Context, snap *snapshot) bool {
	mr, cs := cl.mr, cl.cs
	if mr.spec.Checkpoint.Order == workloads.CommitSinkFirst {
		if err := cs.commitSink(ctx, snap, mr); err != nil {
			mr.counts.ackErrors.Add(1)
		}
		if cl.crashAt(ctx, PhaseBetweenCommits) != nil {
			cl.exited = true
			return false
		}
		if err := cl.commitAcks(ctx, snap); err != nil {
			// The sink holds the outputs; the records are redelivered and
			// processed again: duplicates, the risk of this order.
			cs.lostAcks.Add(1)
			cs.setSnapshot(cl.id, nil)
			return cl.afterAckFailure(ctx, err)
		}
		cs.setSnapshot(cl.id, nil)
		return true
	}
	if err := cl.commitAcks(ctx, snap); err != nil {
		if !cl.txnal {
			// Explicit acks are not atomic: some may have landed before
			// the error. A rollback would lose those records; committing
			// duplicates the others, which explicit acks allow.
			if cerr := cs.commitSink(ctx, snap, mr); cerr != nil {
				mr.counts.ackErrors.Add(1)
			}
			cs.setSnapshot(cl.id, nil)
			return cl.afterAckFailure(ctx, err)
		}
		// The transaction aborted, so every record comes back: the sink
		// follows the acks and rolls back.
		cs.abortSink(ctx, snap, mr)
		cs.setSnapshot(cl.id, nil)
		cs.failed.Add(1)
		return cl.afterAckFailure(ctx, err)
	}
	if cl.crashAt(ctx, PhaseBetweenCommits) != nil {
		cl.exited = true
		return false
	}
	if err := cs.commitSink(ctx, snap, mr); err != nil {
		// The acks took effect and the outputs are not in the sink: lost,
		// the risk of this order.
		cs.lostSink.Add(1)
		mr.counts.ackErrors.Add(1)
	}
	cs.setSnapshot(cl.id, nil)
	return true
}

// afterAckFailure handles a share-ack commit that failed: a fenced worker
// is replaced; otherwise the loop goes on.
func (cl *checkpointLoop) afterAckFailure(ctx context.Context, err error) bool {
	cl.mr.counts.aborts.Add(1)
	cl.mr.series.add(cl.mr.series.aborts, cl.mr.secondOf(time.Now()), 1)
	if isFenced(err) {
		if cl.replace(ctx, false) != nil {
			cl.exited = true
		}
	}
	return false
}

// commitAcks commits the share acknowledgements of a completed checkpoint.
func (cl *checkpointLoop) commitAcks(ctx context.Context, snap *snapshot) error {
	mr := cl.mr
	if snap.ackTxn >= 0 {
		mr.ledger.commitSent(snap.ackTxn)
		err := cl.w.Commit(ctx)
		cl.open = false
		if err != nil {
			_ = cl.w.Abort(ctx)
			mr.ledger.endTxn(snap.ackTxn, outcomeAborted)
			return err
		}
		mr.ledger.endTxn(snap.ackTxn, outcomeCommitted)
		mr.ledger.rejectStaged(snap.rejected)
		snap.acksDone = true
		return nil
	}
	var err error
	if len(snap.acks) > 0 {
		err = cl.w.Ack(ctx, snap.acks, targets.AckAccept)
		mr.ledger.setAck(snap.accTags, ackAccept, ackFate(err))
	}
	if err == nil && len(snap.rejs) > 0 {
		err = cl.w.Ack(ctx, snap.rejs, targets.AckReject)
		mr.ledger.setAck(snap.rejTags, ackReject, ackFate(err))
		if err == nil {
			mr.ledger.rejectStaged(snap.rejTags)
		}
	}
	if err != nil {
		return err
	}
	snap.acksDone = true
	return nil
}

// commitSink commits a snapshot's sink transaction and books its outputs.
func (cs *checkpointState) commitSink(ctx context.Context, snap *snapshot, mr *modeRun) error {
	if snap.gid == "" || snap.sinkDone {
		return nil
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = cs.sink.Commit(ctx, snap.gid); err == nil || errors.Is(err, sink.ErrNotPrepared) {
			break
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
	if err != nil {
		return err
	}
	snap.sinkDone = true
	now := time.Now()
	mr.ledger.endTxn(snap.sinkTxn, outcomeCommitted)
	cs.mu.Lock()
	info := cs.txns[snap.gid]
	var ids []uint64
	if info != nil {
		info.visible = mr.sinceStart(now)
		ids = info.ids
		info.ids = nil // resolved: the verifier no longer needs them
	}
	cs.mu.Unlock()
	cs.markSettled(ids)
	for _, e := range snap.entries {
		mr.recordVisible(now, e.IntendedNs, 1)
	}
	return nil
}

// abortSink rolls a snapshot's sink transaction back.
func (cs *checkpointState) abortSink(ctx context.Context, snap *snapshot, mr *modeRun) {
	if snap.gid == "" {
		return
	}
	if err := cs.sink.Abort(ctx, snap.gid); err != nil {
		mr.counts.ackErrors.Add(1)
		return
	}
	mr.ledger.endTxn(snap.sinkTxn, outcomeAborted)
	cs.mu.Lock()
	if info := cs.txns[snap.gid]; info != nil {
		info.ids = nil
	}
	cs.mu.Unlock()
}

// fail ends the open checkpoint without committing: the share-ack
// transaction aborts (explicit: the held records are released), the sink
// transaction was rolled back by the caller or never prepared.
func (cl *checkpointLoop) fail(ctx context.Context, what string, cause error) error {
	mr := cl.mr
	cl.cs.failed.Add(1)
	mr.counts.aborts.Add(1)
	mr.series.add(mr.series.aborts, mr.secondOf(time.Now()), 1)
	if cause != nil && isFenced(cause) {
		cl.reset()
		return cl.replace(ctx, false)
	}
	if cl.open {
		if err := cl.w.Abort(ctx); err != nil && isFenced(err) {
			mr.ledger.endTxn(cl.ackTxn, outcomeUnknown)
			cl.reset()
			return cl.replace(ctx, false)
		}
		mr.ledger.endTxn(cl.ackTxn, outcomeAborted)
		if errors.Is(cause, targets.ErrStaleMemberEpoch) {
			mr.counts.fencedAbort.Add(1)
		}
	}
	if !cl.txnal || !cl.staged {
		// Held records go back now rather than at lock expiry.
		for _, b := range cl.held {
			err := cl.w.Ack(ctx, b.recs, targets.AckRelease)
			mr.ledger.setAck(cl.book.tags(b.recs), ackRelease, ackFate(err))
		}
	}
	cl.cs.noteFailure(mr, cl.id, what, cause)
	cl.reset()
	return nil
}

// reset empties the open checkpoint (its records now belong to a snapshot,
// or were given back).
func (cl *checkpointLoop) reset() {
	cl.open, cl.staged, cl.ackTxn = false, false, -1
	cl.held, cl.nHeld = nil, 0
	cl.acc, cl.rej, cl.entries = nil, nil, nil
	cl.book.stagedRejects = cl.book.stagedRejects[:0]
}

// shutdown runs the open checkpoint to its end, then leaves.
func (cl *checkpointLoop) shutdown(ctx context.Context) {
	if cl.mr.ctl[cl.id].incarnation.Load() != cl.inc {
		cl.w.Crash()
		return
	}
	cl.stopping = true
	if cl.nHeld > 0 {
		_ = cl.checkpoint(ctx)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = cl.w.Close(cctx)
}

// recoverCheckpoint is what a restarted task of worker id does before it
// starts, as Flink's two-phase-commit sinks do on restore: the checkpoint
// its last completed snapshot names is committed (its share-ack
// transaction resumed by producer id and epoch where the target can, so
// the new producer does not abort it), and every other prepared sink
// transaction of the worker is rolled back: their checkpoints never
// completed. With acks-first the sink follows the acks: if the share-ack
// transaction can no longer commit (it timed out), the sink transaction
// rolls back, because the records come back and will be processed again.
func (mr *modeRun) recoverCheckpoint(ctx context.Context, id int) {
	cs := mr.cp
	if cs == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	snap := cs.getSnapshot(id)
	prepared, err := cs.sink.Prepared(ctx, cs.workerPrefix(id))
	if err != nil {
		mr.addFault("recovery", fmt.Sprintf("worker %d: listing prepared sink transactions failed: %v", id, err))
	}
	if snap != nil {
		found := false
		for _, gid := range prepared {
			found = found || gid == snap.gid
		}
		mr.finishSnapshot(ctx, id, snap, found)
		cs.setSnapshot(id, nil)
	}
	for _, gid := range prepared {
		if snap != nil && gid == snap.gid {
			continue
		}
		if err := cs.sink.Abort(ctx, gid); err == nil {
			if info := cs.txnInfo(gid); info != nil {
				mr.ledger.endTxn(info.ledger, outcomeAborted)
				cs.mu.Lock()
				info.ids = nil
				cs.mu.Unlock()
			}
			mr.addFault("recovery", fmt.Sprintf("worker %d: rolled back %s (pre-committed, not in a completed checkpoint)", id, gid))
		}
	}
}

// finishSnapshot completes a snapshot's commits after a crash.
func (mr *modeRun) finishSnapshot(ctx context.Context, id int, snap *snapshot, prepared bool) {
	cs := mr.cp
	resumer, _ := mr.cfg.Target.(targets.TxnResumer)
	// resumeAcks commits the crashed task's share-ack transaction; it
	// reports whether the acks are (now) committed.
	resumeAcks := func() bool {
		if snap.acksDone {
			return true
		}
		if snap.ackTxn < 0 || resumer == nil {
			// Explicit acks (or a target that cannot resume): the crashed
			// member's records come back when its locks expire.
			return false
		}
		mr.ledger.commitSent(snap.ackTxn)
		if err := resumer.ResumeTransaction(ctx, mr.tcfg, snap.tid, snap.pid, snap.epoch, true); err != nil {
			mr.ledger.endTxn(snap.ackTxn, outcomeAborted)
			return false
		}
		mr.ledger.endTxn(snap.ackTxn, outcomeCommitted)
		mr.ledger.rejectStaged(snap.rejected)
		snap.acksDone = true
		return true
	}
	state := "committed already"
	switch {
	case snap.gid == "":
		state = "no outputs"
	case prepared:
		state = "found prepared"
	}
	detail := func(what string) {
		mr.addFault("recovery", fmt.Sprintf("worker %d: checkpoint %d (sink %s, %s): %s", id, snap.cp, orNone(snap.gid), state, what))
	}
	if mr.spec.Checkpoint.Order == workloads.CommitSinkFirst {
		if err := cs.commitSink(ctx, snap, mr); err != nil {
			detail("sink commit failed: " + err.Error())
		}
		if !resumeAcks() {
			cs.lostAcks.Add(1)
			detail("sink committed; the acks could not be committed (their records come back)")
			return
		}
		detail("sink and acks committed")
		return
	}
	if !resumeAcks() {
		cs.abortSink(ctx, snap, mr)
		detail("the acks could not be committed: the sink rolled back")
		return
	}
	if err := cs.commitSink(ctx, snap, mr); err != nil {
		cs.lostSink.Add(1)
		detail("acks committed; sink commit failed: " + err.Error())
		return
	}
	detail("acks and sink committed")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// readSink reads the sink back into the ledger: every committed entry is
// an output; pre-committed transactions left unresolved name their inputs
// for the verifier (unresolved). It returns those inputs and notes.
func (mr *modeRun) readSink(ctx context.Context) (map[uint64]string, []string, error) {
	cs := mr.cp
	c, err := cs.sink.Read(ctx, cs.prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the sink back: %w", err)
	}
	end := mr.sinceStart(time.Now())
	batch := make([]outputRec, 0, len(c.Committed))
	for _, r := range c.Committed {
		o := outputRec{id: r.InputID, partition: -1, offset: -1, visible: end, worker: r.Worker}
		if info := cs.txnInfo(r.Txn); info != nil {
			o.txnSeq, o.epoch = info.seq, info.epoch
			if info.visible > 0 {
				o.visible = info.visible
			}
		}
		batch = append(batch, o)
	}
	mr.ledger.addCommittedBatch(batch)
	pending := map[uint64]string{}
	for _, gid := range c.Prepared {
		if info := cs.txnInfo(gid); info != nil {
			for _, id := range info.ids {
				pending[id] = gid
			}
		}
	}
	var notes []string
	if mr.cfg.Target.Info().AcksBeforeNextPoll {
		notes = append(notes, "checkpoint model: the target releases what a poll leaves unacknowledged at the next poll (Kafka's explicit share consumer), so every poll was its own checkpoint (the deferred mode's shape); checkpointInterval and maxRecords did not apply")
	}
	notes = append(notes, fmt.Sprintf("checkpoint model: sink %s; %d checkpoints completed, %d failed; %d committed sink entries, %d sink transactions rolled back, %d left pre-committed; %d renewals; %d checkpoints whose sink committed without their acks, %d whose acks committed without their sink",
		cs.sink.Name(), cs.completed.Load(), cs.failed.Load(), len(c.Committed), len(c.Aborted), len(c.Prepared), cs.renewals.Load(), cs.lostAcks.Load(), cs.lostSink.Load()))
	return pending, notes, nil
}

// closeCheckpoint releases what initCheckpoint opened.
func (mr *modeRun) closeCheckpoint() {
	if mr.cp != nil && mr.cp.ownsIt {
		_ = mr.cp.sink.Close()
	}
}

// applySlowCheckpoint arms a slow-checkpoint fault on one worker and returns
// it, or -1 when the mode runs no checkpoints.
func (mr *modeRun) applySlowCheckpoint(f workloads.Fault, rng *rand.Rand) int {
	if mr.cp == nil {
		return -1
	}
	w := mr.pickWorker(f, rng)
	mr.cp.slow[w].Store(int64(f.Duration("delay")))
	return w
}

// maxFailureEvents bounds the failed checkpoints logged as events (all are
// counted).
const maxFailureEvents = 20

// noteFailure logs a failed checkpoint as an event, the first
// maxFailureEvents of them.
func (cs *checkpointState) noteFailure(mr *modeRun, id int, what string, cause error) {
	if cs.failed.Load() > maxFailureEvents {
		return
	}
	if cause != nil {
		what += ": " + cause.Error()
	}
	mr.addFault("checkpoint-failed", fmt.Sprintf("worker %d: %s", id, what))
}
