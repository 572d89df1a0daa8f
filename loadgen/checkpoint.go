// This file holds the checkpoint model's shell (ackOnly workloads): the
// calls a worker makes when pipeline.Machine runs its checkpoint mode (a
// stream-processing framework's source task that writes its results to an
// external two-phase sink and commits them together with its share
// acknowledgements at checkpoints), the books they keep, and the recovery
// a restarted task runs: it commits what its last completed snapshot says
// was pre-committed and rolls back every other prepared sink transaction
// of its own, before its new producer fences the old one (see
// recoverCheckpoint). The order of a checkpoint's steps, its crash phases
// and its failures are the machine's (loadgen/pipeline/checkpoint.go).

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
	rejected []int64 // staged rejects, settled once the acks commit
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

// cpWorker is a worker's share of the checkpoint model's books: the
// snapshot of the checkpoint it is pre-committing or committing, and
// whether its share-ack transaction is open (not yet the snapshot's).
type cpWorker struct {
	cs      *checkpointState
	snap    *snapshot
	ackOpen bool
	t0      time.Time // the commits of the completed checkpoint started
}

// checkpointConfig is the machine's checkpoint model from the workload.
func (mr *modeRun) checkpointConfig() *pipeline.CheckpointConfig {
	c := mr.spec.Checkpoint
	return &pipeline.CheckpointConfig{
		Interval: mr.spec.CheckpointInterval, MaxRecords: c.MaxRecords, Timeout: c.Timeout,
		StageAtAcquisition: c.Staging == workloads.StageAtAcquisition, Renew: c.Renew,
		SinkFirst: c.Order == workloads.CommitSinkFirst,
		PerPoll:   mr.cfg.Target.Info().AcksBeforeNextPoll,
	}
}

// gid names the sink transaction of checkpoint cp of this incarnation.
func (wl *workerLoop) gid(cp int64) string {
	return fmt.Sprintf("%si%d-c%d", wl.cpw.cs.workerPrefix(wl.id), wl.inc, cp)
}

// performCheckpoint makes the checkpoint model's calls and books them; ok
// is false for an action the common shell performs (polls, processing,
// staging, releases, waits, replace and close).
func (wl *workerLoop) performCheckpoint(ctx context.Context, a pipeline.Action[*targets.Record]) (res pipeline.Result[*targets.Record], ok bool) {
	mr, cw := wl.mr, wl.cpw
	cs := cw.cs
	switch a.Op {
	case pipeline.OpWait:
		if !a.Slow {
			return res, false
		}
		// The snapshot takes as long as the slow-checkpoint fault says.
		if d := cs.slow[wl.id].Swap(0); d > 0 {
			mr.addFault(string(workloads.FaultSlowCheckpoint), fmt.Sprintf("worker %d checkpoint %d takes %v to snapshot", wl.id, a.Checkpoint, time.Duration(d)))
			sleepCtx(ctx, time.Duration(d))
		}
	case pipeline.OpBegin:
		err := wl.w.Begin(ctx)
		if err == nil {
			wl.book.Began(wl.w)
			cw.ackOpen = true
		}
		res = outcome(ctx, err)
	case pipeline.OpRenew:
		if err := wl.w.Renew(ctx, a.Recs); err != nil {
			mr.counts.ackErrors.Add(1)
			res = outcome(ctx, err)
		} else {
			cs.renewals.Add(1)
		}
	case pipeline.OpBarrier, pipeline.OpNotify:
		cw.t0 = time.Now() // the barrier's call is none; notify precedes the commits
	case pipeline.OpPreCommit:
		res = outcome(ctx, wl.preCommit(ctx, a))
	case pipeline.OpSnapshot:
		// The snapshot: the checkpoint is complete once it is stored.
		cs.setSnapshot(wl.id, cw.snap)
		cw.ackOpen = false
		wl.book.stagedRejects = wl.book.stagedRejects[:0]
	case pipeline.OpCommitSink:
		err := cs.commitSink(ctx, cw.snap, mr)
		if err != nil {
			mr.counts.ackErrors.Add(1)
		}
		res = outcome(ctx, err)
	case pipeline.OpAbortSink:
		cs.abortSink(ctx, cw.snap, mr)
	case pipeline.OpCommit:
		snap := cw.snap
		mr.ledger.commitSent(snap.ackTxn)
		err := wl.w.Commit(ctx)
		if err != nil {
			mr.ledger.endTxn(snap.ackTxn, outcomeAborted)
		} else {
			mr.ledger.endTxn(snap.ackTxn, outcomeCommitted)
			mr.ledger.rejectStaged(snap.rejected)
			snap.acksDone = true
		}
		res = outcome(ctx, err)
	case pipeline.OpAbort:
		err := wl.w.Abort(ctx)
		if cw.ackOpen {
			// The open checkpoint's transaction (a failed commit's was
			// booked when the commit failed).
			cw.ackOpen = false
			if err != nil && isFenced(err) {
				mr.ledger.endTxn(wl.book.txnIdx, outcomeUnknown)
			} else {
				mr.ledger.endTxn(wl.book.txnIdx, outcomeAborted)
				if errors.Is(a.Cause, targets.ErrStaleMemberEpoch) {
					mr.counts.fencedAbort.Add(1)
				}
			}
		}
		res = outcome(ctx, err)
	case pipeline.OpAccept, pipeline.OpReject:
		t, kind := targets.AckAccept, uint8(ackAccept)
		if a.Op == pipeline.OpReject {
			t, kind = targets.AckReject, ackReject
		}
		err := wl.w.Ack(ctx, a.Recs, t)
		tags := wl.book.tags(a.Recs)
		mr.ledger.setAck(tags, kind, ackFate(err))
		if err == nil && t == targets.AckReject {
			mr.ledger.rejectStaged(tags)
		}
		if err == nil && a.Last {
			cw.snap.acksDone = true
		}
		res = outcome(ctx, err)
	case pipeline.OpEndCheckpoint:
		wl.endCheckpoint(a)
	default:
		return res, false
	}
	return res, true
}

// preCommit builds the snapshot of the checkpoint at its barrier and
// pre-commits its sink transaction, one output per accepted record.
func (wl *workerLoop) preCommit(ctx context.Context, a pipeline.Action[*targets.Record]) error {
	mr, cs := wl.mr, wl.cpw.cs
	snap := &snapshot{cp: a.Checkpoint, start: a.Since, ackTxn: -1, sinkTxn: -1}
	wl.cpw.snap = snap
	if mr.mode == pipeline.Transactional {
		snap.ackTxn = wl.book.txnIdx
		snap.tid, snap.epoch = wl.w.TxnInfo()
		if p, ok := wl.w.(targets.ProducerIDer); ok {
			snap.pid = p.ProducerID()
		}
		snap.rejected = append([]int64(nil), wl.book.stagedRejects...)
	}
	entries := make([]sink.Entry, 0, len(a.Recs))
	for _, r := range a.Recs {
		if h, err := readInput(r.Value); err == nil {
			entries = append(entries, sink.Entry{InputID: h.ID, Worker: uint16(wl.id), IntendedNs: h.IntendedNs})
		}
	}
	if len(entries) == 0 {
		return nil
	}
	snap.gid = wl.gid(a.Checkpoint)
	snap.entries = entries
	// Sink transactions number apart from the share-ack ones in the
	// ledger (bit 31 of the incarnation's half).
	seq := wl.inc<<32 | 1<<31 | a.Checkpoint
	snap.sinkTxn = mr.ledger.beginTxn(wl.id, seq, snap.pid, snap.epoch)
	mr.ledger.txnOutputs(snap.sinkTxn, len(entries))
	ids := make([]uint64, len(entries))
	for i, e := range entries {
		ids[i] = e.InputID
	}
	cs.mu.Lock()
	cs.txns[snap.gid] = &sinkTxnInfo{worker: uint16(wl.id), seq: seq, epoch: snap.epoch, ledger: snap.sinkTxn, ids: ids}
	cs.mu.Unlock()
	if err := cs.sink.PreCommit(ctx, snap.gid, entries); err != nil {
		mr.ledger.endTxn(snap.sinkTxn, outcomeAborted)
		return err
	}
	return nil
}

// endCheckpoint books how a checkpoint ended.
func (wl *workerLoop) endCheckpoint(a pipeline.Action[*targets.Record]) {
	mr, cs := wl.mr, wl.cpw.cs
	abort := func() {
		mr.counts.aborts.Add(1)
		mr.series.add(mr.series.aborts, mr.secondOf(time.Now()), 1)
	}
	switch a.End {
	case pipeline.CheckpointFailed:
		cs.failed.Add(1)
		abort()
		if !isFenced(a.Cause) {
			cs.noteFailure(mr, wl.id, a.Cause)
		}
		return
	case pipeline.CheckpointSinkLost, pipeline.CheckpointCommitted:
		if a.End == pipeline.CheckpointSinkLost {
			// The acks took effect and the outputs are not in the sink:
			// lost, the risk of this order.
			cs.lostSink.Add(1)
		}
		done := time.Now()
		mr.counts.commits.Add(1)
		cs.completed.Add(1)
		wl.recordCommit(done, done.Sub(wl.cpw.t0), done.Sub(a.Since))
	case pipeline.CheckpointAcksLost:
		// The sink holds the outputs; the records are redelivered and
		// processed again: duplicates, the risk of this order.
		cs.lostAcks.Add(1)
		abort()
	case pipeline.CheckpointAcksFailed:
		abort()
	case pipeline.CheckpointRolledBack:
		cs.failed.Add(1)
		abort()
	}
	cs.setSnapshot(wl.id, nil)
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

// readBack reads the sink back into the ledger l: every committed entry is
// an output; pre-committed transactions left unresolved name their inputs
// for the verifier (unresolved); end stamps an output whose commit time
// the run did not see. It returns those inputs and notes.
func (cs *checkpointState) readBack(ctx context.Context, l *Ledger, t targets.Target, end int64) (map[uint64]string, []string, error) {
	c, err := cs.sink.Read(ctx, cs.prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the sink back: %w", err)
	}
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
	l.addCommittedBatch(batch)
	pending := map[uint64]string{}
	for _, gid := range c.Prepared {
		if info := cs.txnInfo(gid); info != nil {
			for _, id := range info.ids {
				pending[id] = gid
			}
		}
	}
	var notes []string
	if t.Info().AcksBeforeNextPoll {
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
func (cs *checkpointState) noteFailure(mr *modeRun, id int, cause error) {
	if cs.failed.Load() > maxFailureEvents {
		return
	}
	mr.addFault("checkpoint-failed", fmt.Sprintf("worker %d: %v", id, cause))
}
