// This file holds the fault scheduler: each of the workload's faults on a
// timeline of its own (from the opening of the measurement window), applied
// when due whatever the others are doing, each firing logged in the result
// with its scheduled and actual start and end (and the broker it hit) and
// marked on the series.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// faultClock is what the fault timelines read the time from and wait on;
// tests inject a fake one.
type faultClock interface {
	Now() time.Time
	// After is time.After.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// firings lists the times fault f fires, counted from the opening of the
// window at ws until the load ends at we: once at At, or every Every.
func firings(f workloads.Fault, ws, we time.Time) []time.Time {
	if f.Every <= 0 {
		return []time.Time{ws.Add(f.At)}
	}
	var out []time.Time
	for t := ws.Add(f.Every); t.Before(we); t = t.Add(f.Every) {
		out = append(out, t)
	}
	return out
}

// firing is one firing of a fault, as its timeline saw it.
type firing struct {
	fault      int // index in the workload's faults
	scheduled  time.Time
	start, end time.Time
}

// runTimelines runs every fault on a timeline of its own: fault i fires at
// each of its times (late when its own previous firing ran past one: a
// fault never waits for another), calling apply, which may block (a broker
// restart takes seconds). No firing starts once stop closes; runTimelines
// returns when every firing already started has returned.
func runTimelines(clk faultClock, times [][]time.Time, stop <-chan struct{}, apply func(firing)) {
	var wg sync.WaitGroup
	for i, ts := range times {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, at := range ts {
				if d := at.Sub(clk.Now()); d > 0 {
					select {
					case <-stop:
						return
					case <-clk.After(d):
					}
				}
				select {
				case <-stop:
					return
				default:
				}
				fr := firing{fault: i, scheduled: at, start: clk.Now()}
				apply(fr)
			}
		}()
	}
	wg.Wait()
}

// faultLoop applies the workload's faults on their timelines, counted from
// the opening of the measurement window, until done closes; it returns
// once every fault it started has finished. Each fault draws its random
// choices from a stream of its own, so whether another fault fired first
// changes none of them.
func (mr *modeRun) faultLoop(ctx context.Context, done chan struct{}) {
	select {
	case <-mr.windowOpen:
	case <-done:
		return
	case <-ctx.Done():
		return
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
		}
		close(stop)
	}()
	times := make([][]time.Time, len(mr.spec.Faults))
	rngs := make([]*rand.Rand, len(mr.spec.Faults))
	for i, f := range mr.spec.Faults {
		times[i] = firings(f, mr.warmEnd, mr.loadEnd)
		rngs[i] = mr.rng(fmt.Sprintf("fault-%d", i))
	}
	runTimelines(realClock{}, times, stop, func(fr firing) {
		f := mr.spec.Faults[fr.fault]
		o, logged := mr.applyFault(ctx, f, rngs[fr.fault])
		if !logged {
			return
		}
		mr.addFaultEvent(result.FaultEvent{
			AtNs: mr.sinceStart(fr.start), ScheduledNs: mr.sinceStart(fr.scheduled), EndNs: mr.sinceStart(time.Now()),
			Kind: string(f.Kind), Detail: o.Detail, Broker: o.Broker, Selector: o.Selector, Failed: o.Failed,
			RoleBefore: o.Role.RoleBefore, RoleDuring: o.Role.RoleDuring, RoleAfter: o.Role.RoleAfter,
		})
	})
}

// faultOutcome is what applying one firing of a fault did.
type faultOutcome struct {
	Detail           string
	Broker, Selector string
	Failed           bool
	// Role holds the roles a target-side fault asked about (the Role*
	// fields; Broker and Detail are above).
	Role targets.FaultOutcome
}

func (mr *modeRun) pickWorker(f workloads.Fault, rng *rand.Rand) int {
	i, random := f.Index("worker")
	if random || i < 0 || i >= len(mr.ctl) {
		return rng.IntN(len(mr.ctl))
	}
	return i
}

// applyFault applies one firing of f and says what it did; logged is
// false when the firing is recorded elsewhere (a worker crash, when it
// strikes; membership churn, as the member joins and leaves) or does not
// apply to the mode.
func (mr *modeRun) applyFault(ctx context.Context, f workloads.Fault, rng *rand.Rand) (o faultOutcome, logged bool) {
	now := time.Now()
	switch f.Kind {
	case vocab.FaultWorkerCrash:
		p := vocab.Phase(f.Params["phase"])
		if !p.In(mr.mode) || p.Checkpoint() != (mr.cp != nil) && p != vocab.AfterPoll {
			return o, false // the mode has no such phase: nothing to crash
		}
		w := mr.pickWorker(f, rng)
		mr.ctl[w].crashPhase.Store(&p)
		return o, false // logged when the crash strikes, at the phase
	case vocab.FaultAbortRatio:
		if !mr.mode.Transactional() {
			return o, false
		}
		mr.boostAborts(f.Float("ratio"), now.Add(f.Duration("for")))
		o.Detail = fmt.Sprintf("abort ratio %.2f for %v", f.Float("ratio"), f.Duration("for"))
	case vocab.FaultSlowCheckpoint:
		w := mr.applySlowCheckpoint(f, rng)
		if w < 0 {
			return o, false // not the checkpoint model: nothing to slow
		}
		o.Detail = fmt.Sprintf("worker %d's next checkpoint takes %v between barrier and snapshot", w, f.Duration("delay"))
	case vocab.FaultStallWorker:
		w := mr.pickWorker(f, rng)
		at := vocab.Phase(f.Params["phase"]) // "" (after staging) or after-produce
		mr.ctl[w].stall.Store(&stallSpec{until: now.Add(f.Duration("for")), at: at})
		o.Detail = fmt.Sprintf("worker %d stalls for %v holding its transaction", w, f.Duration("for"))
		if at == vocab.AfterProduce {
			o.Detail += ", its outputs written and nothing staged"
		}
	case vocab.FaultSlowProcessing:
		w := mr.pickWorker(f, rng)
		mr.ctl[w].slowDelay.Store(int64(f.Duration("delay")))
		mr.ctl[w].slowUntil.Store(now.Add(f.Duration("for")).UnixNano())
		o.Detail = fmt.Sprintf("worker %d adds %v per poll for %v", w, f.Duration("delay"), f.Duration("for"))
	case vocab.FaultNetworkPartition:
		if !f.ClientSide() {
			return mr.applyTargetFault(ctx, f, rng), true
		}
		w := mr.pickWorker(f, rng)
		mr.ctl[w].cutUntil.Store(now.Add(f.Duration("for")).UnixNano())
		o.Detail = fmt.Sprintf("worker %d cut off from the target for %v", w, f.Duration("for"))
	case vocab.FaultMembershipChurn:
		mr.churn(ctx, f.Duration("for"))
		return o, false
	case vocab.FaultZombieProducer:
		if !mr.mode.Transactional() {
			return o, false
		}
		w := mr.pickWorker(f, rng)
		// A second incarnation with the same id fences the first, which
		// keeps running as a zombie until its next call is refused. The
		// zombie keeps its own stall, and with pause makes no call for
		// that long; the successor starts unstalled.
		ctl := mr.ctl[w]
		ctl.zombieStall.Store(ctl.stall.Load())
		ctl.zombieWake.Store(now.Add(f.Duration("pause")).UnixNano())
		ctl.zombieInc.Store(ctl.incarnation.Load())
		ctl.stall.Store(nil)
		nw, err := mr.cfg.Target.NewWorker(ctx, mr.tcfg, mr.mode, w)
		if err != nil {
			return faultOutcome{Detail: fmt.Sprintf("worker %d: could not start the successor: %v", w, err), Failed: true}, true
		}
		mr.startWorker(ctx, w, nw)
		o.Detail = fmt.Sprintf("worker %d replaced while the old one runs on as a zombie", w)
		if p := f.Duration("pause"); p > 0 {
			o.Detail = fmt.Sprintf("worker %d replaced while the old one, paused for %v, wakes as a zombie", w, p)
		}
	default:
		return mr.applyTargetFault(ctx, f, rng), true
	}
	return o, true
}

// applyTargetFault applies a fault through the target's fault runner,
// handing a scoped runner the mode's identifiers and the fault's random
// stream; it returns when the runner has (a broker restart takes seconds).
func (mr *modeRun) applyTargetFault(ctx context.Context, f workloads.Fault, rng *rand.Rand) faultOutcome {
	var o faultOutcome
	o.Selector = f.Params["broker"]
	var err error
	if sr, ok := mr.cfg.FaultRunner.(ScopedFaultRunner); ok {
		scope := targets.FaultScope{RunID: mr.cfg.RunID, Mode: mr.mode, ModeRun: mr.name, Config: mr.tcfg, Workers: len(mr.ctl), IntN: rng.IntN}
		var to targets.FaultOutcome
		to, err = sr.ApplyIn(ctx, scope, f.Kind, f.Params)
		o.Detail, o.Broker, o.Role = to.Detail, to.Broker, to
	} else {
		o.Detail, err = mr.cfg.FaultRunner.Apply(f.Kind, f.Params)
	}
	switch {
	case errors.Is(err, targets.ErrFaultSkipped):
		// Not landed, as a failure is, but said as what it is.
		o.Detail, o.Failed = "skipped: "+err.Error(), true
	case err != nil:
		o.Detail, o.Failed = "failed: "+err.Error(), true
	}
	return o
}

// churn adds a member to the mode's group (a worker of its own, which
// never polls) and removes it after d: two assignment changes. The
// aborts they cost are counted as fenced aborts by the workers.
func (mr *modeRun) churn(ctx context.Context, d time.Duration) {
	id := len(mr.ctl) + int(mr.counts.churns.Add(1)) // ids past the workers': no transactional id is shared
	w, err := mr.cfg.Target.NewWorker(ctx, mr.tcfg, mr.mode, id)
	if err != nil {
		mr.addFault(string(vocab.FaultMembershipChurn), fmt.Sprintf("could not add a member: %v", err))
		return
	}
	mr.counts.rebalances.Add(1)
	mr.addFault(string(vocab.FaultMembershipChurn), fmt.Sprintf("member %d joined for %v", id, d))
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
		mr.addFault(string(vocab.FaultMembershipChurn), fmt.Sprintf("member %d left", id))
	}()
}
