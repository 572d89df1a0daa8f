// This file holds the runner's side of the checkpoint model (ackOnly
// workloads): setting up the mode's books (ledger.Checkpoints) on the
// run's sink, the worker calls the model's steps need of the target, the
// slow-checkpoint fault, what the books report to the run's counters,
// series and histograms (runEvents), and the recovery of a restarted task
// (ledger.Checkpoints.Recover). The order of a checkpoint's steps, its
// crash phases and its failures are the machine's
// (loadgen/pipeline/checkpoint.go).

package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// initCheckpoint sets up the checkpoint model of an ackOnly mode run.
func (mr *modeRun) initCheckpoint() error {
	if !mr.spec.AckOnly {
		return nil
	}
	switch mr.mode {
	case vocab.Transactional, vocab.Explicit:
	default:
		return fmt.Errorf("%w: ackOnly (the checkpoint model) runs the transactional and explicit modes, not %s; on the kafka target use explicit (the sink commits, then the explicit acks)", ErrBadConfig, mr.mode)
	}
	cp, err := ledger.NewCheckpoints(mr.cfg.Sink, mr.cfg.RunID+"-"+mr.name, mr.mode, mr.spec.Checkpoint.Order == workloads.CommitSinkFirst)
	if err != nil {
		return err
	}
	mr.cp = cp
	return nil
}

// settledInputs is how many inputs have a committed output or were
// rejected on purpose: on the output topic, and in the sink of the
// checkpoint model.
func (mr *modeRun) settledInputs() int64 {
	n := mr.ledger.Settled()
	if mr.cp != nil {
		n += mr.cp.Settled()
	}
	return n
}

// checkpointConfig is the machine's checkpoint model from the workload.
func (mr *modeRun) checkpointConfig() *pipeline.CheckpointConfig {
	c := mr.spec.Checkpoint
	return &pipeline.CheckpointConfig{
		Interval: mr.spec.CheckpointInterval, MaxRecords: c.MaxRecords, Timeout: c.Timeout,
		StageAtAcquisition: c.Staging == workloads.StageAtAcquisition, Renew: c.Renew,
		SinkFirst: c.Order == workloads.CommitSinkFirst,
		PerPoll:   mr.cfg.Target.Info().AcksBeforeNextPoll,
		Key:       ledger.RecordKey,
	}
}

// runEvents is a run's ledger.CheckpointEvents: its counters, series,
// fault events and (through the worker loop wl, when the events are a
// worker's) commit histograms.
type runEvents struct {
	mr *modeRun
	wl *workerLoop
}

func (r runEvents) Fault(kind, detail string) { r.mr.addFault(kind, detail) }
func (r runEvents) AckError()                 { r.mr.counts.ackErrors.Add(1) }
func (r runEvents) FencedAbort()              { r.mr.counts.fencedAbort.Add(1) }
func (r runEvents) Aborted() {
	r.mr.counts.aborts.Add(1)
	r.mr.series.add(r.mr.series.aborts, r.mr.secondOf(time.Now()), 1)
}
func (r runEvents) Committed(since time.Time) {
	done := time.Now()
	r.mr.counts.commits.Add(1)
	if r.wl != nil {
		r.wl.recordCommit(done, done.Sub(r.wl.cpT0), done.Sub(since))
	}
}
func (r runEvents) Visible(intendedNs int64) { r.mr.recordVisible(time.Now(), intendedNs, 1) }

// performCheckpoint makes the checkpoint model's calls and books them; ok
// is false for an action the common shell performs (polls, processing,
// staging, releases, waits, replace and close).
func (wl *workerLoop) performCheckpoint(ctx context.Context, a pipeline.Action[*targets.Record]) (res pipeline.Result[*targets.Record], ok bool) {
	cb := wl.cpw
	switch a.Op {
	case pipeline.OpWait:
		if !a.Slow {
			break
		}
		// The snapshot takes as long as the slow-checkpoint fault says.
		if d := wl.mr.ctl[wl.id].snapshotDelay.Swap(0); d > 0 {
			wl.mr.addFault(string(vocab.FaultSlowCheckpoint), fmt.Sprintf("worker %d checkpoint %d takes %v to snapshot", wl.id, a.Checkpoint, time.Duration(d)))
			sleepCtx(ctx, time.Duration(d))
		}
	case pipeline.OpBarrier, pipeline.OpNotify:
		wl.cpT0 = time.Now() // the commits of the completed checkpoint start
	}
	if res, ok := cb.Perform(ctx, wl.w, a); ok {
		return res, true
	}
	var err error
	switch a.Op {
	case pipeline.OpBegin:
		err = wl.w.Begin(ctx)
	case pipeline.OpRenew:
		err = wl.w.Renew(ctx, a.Recs)
	case pipeline.OpCommit:
		cb.CommitSent()
		err = wl.w.Commit(ctx)
	case pipeline.OpAbort:
		err = wl.w.Abort(ctx)
	case pipeline.OpAccept:
		err = wl.w.Ack(ctx, a.Recs, vocab.AckAccept)
	case pipeline.OpReject:
		err = wl.w.Ack(ctx, a.Recs, vocab.AckReject)
	default:
		return res, false
	}
	res = outcome(ctx, err)
	cb.Done(wl.w, wl.m.Open(), a, res)
	return res, true
}

// recoverCheckpoint is what a restarted task of worker id does before it
// starts (ledger.Checkpoints.Recover): its last completed checkpoint
// committed, every other prepared sink transaction of the worker rolled
// back, each step a fault event of the run.
func (mr *modeRun) recoverCheckpoint(ctx context.Context, id int) {
	if mr.cp != nil {
		mr.cp.Recover(ctx, id, mr.cfg.Target, mr.tcfg, mr.ledger, runEvents{mr: mr}, func() int64 { return mr.sinceStart(time.Now()) })
	}
}

// closeCheckpoint releases what initCheckpoint opened.
func (mr *modeRun) closeCheckpoint() {
	if mr.cp != nil {
		_ = mr.cp.Close()
	}
}

// applySlowCheckpoint arms a slow-checkpoint fault on one worker and returns
// it, or -1 when the mode runs no checkpoints.
func (mr *modeRun) applySlowCheckpoint(f workloads.Fault, rng *rand.Rand) int {
	if mr.cp == nil {
		return -1
	}
	w := mr.pickWorker(f, rng)
	mr.ctl[w].snapshotDelay.Store(int64(f.Duration("delay")))
	return w
}
