// This file holds the workers: the thin concurrent shell around a
// pipeline.Loop (the plain machine or the checkpoint machine). One goroutine per worker incarnation asks the machine
// what to do next, performs the call on the target, books it (ledger,
// histograms, counters) and hands the outcome back; a scheduled crash
// strikes when the machine crosses its phase.

package loadgen

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// counts are the mode's counters the producers, workers and faults add to
// from their goroutines; the result reads them once they have stopped.
type counts struct {
	nextID   atomic.Uint64 // the last input id assigned
	produced atomic.Int64  // inputs produced (all phases)
	// unsent counts inputs the schedule placed inside the measurement
	// window that were never sent: an open loop's producers stop when the
	// window closes, behind their schedule or not, so a rate the system
	// cannot reach ends the run on time.
	unsent atomic.Int64
	// behindNs is how far behind its schedule the last batch an open
	// loop's producer sent was (sent minus intended, of its oldest
	// record), for the live warning.
	behindNs atomic.Int64
	// inWindowInputs counts inputs intended inside the measurement window
	// (one send-lag and one produce sample each); inWindowCommits the
	// commits (or acks) done inside it (one commit and one poll-to-commit
	// sample each).
	inWindowInputs  atomic.Int64
	inWindowCommits atomic.Int64
	expiriesAtStart int64 // the target's lock expiries when the mode started

	processed   atomic.Int64
	redelivered atomic.Int64
	commits     atomic.Int64
	aborts      atomic.Int64
	fencedAbort atomic.Int64 // aborts caused by a stale member epoch
	churns      atomic.Int64 // members added by membership-churn faults
	rebalances  atomic.Int64 // their joins and leaves
	crashes     atomic.Int64
	wedged      atomic.Int64 // workers replaced after their begins failed for a transaction timeout
	ackErrors   atomic.Int64
	sinkOutputs atomic.Int64 // outputs committed to an external sink (checkpoint model)
}

// workerCtl is how faults reach one worker id (across incarnations).
type workerCtl struct {
	incarnation atomic.Int64
	crashPhase  atomic.Pointer[vocab.Phase]
	stall       atomic.Pointer[stallSpec]
	slowUntil   atomic.Int64 // unix ns
	slowDelay   atomic.Int64 // ns added to each poll's processing
	cutUntil    atomic.Int64 // unix ns: cut off from the target (network partition) until then
	// snapshotDelay is the delay of the next snapshot of a checkpointing
	// worker, ns (a slow-checkpoint fault); taken by the snapshot.
	snapshotDelay atomic.Int64

	// A zombie-producer fault's replaced incarnation (zombieInc) keeps
	// the stall it was in (zombieStall), which later stall faults, meant
	// for its successor, do not change, and makes no call before
	// zombieWake (unix ns: a paused process).
	zombieInc   atomic.Int64
	zombieStall atomic.Pointer[stallSpec]
	zombieWake  atomic.Int64
}

// stallSpec is a stall-worker fault in force: until when, and at which
// phase (pipeline.Inputs.StallAt). One pointer, so a reader never pairs
// one fault's end with another's phase.
type stallSpec struct {
	until time.Time
	at    vocab.Phase
}

// startWorker starts a new incarnation of worker id.
func (mr *modeRun) startWorker(ctx context.Context, id int, w targets.Worker) {
	inc := mr.ctl[id].incarnation.Add(1)
	mr.workersWG.Add(1)
	go func() {
		defer mr.workersWG.Done()
		label := "worker/" + strconv.Itoa(id) + "/incarnation/" + strconv.FormatInt(inc, 10)
		wl := &workerLoop{mr: mr, id: id, inc: inc, w: w, commitH: NewHist(), p2cH: NewHist()}
		wl.book = mr.ledger.NewBook(id, inc, func() int64 { return mr.sinceStart(time.Now()) })
		wl.sample = mr.spec.ProcessingTime.Sampler(mr.rng(label + "/processing"))
		cfg := mr.pipelineConfig()
		rngLabel := label
		if mr.cp != nil {
			cfg.Checkpoint = mr.checkpointConfig()
			rngLabel += "/checkpoint"
			wl.cpw = mr.cp.NewBook(wl.book, runEvents{mr: mr, wl: wl})
		}
		wl.m = pipeline.New[*targets.Record](cfg, mr.rng(rngLabel))
		defer func() {
			mr.mergeHist(result.HistCommit, wl.commitH)
			mr.mergeHist(result.HistPollCommit, wl.p2cH)
		}()
		wl.loop(ctx)
	}()
}

// pipelineConfig is the workers' machine configuration from the workload.
func (mr *modeRun) pipelineConfig() pipeline.Config {
	spec := mr.spec
	c := pipeline.Config{
		Mode: mr.mode, MaxPollRecords: spec.MaxPollRecords,
		MaxRecords: spec.Transaction.MaxRecords, MaxDuration: spec.Transaction.MaxDuration,
		LockDuration: spec.LockDuration,
		// After a transaction timeout the coordinator has ended whatever
		// the producer left open, so a new incarnation loses nothing.
		BeginGiveUp: spec.TransactionTimeout,
	}
	return c
}

type workerLoop struct {
	mr      *modeRun
	id      int
	inc     int64
	w       targets.Worker
	m       pipeline.Loop[*targets.Record]
	sample  func() time.Duration
	commitH *Hist
	p2cH    *Hist
	cpw     *ledger.CheckpointBook // the checkpoint model's books (ackOnly workloads)
	cpT0    time.Time              // the commits of the completed checkpoint started

	// book books its calls in the ledger (the open transaction's too:
	// the machine knows whether one is open).
	book      *ledger.Book
	acceptBuf []int64   // implicit: tags a poll accepts
	ackT0     time.Time // the acknowledgement group in flight started

	// Reused output buffers (see produce).
	outBuf  []byte
	outRecs []targets.Record
	outPtrs []*targets.Record
}

// errExit ends a worker loop (crashed, or fenced as a zombie).
var errExit = errors.New("worker exits")

// inputs reads what the faults and the run impose on the worker now.
func (wl *workerLoop) inputs(now time.Time) pipeline.Inputs {
	mr := wl.mr
	ctl := mr.ctl[wl.id]
	in := pipeline.Inputs{Now: now, AbortRatio: mr.spec.AbortRatio, RejectRatio: mr.spec.RejectRatio}
	in.Stop = mr.stopping()
	if n := ctl.cutUntil.Load(); n != 0 {
		in.CutUntil = time.Unix(0, n)
	}
	stall := ctl.stall.Load()
	if ctl.zombieInc.Load() == wl.inc {
		stall = ctl.zombieStall.Load()
	}
	if stall != nil {
		in.StallUntil, in.StallAt = stall.until, stall.at
	}
	if wl.cpw != nil {
		in.SnapshotDelay = time.Duration(ctl.snapshotDelay.Load())
	}
	in.AbortRatio = mr.abortRatio(now, in.AbortRatio)
	return in
}

// outcome is the machine's view of a call that returned err.
func outcome(ctx context.Context, err error) pipeline.Result[*targets.Record] {
	if err == nil {
		return pipeline.Result[*targets.Record]{}
	}
	return pipeline.Result[*targets.Record]{Err: err, Fenced: isFenced(err), Canceled: ctx.Err() != nil}
}

func (wl *workerLoop) loop(ctx context.Context) {
	mr := wl.mr
	mr.waitBacklog(ctx)
	for {
		in := wl.inputs(time.Now())
		if in.Stop && !wl.m.Stopping() && mr.ctl[wl.id].incarnation.Load() != wl.inc {
			wl.w.Crash() // a zombie that was never fenced: just drop it
			return
		}
		if ctl := mr.ctl[wl.id]; ctl.zombieInc.Load() == wl.inc {
			if wake := time.Unix(0, ctl.zombieWake.Load()); in.Now.Before(wake) {
				// A paused zombie makes no call until it wakes.
				mr.sleepUnlessStopped(ctx, wake.Sub(in.Now))
				continue
			}
		}
		a := wl.m.Next(in)
		res, exit := wl.perform(ctx, a)
		if exit {
			return
		}
		if p := wl.m.Done(res); p != "" {
			if wl.crashAt(ctx, p) != nil {
				return
			}
		}
		if a.Op == pipeline.OpProduce && res.Err == nil && mr.mode == vocab.Implicit {
			// No commit call: the poll-to-commit sample is taken once the
			// outputs are written (and the worker did not crash there).
			now := time.Now()
			wl.recordCommit(now, -1, now.Sub(a.Since))
		}
	}
}

// perform makes the call action a names and books it. exit ends the loop
// (the worker was replaced, closed, or its context ended).
func (wl *workerLoop) perform(ctx context.Context, a pipeline.Action[*targets.Record]) (res pipeline.Result[*targets.Record], exit bool) {
	mr := wl.mr
	if wl.cpw != nil {
		if res, ok := wl.performCheckpoint(ctx, a); ok {
			return res, false
		}
	}
	switch a.Op {
	case pipeline.OpWait:
		if a.Retry {
			mr.counts.ackErrors.Add(1)
		}
		mr.sleepUnlessStopped(ctx, time.Until(a.Until))
	case pipeline.OpPoll:
		// Implicit mode: the poll accepts the previous poll's records,
		// whose memory the target may reuse once it polls again.
		accepted := ledger.AppendTags(wl.acceptBuf[:0], a.Recs)
		wl.acceptBuf = accepted
		pctx, cancel := context.WithTimeout(ctx, a.Timeout)
		recs, err := wl.w.Poll(pctx, a.Max)
		cancel()
		res = outcome(ctx, err)
		if err != nil {
			return res, false
		}
		wl.book.Polled(accepted, recs)
		if len(recs) > 0 {
			now := time.Now()
			wl.mr.bookPoll(wl.id, now, recs)
			res.Recs, res.At = recs, now
		}
	case pipeline.OpProcess:
		// The workload's processing time per record, plus any
		// slow-processing fault.
		var work time.Duration
		for range a.Recs {
			work += wl.sample()
		}
		ctl := mr.ctl[wl.id]
		if time.Now().UnixNano() < ctl.slowUntil.Load() {
			work += time.Duration(ctl.slowDelay.Load())
		}
		sleepCtx(ctx, work)
	case pipeline.OpBegin:
		err := wl.w.Begin(ctx)
		if err == nil {
			wl.book.Began(wl.w)
		}
		res = outcome(ctx, err)
	case pipeline.OpProduce:
		res = outcome(ctx, wl.produce(ctx, a.Recs))
	case pipeline.OpStageAccept, pipeline.OpStageReject:
		t := vocab.AckAccept
		if a.Op == pipeline.OpStageReject {
			t = vocab.AckReject
		}
		err := wl.w.StageAcks(ctx, a.Recs, t)
		wl.book.Staged(a.Recs, t == vocab.AckReject, err)
		res = outcome(ctx, err)
	case pipeline.OpAccept, pipeline.OpReject, pipeline.OpRelease:
		t := vocab.AckAccept
		switch a.Op {
		case pipeline.OpReject:
			t = vocab.AckReject
		case pipeline.OpRelease:
			t = vocab.AckRelease
		}
		if a.First {
			wl.ackT0 = time.Now()
		}
		err := wl.w.Ack(ctx, a.Recs, t)
		wl.book.Acked(a.Recs, t, err)
		switch {
		case err != nil && !isFenced(err):
			mr.counts.ackErrors.Add(1)
		case err == nil && a.Last:
			done := time.Now()
			mr.counts.commits.Add(1)
			wl.recordCommit(done, done.Sub(wl.ackT0), done.Sub(a.Since))
		}
		res = outcome(ctx, err)
	case pipeline.OpReleaseHeld:
		err := wl.w.Ack(ctx, a.Recs, vocab.AckRelease)
		wl.book.Acked(a.Recs, vocab.AckRelease, err)
	case pipeline.OpRenew:
		_ = wl.w.Renew(ctx, a.Recs)
	case pipeline.OpCommit:
		t0 := time.Now()
		wl.book.CommitSent()
		err := wl.w.Commit(ctx)
		if err == nil {
			wl.book.Committed()
			wl.committed(t0, a.Since)
		}
		res = outcome(ctx, err)
	case pipeline.OpAbort:
		err := wl.w.Abort(ctx)
		if err == nil {
			wl.book.Aborted()
			if errors.Is(a.Cause, targets.ErrStaleMemberEpoch) {
				mr.counts.fencedAbort.Add(1)
			}
			mr.counts.aborts.Add(1)
			mr.series.add(mr.series.aborts, mr.secondOf(time.Now()), 1)
		}
		res = outcome(ctx, err)
	case pipeline.OpReplace:
		if a.Aborted {
			// The fencing aborted the open transaction (the coordinator
			// did, before the worker heard of it).
			mr.counts.aborts.Add(1)
			mr.series.add(mr.series.aborts, mr.secondOf(time.Now()), 1)
		}
		if a.Wedged {
			mr.counts.wedged.Add(1)
		}
		_ = wl.replace(ctx, false)
		return res, true
	case pipeline.OpClose:
		// Closing accepts the last poll's records; whether it did, the
		// close does not say.
		wl.book.Closed(a.Recs)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = wl.w.Close(cctx)
		cancel()
		return res, true
	case pipeline.OpExit:
		return res, true
	case pipeline.OpAbandon:
		// Killed while it hangs: nothing is closed or aborted, so its
		// open transaction is the coordinator's to time out.
		wl.w.Crash()
		if wl.m.Open() {
			wl.book.Unresolved()
		}
		return res, true
	}
	return res, false
}

// sleepUnlessStopped waits d, or less when ctx ends or the workers are
// asked to stop (a stalled or paused worker then sees the stop). Once they
// were asked, it waits the whole d: a wait the stop does not end (a
// cut-off, a retry pause) then does not turn into a busy loop.
func (mr *modeRun) sleepUnlessStopped(ctx context.Context, d time.Duration) {
	if mr.stopping() {
		sleepCtx(ctx, d)
		return
	}
	sleepOrStop(ctx, d, mr.stopWorkers)
}

// bookPoll books worker id's polled records: redeliveries, the processed
// count, and that the worker has received records (the window waits for
// it). Every worker model books its polls through it.
func (mr *modeRun) bookPoll(id int, now time.Time, recs []*targets.Record) {
	var redelivered int64
	for _, r := range recs {
		if r.DeliveryCount > 1 {
			redelivered++
		}
	}
	if redelivered > 0 {
		mr.counts.redelivered.Add(redelivered)
		mr.series.add(mr.series.redeliveries, mr.secondOf(now), redelivered)
	}
	mr.counts.processed.Add(int64(len(recs)))
	mr.noteReceived(id)
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
		mr.counts.crashes.Add(1)
	}
	stopping := mr.stopping()
	switch {
	case stopping && !crash:
		// No successor will fence this worker's producer, so its open
		// transaction (a fenced member leaves its producer's transaction
		// open) would hang until its timeout: close it, which aborts.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = wl.w.Close(cctx)
		cancel()
		if wl.m.Open() {
			wl.book.Unresolved()
		}
		return errExit
	case crash || mr.mode != vocab.ClassicEOS:
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
func (wl *workerLoop) crashAt(ctx context.Context, phase vocab.Phase) error {
	ctl := wl.mr.ctl[wl.id]
	p := ctl.crashPhase.Load()
	if p == nil || *p != phase || wl.mr.ctl[wl.id].incarnation.Load() != wl.inc {
		return nil
	}
	if !ctl.crashPhase.CompareAndSwap(p, nil) {
		return nil
	}
	wl.mr.addFault(string(vocab.FaultWorkerCrash), "worker "+strconv.Itoa(wl.id)+" crashed "+string(phase))
	return wl.replace(ctx, true)
}

// produce writes one output per record to the output topic (ackOnly
// workloads write to their two-phase sink instead: ledger.CheckpointBook).
func (wl *workerLoop) produce(ctx context.Context, recs []*targets.Record) error {
	mr := wl.mr
	if len(recs) == 0 {
		return nil
	}
	_, epoch := wl.w.TxnInfo()
	open := wl.m.Open()
	seq, epoch := wl.book.OutputTxn(open, mr.mode, epoch)
	// Output buffers are reused from call to call: Produce is synchronous
	// and a target keeps nothing of a record after it returns.
	need := 0
	for _, r := range recs {
		need += max(len(r.Value), ledger.HeaderBytes)
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
		h, err := ledger.ReadInput(r.Value)
		if err != nil {
			h = ledger.InputHeader{}
		}
		start := len(buf)
		buf = append(buf, r.Value...)
		for len(buf)-start < ledger.HeaderBytes {
			buf = append(buf, 0)
		}
		v := buf[start:len(buf):len(buf)]
		ledger.PutOutputHeader(v, h.ID, h.IntendedNs, seq, epoch, uint16(wl.id))
		wl.outRecs[i] = targets.Record{Topic: mr.tcfg.OutputTopic, Partition: mr.inputPartition(r.Topic, r.Partition) % nout, Value: v}
		outs[i] = &wl.outRecs[i]
	}
	if err := wl.w.Produce(ctx, outs); err != nil {
		return err
	}
	if open {
		wl.book.Produced(len(outs))
	}
	return nil
}

// committed books a successful commit of a transaction opened at since.
func (wl *workerLoop) committed(t0, since time.Time) {
	mr := wl.mr
	done := time.Now()
	mr.counts.commits.Add(1)
	wl.recordCommit(done, done.Sub(t0), done.Sub(since))
}
