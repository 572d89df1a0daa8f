// This file holds the fault scheduler: the workload's faults placed on the
// mode's timeline (from the opening of the measurement window) and applied when due, each
// one logged with its time in the result and marked on the series.

package loadgen

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/workloads"
)

type scheduledFault struct {
	at time.Time
	f  workloads.Fault
}

// schedule lists every firing of the workload's faults in time order.
func (mr *modeRun) schedule() []scheduledFault {
	var out []scheduledFault
	for _, f := range mr.spec.Faults {
		if f.Every > 0 {
			for t := mr.warmEnd.Add(f.Every); t.Before(mr.loadEnd); t = t.Add(f.Every) {
				out = append(out, scheduledFault{t, f})
			}
			continue
		}
		out = append(out, scheduledFault{mr.warmEnd.Add(f.At), f})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// faultLoop applies faults as they fall due, until done closes. The
// faults' times count from the opening of the measurement window.
func (mr *modeRun) faultLoop(ctx context.Context, done chan struct{}) {
	rng := mr.rng("fault")
	select {
	case <-mr.windowOpen:
	case <-done:
		return
	case <-ctx.Done():
		return
	}
	for _, sf := range mr.schedule() {
		t := time.NewTimer(time.Until(sf.at))
		select {
		case <-done:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		mr.applyFault(ctx, sf.f, rng)
	}
	<-done
}

func (mr *modeRun) pickWorker(f workloads.Fault, rng interface{ IntN(int) int }) int {
	i, random := f.Index("worker")
	if random || i < 0 || i >= len(mr.ctl) {
		return rng.IntN(len(mr.ctl))
	}
	return i
}

func (mr *modeRun) applyFault(ctx context.Context, f workloads.Fault, rng interface {
	IntN(int) int
	Float64() float64
}) {
	now := time.Now()
	switch f.Kind {
	case workloads.FaultWorkerCrash:
		p := pipeline.Phase(f.Params["phase"])
		if !p.In(mr.mode) {
			return // the mode has no such phase: nothing to crash
		}
		w := mr.pickWorker(f, rng)
		mr.ctl[w].crashPhase.Store(&p)
		// Logged when the crash strikes, at the phase.
	case workloads.FaultAbortRatio:
		if !mr.mode.Transactional() {
			return
		}
		mr.abortBoost.Store(math.Float64bits(f.Float("ratio")))
		mr.abortUntil.Store(now.Add(f.Duration("for")).UnixNano())
		mr.addFault(string(f.Kind), fmt.Sprintf("abort ratio %.2f for %v", f.Float("ratio"), f.Duration("for")))
	case workloads.FaultStallWorker:
		w := mr.pickWorker(f, rng)
		mr.ctl[w].stallUntil.Store(now.Add(f.Duration("for")).UnixNano())
		mr.addFault(string(f.Kind), fmt.Sprintf("worker %d stalls for %v holding its transaction", w, f.Duration("for")))
	case workloads.FaultSlowProcessing:
		w := mr.pickWorker(f, rng)
		mr.ctl[w].slowDelay.Store(int64(f.Duration("delay")))
		mr.ctl[w].slowUntil.Store(now.Add(f.Duration("for")).UnixNano())
		mr.addFault(string(f.Kind), fmt.Sprintf("worker %d adds %v per poll for %v", w, f.Duration("delay"), f.Duration("for")))
	case workloads.FaultNetworkPartition:
		if !f.ClientSide() {
			mr.applyTargetFault(now, f)
			return
		}
		w := mr.pickWorker(f, rng)
		mr.ctl[w].cutUntil.Store(now.Add(f.Duration("for")).UnixNano())
		mr.addFault(string(f.Kind), fmt.Sprintf("worker %d cut off from the target for %v", w, f.Duration("for")))
	case workloads.FaultMembershipChurn:
		mr.churn(ctx, f.Duration("for"))
	case workloads.FaultZombieProducer:
		if !mr.mode.Transactional() {
			return
		}
		w := mr.pickWorker(f, rng)
		// A second incarnation with the same id fences the first, which
		// keeps running as a zombie until its next call is refused.
		nw, err := mr.cfg.Target.NewWorker(ctx, mr.tcfg, mr.mode, w)
		if err != nil {
			mr.addFault(string(f.Kind), fmt.Sprintf("worker %d: could not start the successor: %v", w, err))
			return
		}
		mr.startWorker(ctx, w, nw)
		mr.addFault(string(f.Kind), fmt.Sprintf("worker %d replaced while the old one runs on as a zombie", w))
	default:
		mr.applyTargetFault(now, f)
	}
}

// applyTargetFault applies a fault through the target's fault runner.
func (mr *modeRun) applyTargetFault(now time.Time, f workloads.Fault) {
	desc, err := mr.cfg.FaultRunner.Apply(f.Kind, f.Params)
	if err != nil {
		desc = "failed: " + err.Error()
	}
	// Recorded when the fault began, not when a slow runner (a broker
	// restart) returned, with how long it took.
	mr.addFaultAt(now, string(f.Kind), fmt.Sprintf("%s (took %v)", desc, time.Since(now).Round(100*time.Millisecond)))
}

// churn adds a member to the mode's group (a worker of its own, which
// never polls) and removes it after d: two assignment changes. The
// aborts they cost are counted as fenced aborts by the workers.
func (mr *modeRun) churn(ctx context.Context, d time.Duration) {
	id := len(mr.ctl) + int(mr.counts.churns.Add(1)) // ids past the workers': no transactional id is shared
	w, err := mr.cfg.Target.NewWorker(ctx, mr.tcfg, mr.mode, id)
	if err != nil {
		mr.addFault(string(workloads.FaultMembershipChurn), fmt.Sprintf("could not add a member: %v", err))
		return
	}
	mr.counts.rebalances.Add(1)
	mr.addFault(string(workloads.FaultMembershipChurn), fmt.Sprintf("member %d joined for %v", id, d))
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if w.Close(cctx) == nil {
			mr.counts.rebalances.Add(1)
		}
		mr.addFault(string(workloads.FaultMembershipChurn), fmt.Sprintf("member %d left", id))
	}()
}
