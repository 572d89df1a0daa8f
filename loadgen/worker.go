// This file holds the workers: one loop per worker that polls, processes,
// writes one output per input and acknowledges the way its mode does
// (DESIGN §5), with the phase points where a scheduled crash strikes.

package loadgen

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
)

// Crash phases (the worker-crash fault's phase param).
const (
	PhaseAfterPoll            = "after-poll"
	PhaseAfterProduce         = "after-produce"
	PhaseAfterStage           = "after-stage"
	PhaseAfterCommitBeforeAck = "after-commit-before-ack"
)

// workerCtl is how faults reach one worker id (across incarnations).
type workerCtl struct {
	incarnation atomic.Int64
	crashPhase  atomic.Pointer[string]
	stallUntil  atomic.Int64 // unix ns
	slowUntil   atomic.Int64 // unix ns
	slowDelay   atomic.Int64 // ns added to each poll's processing
	cutUntil    atomic.Int64 // unix ns: cut off from the target (network partition) until then
}

// startWorker starts a new incarnation of worker id.
func (mr *modeRun) startWorker(ctx context.Context, id int, w targets.Worker) {
	inc := mr.ctl[id].incarnation.Add(1)
	mr.workersWG.Add(1)
	go func() {
		defer mr.workersWG.Done()
		wl := &workerLoop{mr: mr, id: id, inc: inc, w: w, commitH: NewHist(), p2cH: NewHist()}
		wl.rng = mr.rng(uint64(id)<<20 | uint64(inc))
		wl.sample = mr.spec.ProcessingTime.Sampler(mr.rng(uint64(id)<<20 | uint64(inc) | 1<<40))
		defer func() {
			mr.mergeHist(result.HistCommit, wl.commitH)
			mr.mergeHist(result.HistPollCommit, wl.p2cH)
		}()
		if mr.cp != nil {
			mr.runCheckpointLoop(ctx, wl)
			return
		}
		wl.loop(ctx)
	}()
}

type workerLoop struct {
	mr      *modeRun
	id      int
	inc     int64
	w       targets.Worker
	rng     *rand.Rand
	sample  func() time.Duration
	commitH *Hist
	p2cH    *Hist

	// The open transaction (transactional and classic-eos span polls).
	open     bool
	txnStart time.Time
	txnCount int
	txnSeq   int64
	epoch    int16
	txnIdx   int32 // the ledger's record of the open transaction
	// Deliveries (ledger tags) whose acks are staged in the open
	// transaction; rejects settle their inputs once it commits.
	stagedRejects []int64
	// Implicit mode: the previous poll's deliveries, accepted by the next
	// poll.
	implicitTags []int64
	tagBuf       []int64
	sink         []outputRec // ack-only: outputs written elsewhere, made visible at commit
	intended     []int64     // ack-only: intended times of sink entries

	// Deferred: records held across the output transaction, acked after
	// it commits (released after it aborts).
	held, heldAccepted, heldRejected []*targets.Record
	stopping                         bool // shutting down: commit, never abort

	// Reused output buffers (see produce).
	outBuf  []byte
	outRecs []targets.Record
	outPtrs []*targets.Record
}

// errExit ends a worker loop (crashed, or fenced as a zombie).
var errExit = errors.New("worker exits")

func (wl *workerLoop) loop(ctx context.Context) {
	mr := wl.mr
	for {
		select {
		case <-mr.stopWorkers:
			wl.shutdown(ctx)
			return
		default:
		}
		// Cut off from the target: its requests wait until the partition
		// heals, as a disconnected client's do (locks may expire and the
		// session time out meanwhile).
		if until := mr.ctl[wl.id].cutUntil.Load(); time.Now().UnixNano() < until {
			sleepCtx(ctx, time.Duration(until-time.Now().UnixNano()))
			continue
		}
		wait := 100 * time.Millisecond
		if wl.open {
			if d := wl.txnDeadline().Sub(time.Now()); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		recs, err := wl.w.Poll(pctx, mr.spec.MaxPollRecords)
		cancel()
		if err != nil {
			if wl.failed(ctx, err) != nil {
				return
			}
			continue
		}
		if len(wl.implicitTags) > 0 {
			// The poll accepted the previous poll's records.
			mr.ledger.setAck(wl.implicitTags, ackAccept, fateCommitted)
			wl.implicitTags = wl.implicitTags[:0]
		}
		if len(recs) > 0 {
			mr.ledger.addDeliveries(wl.id, recs, mr.sinceStart(time.Now()))
		}
		if len(recs) == 0 {
			if wl.maybeCommit(ctx, false) != nil {
				return
			}
			continue
		}
		if wl.handle(ctx, recs) != nil {
			return
		}
	}
}

// txnDeadline is when the open transaction must commit by time.
func (wl *workerLoop) txnDeadline() time.Time {
	d := wl.mr.spec.Transaction.MaxDuration
	if wl.mr.spec.AckOnly {
		d = wl.mr.spec.CheckpointInterval
	}
	if d <= 0 {
		d = time.Second
	}
	return wl.txnStart.Add(d)
}

// failed handles an error from the target: a fenced worker is replaced
// (or, as a zombie whose successor runs, exits); anything else is retried
// after a pause. It returns errExit when the loop must end.
func (wl *workerLoop) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errExit
	}
	if isFenced(err) {
		wl.open = false
		return wl.replace(ctx, false)
	}
	wl.mr.ackErrors.Add(1)
	sleepCtx(ctx, 10*time.Millisecond)
	return nil
}

// isFenced reports errors after which a client must be recreated; targets
// classify them as targets.ErrFenced.
func isFenced(err error) bool { return errors.Is(err, targets.ErrFenced) }

// replace starts the next incarnation of this worker (unless a newer one
// already runs: then this one is a zombie and simply exits). crash is true
// for a scheduled crash: the old client is dropped without a word.
func (wl *workerLoop) replace(ctx context.Context, crash bool) error {
	mr := wl.mr
	if crash {
		mr.crashes.Add(1)
	}
	stopping := false
	select {
	case <-mr.stopWorkers:
		stopping = true
	default:
	}
	switch {
	case stopping && !crash:
		// No successor will fence this worker's producer, so its open
		// transaction (a fenced member leaves its producer's transaction
		// open) would hang until its timeout: close it, which aborts.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = wl.w.Close(cctx)
		cancel()
		if wl.open {
			mr.ledger.endTxn(wl.txnIdx, outcomeUnknown)
		}
		return errExit
	case crash || mr.mode != targets.ClassicEOS:
		wl.w.Crash()
	default:
		// A classic-eos worker replaced after a fencing or rebalance
		// error closes its clients, as an application does after a
		// ProducerFencedException: dropped without a LeaveGroup, it would
		// stay in the consumer group until the coordinator timed it out
		// of the next rebalance, holding the whole group that long. Close
		// aborts the open transaction and acknowledges nothing.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = wl.w.Close(cctx)
		cancel()
	}
	if mr.ctl[wl.id].incarnation.Load() != wl.inc {
		return errExit
	}
	// A checkpointing task recovers its pending checkpoint before its new
	// producer fences the old one.
	mr.recoverCheckpoint(ctx, wl.id)
	for attempt := 0; ; attempt++ {
		select {
		case <-mr.stopWorkers:
			return errExit
		default:
		}
		w, err := mr.cfg.Target.NewWorker(ctx, mr.tcfg, mr.mode, wl.id)
		if err == nil {
			mr.startWorker(ctx, wl.id, w)
			return errExit
		}
		if ctx.Err() != nil || attempt > 50 {
			return errExit
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
}

// crashAt strikes a scheduled crash at phase, if one is pending.
func (wl *workerLoop) crashAt(ctx context.Context, phase string) error {
	ctl := wl.mr.ctl[wl.id]
	p := ctl.crashPhase.Load()
	if p == nil || *p != phase || wl.mr.ctl[wl.id].incarnation.Load() != wl.inc {
		return nil
	}
	if !ctl.crashPhase.CompareAndSwap(p, nil) {
		return nil
	}
	wl.mr.addFault("worker-crash", "worker "+strconv.Itoa(wl.id)+" crashed "+phase)
	return wl.replace(ctx, true)
}

// handle processes one poll's records in the worker's mode.
func (wl *workerLoop) handle(ctx context.Context, recs []*targets.Record) error {
	mr := wl.mr
	spec := mr.spec
	pollAt := time.Now()
	var redelivered int64
	for _, r := range recs {
		if r.DeliveryCount > 1 {
			redelivered++
		}
	}
	if redelivered > 0 {
		mr.redelivered.Add(redelivered)
		mr.series.add(mr.series.redeliveries, mr.secondOf(pollAt), redelivered)
	}
	mr.processed.Add(int64(len(recs)))
	mr.noteReceived(wl.id)
	if err := wl.crashAt(ctx, PhaseAfterPoll); err != nil {
		return err
	}

	// Process: the workload's processing time per record, plus any
	// slow-processing fault.
	var work time.Duration
	for range recs {
		work += wl.sample()
	}
	ctl := mr.ctl[wl.id]
	if time.Now().UnixNano() < ctl.slowUntil.Load() {
		work += time.Duration(ctl.slowDelay.Load())
	}
	sleepCtx(ctx, work)

	// Choose deliberate rejects (not in implicit or classic-eos, which
	// cannot reject).
	var accepted, rejected []*targets.Record
	if spec.RejectRatio > 0 && mr.mode != targets.Implicit && mr.mode != targets.ClassicEOS {
		for _, r := range recs {
			if wl.rng.Float64() < spec.RejectRatio {
				rejected = append(rejected, r)
			} else {
				accepted = append(accepted, r)
			}
		}
	} else {
		accepted = recs
	}

	switch mr.mode {
	case targets.Implicit:
		// The next poll (or the close) accepts these records.
		wl.implicitTags = appendTags(wl.implicitTags[:0], recs)
		if err := wl.produce(ctx, accepted); err != nil {
			return wl.failed(ctx, err)
		}
		if err := wl.crashAt(ctx, PhaseAfterProduce); err != nil {
			return err
		}
		now := time.Now()
		wl.recordCommit(now, -1, now.Sub(pollAt)) // no commit call: poll to commit only
		return nil

	case targets.Explicit:
		if err := wl.produce(ctx, accepted); err != nil {
			return wl.failed(ctx, err)
		}
		if err := wl.crashAt(ctx, PhaseAfterProduce); err != nil {
			return err
		}
		return wl.ack(ctx, pollAt, accepted, rejected)

	case targets.Deferred:
		// Outputs commit in a producer transaction; the acks follow
		// outside it.
		if !wl.open {
			if err := wl.w.Begin(ctx); err != nil {
				return wl.failed(ctx, err)
			}
			wl.beginTxn(pollAt)
		}
		wl.held = append(wl.held, recs...)
		wl.heldAccepted = append(wl.heldAccepted, accepted...)
		wl.heldRejected = append(wl.heldRejected, rejected...)
		if err := wl.produce(ctx, accepted); err != nil {
			return wl.abortTxn(ctx, err)
		}
		if err := wl.crashAt(ctx, PhaseAfterProduce); err != nil {
			return err
		}
		wl.txnCount += len(recs)
		// A share consumer must acknowledge a poll's records before its
		// next poll (Kafka's explicit mode), so the output transaction
		// ends with every poll.
		return wl.maybeCommit(ctx, true)

	default: // transactional, classic-eos
		if !wl.open {
			if err := wl.w.Begin(ctx); err != nil {
				return wl.failed(ctx, err)
			}
			wl.beginTxn(pollAt)
		}
		if err := wl.produce(ctx, accepted); err != nil {
			return wl.abortTxn(ctx, err)
		}
		if err := wl.crashAt(ctx, PhaseAfterProduce); err != nil {
			return err
		}
		if err := wl.w.StageAcks(ctx, accepted, targets.AckAccept); err != nil {
			mr.ledger.setAck(wl.tags(accepted), ackAccept, fateFailed)
			return wl.abortTxn(ctx, err)
		}
		mr.ledger.stageAcks(wl.tags(accepted), ackAccept, wl.txnIdx)
		if len(rejected) > 0 {
			if err := wl.w.StageAcks(ctx, rejected, targets.AckReject); err != nil {
				mr.ledger.setAck(wl.tags(rejected), ackReject, fateFailed)
				return wl.abortTxn(ctx, err)
			}
			mr.ledger.stageAcks(wl.tags(rejected), ackReject, wl.txnIdx)
			wl.stagedRejects = appendTags(wl.stagedRejects, rejected)
		}
		if err := wl.crashAt(ctx, PhaseAfterStage); err != nil {
			return err
		}
		if until := ctl.stallUntil.Load(); time.Now().UnixNano() < until {
			// A stalled worker holds its transaction open past its
			// timeout; the coordinator's sweep aborts it.
			sleepCtx(ctx, time.Duration(until-time.Now().UnixNano()))
		}
		wl.txnCount += len(recs)
		return wl.maybeCommit(ctx, false)
	}
}

func (wl *workerLoop) beginTxn(at time.Time) {
	wl.open, wl.txnStart, wl.txnCount = true, at, 0
	wl.txnSeq++
	_, wl.epoch = wl.w.TxnInfo()
	var pid int64
	if p, ok := wl.w.(targets.ProducerIDer); ok {
		pid = p.ProducerID()
	}
	wl.txnIdx = wl.mr.ledger.beginTxn(wl.id, wl.inc<<32|wl.txnSeq, pid, wl.epoch)
	wl.stagedRejects = wl.stagedRejects[:0]
	wl.sink, wl.intended = wl.sink[:0], wl.intended[:0]
}

// tags returns the ledger tags of recs, in a buffer reused until the next
// call.
func (wl *workerLoop) tags(recs []*targets.Record) []int64 {
	wl.tagBuf = appendTags(wl.tagBuf[:0], recs)
	return wl.tagBuf
}

func appendTags(dst []int64, recs []*targets.Record) []int64 {
	for _, r := range recs {
		dst = append(dst, r.Tag)
	}
	return dst
}

// ackFate is the fate of an acknowledgement whose call returned err: a
// call cut short by the context may or may not have landed.
func ackFate(err error) uint8 {
	switch {
	case err == nil:
		return fateCommitted
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fateUnknown
	}
	return fateFailed
}

// ack acknowledges (explicit and deferred) and records the commit latency.
func (wl *workerLoop) ack(ctx context.Context, pollAt time.Time, accepted, rejected []*targets.Record) error {
	mr := wl.mr
	t0 := time.Now()
	err := wl.w.Ack(ctx, accepted, targets.AckAccept)
	mr.ledger.setAck(wl.tags(accepted), ackAccept, ackFate(err))
	if err == nil && len(rejected) > 0 {
		err = wl.w.Ack(ctx, rejected, targets.AckReject)
		mr.ledger.setAck(wl.tags(rejected), ackReject, ackFate(err))
	}
	done := time.Now()
	if err != nil {
		// Records whose lock expired before the ack are redelivered: the
		// output written for them becomes a duplicate, as this mode
		// allows.
		if isFenced(err) {
			return wl.failed(ctx, err)
		}
		mr.ackErrors.Add(1)
		return nil
	}
	mr.commits.Add(1)
	wl.recordCommit(done, done.Sub(t0), done.Sub(pollAt))
	return nil
}

// produce writes one output per record; ack-only workloads write to the
// external sink instead (made visible when the checkpoint commits).
func (wl *workerLoop) produce(ctx context.Context, recs []*targets.Record) error {
	mr := wl.mr
	if len(recs) == 0 {
		return nil
	}
	_, epoch := wl.w.TxnInfo()
	seq := int64(0)
	if wl.open || mr.mode == targets.Deferred {
		seq = wl.inc<<32 | wl.txnSeq
		epoch = wl.epoch
	}
	if mr.spec.AckOnly {
		now := time.Now()
		for _, r := range recs {
			h, err := readInput(r.Value)
			if err != nil {
				continue
			}
			o := outputRec{id: h.ID, partition: -1, offset: -1, txnSeq: seq, epoch: epoch, worker: uint16(wl.id)}
			if mr.mode.Transactional() {
				wl.sink = append(wl.sink, o)
				wl.intended = append(wl.intended, h.IntendedNs)
				if wl.open {
					mr.ledger.txnOutputs(wl.txnIdx, 1)
				}
				continue
			}
			o.visible = mr.sinceStart(now)
			mr.recordVisible(now, h.IntendedNs, 1)
			mr.ledger.addCommitted(o)
		}
		return nil
	}
	// Output buffers are reused from call to call: Produce is synchronous
	// and a target keeps nothing of a record after it returns.
	need := 0
	for _, r := range recs {
		need += max(len(r.Value), HeaderBytes)
	}
	if cap(wl.outBuf) < need {
		wl.outBuf = make([]byte, 0, 2*need)
	}
	if cap(wl.outRecs) < len(recs) {
		wl.outRecs = make([]targets.Record, 2*len(recs))
		wl.outPtrs = make([]*targets.Record, 2*len(recs))
	}
	buf := wl.outBuf[:0]
	outs := wl.outPtrs[:len(recs)]
	nout := mr.tcfg.OutputPartitions
	for i, r := range recs {
		h, err := readInput(r.Value)
		if err != nil {
			h = inputHeader{}
		}
		start := len(buf)
		buf = append(buf, r.Value...)
		for len(buf)-start < HeaderBytes {
			buf = append(buf, 0)
		}
		v := buf[start:len(buf):len(buf)]
		putOutput(v, outputHeader{InputID: h.ID, IntendedNs: h.IntendedNs, TxnSeq: seq, Epoch: epoch, Worker: uint16(wl.id)})
		wl.outRecs[i] = targets.Record{Topic: mr.tcfg.OutputTopic, Partition: r.Partition % nout, Value: v}
		outs[i] = &wl.outRecs[i]
	}
	if err := wl.w.Produce(ctx, outs); err != nil {
		return err
	}
	if wl.open {
		mr.ledger.txnOutputs(wl.txnIdx, len(outs))
	}
	return nil
}

// abortChosen draws whether to abort this transaction on purpose.
func (wl *workerLoop) abortChosen() bool {
	ratio := wl.mr.spec.AbortRatio
	if time.Now().UnixNano() < wl.mr.abortUntil.Load() {
		ratio = math.Max(ratio, math.Float64frombits(wl.mr.abortBoost.Load()))
	}
	return ratio > 0 && wl.rng.Float64() < ratio
}

// maybeCommit ends the open transaction when it is full or old enough (or
// force), aborting it instead when the abort ratio says so.
func (wl *workerLoop) maybeCommit(ctx context.Context, force bool) error {
	if !wl.open {
		return nil
	}
	spec := wl.mr.spec
	full := !spec.AckOnly && spec.Transaction.MaxRecords > 0 && wl.txnCount >= spec.Transaction.MaxRecords
	if !force && !full && time.Now().Before(wl.txnDeadline()) {
		return nil
	}
	if !wl.stopping && wl.abortChosen() {
		return wl.abortTxn(ctx, nil)
	}
	if wl.mr.mode == targets.Deferred && len(wl.held) > 0 && time.Since(wl.txnStart) > spec.LockDuration/2 {
		// The held records' locks must outlive the commit: renew them
		// when a good part of the lock is gone.
		_ = wl.w.Renew(ctx, wl.held)
	}
	t0 := time.Now()
	wl.mr.ledger.commitSent(wl.txnIdx)
	if err := wl.w.Commit(ctx); err != nil {
		return wl.abortTxn(ctx, err)
	}
	wl.mr.ledger.endTxn(wl.txnIdx, outcomeCommitted)
	wl.mr.ledger.rejectStaged(wl.stagedRejects)
	wl.stagedRejects = wl.stagedRejects[:0]
	start := wl.txnStart
	wl.committed(t0)
	if wl.mr.mode == targets.Deferred {
		if err := wl.crashAt(ctx, PhaseAfterCommitBeforeAck); err != nil {
			return err
		}
		acc, rej := wl.heldAccepted, wl.heldRejected
		wl.held, wl.heldAccepted, wl.heldRejected = nil, nil, nil
		return wl.ack(ctx, start, acc, rej)
	}
	return nil
}

// committed books a successful commit.
func (wl *workerLoop) committed(t0 time.Time) {
	mr := wl.mr
	done := time.Now()
	mr.commits.Add(1)
	wl.recordCommit(done, done.Sub(t0), done.Sub(wl.txnStart))
	for i, o := range wl.sink {
		o.visible = mr.sinceStart(done)
		mr.recordVisible(done, wl.intended[i], 1)
		mr.ledger.addCommitted(o)
	}
	wl.open = false
	wl.sink, wl.intended = wl.sink[:0], wl.intended[:0]
}

// abortTxn aborts the open transaction after cause (nil: on purpose). A
// fenced worker is replaced instead: the coordinator already aborted.
func (wl *workerLoop) abortTxn(ctx context.Context, cause error) error {
	mr := wl.mr
	wl.open = false
	wl.sink, wl.intended = wl.sink[:0], wl.intended[:0]
	if cause != nil && isFenced(cause) {
		wl.held, wl.heldAccepted, wl.heldRejected = nil, nil, nil
		mr.aborts.Add(1)
		mr.series.add(mr.series.aborts, mr.secondOf(time.Now()), 1)
		return wl.replace(ctx, false)
	}
	if err := wl.w.Abort(ctx); err != nil {
		return wl.failed(ctx, err)
	}
	mr.ledger.endTxn(wl.txnIdx, outcomeAborted)
	if errors.Is(cause, targets.ErrStaleMemberEpoch) {
		mr.fencedAbort.Add(1)
	}
	mr.aborts.Add(1)
	mr.series.add(mr.series.aborts, mr.secondOf(time.Now()), 1)
	if len(wl.held) > 0 {
		// Deferred: release the records now so they are redelivered at
		// once rather than at lock expiry.
		err := wl.w.Ack(ctx, wl.held, targets.AckRelease)
		mr.ledger.setAck(wl.tags(wl.held), ackRelease, ackFate(err))
	}
	wl.held, wl.heldAccepted, wl.heldRejected = nil, nil, nil
	return nil
}

// shutdown ends the worker at the end of the drain: the open transaction
// commits, then the worker leaves cleanly.
func (wl *workerLoop) shutdown(ctx context.Context) {
	if wl.mr.ctl[wl.id].incarnation.Load() != wl.inc {
		wl.w.Crash() // a zombie that was never fenced: just drop it
		return
	}
	wl.stopping = true
	if wl.open {
		_ = wl.maybeCommit(ctx, true)
	}
	if len(wl.implicitTags) > 0 {
		// Closing accepts the last poll's records; whether it did, the
		// close does not say.
		wl.mr.ledger.setAck(wl.implicitTags, ackAccept, fateUnknown)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = wl.w.Close(cctx)
}

// readLoop tails the output topic with read_committed: each output seen is
// one end-to-end latency sample, measured from its input's intended time.
func (mr *modeRun) readLoop(ctx context.Context, rd targets.Reader, stop chan struct{}) error {
	h := NewHist()
	defer mr.mergeHist(result.HistEndToEnd, h)
	var (
		lat   []time.Duration
		batch []outputRec
	)
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		recs, err := rd.Poll(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(recs) == 0 {
			continue
		}
		now := time.Now()
		vis := mr.sinceStart(now)
		lat = lat[:0]
		batch = batch[:0]
		for _, r := range recs {
			oh, err := readOutput(r.Value)
			if err != nil {
				continue
			}
			// One sample per output of an input intended inside the
			// window.
			if d := time.Duration(vis - oh.IntendedNs); mr.inWindowNs(oh.IntendedNs) {
				h.Record(d)
				lat = append(lat, d)
			}
			batch = append(batch, outputRec{id: oh.InputID, partition: r.Partition, offset: r.Offset, visible: vis, txnSeq: oh.TxnSeq, epoch: oh.Epoch, worker: oh.Worker})
		}
		mr.ledger.addCommittedBatch(batch)
		if len(lat) > 0 {
			mr.ivE2E.record(now, lat...)
		}
		mr.series.add(mr.series.outputs, mr.secondOf(now), int64(len(batch)))
	}
}

// recordVisible books outputs made visible outside the output topic
// (ack-only checkpoints).
func (mr *modeRun) recordVisible(now time.Time, intendedNs int64, n int64) {
	d := time.Duration(mr.sinceStart(now) - intendedNs)
	if mr.inWindowNs(intendedNs) {
		mr.histMu.Lock()
		if mr.hists[result.HistEndToEnd] == nil {
			mr.hists[result.HistEndToEnd] = NewHist()
		}
		mr.hists[result.HistEndToEnd].Record(d)
		mr.histMu.Unlock()
		mr.ivE2E.record(now, d)
	}
	mr.series.add(mr.series.outputs, mr.secondOf(now), n)
}
