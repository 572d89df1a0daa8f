// This file holds the checkpoint model's books (ackOnly workloads): the
// calls a worker makes when it runs pipeline.CheckpointMachine (a
// stream-processing framework's source task that writes its results to an
// external two-phase sink and commits them together with its share
// acknowledgements at checkpoints), the model's own steps that touch no
// target (the sink's pre-commit, commit and abort, the snapshot), and the
// recovery a restarted task runs: it commits what its last completed
// snapshot says was pre-committed and rolls back every other prepared sink
// transaction of its own, before its new producer fences the old one (see
// Checkpoints.Recover). The order of a checkpoint's steps, its crash
// phases and its failures are the machine's (loadgen/pipeline).

package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/sink"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
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
	// What landed: set before the next crash point. acksSent: an explicit
	// acknowledgement of the checkpoint was sent (some may have landed).
	acksDone, sinkDone, acksSent bool
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

// Checkpoints is the checkpoint model's books of one mode: the sink, the
// checkpoint storage (one pending snapshot per worker id), the sink
// transactions, the inputs settled in the sink, and the checkpoints'
// tallies. It is safe for concurrent use.
type Checkpoints struct {
	sink      sink.Sink
	ownsIt    bool
	prefix    string     // every sink transaction id of this mode run starts with it
	mode      vocab.Mode // Transactional: share-ack transactions; Explicit: explicit acks
	sinkFirst bool       // the sink commits before the acks

	mu        sync.Mutex
	snapshots map[int]*snapshot
	txns      map[string]*sinkTxnInfo
	settled   chunks[uint8] // per input id - 1: 1 once a sink commit holding it returned
	nSettled  atomic.Int64

	failed    atomic.Int64 // checkpoints that failed (timed out, a staging or commit error)
	completed atomic.Int64
	renewals  atomic.Int64
	lostAcks  atomic.Int64 // sink committed, acks could not commit (sink-first)
	lostSink  atomic.Int64 // acks committed, sink could not commit (acks-first)
}

// ErrCheckpointMode is NewCheckpoints' error for a mode the checkpoint
// model does not run.
var ErrCheckpointMode = errors.New("ledger: the checkpoint model runs the transactional and explicit modes")

// NewCheckpoints returns the books of the checkpoints of one mode named
// name (its sink transaction ids start with it) in sk (nil: an in-memory
// sink of their own, which Close closes), run in mode (Transactional:
// share-ack transactions; Explicit: explicit acks), committing the sink
// first when sinkFirst.
func NewCheckpoints(sk sink.Sink, name string, mode vocab.Mode, sinkFirst bool) (*Checkpoints, error) {
	switch mode {
	case vocab.Transactional, vocab.Explicit:
	default:
		return nil, fmt.Errorf("%w, not %s", ErrCheckpointMode, mode)
	}
	cs := &Checkpoints{sink: sk, snapshots: map[int]*snapshot{}, txns: map[string]*sinkTxnInfo{},
		mode: mode, sinkFirst: sinkFirst}
	if cs.sink == nil {
		s, err := sink.OpenMemory("")
		if err != nil {
			return nil, err
		}
		cs.sink, cs.ownsIt = s, true
	}
	cs.prefix = sinkSafe(name) + "-"
	return cs, nil
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
func (cs *Checkpoints) workerPrefix(id int) string {
	return cs.prefix + "w" + strconv.Itoa(id) + "-"
}

// Settled is how many inputs have an output in a sink commit that
// returned (the drain waits for it as it waits for outputs on the topic).
func (cs *Checkpoints) Settled() int64 { return cs.nSettled.Load() }

// markSettled books the inputs of a sink transaction whose commit returned.
func (cs *Checkpoints) markSettled(ids []uint64) {
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

func (cs *Checkpoints) setSnapshot(id int, s *snapshot) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if s == nil {
		delete(cs.snapshots, id)
		return
	}
	cs.snapshots[id] = s
}

func (cs *Checkpoints) getSnapshot(id int) *snapshot {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.snapshots[id]
}

func (cs *Checkpoints) txnInfo(gid string) *sinkTxnInfo {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.txns[gid]
}

// CheckpointEvents is where a checkpoint book (and a recovery) reports
// what a run counts and plots besides its books; a driver that counts
// none of it (the simulator) passes nil.
type CheckpointEvents interface {
	// Fault reports a fault event of kind: a failed checkpoint, a
	// recovery's step.
	Fault(kind, detail string)
	// AckError reports a failed renewal, sink commit or sink abort.
	AckError()
	// Aborted reports a checkpoint whose acknowledgements did not commit.
	Aborted()
	// FencedAbort reports an abort caused by a stale member epoch.
	FencedAbort()
	// Committed reports a completed checkpoint's commits, of records
	// polled at since.
	Committed(since time.Time)
	// Visible reports that an output of an input intended at intendedNs
	// became visible in the sink.
	Visible(intendedNs int64)
}

type noEvents struct{}

func (noEvents) Fault(string, string) {}
func (noEvents) AckError()            {}
func (noEvents) Aborted()             {}
func (noEvents) FencedAbort()         {}
func (noEvents) Committed(time.Time)  {}
func (noEvents) Visible(int64)        {}

// CheckpointBook books one worker incarnation's checkpoint-model calls
// (pipeline.CheckpointMachine) and performs the model's own
// steps — the sink's pre-commit, commit and abort, the snapshot — which
// touch no target. Its Book books the share-ack transactions; it holds the
// snapshot of the checkpoint being pre-committed or committed, and whether
// the share-ack transaction is open (not yet the snapshot's).
type CheckpointBook struct {
	cs      *Checkpoints
	b       *Book
	ev      CheckpointEvents
	snap    *snapshot
	ackOpen bool
}

// RecordKey names a *targets.Record for the checkpoint model
// (pipeline.CheckpointConfig.Key).
func RecordKey(r any) pipeline.RecordKey {
	rec := r.(*targets.Record)
	return pipeline.RecordKey{Partition: rec.Partition, Offset: rec.Offset}
}

// gid names the sink transaction of checkpoint cp of this incarnation.
func (cb *CheckpointBook) gid(cp int64) string {
	return fmt.Sprintf("%si%d-c%d", cb.cs.workerPrefix(cb.b.worker), cb.b.inc, cp)
}

// Perform performs a's step of the checkpoint model when it is one of the
// model's own (barrier, pre-commit, snapshot, notify, the sink's commit and
// abort, the checkpoint's end, a slow snapshot's wait) and books it; ok is
// false for an action the driver performs with the target (then Done). A
// slow snapshot takes no time here: a driver that delays snapshots (the
// runner's slow-checkpoint fault) waits before it calls Perform.
func (cb *CheckpointBook) Perform(ctx context.Context, w targets.Worker, a pipeline.Action[*targets.Record]) (res pipeline.Result[*targets.Record], ok bool) {
	cs := cb.cs
	switch a.Op {
	case pipeline.OpWait:
		if !a.Slow {
			return res, false
		}
	case pipeline.OpBarrier, pipeline.OpNotify:
		// The barrier's call is none; notify precedes the commits.
	case pipeline.OpPreCommit:
		res = outcome(ctx, cb.preCommit(ctx, w, a))
	case pipeline.OpSnapshot:
		// The snapshot: the checkpoint is complete once it is stored.
		cs.setSnapshot(cb.b.worker, cb.snap)
		cb.ackOpen = false
		cb.b.stagedRejects = cb.b.stagedRejects[:0]
	case pipeline.OpCommitSink:
		err := cs.commitSink(ctx, cb.snap, cb.b.l, cb.ev, cb.b.now())
		if err != nil {
			cb.ev.AckError()
		}
		res = outcome(ctx, err)
	case pipeline.OpAbortSink:
		cs.abortSink(ctx, cb.snap, cb.b.l, cb.ev)
	case pipeline.OpEndCheckpoint:
		cb.endCheckpoint(a)
	default:
		return res, false
	}
	return res, true
}

// CommitSent books that the worker asks to commit the snapshot's share-ack
// transaction (before the call).
func (cb *CheckpointBook) CommitSent() { cb.b.l.commitSent(cb.snap.ackTxn) }

// Done books the outcome res of a call the driver made for action a, with
// the worker w: the checkpoint model's begins, renewals, commits, aborts
// and acknowledgements here, the rest (polls, staging, releases) in the
// worker's Book.
func (cb *CheckpointBook) Done(w targets.Worker, open bool, a pipeline.Action[*targets.Record], res pipeline.Result[*targets.Record]) {
	l, err := cb.b.l, res.Err
	switch a.Op {
	case pipeline.OpBegin:
		if err == nil {
			cb.b.Began(w)
			cb.ackOpen = true
		}
	case pipeline.OpRenew:
		if err != nil {
			cb.ev.AckError()
		} else {
			cb.cs.renewals.Add(1)
		}
	case pipeline.OpCommit:
		snap := cb.snap
		if err != nil {
			l.endTxn(snap.ackTxn, outcomeAborted)
			return
		}
		l.endTxn(snap.ackTxn, outcomeCommitted)
		l.rejectStaged(snap.rejected)
		snap.acksDone = true
	case pipeline.OpAbort:
		if !cb.ackOpen {
			return // a failed commit's transaction was booked when it failed
		}
		// The open checkpoint's transaction.
		cb.ackOpen = false
		if errors.Is(err, targets.ErrFenced) {
			l.endTxn(cb.b.txnIdx, outcomeUnknown)
			return
		}
		l.endTxn(cb.b.txnIdx, outcomeAborted)
		if errors.Is(a.Cause, targets.ErrStaleMemberEpoch) {
			cb.ev.FencedAbort()
		}
	case pipeline.OpAccept, pipeline.OpReject:
		kind := uint8(ackAccept)
		if a.Op == pipeline.OpReject {
			kind = ackReject
		}
		tags := cb.b.tags(a.Recs)
		took := l.setAckResult(tags, kind, err)
		cb.snap.acksSent = true
		if kind == ackReject && len(took) > 0 {
			l.rejectStaged(took)
		}
		if err == nil && a.Last {
			cb.snap.acksDone = true
		}
	default:
		cb.b.Done(w, open, a, res)
	}
}

// preCommit builds the snapshot of the checkpoint at its barrier and
// pre-commits its sink transaction, one output per accepted record.
func (cb *CheckpointBook) preCommit(ctx context.Context, w targets.Worker, a pipeline.Action[*targets.Record]) error {
	cs, b := cb.cs, cb.b
	snap := &snapshot{cp: a.Checkpoint, start: a.Since, ackTxn: -1, sinkTxn: -1}
	cb.snap = snap
	if cs.mode == vocab.Transactional {
		snap.ackTxn = b.txnIdx
		snap.tid, snap.epoch = w.TxnInfo()
		if p, ok := w.(targets.ProducerIDer); ok {
			snap.pid = p.ProducerID()
		}
		snap.rejected = append([]int64(nil), b.stagedRejects...)
	}
	entries := make([]sink.Entry, 0, len(a.Recs))
	for _, r := range a.Recs {
		if h, err := ReadInput(r.Value); err == nil {
			entries = append(entries, sink.Entry{InputID: h.ID, Worker: uint16(b.worker), IntendedNs: h.IntendedNs})
		}
	}
	if len(entries) == 0 {
		return nil
	}
	snap.gid = cb.gid(a.Checkpoint)
	snap.entries = entries
	// Sink transactions number apart from the share-ack ones in the
	// ledger (bit 31 of the incarnation's half).
	seq := b.inc<<32 | 1<<31 | a.Checkpoint
	snap.sinkTxn = b.l.beginTxn(b.worker, seq, snap.pid, snap.epoch)
	b.l.txnOutputs(snap.sinkTxn, len(entries))
	ids := make([]uint64, len(entries))
	for i, e := range entries {
		ids[i] = e.InputID
	}
	cs.mu.Lock()
	cs.txns[snap.gid] = &sinkTxnInfo{worker: uint16(b.worker), seq: seq, epoch: snap.epoch, ledger: snap.sinkTxn, ids: ids}
	cs.mu.Unlock()
	if err := cs.sink.PreCommit(ctx, snap.gid, entries); err != nil {
		b.l.endTxn(snap.sinkTxn, outcomeAborted)
		return err
	}
	return nil
}

// endCheckpoint books how a checkpoint ended.
func (cb *CheckpointBook) endCheckpoint(a pipeline.Action[*targets.Record]) {
	cs, ev := cb.cs, cb.ev
	switch a.End {
	case pipeline.CheckpointFailed:
		cs.failed.Add(1)
		ev.Aborted()
		if !errors.Is(a.Cause, targets.ErrFenced) && cs.failed.Load() <= maxFailureEvents {
			ev.Fault("checkpoint-failed", fmt.Sprintf("worker %d: %v", cb.b.worker, a.Cause))
		}
		return
	case pipeline.CheckpointSinkLost, pipeline.CheckpointCommitted:
		if a.End == pipeline.CheckpointSinkLost {
			// The acks took effect and the outputs are not in the sink:
			// lost, the risk of this order.
			cs.lostSink.Add(1)
		}
		cs.completed.Add(1)
		ev.Committed(a.Since)
	case pipeline.CheckpointAcksLost:
		// The sink holds the outputs; the records are redelivered and
		// processed again: duplicates, the risk of this order.
		cs.lostAcks.Add(1)
		ev.Aborted()
	case pipeline.CheckpointAcksFailed:
		ev.Aborted()
	case pipeline.CheckpointRolledBack:
		cs.failed.Add(1)
		ev.Aborted()
	}
	cs.setSnapshot(cb.b.worker, nil)
}

// commitSink commits a snapshot's sink transaction and books its outputs,
// visible at nowNs (ns since the mode's start).
func (cs *Checkpoints) commitSink(ctx context.Context, snap *snapshot, l *Ledger, ev CheckpointEvents, nowNs int64) error {
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
	l.endTxn(snap.sinkTxn, outcomeCommitted)
	cs.mu.Lock()
	info := cs.txns[snap.gid]
	var ids []uint64
	if info != nil {
		info.visible = nowNs
		ids = info.ids
		info.ids = nil // resolved: the verifier no longer needs them
	}
	cs.mu.Unlock()
	cs.markSettled(ids)
	for _, e := range snap.entries {
		ev.Visible(e.IntendedNs)
	}
	return nil
}

// abortSink rolls a snapshot's sink transaction back.
func (cs *Checkpoints) abortSink(ctx context.Context, snap *snapshot, l *Ledger, ev CheckpointEvents) {
	if snap.gid == "" {
		return
	}
	if err := cs.sink.Abort(ctx, snap.gid); err != nil {
		ev.AckError()
		return
	}
	l.endTxn(snap.sinkTxn, outcomeAborted)
	cs.mu.Lock()
	if info := cs.txns[snap.gid]; info != nil {
		info.ids = nil
	}
	cs.mu.Unlock()
}

// recover is Recover reporting to ev.
func (cs *Checkpoints) recover(ctx context.Context, id int, t targets.Target, cfg targets.Config, l *Ledger, ev CheckpointEvents, now func() int64) {
	ctx = context.WithoutCancel(ctx)
	snap := cs.getSnapshot(id)
	prepared, err := cs.sink.Prepared(ctx, cs.workerPrefix(id))
	if err != nil {
		ev.Fault("recovery", fmt.Sprintf("worker %d: listing prepared sink transactions failed: %v", id, err))
	}
	if snap != nil {
		found := false
		for _, gid := range prepared {
			found = found || gid == snap.gid
		}
		cs.finishSnapshot(ctx, id, snap, found, t, cfg, l, ev, now)
		cs.setSnapshot(id, nil)
	}
	for _, gid := range prepared {
		if snap != nil && gid == snap.gid {
			continue
		}
		if err := cs.sink.Abort(ctx, gid); err == nil {
			if info := cs.txnInfo(gid); info != nil {
				l.endTxn(info.ledger, outcomeAborted)
				cs.mu.Lock()
				info.ids = nil
				cs.mu.Unlock()
			}
			ev.Fault("recovery", fmt.Sprintf("worker %d: rolled back %s (pre-committed, not in a completed checkpoint)", id, gid))
		}
	}
}

// finishSnapshot completes a snapshot's commits after a crash.
func (cs *Checkpoints) finishSnapshot(ctx context.Context, id int, snap *snapshot, prepared bool, t targets.Target, cfg targets.Config, l *Ledger, ev CheckpointEvents, now func() int64) {
	resumer, _ := t.(targets.TxnResumer)
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
		l.commitSent(snap.ackTxn)
		if err := resumer.ResumeTransaction(ctx, cfg, snap.tid, snap.pid, snap.epoch, true); err != nil {
			l.endTxn(snap.ackTxn, outcomeAborted)
			return false
		}
		l.endTxn(snap.ackTxn, outcomeCommitted)
		l.rejectStaged(snap.rejected)
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
		ev.Fault("recovery", fmt.Sprintf("worker %d: checkpoint %d (sink %s, %s): %s", id, snap.cp, orNone(snap.gid), state, what))
	}
	if cs.sinkFirst {
		if err := cs.commitSink(ctx, snap, l, ev, now()); err != nil {
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
		if snap.ackTxn < 0 && snap.acksSent {
			// Explicit acks are not atomic: some of this checkpoint's may
			// have landed before the crash, and their records will not
			// come back. The sink commits, so the rest are duplicates
			// (which explicit allows), never losses.
			if err := cs.commitSink(ctx, snap, l, ev, now()); err != nil {
				cs.lostSink.Add(1)
				detail("some explicit acks were sent; sink commit failed: " + err.Error())
				return
			}
			detail("some explicit acks were sent before the crash: the sink committed (the records not acknowledged come back)")
			return
		}
		cs.abortSink(ctx, snap, l, ev)
		detail("the acks could not be committed: the sink rolled back")
		return
	}
	if err := cs.commitSink(ctx, snap, l, ev, now()); err != nil {
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
func (cs *Checkpoints) readBack(ctx context.Context, l *Ledger, t targets.Target, end int64) (map[uint64]string, []string, error) {
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

// maxFailureEvents bounds the failed checkpoints logged as events (all are
// counted).
const maxFailureEvents = 20

// NewBook returns the checkpoint book of the worker incarnation whose
// Book is b, reporting to ev (nil: nowhere).
func (cs *Checkpoints) NewBook(b *Book, ev CheckpointEvents) *CheckpointBook {
	if ev == nil {
		ev = noEvents{}
	}
	return &CheckpointBook{cs: cs, b: b, ev: ev}
}

// Recover is what a restarted task of worker does before its new worker
// starts, as Flink's two-phase-commit sinks do on restore: the checkpoint
// its last completed snapshot names is committed (its share-ack
// transaction resumed by producer id and epoch where the target can, so
// the new producer does not abort it), and every other prepared sink
// transaction of the worker is rolled back: their checkpoints never
// completed. With acks-first the sink follows the acks: if the share-ack
// transaction can no longer commit (it timed out), the sink transaction
// rolls back, because the records come back and will be processed again.
// It runs on target t (cfg) with ledger l, reporting to ev (nil:
// nowhere); now reads the time in ns since the mode's start. It returns
// what it did, a line for each step.
func (cs *Checkpoints) Recover(ctx context.Context, worker int, t targets.Target, cfg targets.Config, l *Ledger, ev CheckpointEvents, now func() int64) []string {
	if ev == nil {
		ev = noEvents{}
	}
	lines := &recoveryLines{CheckpointEvents: ev}
	cs.recover(ctx, worker, t, cfg, l, lines, now)
	return lines.lines
}

// recoveryLines collects the fault events a recovery reports, and passes
// every event on.
type recoveryLines struct {
	CheckpointEvents
	lines []string
}

func (r *recoveryLines) Fault(kind, detail string) {
	r.lines = append(r.lines, detail)
	r.CheckpointEvents.Fault(kind, detail)
}

// Close releases the sink NewCheckpoints opened (a sink passed in stays
// open).
func (cs *Checkpoints) Close() error {
	if !cs.ownsIt {
		return nil
	}
	return cs.sink.Close()
}

// outcome is the machine's view of a model step that returned err (as the
// runner's worker shell gives it for a call).
func outcome(ctx context.Context, err error) pipeline.Result[*targets.Record] {
	if err == nil {
		return pipeline.Result[*targets.Record]{}
	}
	return pipeline.Result[*targets.Record]{Err: err, Fenced: errors.Is(err, targets.ErrFenced), Canceled: ctx.Err() != nil}
}
